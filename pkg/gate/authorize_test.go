package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

const repo = "org/gpu-project"

var base = strings.Repeat("d", 40)

// fakeGitHub answers PR reads in order (the last one repeats), roles by user,
// the PR's files and the gate check runs.
type fakeGitHub struct {
	prs   []*github.PullRequest
	reads int
	roles map[string]string
	files []string
	runs  []*github.CheckRun
	err   error
}

func (f *fakeGitHub) GetPullRequest(context.Context, int) (*github.PullRequest, error) {
	if f.err != nil {
		return nil, f.err
	}
	pr := f.prs[min(f.reads, len(f.prs)-1)]
	f.reads++
	return pr, nil
}
func (f *fakeGitHub) ListPullRequestFiles(context.Context, int) ([]string, error) {
	return f.files, nil
}
func (f *fakeGitHub) PermissionRole(_ context.Context, user string) (string, error) {
	if r, ok := f.roles[user]; ok {
		return r, nil
	}
	return "none", nil
}
func (f *fakeGitHub) ListCheckRunsForRef(context.Context, string, string, int) ([]*github.CheckRun, error) {
	return f.runs, nil
}

func pullRequest(mut ...func(*github.PullRequest)) *github.PullRequest {
	pr := &github.PullRequest{
		Number: github.Int(7), State: github.String("open"), MergeCommitSHA: github.String(merge),
		User: &github.User{Login: github.String("alice")},
		Head: &github.PullRequestBranch{SHA: github.String(head), Repo: &github.Repository{FullName: github.String(repo)}},
		Base: &github.PullRequestBranch{SHA: github.String(base), Repo: &github.Repository{FullName: github.String(repo)}},
	}
	for _, m := range mut {
		m(pr)
	}
	return pr
}

func TestAuthorize(t *testing.T) {
	maintainers := map[string]string{"alice": "maintain", "bob": "admin", "carol": "write", "dave": "triage", "erin": "read"}
	tests := []struct {
		name        string
		req         func(*AuthorizeRequest)
		gh          func(*fakeGitHub)
		wantOutcome Outcome
		wantKind    Kind
		wantRefused string
		wantReason  string
		wantTested  string
	}{
		{name: "maintainer PR runs the paid path", wantOutcome: OutcomeRun, wantTested: merge, wantReason: "no earlier gate"},
		{name: "earlier paid gate is reused", gh: func(f *fakeGitHub) { f.runs = []*github.CheckRun{ok(99, merge, KindPaid, t0)} },
			wantOutcome: OutcomeReuse, wantTested: merge, wantReason: "reusing"},
		{name: "fork refused", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.Head.Repo.FullName = github.String("mallory/gpu-project") })}
		}, wantRefused: `comes from "mallory/gpu-project"`},
		{name: "author with write refused", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.User.Login = github.String("carol") })}
		}, wantRefused: `PR author carol has role "write"`},
		{name: "author with triage refused", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.User.Login = github.String("dave") })}
		}, wantRefused: `role "triage"`},
		{name: "actor with read refused", req: func(r *AuthorizeRequest) { r.Actor = "erin" }, wantRefused: `triggering actor erin has role "read"`},
		{name: "actor with no role refused", req: func(r *AuthorizeRequest) { r.Actor = "stranger" }, wantRefused: `role "none"`},
		{name: "closed PR skipped", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.State = github.String("closed") })}
		}, wantOutcome: OutcomeSkip, wantReason: "PR #7 is closed"},
		{name: "head moved since the trigger", req: func(r *AuthorizeRequest) { r.ExpectedHeadSHA = strings.Repeat("9", 40) },
			wantOutcome: OutcomeSkip, wantReason: "head moved"},
		{name: "head moved between the two reads", gh: func(f *fakeGitHub) {
			f.prs = append(f.prs, pullRequest(func(p *github.PullRequest) { p.Head.SHA = github.String(strings.Repeat("e", 40)) }))
		}, wantOutcome: OutcomeSkip, wantReason: "changed while it was being authorized"},
		{name: "base moved between the two reads", gh: func(f *fakeGitHub) {
			f.prs = append(f.prs, pullRequest(func(p *github.PullRequest) { p.Base.SHA = github.String(strings.Repeat("f", 40)) }))
		}, wantOutcome: OutcomeSkip, wantReason: "changed while it was being authorized"},
		{name: "local label skips and publishes nothing", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.Labels = []*github.Label{{Name: github.String(LocalLabel)}} })}
		}, wantOutcome: OutcomeSkip, wantReason: "labelled gpu-validated-locally"},
		{name: "docs-only change with GPU paths is not required",
			req:         func(r *AuthorizeRequest) { r.IsGPUPath = gpuPaths(t, "src/**/*.cu", "CMakeLists.txt") },
			gh:          func(f *fakeGitHub) { f.files = []string{"README.md", "docs/guide.md"} },
			wantOutcome: OutcomeSkip, wantKind: KindNotRequired, wantTested: merge, wantReason: "none under the configured GPU paths"},
		{name: "GPU change with GPU paths runs",
			req:         func(r *AuthorizeRequest) { r.IsGPUPath = gpuPaths(t, "src/**/*.cu") },
			gh:          func(f *fakeGitHub) { f.files = []string{"README.md", "src/kernels/add.cu"} },
			wantOutcome: OutcomeRun, wantTested: merge},
		{name: "merge commit not computed", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.MergeCommitSHA = nil })}
		}, wantRefused: "no merge commit to pin"},
		{name: "manual dispatch runs and never reuses", req: func(r *AuthorizeRequest) { r.PRNumber, r.DispatchSHA = 0, merge2 },
			gh:          func(f *fakeGitHub) { f.runs = []*github.CheckRun{ok(99, merge2, KindPaid, t0)} },
			wantOutcome: OutcomeRun, wantTested: merge2, wantReason: "manual validation"},
		{name: "manual dispatch needs a SHA", req: func(r *AuthorizeRequest) { r.PRNumber, r.DispatchSHA = 0, "main" }, wantRefused: "resolved commit SHA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: maintainers}
			if tc.gh != nil {
				tc.gh(f)
			}
			req := AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob", Reuse: ReuseQuery{AppID: ourApp}}
			if tc.req != nil {
				tc.req(&req)
			}
			a, err := Authorize(context.Background(), f, req)
			if tc.wantRefused != "" {
				assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
				assert.Check(t, is.Contains(err.Error(), tc.wantRefused))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, tc.wantOutcome, a.Reason)
			assert.Equal(t, a.Kind, tc.wantKind)
			assert.Check(t, is.Contains(a.Reason, tc.wantReason))
			if tc.wantTested != "" {
				assert.Equal(t, a.TestedRef, tc.wantTested)
			}
		})
	}
}

func TestAuthorizeGitHubErrorIsNotASkip(t *testing.T) {
	f := &fakeGitHub{roles: map[string]string{"bob": "admin"}, err: errors.New("502")}
	_, err := Authorize(context.Background(), f, AuthorizeRequest{Repository: repo, PRNumber: 7, Actor: "bob"})
	assert.ErrorContains(t, err, "read PR #7: 502")
	assert.Check(t, !errors.Is(err, ErrRefused))
}

// gpuPaths builds the matcher the action passes: the config's own gpu_paths rule.
func gpuPaths(t *testing.T, globs ...string) func(string) bool {
	cfg := config.Default()
	cfg.GPUPaths = globs
	return cfg.IsGPUPath
}
