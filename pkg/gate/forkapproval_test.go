package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
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

// Authorize lets a fork PR run only at the exact head an admin or maintainer
// approved, and refuses every other combination without spending.
func TestAuthorizeForkApproval(t *testing.T) {
	roles := map[string]string{"alice": "maintain", "bob": "admin", "carol": "write", "dave": "triage"}
	pushed := strings.Repeat("e", 40)
	dispatch := func(approver, sha string) *ForkApproval {
		return &ForkApproval{Via: ApprovedByDispatch, SHA: sha, Approver: approver}
	}
	label := func(approver, sha string) *ForkApproval {
		return &ForkApproval{Via: ApprovedByLabel, SHA: sha, Approver: approver, Label: ApprovalLabel}
	}
	tests := []struct {
		name        string
		actor       string
		approval    *ForkApproval
		prs         []*github.PullRequest
		wantRefused string
		wantSkip    string
	}{
		{name: "dispatch by a maintainer at the head runs", actor: "alice", approval: dispatch("alice", head), prs: []*github.PullRequest{forkPR()}},
		{name: "label by an admin at the head runs", actor: "bob", approval: label("bob", head), prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))}},
		{name: "no approval refused", actor: "bob", prs: []*github.PullRequest{forkPR()},
			wantRefused: `PR #7 comes from mallory/gpu-project, not from org/gpu-project: a fork PR runs on a paid GPU only at a head an admin or maintainer approved`},
		{name: "approver with write refused", actor: "bob", approval: dispatch("carol", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `fork approver carol has role "write"`},
		{name: "label by a triager refused", actor: "bob", approval: label("dave", head), prs: []*github.PullRequest{forkPR(withLabel(ApprovalLabel))},
			wantRefused: `fork approver dave has role "triage"`},
		{name: "re-run by a maintainer of a writer's dispatch refused", actor: "alice", approval: dispatch("carol", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `fork approver carol has role "write"`},
		{name: "push after the approval refused", actor: "alice", approval: dispatch("alice", head),
			prs:         []*github.PullRequest{forkPR(func(p *github.PullRequest) { p.Head.SHA = github.String(pushed) })},
			wantRefused: fmt.Sprintf("PR #7's head is %s, not the approved %s: a push after the approval voids it", pushed, head)},
		{name: "label removed before authorize refused", actor: "bob", approval: label("bob", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: "no longer carries the label gpu-approved"},
		{name: "label removed between the two reads refused", actor: "bob", approval: label("bob", head),
			prs:         []*github.PullRequest{forkPR(withLabel(ApprovalLabel)), forkPR()},
			wantRefused: "lost the label gpu-approved while it was being authorized"},
		{name: "push between the two reads skips", actor: "bob", approval: dispatch("bob", head),
			prs:      []*github.PullRequest{forkPR(), forkPR(func(p *github.PullRequest) { p.Head.SHA = github.String(pushed) })},
			wantSkip: "changed while it was being authorized"},
		{name: "triggering actor still checked", actor: "carol", approval: dispatch("alice", head), prs: []*github.PullRequest{forkPR()},
			wantRefused: `triggering actor carol has role "write"`},
		{name: "approval does not lift the author check of a same-repo PR", actor: "bob", approval: dispatch("bob", head),
			prs:         []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.User.Login = github.String("carol") })},
			wantRefused: `PR author carol has role "write"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: tc.prs, roles: roles}
			req := AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: tc.actor,
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
			assert.Check(t, is.Contains(a.Reason, "fork PR approved"))
			assert.Check(t, is.Contains(a.Summary(nil), "| fork approval | "+tc.approval.Approver+" ("+roles[tc.approval.Approver]+")"))
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
			f := &fakeGitHub{prs: []*github.PullRequest{pullRequest(fork)}, roles: map[string]string{"bob": "admin"}}
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
