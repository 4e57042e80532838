package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The merge queue. A repository that requires the gate and merges through a
// merge queue needs the gate on each merge group's head commit: the queue's
// merge of its base with the queued PRs. It is published at no cost when that
// commit's tree (with the same lane: the tree key) already passed, on the
// group's PR's head or its earlier heads, and the lane runs on it otherwise.
//
// Trust: merge_group events are made by GitHub's merge queue only, and a PR
// enters the queue only once its required checks passed. Authorize checks
// the event's shape, that its PR is open and into the group's base, and that
// the PR's head carries a passing gate (so its author or an approval was
// checked when that gate ran); the triggering actor is the queue's, not a person.

// MergeGroup is the merge_group event's group: its head commit (tested and
// carrying the gate), its temporary branch, and the base it merges into.
type MergeGroup struct {
	HeadSHA string `json:"head_sha"`
	HeadRef string `json:"head_ref"`
	BaseSHA string `json:"base_sha"`
	BaseRef string `json:"base_ref"`
}

// mergeQueueRef is a merge group's branch: refs/heads/gh-readonly-queue/<base branch>/pr-<number>-<base sha>.
var mergeQueueRef = lazyre.Regexp{Pattern: `^refs/heads/gh-readonly-queue/(.+)/pr-([1-9][0-9]{0,9})-([0-9a-f]{40})$`}

// MergeGroupFromEvent reads the merge_group event payload. A payload without
// a usable group is a *RefusedError: nothing runs on what cannot be read.
func MergeGroupFromEvent(payload []byte) (*MergeGroup, error) {
	var ev struct {
		MergeGroup *MergeGroup `json:"merge_group"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, refuse("parse the merge_group event payload: %v", err)
	}
	g := ev.MergeGroup
	switch {
	case g == nil:
		return nil, refuse("the merge_group event payload names no merge group")
	case !wire.IsCommitSHA(g.HeadSHA) || !wire.IsCommitSHA(g.BaseSHA):
		return nil, refuse("merge group head %.60q or base %.60q is not a full commit SHA", g.HeadSHA, g.BaseSHA)
	}
	if _, err := g.prNumber(); err != nil {
		return nil, err
	}
	return g, nil
}

// prNumber is the number of the PR the group was made for, from its branch.
func (g MergeGroup) prNumber() (int, error) {
	m := mergeQueueRef.FindStringSubmatch(g.HeadRef)
	if m == nil || "refs/heads/"+m[1] != g.BaseRef {
		return 0, refuse("merge group branch %.120q: want refs/heads/gh-readonly-queue/<base branch>/pr-<number>-<sha> into base %.80q", g.HeadRef, g.BaseRef)
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return 0, refuse("merge group branch %.120q: PR number: %v", g.HeadRef, err)
	}
	return n, nil
}

// FileComparer lists the paths changed between two commits. *ghapi.Client has it.
type FileComparer interface {
	CompareFiles(ctx context.Context, base, head string) ([]string, error)
}

// authorizeMergeGroup decides for a merge group: not required when no path
// from its base to its head needs the GPU, reuse when its tree key passed on
// its PR's heads, else run on its head commit.
// Long: each step is one read whose failure must end the decision here.
func authorizeMergeGroup(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest) (Authorization, error) {
	g := req.MergeGroup
	for _, sha := range []string{req.DispatchSHA, req.ExpectedHeadSHA} {
		if sha != "" && sha != g.HeadSHA {
			return Authorization{}, refuse("merge group head %s is not the commit this run is for (%s)", g.HeadSHA, sha)
		}
	}
	n, err := g.prNumber()
	if err != nil {
		return Authorization{}, err
	}
	var pr *github.PullRequest
	if err := rd.do(fmt.Sprintf("read PR #%d of the merge group", n), func(ctx context.Context) (err error) {
		pr, err = gh.GetPullRequest(ctx, n)
		return err
	}); err != nil {
		return Authorization{}, err
	}
	skip := Authorization{Outcome: OutcomeSkip, HeadSHA: g.HeadSHA}
	if pr.GetState() != "open" || "refs/heads/"+pr.GetBase().GetRef() != g.BaseRef {
		skip.Reason = fmt.Sprintf("PR #%d of merge group %s is %s into %s, not an open PR into %s: the group is obsolete",
			n, g.HeadSHA, pr.GetState(), pr.GetBase().GetRef(), g.BaseRef)
		return skip, nil
	}
	if err := checkQueuedPRPassed(rd, gh, req, n, pr.GetHead().GetSHA()); err != nil {
		return Authorization{}, err
	}
	if req.IsGPUPath != nil {
		fc, ok := gh.(FileComparer)
		if !ok {
			return Authorization{}, refuse("merge group %s: the paths it changes cannot be read (this client compares no commits)", g.HeadSHA)
		}
		var files []string
		if err := rd.do(fmt.Sprintf("list the files merge group %s changes", g.HeadSHA), func(ctx context.Context) (err error) {
			files, err = fc.CompareFiles(ctx, g.BaseSHA, g.HeadSHA)
			return err
		}); err != nil {
			return Authorization{}, err
		}
		if !slices.ContainsFunc(files, req.IsGPUPath) {
			skip.Kind, skip.TestedRef = gatecheck.KindNotRequired, g.HeadSHA
			skip.Reason = fmt.Sprintf("merge group %s (PR #%d) changes %d file(s) from its base, none under the configured GPU paths", g.HeadSHA, n, len(files))
			return skip, nil
		}
	}
	// The group's own head is tested; the PR's heads hold the gates its tree may match.
	inner := req
	inner.PRNumber, inner.EarlierHeads = n, append([]string{pr.GetHead().GetSHA()}, req.EarlierHeads...)
	a, err := decideRun(ctx, rd, gh, inner, pinnedPR{pr: pr, head: g.HeadSHA, tested: g.HeadSHA})
	if err == nil {
		a.Reason = fmt.Sprintf("merge group %s of PR #%d: %s", g.HeadSHA, n, a.Reason)
	}
	return a, err
}

// checkQueuedPRPassed refuses a merge group whose PR's head carries no
// passing gate from the trusted app: only code whose own gate passed (its
// author or an approval checked) runs on a paid GPU from the merge queue.
func checkQueuedPRPassed(rd reads, gh PullRequests, req AuthorizeRequest, n int, prHead string) error {
	name := req.Reuse.CheckName
	if name == "" {
		name = gatecheck.DefaultCheckName
	}
	app := gatecheck.TrustedGateApp(req.Reuse.AppID, 0)
	var runs []*github.CheckRun
	if err := rd.do(fmt.Sprintf("list the gates of PR #%d's head %s", n, prHead), func(ctx context.Context) (err error) {
		runs, err = gh.ListCheckRunsForRef(ctx, prHead, name, gatecheck.DefaultMaxPages)
		return err
	}); err != nil {
		return err
	}
	var done []*github.CheckRun
	for _, r := range runs {
		if r.GetName() == name && r.GetStatus() == "completed" && r.GetApp().GetID() == app && isGateMarker(r.GetExternalID()) {
			done = append(done, r)
		}
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].GetID() > done[j].GetID() })
	if len(done) == 0 || done[0].GetConclusion() != "success" {
		return refuse("PR #%d entered the merge queue without a passing %s on its head %s: a merge group runs on a paid GPU only for a PR whose own gate passed "+
			"(require %q for pull requests and for the merge queue)", n, name, prHead, name)
	}
	return nil
}

// isGateMarker reports a gate the lane or the relay published.
func isGateMarker(s string) bool {
	_, err := gatecheck.ParseMarker(s)
	return err == nil || strings.HasPrefix(s, gatecheck.LocalIDPrefix)
}

// LaneWorkflow is the lane's workflow reference for the tree key of a merge
// group's run: the caller's GITHUB_WORKFLOW_REF names the group's temporary
// branch (…@refs/heads/gh-readonly-queue/…), which no PR lane ever has; the
// same caller file at the group's base branch is the lane the PRs ran in. The
// workflow file itself is in the tested tree, so an equal tree key still
// means the same caller.
func (g MergeGroup) LaneWorkflow(workflowRef string) string {
	if file, ok := strings.CutSuffix(workflowRef, "@"+g.HeadRef); ok {
		return file + "@" + g.BaseRef
	}
	return workflowRef
}
