package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

// forkPR is a fork PR by an outsider ("mallory", no role) at head.
func forkPR(mut ...func(*github.PullRequest)) *github.PullRequest {
	return pullRequest(append([]func(*github.PullRequest){func(p *github.PullRequest) {
		p.User.Login = github.String("mallory")
		p.Head.Repo = &github.Repository{FullName: github.String("mallory/gpu-project")}
	}}, mut...)...)
}

func withLabel(name string) func(*github.PullRequest) {
	return func(p *github.PullRequest) { p.Labels = append(p.Labels, &github.Label{Name: github.String(name)}) }
}

// teammatePR is a PR of this repository by carol, who has write access.
func teammatePR(mut ...func(*github.PullRequest)) *github.PullRequest {
	return pullRequest(append([]func(*github.PullRequest){func(p *github.PullRequest) { p.User.Login = github.String("carol") }}, mut...)...)
}

// Authorize lets a fork PR, or a PR whose author is below admin/maintain, run
// only at the exact head an admin or maintainer approved, as the merge of
// exactly that head, and refuses every other combination without spending.
func TestAuthorizeApprovedHeads(t *testing.T) {
	roles := map[string]string{"alice": "maintain", "bob": "admin", "carol": "write", "dave": "triage"}
	pushed := strings.Repeat("e", 40)
	dispatch := func(approver, sha string) *ForkApproval {
		return &ForkApproval{Via: ApprovedByDispatch, SHA: sha, Approver: approver}
	}
	label := func(approver, sha string) *ForkApproval {
		return &ForkApproval{Via: ApprovedByLabel, SHA: sha, Approver: approver, Label: ApprovalLabel}
	}
	approvedByBob := []*github.PullRequestReview{review("bob", "APPROVED", head)}
	notMergeable := func(p *github.PullRequest) { p.Mergeable = github.Bool(false) }
	tests := []struct {
		name        string
		actor       string
		approval    *ForkApproval
		prs         []*github.PullRequest
		reviews     []*github.PullRequestReview
		commits     map[string]ghapi.Commit
		expected    string // the trigger's head; "" means head
		wantRefused string
		wantSkip    string
		wantReason  string
	}{
		{name: "fork: dispatch by a maintainer at the head runs", actor: "alice", approval: dispatch("alice", head), prs: []*github.PullRequest{forkPR()},
			wantReason: "fork PR approved (dispatch by alice"},
		{name: "fork: label by an admin who approved the head in a review runs", actor: "bob", approval: label("bob", head),
			prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))}, reviews: approvedByBob, wantReason: "fork PR approved (label gpu-approved added by bob"},
		{name: "teammate: dispatch by a maintainer at the head runs", actor: "alice", approval: dispatch("alice", head), prs: []*github.PullRequest{teammatePR()},
			wantReason: "PR approved for its author below admin/maintain (dispatch by alice"},
		{name: "teammate: label by an admin who approved the head runs", actor: "bob", approval: label("bob", head),
			prs: []*github.PullRequest{teammatePR(withLabel(ApprovalLabel))}, reviews: approvedByBob, wantReason: "PR approved for its author below admin/maintain (label"},
		{name: "fork: no approval refused", actor: "bob", prs: []*github.PullRequest{forkPR()},
			wantRefused: `PR #7 comes from mallory/gpu-project, not from org/gpu-project: a fork PR runs on a paid GPU only at a head an admin or maintainer approved`},
		{name: "teammate: no approval refused, saying how to approve", actor: "bob", prs: []*github.PullRequest{teammatePR()},
			wantRefused: `PR author carol has role "write"; paid GPU runs need admin or maintain, or an admin or maintainer's approval of the exact head they read (dispatch`},
		{name: "fork: approver with write refused", actor: "bob", approval: dispatch("carol", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `fork approver carol has role "write"`},
		{name: "teammate: approving yourself with write refused", actor: "bob", approval: dispatch("carol", head), prs: []*github.PullRequest{teammatePR()},
			wantRefused: `approver carol has role "write"`},
		{name: "label by a triager refused", actor: "bob", approval: label("dave", head), prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))},
			wantRefused: `fork approver dave has role "triage"`},
		{name: "re-run by a maintainer of a writer's dispatch refused", actor: "alice", approval: dispatch("carol", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `fork approver carol has role "write"`},
		{name: "push after the approval refused", actor: "alice", approval: dispatch("alice", head),
			prs:         []*github.PullRequest{forkPR(func(p *github.PullRequest) { p.Head.SHA = github.String(pushed) })},
			wantRefused: fmt.Sprintf("PR #7's head is %s, not the approved %s: a push after the approval voids it", pushed, head)},
		{name: "teammate: push after the approval refused", actor: "alice", approval: dispatch("alice", head), expected: pushed,
			prs:         []*github.PullRequest{teammatePR(func(p *github.PullRequest) { p.Head.SHA = github.String(pushed) })},
			wantRefused: fmt.Sprintf("PR #7's head is %s, not the approved %s: a push after the approval voids it", pushed, head)},
		{name: "label removed before authorize refused", actor: "bob", approval: label("bob", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: "no longer carries the label gpu-approved"},
		{name: "label removed between the two reads refused", actor: "bob", approval: label("bob", head), reviews: approvedByBob,
			prs:         []*github.PullRequest{forkPR(withLabel(ApprovalLabel)), forkPR()},
			wantRefused: "lost the label gpu-approved while it was being authorized"},
		{name: "label without an approving review refused", actor: "bob", approval: label("bob", head),
			prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))}, reviews: []*github.PullRequestReview{review("alice", "APPROVED", head)},
			wantRefused: "bob added the label gpu-approved without a standing approving review"},
		{name: "label after the labeller requested changes refused", actor: "bob", approval: label("bob", head),
			prs:         []*github.PullRequest{forkPR(withLabel(ApprovalLabel))},
			reviews:     []*github.PullRequestReview{review("bob", "APPROVED", head), review("bob", "CHANGES_REQUESTED", head), review("bob", "COMMENTED", head)},
			wantRefused: "without a standing approving review"},
		{name: "label whose review approved an earlier head refused", actor: "bob", approval: label("bob", head),
			prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))}, reviews: []*github.PullRequestReview{review("bob", "APPROVED", pushed)},
			wantRefused: fmt.Sprintf("bob's approving review is at %s, not at the labelled head %s", pushed, head)},
		{name: "a comment after the approval keeps it", actor: "bob", approval: label("bob", head),
			prs:        []*github.PullRequest{forkPR(withLabel(ApprovalLabel))},
			reviews:    []*github.PullRequestReview{review("bob", "APPROVED", head), review("bob", "COMMENTED", pushed)},
			wantReason: "fork PR approved (label"},
		{name: "push between the two reads skips", actor: "bob", approval: dispatch("bob", head),
			prs:      []*github.PullRequest{forkPR(), forkPR(func(p *github.PullRequest) { p.Head.SHA = github.String(pushed) })},
			wantSkip: "changed while it was being authorized"},
		{name: "triggering actor still checked", actor: "carol", approval: dispatch("alice", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `triggering actor carol has role "write"`},
		{name: "a merge commit of another head refused (push and revert)", actor: "alice", approval: dispatch("alice", head),
			prs: []*github.PullRequest{forkPR()}, commits: map[string]ghapi.Commit{merge: {Tree: strings.Repeat("7", 40), Parents: []string{base, pushed}}},
			wantRefused: fmt.Sprintf("PR #7's merge commit %s merges (%s, %s), not exactly (base %s, approved head %s)", merge, base, pushed, base, head)},
		{name: "a merge commit on another base refused", actor: "alice", approval: dispatch("alice", head),
			prs: []*github.PullRequest{teammatePR()}, commits: map[string]ghapi.Commit{merge: {Tree: strings.Repeat("7", 40), Parents: []string{pushed, head}}},
			wantRefused: "not exactly (base " + base},
		{name: "a merge commit with one parent refused", actor: "alice", approval: dispatch("alice", head),
			prs: []*github.PullRequest{forkPR()}, commits: map[string]ghapi.Commit{merge: {Tree: strings.Repeat("7", 40), Parents: []string{head}}},
			wantRefused: "not exactly (base"},
		{name: "not mergeable refused", actor: "alice", approval: dispatch("alice", head), prs: []*github.PullRequest{forkPR(notMergeable)},
			wantRefused: "PR #7 is not mergeable (mergeable false)"},
		{name: "mergeable not computed refused", actor: "alice", approval: dispatch("alice", head),
			prs:         []*github.PullRequest{forkPR(func(p *github.PullRequest) { p.Mergeable = nil })},
			wantRefused: "PR #7 is not mergeable (mergeable null: not computed yet)"},
		{name: "no longer mergeable on the re-read refused", actor: "alice", approval: dispatch("alice", head),
			prs:         []*github.PullRequest{forkPR(), forkPR(notMergeable)},
			wantRefused: "PR #7 is no longer mergeable (mergeable false) on the re-read"},
		{name: "a maintainer's own PR needs no approval, mergeable or not", actor: "bob", prs: []*github.PullRequest{pullRequest(notMergeable)},
			wantReason: "no earlier gate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: tc.prs, roles: roles, reviews: tc.reviews, commits: tc.commits}
			req := AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: cmp.Or(tc.expected, head), Actor: tc.actor,
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, ForkApproval: tc.approval}
			a, err := Authorize(context.Background(), f, req)
			if tc.wantRefused != "" {
				assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
				assert.Check(t, is.Contains(err.Error(), tc.wantRefused))
				assert.Check(t, is.Contains(a.Summary(err), "Nothing was spent"))
				return
			}
			assert.NilError(t, err)
			if tc.wantSkip != "" {
				assert.Equal(t, a.Outcome, OutcomeSkip)
				assert.Check(t, is.Contains(a.Reason, tc.wantSkip))
				return
			}
			assert.Equal(t, a.Outcome, OutcomeRun, a.Reason)
			assert.Equal(t, a.TestedRef, merge)
			assert.Equal(t, a.HeadSHA, head)
			assert.Check(t, is.Contains(a.Reason, tc.wantReason))
			if tc.approval != nil {
				assert.Check(t, is.Contains(a.Summary(nil), "approval | "+tc.approval.Approver+" ("+roles[tc.approval.Approver]+")"))
			}
		})
	}
}

// The approval comes only from a dispatch naming the SHA or from the approval
// label's own labeled event; anything else is no approval, and anything that
// looks like one but cannot be read or trusted is a refusal.
func TestForkApprovalFromTrigger(t *testing.T) {
	labeled := func(action, label, sender string, number int, sha string) func() ([]byte, error) {
		return func() ([]byte, error) {
			return []byte(fmt.Sprintf(`{"action":%q,"label":{"name":%q},"sender":{"login":%q},"pull_request":{"number":%d,"head":{"sha":%q}}}`,
				action, label, sender, number, sha)), nil
		}
	}
	tests := []struct {
		name    string
		trigger ApprovalTrigger
		want    *ForkApproval
		wantErr string
	}{
		{name: "dispatch with a SHA", trigger: ApprovalTrigger{EventName: "workflow_dispatch", Actor: "alice", ApprovedSHA: head, PRNumber: 7},
			want: &ForkApproval{Via: ApprovedByDispatch, SHA: head, Approver: "alice"}},
		{name: "SHA on workflow_run refused", trigger: ApprovalTrigger{EventName: "workflow_run", Actor: "alice", ApprovedSHA: head, PRNumber: 7},
			wantErr: `approved-fork-sha is honoured only when an admin or maintainer dispatches the lane (workflow_dispatch), not on "workflow_run"`},
		{name: "short SHA refused", trigger: ApprovalTrigger{EventName: "workflow_dispatch", Actor: "alice", ApprovedSHA: "abc123", PRNumber: 7},
			wantErr: `approved-fork-sha "abc123": want the fork PR's full head commit SHA`},
		{name: "dispatch without actor refused", trigger: ApprovalTrigger{EventName: "workflow_dispatch", ApprovedSHA: head, PRNumber: 7},
			wantErr: "the dispatcher is unknown"},
		{name: "plain dispatch is no approval", trigger: ApprovalTrigger{EventName: "workflow_dispatch", Actor: "alice", Label: ApprovalLabel, PRNumber: 7}},
		{name: "workflow_run is no approval", trigger: ApprovalTrigger{EventName: "workflow_run", Actor: "alice", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("labeled", ApprovalLabel, "alice", 7, head)}},
		{name: "labeled event", trigger: ApprovalTrigger{EventName: "pull_request_target", Actor: "bob", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("labeled", "GPU-Approved", "bob", 7, head)},
			want: &ForkApproval{Via: ApprovedByLabel, SHA: head, Approver: "bob", Label: ApprovalLabel}},
		{name: "another label is no approval", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("labeled", "bug", "bob", 7, head)}},
		{name: "synchronize is no approval", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("synchronize", ApprovalLabel, "mallory", 7, head)}},
		{name: "labeled event of another PR refused", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 8,
			Payload: labeled("labeled", ApprovalLabel, "bob", 7, head)},
			wantErr: "the gpu-approved labeled event is for PR #7, not for pr-number 8"},
		{name: "labeled event without head refused", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("labeled", ApprovalLabel, "bob", 7, "")},
			wantErr: "names no pull request head SHA"},
		{name: "labeled event without sender refused", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: labeled("labeled", ApprovalLabel, "", 7, head)},
			wantErr: "names no sender"},
		{name: "unreadable payload refused", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: func() ([]byte, error) { return nil, errors.New("open /event.json: no such file") }},
			wantErr: "read the pull_request_target event payload: open /event.json: no such file; a label approval cannot be verified"},
		{name: "malformed payload refused", trigger: ApprovalTrigger{EventName: "pull_request_target", Label: ApprovalLabel, PRNumber: 7,
			Payload: func() ([]byte, error) { return []byte("{"), nil }},
			wantErr: "parse the pull_request_target event payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForkApprovalFromTrigger(tc.trigger)
			if tc.wantErr != "" {
				assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, got == nil)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// A fork PR's reason names the approval exactly: who added which label at
// which head, or who dispatched which SHA.
func TestAuthorizeForkApprovalReason(t *testing.T) {
	fork := func(p *github.PullRequest) {
		p.Head.Repo.FullName = github.String("mallory/gpu-project")
		p.Labels = []*github.Label{{Name: github.String(ApprovalLabel)}}
	}
	for _, tc := range []struct {
		name     string
		approval ForkApproval
		want     string
	}{
		{name: "label", approval: ForkApproval{Via: ApprovedByLabel, SHA: head, Approver: "bob", Label: ApprovalLabel},
			want: "fork PR approved (label gpu-approved added by bob at head " + head + "); no earlier gate"},
		{name: "dispatch", approval: ForkApproval{Via: ApprovedByDispatch, SHA: head, Approver: "bob"},
			want: "fork PR approved (dispatch by bob with approved-fork-sha " + head + "); no earlier gate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: []*github.PullRequest{pullRequest(fork)}, roles: map[string]string{"bob": "admin"},
				reviews: []*github.PullRequestReview{review("bob", "APPROVED", head)}}
			approval := tc.approval

			a, err := Authorize(context.Background(), f, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, ForkApproval: &approval})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.Check(t, strings.HasPrefix(a.Reason, tc.want), a.Reason)
			assert.Equal(t, a.ApproverRole, "admin")
		})
	}
}
