package lanes

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// forkPushSHA is the fork's head after a push that follows the approval.
var forkPushSHA = strings.Repeat("9", 40)

// openForkPR opens a PR from mallory's fork (mallory has no role here) at harness.HeadSHA.
func (s *simulated) openForkPR(t *testing.T, labels ...string) int {
	t.Helper()
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "mallory", HeadRepo: "mallory/gpu-project",
		HeadSHA: harness.HeadSHA, HeadRef: "patch-1", MergeCommitSHA: harness.MergeSHA, Labels: labels})
	assert.NilError(t, err)
	return pr
}

// forkDispatchStep is authorize as the lane runs it when dispatcher dispatched
// the caller with approved-fork-sha sha for pr; rerunBy, if set, re-ran it.
func (s *simulated) forkDispatchStep(pr int, dispatcher, rerunBy, sha string) harness.Step {
	st := s.AuthorizeStep(pr, dispatcher)
	st.Inputs["expected-head-sha"] = sha
	st.Inputs["approved-fork-sha"] = sha
	st.Env["GITHUB_EVENT_NAME"] = "workflow_dispatch"
	if rerunBy != "" {
		st.Env["GITHUB_TRIGGERING_ACTOR"] = rerunBy
	}
	st.Event = map[string]any{"inputs": map[string]any{"pr-number": harness.Itoa(pr), "approved-fork-sha": sha}, "sender": map[string]any{"login": dispatcher}}
	return st
}

// forkLabelStep is authorize as the lane runs it on the pull_request_target
// labeled event of labeler adding label while pr's head was sha.
func (s *simulated) forkLabelStep(pr int, labeler, label, sha string) harness.Step {
	st := s.AuthorizeStep(pr, labeler)
	st.Inputs["expected-head-sha"] = sha
	st.Env["GITHUB_EVENT_NAME"] = "pull_request_target"
	st.Event = map[string]any{
		"action": "labeled", "number": pr,
		"label":        map[string]any{"name": label},
		"sender":       map[string]any{"login": labeler},
		"pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": sha, "repo": map[string]any{"full_name": "mallory/gpu-project"}}},
	}
	return st
}

// pushToFork moves the fork PR's head, as the fork's author pushing does.
func (s *simulated) pushToFork(t *testing.T, pr int) {
	t.Helper()
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = forkPushSHA }))
}

// assertRefusedNothingSpent checks that authorize refused with want and that
// no later job could spend: no decision output, RunPod untouched since before.
func assertRefusedNothingSpent(t *testing.T, s *simulated, res harness.StepResult, runpodRequests int, want string) {
	t.Helper()
	assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "::error::GPU run refused: "+want))
	assert.Check(t, is.Contains(res.Summary, "**Refused**"))
	assert.Check(t, is.Len(res.Outputs, 0), "no decision a later job could act on")
	assert.Check(t, is.Len(s.RunPod.Requests(), runpodRequests), "nothing spent: RunPod not called again")
	assertNoSecrets(t, s, res)
}

// A fork PR gets the required gate when a maintainer dispatches the lane at
// its exact head: authorize decides run, provision pays for a pod at the
// merge ref, the gate is published on the fork's head. A push after the
// approval voids it: re-running the same dispatch is refused, spending nothing.
func TestForkApprovedByDispatchRunsUntilAPush(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openForkPR(t)

	authorized := gateRunOK(t, s, s.forkDispatchStep(pr, "alice", "", harness.HeadSHA))
	assert.Assert(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	assert.Check(t, is.Equal(authorized.Outputs["tested-ref"], harness.MergeSHA))
	assert.Check(t, is.Equal(authorized.Outputs["head-sha"], harness.HeadSHA))
	assert.Check(t, is.Contains(authorized.Outputs["reason"], "fork PR approved (dispatch by alice with approved-fork-sha "+harness.HeadSHA+")"))
	assert.Check(t, is.Contains(authorized.Summary, "| fork approval | alice (maintain) dispatched with `approved-fork-sha` at `"+harness.HeadSHA+"`"))

	pst := s.ProvisionStep(pr)
	pst.Inputs["tested-ref"] = authorized.Outputs["tested-ref"]
	provisioned := gateRunOK(t, s, pst)
	assert.Assert(t, is.Equal(provisioned.Outputs["paid-path"], "paid"), provisioned.Stdout)
	p := provisioned.Outputs
	gateRunOK(t, s, s.GateStep(pr, map[string]string{
		"decision": "run", "gpu-job-result": "success", "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA,
		"pod-id": p["pod-id"], "gpu-type": p["gpu-type"], "tier": p["tier"], "price-per-hour": p["price-per-hour"],
		"startup-seconds": p["startup-seconds"], "attempts": p["attempts"],
	}))
	gates := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(gates, 1))
	assert.Check(t, is.Equal(gates[0].GetConclusion(), "success"), "the fork's head carries the required gate")

	s.pushToFork(t, pr)
	requests := len(s.RunPod.Requests())
	res := harness.RunStep(t, s.forkDispatchStep(pr, "alice", "", harness.HeadSHA))
	assertRefusedNothingSpent(t, s, res, requests,
		"PR #"+harness.Itoa(pr)+"'s head is "+forkPushSHA+", not the approved "+harness.HeadSHA+": a push after the approval voids it")
	assert.Check(t, is.Len(s.gateChecks(t, forkPushSHA), 0), "no gate on the pushed head")
}

// The label path: the labeled event's payload records the head when a
// maintainer added gpu-approved; that head runs, and after a push a re-run of
// the same event is refused.
func TestForkApprovedByLabelRunsUntilAPush(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openForkPR(t, gate.ApprovalLabel)
	_, err := s.GitHub.AddReview(cloud.Repository, pr, githubsim.ReviewSpec{Author: "bob", State: "APPROVED", CommitID: harness.HeadSHA})
	assert.NilError(t, err)

	authorized := gateRunOK(t, s, s.forkLabelStep(pr, "bob", gate.ApprovalLabel, harness.HeadSHA))
	assert.Assert(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	assert.Check(t, is.Equal(authorized.Outputs["tested-ref"], harness.MergeSHA))
	assert.Check(t, is.Contains(authorized.Outputs["reason"], "fork PR approved (label gpu-approved added by bob at head "+harness.HeadSHA+")"))
	assert.Check(t, is.Contains(authorized.Summary, "| fork approval | bob (admin) added the label `gpu-approved` at `"+harness.HeadSHA+"`"))

	s.pushToFork(t, pr)
	res := harness.RunStep(t, s.forkLabelStep(pr, "bob", gate.ApprovalLabel, harness.HeadSHA))
	assertRefusedNothingSpent(t, s, res, 0,
		"PR #"+harness.Itoa(pr)+"'s head is "+forkPushSHA+", not the approved "+harness.HeadSHA+": a push after the approval voids it")
}

// Every fork trigger without a valid approval is refused by the real binary
// before anything is spent.
func TestForkApprovalRefusals(t *testing.T) {
	otherSHA := strings.Repeat("8", 40)
	tests := []struct {
		name   string
		labels []string
		step   func(s *simulated, pr int) harness.Step
		want   string
	}{
		{name: "no approval", step: func(s *simulated, pr int) harness.Step { return s.AuthorizeStep(pr, "bob") },
			want: "PR #1 comes from mallory/gpu-project, not from " + cloud.Repository + ": a fork PR runs on a paid GPU only at a head an admin or maintainer approved"},
		{name: "dispatcher with write", step: func(s *simulated, pr int) harness.Step { return s.forkDispatchStep(pr, "carol", "", harness.HeadSHA) },
			want: `triggering actor carol has role "write"`},
		{name: "maintainer re-runs a writer's dispatch", step: func(s *simulated, pr int) harness.Step {
			return s.forkDispatchStep(pr, "carol", "alice", harness.HeadSHA)
		},
			want: `fork approver carol has role "write"`},
		{name: "approved SHA is not the head", step: func(s *simulated, pr int) harness.Step { return s.forkDispatchStep(pr, "alice", "", otherSHA) },
			want: "PR #1's head is " + harness.HeadSHA + ", not the approved " + otherSHA},
		{name: "approved SHA outside a dispatch", step: func(s *simulated, pr int) harness.Step {
			st := s.forkDispatchStep(pr, "alice", "", harness.HeadSHA)
			st.Env["GITHUB_EVENT_NAME"] = "workflow_run"
			return st
		}, want: `approved-fork-sha is honoured only when an admin or maintainer dispatches the lane (workflow_dispatch), not on "workflow_run"`},
		{name: "label by a triager", labels: []string{gate.ApprovalLabel},
			step: func(s *simulated, pr int) harness.Step {
				return s.forkLabelStep(pr, "dave", gate.ApprovalLabel, harness.HeadSHA)
			},
			want: `triggering actor dave has role "triage"`},
		{name: "maintainer re-runs a triager's label event", labels: []string{gate.ApprovalLabel},
			step: func(s *simulated, pr int) harness.Step {
				st := s.forkLabelStep(pr, "dave", gate.ApprovalLabel, harness.HeadSHA)
				st.Env["GITHUB_TRIGGERING_ACTOR"] = "bob"
				return st
			}, want: `fork approver dave has role "triage"`},
		{name: "label removed since the event",
			step: func(s *simulated, pr int) harness.Step {
				return s.forkLabelStep(pr, "bob", gate.ApprovalLabel, harness.HeadSHA)
			},
			want: "PR #1 no longer carries the label gpu-approved: the approval was withdrawn"},
		{name: "another label is no approval", labels: []string{"bug"},
			step: func(s *simulated, pr int) harness.Step { return s.forkLabelStep(pr, "bob", "bug", harness.HeadSHA) },
			want: "a fork PR runs on a paid GPU only at a head an admin or maintainer approved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
			pr := s.openForkPR(t, tc.labels...)
			assert.Equal(t, pr, 1)
			res := harness.RunStep(t, tc.step(s, pr))
			assertRefusedNothingSpent(t, s, res, 0, "")
			assert.Check(t, is.Contains(res.Stdout, tc.want))
		})
	}
}

// A malformed approved-fork-sha fails the step naming the input, its value
// and the form expected, before GitHub is read.
func TestForkApprovalMalformedSHA(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openForkPR(t)
	res := harness.RunStep(t, s.forkDispatchStep(pr, "alice", "", "v1.2"))
	assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
	// expected-head-sha holds the same value, and is named too.
	assert.Check(t, is.Contains(res.Stdout, `input approved-fork-sha = "v1.2": want a full commit SHA`))
	assert.Check(t, is.Len(res.Outputs, 0))
	assert.Check(t, is.Len(s.GitHub.Requests(), 0), "nothing read before the input is valid")
}

// The approved head's merge is what runs: a push and a revert in the start-up
// window leave GitHub's merge commit merging the pushed head until GitHub
// recomputes it, and a merge that is not mergeable may be stale. Both are
// refused with the reason, spending nothing.
func TestApprovalTestsOnlyTheApprovedHeadsMerge(t *testing.T) {
	evil, evilMerge := strings.Repeat("e", 40), strings.Repeat("f", 40)
	tests := []struct {
		name       string
		setup      func(t *testing.T, s *simulated, pr int)
		want, also string
	}{
		{name: "push and revert: the merge commit is the pushed head's", setup: func(t *testing.T, s *simulated, pr int) {
			assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA, p.MergeCommitSHA = evil, evilMerge }))
			assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = harness.HeadSHA }))
		}, want: "'s merge commit " + evilMerge + " merges (", also: ", " + evil + "), not exactly (base "},
		{name: "not mergeable", setup: func(t *testing.T, s *simulated, pr int) {
			no := false
			assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.Mergeable = &no }))
		}, want: "is not mergeable (mergeable false)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
			for _, open := range []func(t *testing.T, labels ...string) int{s.openForkPR, s.openTeammatePR} {
				pr := open(t)
				tc.setup(t, s, pr)
				res := harness.RunStep(t, s.forkDispatchStep(pr, "alice", "", harness.HeadSHA))
				assertRefusedNothingSpent(t, s, res, 0, "")
				assert.Check(t, is.Contains(res.Stdout, tc.want))
				assert.Check(t, is.Contains(res.Stdout, tc.also))
			}
		})
	}
}

// A label approves only the exact commit its labeller approved in a review.
func TestLabelApprovalIsBoundToTheLabellersReview(t *testing.T) {
	older := strings.Repeat("4", 40)
	for _, tc := range []struct {
		name   string
		review *githubsim.ReviewSpec
		want   string
	}{
		{name: "no review", want: "bob added the label gpu-approved without a standing approving review"},
		{name: "changes requested", review: &githubsim.ReviewSpec{Author: "bob", State: "CHANGES_REQUESTED"}, want: "without a standing approving review"},
		{name: "an approval of an earlier head", review: &githubsim.ReviewSpec{Author: "bob", State: "APPROVED", CommitID: older},
			want: "bob's approving review is at " + older + ", not at the labelled head " + harness.HeadSHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
			pr := s.openForkPR(t, gate.ApprovalLabel)
			if tc.review != nil {
				_, err := s.GitHub.AddReview(cloud.Repository, pr, *tc.review)
				assert.NilError(t, err)
			}
			res := harness.RunStep(t, s.forkLabelStep(pr, "bob", gate.ApprovalLabel, harness.HeadSHA))
			assertRefusedNothingSpent(t, s, res, 0, "")
			assert.Check(t, is.Contains(res.Stdout, tc.want))
		})
	}
}

// openTeammatePR opens a PR of this repository by carol, who has write access.
func (s *simulated) openTeammatePR(t *testing.T, labels ...string) int {
	t.Helper()
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "carol", HeadSHA: harness.HeadSHA, HeadRef: "carol-patch",
		MergeCommitSHA: harness.MergeSHA, Labels: labels})
	assert.NilError(t, err)
	return pr
}

// A teammate below admin/maintain gets the same approval at an exact head as a
// fork PR: refused on the CI trigger with how to approve, run when a
// maintainer dispatches the reviewed head or labels it after approving it in a
// review, and refused again after a push.
func TestTeammateApprovedAtAnExactHead(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openTeammatePR(t, gate.ApprovalLabel)

	onCI := s.AuthorizeStep(pr, "carol")
	onCI.Env["GITHUB_EVENT_NAME"] = "workflow_run"
	res := harness.RunStep(t, onCI)
	assertRefusedNothingSpent(t, s, res, 0, "")
	assert.Check(t, is.Contains(res.Stdout, `triggering actor carol has role "write"`))
	rerun := s.AuthorizeStep(pr, "alice") // a maintainer re-runs the CI trigger: still no approval of a head
	rerun.Env["GITHUB_EVENT_NAME"] = "workflow_run"
	res = harness.RunStep(t, rerun)
	assertRefusedNothingSpent(t, s, res, 0, `PR author carol has role "write"; paid GPU runs need admin or maintain, or an admin or maintainer's approval of the exact head they read`)

	authorized := gateRunOK(t, s, s.forkDispatchStep(pr, "alice", "", harness.HeadSHA))
	assert.Check(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	assert.Check(t, is.Contains(authorized.Outputs["reason"], "PR approved for its author below admin/maintain (dispatch by alice with approved-fork-sha "+harness.HeadSHA+")"))
	assert.Check(t, is.Contains(authorized.Summary, "| approval | alice (maintain) dispatched with `approved-fork-sha` at `"+harness.HeadSHA+"` (PR author carol has role \"write\")"))

	_, err := s.GitHub.AddReview(cloud.Repository, pr, githubsim.ReviewSpec{Author: "bob", State: "APPROVED"})
	assert.NilError(t, err)
	byLabel := gateRunOK(t, s, s.forkLabelStep(pr, "bob", gate.ApprovalLabel, harness.HeadSHA))
	assert.Check(t, is.Equal(byLabel.Outputs["decision"], "run"), byLabel.Stdout)

	s.pushToFork(t, pr)
	res = harness.RunStep(t, s.forkDispatchStep(pr, "alice", "", harness.HeadSHA))
	assertRefusedNothingSpent(t, s, res, len(s.RunPod.Requests()),
		"PR #"+harness.Itoa(pr)+"'s head is "+forkPushSHA+", not the approved "+harness.HeadSHA+": a push after the approval voids it")
}
