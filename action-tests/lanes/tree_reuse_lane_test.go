package lanes

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

const mainCaller = ".github/workflows/runpod-gpu.yml"

// push force-pushes the PR to head with merge commit merge of tree tree,
// onto base (empty: the base stays).
func (s *simulated) forcePush(t *testing.T, pr int, head, merge, tree, base string) {
	t.Helper()
	assert.NilError(t, s.GitHub.ForcePushPullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.HeadSHA, p.MergeCommitSHA = head, merge
		if base != "" {
			p.BaseSHA = base
		}
	}))
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, merge, tree))
}

// deliver is the workflow_run delivery of the PR's CI at its head now.
func (s *simulated) deliver(t *testing.T, pr int, head string, runID int64) shippedRun {
	t.Helper()
	r := s.runShipped(t, delivery{caller: mainCaller, eventName: "workflow_run", event: workflowRunEvent(pr, head),
		sha: strings.Repeat("0", 40), actor: "alice", runID: runID})
	shippedOK(t, r)
	return r
}

// Identical-tree reuse end to end, through the README's workflow_run caller
// and gpu-lane.yml as shipped, with no input naming an earlier head: authorize
// finds the PR's earlier heads in its head history. A rebase onto a moved base
// and an amended commit whose merged tree is unchanged cost nothing; a base
// update that leaves it unchanged costs nothing; a changed tree pays.
func TestTreeReuseThroughLane(t *testing.T) {
	s := startShippedCloud(t, testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true))
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
		MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, harness.MergeSHA, treeSHA))
	sha := func(c string) string { return strings.Repeat(c, 40) }

	first := s.deliver(t, pr, harness.HeadSHA, 9400)
	assert.Assert(t, is.Equal(first.decision, "run"), first.String())
	assert.Check(t, is.Equal(first.authorizeInputs["earlier-head-shas"], ""), "the shipped lane names no earlier head")
	assert.Check(t, is.Equal(first.gateKind, "paid"))
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1))
	key := first.authorize.Outputs["tree-key"]
	assert.Assert(t, strings.HasPrefix(key, "tree:"+treeSHA+":lane:"), key)
	paidURL := first.gate.Outputs["check-run-url"]

	t.Run("ForcePushIdenticalTree", func(t *testing.T) {
		// A rebase onto a moved base that leaves the merged tree as it was.
		s.forcePush(t, pr, sha("c"), sha("d"), treeSHA, sha("1"))
		r := s.deliver(t, pr, sha("c"), 9401)
		assert.Check(t, is.Equal(r.decision, "reuse"), r.String())
		assert.Check(t, is.Contains(r.authorize.Outputs["reason"], "identical tree and lane"))
		assert.Check(t, is.Equal(r.authorize.Outputs["reused-check-url"], paidURL))
		assert.Check(t, is.Equal(r.gateKind, "reused"))
		assert.Check(t, is.Equal(r.gate.Outputs["external-id"], gatecheck.ExternalIDPrefixV2+sha("d")+":reused:"+key))
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "0 pods for an identical tree")
	})
	t.Run("AmendedCommitIdenticalTree", func(t *testing.T) {
		s.forcePush(t, pr, sha("e"), sha("f"), treeSHA, "")
		r := s.deliver(t, pr, sha("e"), 9402)
		assert.Check(t, is.Equal(r.decision, "reuse"), r.String())
		assert.Check(t, is.Equal(r.gateKind, "reused"))
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "0 pods for an amended commit with the same tree")
	})
	t.Run("BaseUpdateIdenticalTree", func(t *testing.T) {
		// The head stays; the base moves and GitHub recomputes the merge, with the same tree.
		assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
			p.BaseSHA, p.MergeCommitSHA = sha("2"), sha("3")
		}))
		assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, sha("3"), treeSHA))
		r := s.deliver(t, pr, sha("e"), 9403)
		assert.Check(t, is.Equal(r.decision, "reuse"), r.String())
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "0 pods for a base update with the same merged tree")
	})
	t.Run("ChangedTreePays", func(t *testing.T) {
		s.forcePush(t, pr, sha("4"), sha("5"), changedTreeSHA, "")
		r := s.deliver(t, pr, sha("4"), 9404)
		assert.Check(t, is.Equal(r.decision, "run"), r.String())
		assert.Check(t, is.Equal(r.provisionPaidOrNone, "paid"))
		assert.Check(t, is.Equal(r.gateKind, "paid"))
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 2), "1 pod for a changed tree")
	})
	// One history read per delivery with a tree key; gate listings bounded by it.
	assert.Check(t, is.Equal(s.GitHub.CountRequests("POST", "/graphql"), 5))
}
