package localgate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// relaySetup is a PR ready for the relay: labelled, at headSHA, with a
// maintainer's evidence comment, and the request the local command would send.
type relaySetup struct {
	*fixture
	pr  int
	req RelayRequest
}

func newRelaySetup(t *testing.T) *relaySetup {
	t.Helper()
	f := newFixture(t)
	pr := f.addLabelledPR(t)
	id, err := f.srv.AddIssueComment(repoFull, pr, "maint", mustComment(t, sampleEvidence(headSHA)))
	assert.NilError(t, err)
	return &relaySetup{fixture: f, pr: pr, req: RelayRequest{
		Repository: repoFull, PRNumber: pr, SHA: headSHA, CommentID: id, Dispatcher: "maint",
		TriggeringActor: "maint", Event: "workflow_dispatch", WorkflowRef: "refs/heads/main",
	}}
}

func (s *relaySetup) comment(t *testing.T, author, body string) int64 {
	t.Helper()
	id, err := s.srv.AddIssueComment(repoFull, s.pr, author, body)
	assert.NilError(t, err)
	return id
}

// changeAfterFirstRead changes the PR on GitHub right after the relay's first
// read of it, as a push or a base update racing the relay would.
type changeAfterFirstRead struct {
	RelayPublisher
	reads  int
	change func()
}

func (c *changeAfterFirstRead) GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	pr, err := c.RelayPublisher.GetPullRequest(ctx, number)
	if c.reads++; c.reads == 1 {
		c.change()
	}
	return pr, err
}

func TestRelayRefuses(t *testing.T) {
	tests := []struct {
		name string
		// setup changes GitHub or the request; it may wrap the client.
		setup     func(t *testing.T, s *relaySetup, req *RelayRequest, gh *RelayPublisher)
		wantCheck Check
		wantErr   string
	}{
		{
			name: "dispatcher has write",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.Dispatcher, req.TriggeringActor = "writer", "writer"
			},
			wantCheck: CheckDispatcherRole,
			wantErr:   `dispatcher writer has role "write"; a local GPU validation needs admin or maintain`,
		},
		{
			name: "dispatcher has triage",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.Dispatcher, req.TriggeringActor = "triager", ""
			},
			wantCheck: CheckDispatcherRole,
			wantErr:   `dispatcher triager has role "triage"`,
		},
		{
			name: "dispatcher has no role",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.Dispatcher, req.TriggeringActor = "nobody", ""
			},
			wantCheck: CheckDispatcherRole,
			wantErr:   `dispatcher nobody has role "none"`,
		},
		{
			name: "re-run by a writer",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.TriggeringActor = "writer"
			},
			wantCheck: CheckDispatcherRole,
			wantErr:   `re-running actor writer has role "write"`,
		},
		{
			name: "closed PR",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, _ *RelayPublisher) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" })
			},
			wantCheck: CheckPRState,
			wantErr:   "PR #1 is closed; only an open PR can be validated",
		},
		{
			name: "missing label",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, _ *RelayPublisher) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.Labels = []string{"gpu"} })
			},
			wantCheck: CheckLabel,
			wantErr:   "PR #1 is not labelled gpu-validated-locally",
		},
		{
			name: "head moved",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, _ *RelayPublisher) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = pushSHA })
			},
			wantCheck: CheckHeadSHA,
			wantErr:   "PR #1's head is " + pushSHA + ", not " + headSHA,
		},
		{
			name: "relay run from a PR branch",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.WorkflowRef = "refs/heads/feature"
			},
			wantCheck: CheckTrigger,
			wantErr:   `the relay runs on "refs/heads/feature", not on the default branch (refs/heads/main)`,
		},
		{
			name: "not a dispatch",
			setup: func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.Event = "pull_request_target"
			},
			wantCheck: CheckTrigger,
			wantErr:   `event "pull_request_target": the relay runs only from workflow_dispatch`,
		},
		{
			name: "comment by a non-maintainer",
			setup: func(t *testing.T, s *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.CommentID = s.comment(t, "writer", mustComment(t, sampleEvidence(headSHA)))
			},
			wantCheck: CheckCommentAuthor,
			wantErr:   `comment author writer has role "write"`,
		},
		{
			name: "comment on another PR",
			setup: func(t *testing.T, s *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				other, err := s.srv.AddPullRequest(repoFull, githubsim.PullRequestSpec{HeadRef: "other", HeadSHA: pushSHA})
				assert.NilError(t, err)
				req.CommentID, err = s.srv.AddIssueComment(repoFull, other, "maint", mustComment(t, sampleEvidence(headSHA)))
				assert.NilError(t, err)
			},
			wantCheck: CheckComment,
			wantErr:   "is not on PR #1",
		},
		{
			name: "marker for another SHA",
			setup: func(t *testing.T, s *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.CommentID = s.comment(t, "maint", mustComment(t, sampleEvidence(pushSHA)))
			},
			wantCheck: CheckMarker,
			wantErr:   "is evidence for " + pushSHA + ", not for the dispatched " + headSHA,
		},
		{
			name: "marker not on the first line",
			setup: func(t *testing.T, s *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.CommentID = s.comment(t, "maint", "Looks good!\n"+mustComment(t, sampleEvidence(headSHA)))
			},
			wantCheck: CheckMarker,
			wantErr:   `first line "Looks good!" is not a local-gate marker`,
		},
		{
			name: "marker without evidence",
			setup: func(t *testing.T, s *relaySetup, req *RelayRequest, _ *RelayPublisher) {
				req.CommentID = s.comment(t, "maint", Marker(headSHA)+"\nLocal GPU validation: passed")
			},
			wantCheck: CheckEvidence,
			wantErr:   "evidence lines missing: GPU, Driver, CUDA, Duration, Log SHA-256, Command",
		},
		{
			name: "PR pushed between the two reads",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, gh *RelayPublisher) {
				*gh = &changeAfterFirstRead{RelayPublisher: *gh, change: func() {
					s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = pushSHA })
				}}
			},
			wantCheck: CheckPRUnchanged,
			wantErr:   "PR #1 changed while the relay verified it (head " + headSHA + " -> " + pushSHA + ")",
		},
		{
			name: "base moved between the two reads",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, gh *RelayPublisher) {
				*gh = &changeAfterFirstRead{RelayPublisher: *gh, change: func() {
					s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.BaseSHA = strings.Repeat("e", 40) })
				}}
			},
			wantCheck: CheckPRUnchanged,
			wantErr:   "(base " + baseSHA + " -> " + strings.Repeat("e", 40) + ")",
		},
		{
			name: "PR closed and unlabelled between the two reads",
			setup: func(t *testing.T, s *relaySetup, _ *RelayRequest, gh *RelayPublisher) {
				*gh = &changeAfterFirstRead{RelayPublisher: *gh, change: func() {
					s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.State, p.Labels = "closed", nil })
				}}
			},
			wantCheck: CheckPRUnchanged,
			wantErr:   "(state open -> closed, label gpu-validated-locally removed)",
		},
		{
			name:      "sha is a branch name",
			setup:     func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) { req.SHA = "main" },
			wantCheck: CheckRequest,
			wantErr:   `sha "main": want a full lowercase commit SHA`,
		},
		{
			name:      "no comment id",
			setup:     func(_ *testing.T, _ *relaySetup, req *RelayRequest, _ *RelayPublisher) { req.CommentID = 0 },
			wantCheck: CheckRequest,
			wantErr:   "comment-id 0: want the evidence comment's id",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newRelaySetup(t)
			req := s.req
			var gh RelayPublisher = s.client(t, actionsToken)
			tc.setup(t, s, &req, &gh)

			_, err := Relay(ctx, gh, req, PublishOptions{})
			assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
			assert.Equal(t, CheckOf(err), tc.wantCheck)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, is.Len(s.srv.CheckRuns(repoFull, headSHA), 0), "a refused relay published a check")
		})
	}
}

func TestRelayGitHubErrorsAreNotRefusals(t *testing.T) {
	s := newRelaySetup(t)
	s.srv.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Method: "GET", Path: "/repos/*/*/issues/*/comments"})

	_, err := Relay(ctx, s.client(t, actionsToken), s.req, PublishOptions{})
	assert.ErrorContains(t, err, "list the comments of PR #1")
	assert.Assert(t, !errors.Is(err, ErrRefused), "an API failure is not a verdict: %v", err)
	assert.Check(t, is.Len(s.srv.CheckRuns(repoFull, headSHA), 0))

	req := s.req
	req.PRNumber = 99
	_, err = Relay(ctx, s.client(t, actionsToken), req, PublishOptions{})
	assert.Assert(t, errors.Is(err, ghapi.ErrNotFound), "got %v", err)
}

func TestRelayPublishesLocalGateThatIsNeverReused(t *testing.T) {
	s := newRelaySetup(t)
	client := s.client(t, actionsToken)

	got, err := Relay(ctx, client, s.req, PublishOptions{
		RunID: 77, RunURL: "https://github.com/octo/gpu-lib/actions/runs/77", CompletedAt: start,
	})
	assert.NilError(t, err)
	assert.Equal(t, got.ExternalID, "local-gpu-gate:v1:"+headSHA)
	assert.Equal(t, got.Evidence, sampleEvidence(headSHA))
	assert.Equal(t, got.DispatcherRole, "maintain")
	golden.Assert(t, got.Summary(), "relay-summary.golden")

	runs := s.srv.CheckRuns(repoFull, headSHA)
	assert.Assert(t, is.Len(runs, 1))
	run := runs[0]
	assert.Equal(t, run.ID, got.CheckRunID)
	assert.Equal(t, run.Name, gatecheck.DefaultCheckName)
	assert.Equal(t, run.ExternalID, "local-gpu-gate:v1:"+headSHA)
	assert.Equal(t, run.Status, "completed")
	assert.Equal(t, run.Conclusion, "success")
	assert.Equal(t, run.AppID, githubsim.ActionsAppID)
	// GitHub overwrites details_url of GITHUB_TOKEN checks, so the summary carries the run link.
	assert.Check(t, is.Contains(run.Output.Summary, "https://github.com/octo/gpu-lib/actions/runs/77"))
	assert.Check(t, is.Contains(run.Output.Summary, got.CommentURL))

	// However the reuse lookup is asked, a local validation never lets the paid path be skipped.
	for _, tested := range []string{headSHA, strings.Repeat("c", 40)} {
		d := gatecheck.DecideReuse(ctx, client, gatecheck.ReuseQuery{HeadSHA: headSHA, TestedRef: tested})
		assert.Check(t, !d.Reuse, "reused a local gate for %s: %s", tested, d.Reason)
		assert.Check(t, is.Contains(d.Reason, "no earlier gate"))
	}
}

func TestRelayAcceptsAdminAndCRLFComment(t *testing.T) {
	s := newRelaySetup(t)
	req := s.req
	req.Dispatcher, req.TriggeringActor = "admin2", ""
	crlf := strings.ReplaceAll(mustComment(t, sampleEvidence(headSHA)), "\n", "\r\n")
	req.CommentID = s.comment(t, "admin2", crlf)

	got, err := Relay(ctx, s.client(t, actionsToken), req, PublishOptions{CheckName: "GPU gate (local)", CompletedAt: start})
	assert.NilError(t, err)
	assert.Equal(t, got.CommentAuthor, "admin2")
	runs := s.srv.CheckRuns(repoFull, headSHA)
	assert.Assert(t, is.Len(runs, 1))
	assert.Equal(t, runs[0].Name, "GPU gate (local)")
}

// A fork PR stays eligible for the relay: it runs none of the PR's code, and
// the same checks (maintainer dispatcher and evidence, label, head at the SHA)
// bind the gate to the validated commit. A push to the fork voids it.
func TestRelayPublishesForAForkPR(t *testing.T) {
	tests := []struct {
		name      string
		head      string
		wantCheck Check
	}{
		{name: "at the validated head", head: headSHA},
		{name: "after a push to the fork", head: pushSHA, wantCheck: CheckHeadSHA},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newRelaySetup(t)
			s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) {
				p.HeadRepo, p.Author, p.HeadSHA = "mallory/gpu-lib", "mallory", tc.head
			})
			got, err := Relay(ctx, s.client(t, actionsToken), s.req, PublishOptions{CompletedAt: start})
			if tc.wantCheck != "" {
				assert.Equal(t, CheckOf(err), tc.wantCheck, "got %v", err)
				assert.Check(t, is.Len(s.srv.CheckRuns(repoFull, headSHA), 0))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got.Fork, "mallory/gpu-lib")
			assert.Check(t, is.Contains(got.Summary(), "#1 open, from the fork mallory/gpu-lib, labelled gpu-validated-locally"))
			runs := s.srv.CheckRuns(repoFull, headSHA)
			assert.Assert(t, is.Len(runs, 1))
			assert.Equal(t, runs[0].Conclusion, "success")
		})
	}
}

// stalling answers one of the relay's GitHub calls never: it returns only
// when the call's context ends, as a connection that hangs would.
type stalling struct {
	RelayPublisher
	call string
}

func (s stalling) stall(ctx context.Context, call string) error {
	if s.call != call {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s stalling) GetPullRequest(ctx context.Context, n int) (*github.PullRequest, error) {
	if err := s.stall(ctx, "pr"); err != nil {
		return nil, err
	}
	return s.RelayPublisher.GetPullRequest(ctx, n)
}

func (s stalling) PermissionRole(ctx context.Context, user string) (string, error) {
	if err := s.stall(ctx, "role"); err != nil {
		return "", err
	}
	return s.RelayPublisher.PermissionRole(ctx, user)
}

func (s stalling) ListIssueComments(ctx context.Context, n int) ([]*github.IssueComment, error) {
	if err := s.stall(ctx, "comments"); err != nil {
		return nil, err
	}
	return s.RelayPublisher.ListIssueComments(ctx, n)
}

func (s stalling) CreateCheckRun(ctx context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	if err := s.stall(ctx, "create"); err != nil {
		return nil, err
	}
	return s.RelayPublisher.CreateCheckRun(ctx, in)
}

// Every GitHub call of the relay has a deadline: a read (or the gate's
// creation) that never answers fails the relay with the call named, and
// nothing is published; the job never waits for the runner to kill it.
func TestRelayCallsHaveADeadline(t *testing.T) {
	tests := []struct{ call, wantErr string }{
		{call: "role", wantErr: "read the role of dispatcher maint: no answer within 50ms"},
		{call: "pr", wantErr: "read PR #1: no answer within 50ms"},
		{call: "comments", wantErr: "list the comments of PR #1: no answer within 50ms"},
		{call: "create", wantErr: "no answer within 50ms"},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			s := newRelaySetup(t)
			req := s.req
			req.CallTimeout = 50 * time.Millisecond
			// The run itself has all the time in the world: only the per-call deadline can end a stall.
			done := make(chan error, 1)
			go func() {
				_, err := Relay(context.Background(), stalling{RelayPublisher: s.client(t, actionsToken), call: tc.call}, req, PublishOptions{})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // only a relay without deadlines gets here
				t.Fatalf("the relay still waits on the stalled %s call", tc.call)
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, errors.Is(err, context.DeadlineExceeded))
			assert.Check(t, is.Len(s.srv.CheckRuns(repoFull, headSHA), 0), "nothing published")
		})
	}
}
