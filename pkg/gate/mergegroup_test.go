package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
)

var (
	groupHead = strings.Repeat("9", 40)
	groupBase = strings.Repeat("8", 40)
)

func mergeGroup() *MergeGroup {
	return &MergeGroup{HeadSHA: groupHead, BaseSHA: groupBase, BaseRef: "refs/heads/main",
		HeadRef: "refs/heads/gh-readonly-queue/main/pr-7-" + groupBase}
}

func TestMergeGroupFromEvent(t *testing.T) {
	event := func(g any) []byte {
		raw, err := json.Marshal(map[string]any{"action": "checks_requested", "merge_group": g})
		assert.NilError(t, err)
		return raw
	}
	got, err := MergeGroupFromEvent(event(mergeGroup()))
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got, mergeGroup()))
	n, err := got.prNumber()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, 7))

	release := mergeGroup()
	release.BaseRef, release.HeadRef = "refs/heads/release/v1", "refs/heads/gh-readonly-queue/release/v1/pr-12-"+groupBase
	got, err = MergeGroupFromEvent(event(release))
	assert.NilError(t, err)
	n, _ = got.prNumber()
	assert.Check(t, is.Equal(n, 12), "a base branch with a slash")

	for name, tc := range map[string]struct {
		payload []byte
		want    string
	}{
		"not JSON":        {payload: []byte("{"), want: "parse the merge_group event payload"},
		"no group":        {payload: []byte(`{"action":"checks_requested"}`), want: "names no merge group"},
		"short head":      {payload: event(MergeGroup{HeadSHA: "abc", BaseSHA: groupBase, BaseRef: "refs/heads/main", HeadRef: mergeGroup().HeadRef}), want: "is not a full commit SHA"},
		"a user's branch": {payload: event(MergeGroup{HeadSHA: groupHead, BaseSHA: groupBase, BaseRef: "refs/heads/main", HeadRef: "refs/heads/feature"}), want: "want refs/heads/gh-readonly-queue/"},
		"another base": {payload: event(MergeGroup{HeadSHA: groupHead, BaseSHA: groupBase, BaseRef: "refs/heads/main",
			HeadRef: "refs/heads/gh-readonly-queue/dev/pr-7-" + groupBase}), want: "into base"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := MergeGroupFromEvent(tc.payload)
			assert.Check(t, errors.Is(err, ErrRefused), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.want))
		})
	}
}

// compareGitHub is a historyGitHub that compares commits.
type compareGitHub struct {
	*historyGitHub
	files    []string
	compared int
}

func (g *compareGitHub) CompareFiles(context.Context, string, string) ([]string, error) {
	g.compared++
	return g.files, nil
}

// A merge group publishes the gate at no cost when its tree passed on its
// PR's head, runs otherwise, is not required when it changes no GPU path, and
// runs only for a PR whose own gate passed.
func TestAuthorizeMergeGroup(t *testing.T) {
	const treeSHA = "7777777777777777777777777777777777777777"
	lane := gatecheck.LaneDefinition{Config: []byte(`{}`), TestCommand: "make test-gpu",
		ImageDigest: "ghcr.io/actions/actions-runner:latest@sha256:" + strings.Repeat("1", 64), Workflow: "o/r/.github/workflows/gpu.yml@refs/heads/main", Version: "v1"}
	digest, err := gatecheck.LaneDigest(lane)
	assert.NilError(t, err)
	passedWith := func(tree string, conclusion string) *github.CheckRun {
		r := ok(99, merge, gatecheck.KindPaid, t0)
		m, _ := gatecheck.FormatMarker(merge, gatecheck.KindPaid, &gatecheck.TreeKey{Tree: tree, Lane: digest})
		r.ExternalID, r.Conclusion = github.String(m), github.String(conclusion)
		return r
	}
	tests := []struct {
		name        string
		gates       []*github.CheckRun
		pr          func(*github.PullRequest)
		gpuPaths    []string
		files       []string
		dispatch    string
		wantOutcome Outcome
		wantKind    gatecheck.Kind
		wantRefused string
		wantReason  string
	}{
		{name: "the tree passed on the PR's head: reuse, no pod", gates: []*github.CheckRun{passedWith(treeSHA, "success")},
			wantOutcome: OutcomeReuse, wantReason: "merge group " + groupHead + " of PR #7: gate 99 already passed merge " + merge + " with the identical tree and lane"},
		{name: "another tree: run on the group's head", gates: []*github.CheckRun{passedWith(strings.Repeat("6", 40), "success")},
			wantOutcome: OutcomeRun, wantReason: "no earlier gate for tested ref " + groupHead},
		{name: "the PR's gate failed: refused", gates: []*github.CheckRun{passedWith(treeSHA, "failure")},
			wantRefused: "PR #7 entered the merge queue without a passing CI GPU gate on its head " + head},
		{name: "the PR has no gate: refused", wantRefused: "without a passing CI GPU gate"},
		{name: "no GPU path changed: not required", gates: []*github.CheckRun{passedWith(strings.Repeat("6", 40), "success")},
			gpuPaths: []string{"src/**"}, files: []string{"README.md"}, wantOutcome: OutcomeSkip, wantKind: gatecheck.KindNotRequired,
			wantReason: "changes 1 file(s) from its base, none under the configured GPU paths"},
		{name: "a GPU path changed: runs", gates: []*github.CheckRun{passedWith(strings.Repeat("6", 40), "success")},
			gpuPaths: []string{"src/**"}, files: []string{"README.md", "src/k.cu"}, wantOutcome: OutcomeRun},
		{name: "the PR was closed: the group is obsolete", gates: []*github.CheckRun{passedWith(treeSHA, "success")},
			pr: func(p *github.PullRequest) { p.State = github.String("closed") }, wantOutcome: OutcomeSkip, wantReason: "the group is obsolete"},
		{name: "another run's commit refused", dispatch: strings.Repeat("5", 40), wantRefused: "is not the commit this run is for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := pullRequest(func(p *github.PullRequest) { p.Base.Ref = github.String("main") })
			if tc.pr != nil {
				tc.pr(pr)
			}
			gh := &compareGitHub{historyGitHub: &historyGitHub{treeGitHub: &treeGitHub{fakeGitHub: &fakeGitHub{prs: []*github.PullRequest{pr},
				roles: map[string]string{}}, tree: treeSHA}, gates: map[string][]*github.CheckRun{head: tc.gates}}, files: tc.files}
			req := AuthorizeRequest{Repository: repo, DispatchSHA: tc.dispatch, Actor: "github-merge-queue[bot]", MergeGroup: mergeGroup(),
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Lane: &lane}
			if tc.gpuPaths != nil {
				req.IsGPUPath = gpuPaths(t, tc.gpuPaths...)
			}

			a, err := Authorize(context.Background(), gh, req)

			if tc.wantRefused != "" {
				assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
				assert.Check(t, is.ErrorContains(err, tc.wantRefused))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(a.Outcome, tc.wantOutcome), a.Reason)
			assert.Check(t, is.Equal(a.Kind, tc.wantKind))
			assert.Check(t, is.Contains(a.Reason, tc.wantReason))
			assert.Check(t, is.Equal(a.HeadSHA, groupHead), "the gate goes on the group's head")
			if a.Outcome != OutcomeSkip || a.Kind != "" {
				assert.Check(t, is.Equal(a.TestedRef, groupHead), "the group's head is what is tested")
			}
			if a.Outcome == OutcomeRun || a.Outcome == OutcomeReuse {
				assert.Check(t, is.Equal(fmt.Sprint(gh.listed[:2]), fmt.Sprint([]string{head, groupHead})), "the PR's gates, then the group's and its PR's")
			}
		})
	}
}

// A merge group's lane is its caller at the group's base branch, as the PR lanes ran it.
func TestMergeGroupLaneWorkflow(t *testing.T) {
	g := mergeGroup()
	assert.Equal(t, g.LaneWorkflow("org/gpu-project/.github/workflows/runpod-gpu.yml@"+g.HeadRef),
		"org/gpu-project/.github/workflows/runpod-gpu.yml@refs/heads/main")
	assert.Equal(t, g.LaneWorkflow("org/gpu-project/.github/workflows/runpod-gpu.yml@refs/heads/main"),
		"org/gpu-project/.github/workflows/runpod-gpu.yml@refs/heads/main")
	assert.Equal(t, g.LaneWorkflow("org/gpu-project/.github/workflows/other.yml@refs/heads/gh-readonly-queue/main/pr-8-"+groupBase),
		"org/gpu-project/.github/workflows/other.yml@refs/heads/gh-readonly-queue/main/pr-8-"+groupBase, "another group's ref is not rewritten")
}

// Any merge_group payload is a group whose head and base are commit SHAs and
// whose branch names its PR, or a refusal; never a panic.
func FuzzMergeGroupFromEvent(f *testing.F) {
	f.Add(`{"merge_group":{"head_sha":"` + groupHead + `","base_sha":"` + groupBase + `","base_ref":"refs/heads/main","head_ref":"refs/heads/gh-readonly-queue/main/pr-7-` + groupBase + `"}}`)
	f.Add(`{"merge_group":null}`)
	f.Add(`{"merge_group":{"head_ref":"refs/heads/gh-readonly-queue//pr-0-"}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		g, err := MergeGroupFromEvent([]byte(payload))
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error %v is not a refusal", err)
			}
			return
		}
		n, err := g.prNumber()
		if err != nil || n <= 0 || !strings.HasPrefix(g.HeadRef, "refs/heads/gh-readonly-queue/") {
			t.Fatalf("accepted %+v with PR %d (%v)", g, n, err)
		}
	})
}
