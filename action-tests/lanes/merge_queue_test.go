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

// mergeGroupDelivery is the merge_group event of the queue testing PR pr's
// group at head on base, as the README caller receives it.
func mergeGroupDelivery(pr int, head, base string, runID int64) delivery {
	ref := "refs/heads/gh-readonly-queue/main/pr-" + harness.Itoa(pr) + "-" + base
	return delivery{caller: mainCaller, eventName: "merge_group", sha: head, actor: "github-merge-queue[bot]", runID: runID,
		workflowRef: cloud.Repository + "/" + cloud.Workflow + "@" + ref,
		event: map[string]any{
			"action": "checks_requested",
			"merge_group": map[string]any{"head_sha": head, "head_ref": ref, "base_sha": base, "base_ref": "refs/heads/main",
				"head_commit": map[string]any{"id": head, "message": "Merge pull request #" + harness.Itoa(pr)}},
			"repository": map[string]any{"full_name": cloud.Repository, "default_branch": "main"},
		}}
}

// The merge queue, through the README caller and gpu-lane.yml: a group whose
// head commit has the tree its PR's passed lane tested gets a passing gate at
// no cost; a group with another tree (another PR ahead of it in the queue)
// pays for one pod on its head; a group whose PR has no passing gate of its
// own is refused, spending nothing.
func TestMergeQueueGroupGate(t *testing.T) {
	s := startShippedCloud(t, testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true))
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
		MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, harness.MergeSHA, treeSHA))
	paid := s.deliver(t, pr, harness.HeadSHA, 9500)
	assert.Assert(t, is.Equal(paid.gateKind, "paid"), paid.String())
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1))
	key := paid.authorize.Outputs["tree-key"]
	base := strings.Repeat("0", 40)

	t.Run("IdenticalTreeReusesAtNoCost", func(t *testing.T) {
		group := strings.Repeat("6", 40)
		assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, group, treeSHA))
		r := s.runShipped(t, mergeGroupDelivery(pr, group, base, 9501))
		shippedOK(t, r)
		assert.Check(t, is.Equal(r.decision, "reuse"), r.String())
		assert.Check(t, is.Equal(r.authorize.Outputs["tree-key"], key), "the group's lane is the PR lanes' lane")
		assert.Check(t, is.Equal(r.gateKind, "reused"))
		assert.Check(t, is.Equal(r.gate.Outputs["external-id"], gatecheck.ExternalIDPrefixV2+group+":reused:"+key))
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "0 pods: the group's tree already passed")
		gates := s.gateChecks(t, group)
		assert.Assert(t, is.Len(gates, 1), "the gate is on the group's head")
		assert.Check(t, is.Equal(gates[0].GetConclusion(), "success"))
	})
	t.Run("AnotherTreePaysOnePod", func(t *testing.T) {
		group := strings.Repeat("5", 40)
		assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, group, changedTreeSHA))
		r := s.runShipped(t, mergeGroupDelivery(pr, group, strings.Repeat("4", 40), 9502))
		shippedOK(t, r)
		assert.Check(t, is.Equal(r.decision, "run"), r.String())
		assert.Check(t, is.Equal(r.authorize.Outputs["tested-ref"], group), "the group's head is tested")
		assert.Check(t, is.Equal(r.provisionPaidOrNone, "paid"))
		assert.Check(t, is.Equal(r.gateKind, "paid"))
		assert.Check(t, is.Equal(len(s.RunPod.Pods()), 2), "1 pod for a group with another tree")
		gates := s.gateChecks(t, group)
		assert.Assert(t, is.Len(gates, 1))
		assert.Check(t, is.Equal(gates[0].GetConclusion(), "success"))
	})
	t.Run("APRWithoutAPassingGateIsRefused", func(t *testing.T) {
		other, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "carol", HeadSHA: strings.Repeat("3", 40),
			HeadRef: "carol", MergeCommitSHA: strings.Repeat("2", 40)})
		assert.NilError(t, err)
		group := strings.Repeat("1", 40)
		assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, group, changedTreeSHA))
		requests := len(s.RunPod.Requests())
		r := s.runShipped(t, mergeGroupDelivery(other, group, base, 9503))
		assert.Check(t, is.Equal(r.authorize.ExitCode, 1), r.String())
		assert.Check(t, is.Contains(r.authorize.Stdout, "entered the merge queue without a passing CI GPU gate"))
		assert.Check(t, r.provision == nil, "no provision after a refusal")
		assert.Check(t, is.Equal(len(s.RunPod.Requests()), requests), "nothing spent")
	})
}
