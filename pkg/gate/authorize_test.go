package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
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
	// commits answers GitCommit; a commit it does not name is merge of (base, head).
	commits map[string]ghapi.Commit
	reviews []*github.PullRequestReview
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
func (f *fakeGitHub) GitCommit(_ context.Context, sha string) (ghapi.Commit, error) {
	if c, ok := f.commits[sha]; ok {
		return c, nil
	}
	return ghapi.Commit{Tree: strings.Repeat("7", 40), Parents: []string{base, head}}, nil
}
func (f *fakeGitHub) ListPullRequestReviews(context.Context, int) ([]*github.PullRequestReview, error) {
	return f.reviews, nil
}

// review is a submitted review by who with state at commit.
func review(who, state, commit string) *github.PullRequestReview {
	return &github.PullRequestReview{User: &github.User{Login: github.String(who)}, State: github.String(state), CommitID: github.String(commit)}
}

func pullRequest(mut ...func(*github.PullRequest)) *github.PullRequest {
	pr := &github.PullRequest{
		Number: github.Int(7), State: github.String("open"), MergeCommitSHA: github.String(merge), Mergeable: github.Bool(true),
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
		wantKind    gatecheck.Kind
		wantRefused string
		wantReason  string
		wantTested  string
	}{
		{name: "maintainer PR runs the paid path", wantOutcome: OutcomeRun, wantTested: merge, wantReason: "no earlier gate"},
		{name: "earlier paid gate is reused", gh: func(f *fakeGitHub) { f.runs = []*github.CheckRun{ok(99, merge, gatecheck.KindPaid, t0)} },
			wantOutcome: OutcomeReuse, wantTested: merge, wantReason: "reusing"},
		{name: "fork refused", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.Head.Repo.FullName = github.String("mallory/gpu-project") })}
		}, wantRefused: `comes from mallory/gpu-project, not from org/gpu-project: a fork PR runs on a paid GPU only at a head an admin or maintainer approved`},
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
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.Labels = []*github.Label{{Name: github.String(gatecheck.LocalLabel)}} })}
		}, wantOutcome: OutcomeSkip, wantReason: "labelled gpu-validated-locally"},
		{name: "docs-only change with GPU paths is not required",
			req:         func(r *AuthorizeRequest) { r.IsGPUPath = gpuPaths(t, "src/**/*.cu", "CMakeLists.txt") },
			gh:          func(f *fakeGitHub) { f.files = []string{"README.md", "docs/guide.md"} },
			wantOutcome: OutcomeSkip, wantKind: gatecheck.KindNotRequired, wantTested: merge, wantReason: "none under the configured GPU paths"},
		{name: "GPU change with GPU paths runs",
			req:         func(r *AuthorizeRequest) { r.IsGPUPath = gpuPaths(t, "src/**/*.cu") },
			gh:          func(f *fakeGitHub) { f.files = []string{"README.md", "src/kernels/add.cu"} },
			wantOutcome: OutcomeRun, wantTested: merge},
		{name: "merge commit not computed", gh: func(f *fakeGitHub) {
			f.prs = []*github.PullRequest{pullRequest(func(p *github.PullRequest) { p.MergeCommitSHA = nil })}
		}, wantRefused: "no merge commit to pin"},
		{name: "manual dispatch runs and never reuses", req: func(r *AuthorizeRequest) { r.PRNumber, r.DispatchSHA = 0, merge2 },
			gh:          func(f *fakeGitHub) { f.runs = []*github.CheckRun{ok(99, merge2, gatecheck.KindPaid, t0)} },
			wantOutcome: OutcomeRun, wantTested: merge2, wantReason: "manual validation"},
		{name: "manual dispatch needs a SHA", req: func(r *AuthorizeRequest) { r.PRNumber, r.DispatchSHA = 0, "main" }, wantRefused: "resolved commit SHA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: maintainers}
			if tc.gh != nil {
				tc.gh(f)
			}
			req := AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob", Reuse: gatecheck.ReuseQuery{AppID: ourApp}}
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

// stallingGitHub is fakeGitHub whose n-th call (from 1) of one method stalls
// until its context ends, as a hung GitHub connection does, and which records
// how long each call had left before its deadline.
type stallingGitHub struct {
	fakeGitHub
	stall   string // method name; "" stalls nothing
	nth     int
	mu      sync.Mutex
	calls   map[string]int
	budgets map[string][]time.Duration // method → time left at each call (-1: no deadline)
}

func (s *stallingGitHub) enter(ctx context.Context, method string) error {
	s.mu.Lock()
	if s.calls == nil {
		s.calls, s.budgets = map[string]int{}, map[string][]time.Duration{}
	}
	s.calls[method]++
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	s.budgets[method] = append(s.budgets[method], left)
	stall := method == s.stall && s.calls[method] == s.nth
	s.mu.Unlock()
	if stall {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *stallingGitHub) GetPullRequest(ctx context.Context, n int) (*github.PullRequest, error) {
	if err := s.enter(ctx, "GetPullRequest"); err != nil {
		return nil, err
	}
	return s.fakeGitHub.GetPullRequest(ctx, n)
}
func (s *stallingGitHub) ListPullRequestFiles(ctx context.Context, n int) ([]string, error) {
	if err := s.enter(ctx, "ListPullRequestFiles"); err != nil {
		return nil, err
	}
	return s.fakeGitHub.ListPullRequestFiles(ctx, n)
}
func (s *stallingGitHub) PermissionRole(ctx context.Context, user string) (string, error) {
	if err := s.enter(ctx, "PermissionRole"); err != nil {
		return "", err
	}
	return s.fakeGitHub.PermissionRole(ctx, user)
}
func (s *stallingGitHub) ListCheckRunsForRef(ctx context.Context, sha, name string, pages int) ([]*github.CheckRun, error) {
	if err := s.enter(ctx, "ListCheckRunsForRef"); err != nil {
		return nil, err
	}
	return s.fakeGitHub.ListCheckRunsForRef(ctx, sha, name, pages)
}

// TestAuthorizeBoundsEveryRead stalls each GitHub read in turn: authorize must
// end within the read's deadline, unauthorized (nothing may be spent), with an
// error naming the read, except the reuse lookup, which fails open to "run".
func TestAuthorizeBoundsEveryRead(t *testing.T) {
	const limit = 50 * time.Millisecond
	tests := []struct {
		stall       string
		nth         int
		wantErr     string
		wantOutcome Outcome
	}{
		{stall: "PermissionRole", nth: 1, wantErr: "read the role of triggering actor bob: GitHub did not answer within the 50ms read deadline"},
		{stall: "GetPullRequest", nth: 1, wantErr: "read PR #7: GitHub did not answer within the 50ms read deadline"},
		{stall: "PermissionRole", nth: 2, wantErr: "read the role of PR author alice: GitHub did not answer within the 50ms read deadline"},
		{stall: "ListPullRequestFiles", nth: 1, wantErr: "list files of PR #7: GitHub did not answer within the 50ms read deadline"},
		{stall: "GetPullRequest", nth: 2, wantErr: "re-read PR #7: GitHub did not answer within the 50ms read deadline"},
		{stall: "ListCheckRunsForRef", nth: 1, wantOutcome: OutcomeRun},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s#%d", tc.stall, tc.nth), func(t *testing.T) {
			f := &stallingGitHub{fakeGitHub: fakeGitHub{prs: []*github.PullRequest{pullRequest()},
				roles: map[string]string{"alice": "maintain", "bob": "admin"}, files: []string{"src/a.cu"}}, stall: tc.stall, nth: tc.nth}
			// A guard far above the bound: Authorize, not this context, must end a stall.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			a, err := Authorize(ctx, f, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				IsGPUPath: gpuPaths(t, "src/**"), ReadTimeout: limit})
			assert.Check(t, time.Since(start) < 10*time.Second, "authorize took %s", time.Since(start))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, context.DeadlineExceeded))
				assert.Check(t, !errors.Is(err, ErrRefused), "a stall is not a refusal: the job can be re-run")
				assert.Check(t, is.Equal(a.Outcome, Outcome("")), "no decision, so no later job spends")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(a.Outcome, tc.wantOutcome))
			assert.Check(t, is.Contains(a.Reason, "reuse lookup failed"))
		})
	}
}

// TestAuthorizeEveryReadHasADeadline checks, without waiting, that every read
// of a full authorization carries a deadline no later than ReadTimeout (the
// default when it is 0).
func TestAuthorizeEveryReadHasADeadline(t *testing.T) {
	for _, limit := range []time.Duration{0, 5 * time.Second} {
		f := &stallingGitHub{fakeGitHub: fakeGitHub{prs: []*github.PullRequest{pullRequest()},
			roles: map[string]string{"alice": "maintain", "bob": "admin"}, files: []string{"src/a.cu"}}}
		a, err := Authorize(context.Background(), f, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
			IsGPUPath: gpuPaths(t, "src/**"), ReadTimeout: limit})
		assert.NilError(t, err)
		assert.Equal(t, a.Outcome, OutcomeRun)
		want := limit
		if want == 0 {
			want = gatecheck.DefaultReadTimeout
		}
		assert.DeepEqual(t, f.calls, map[string]int{"PermissionRole": 2, "GetPullRequest": 2, "ListPullRequestFiles": 1, "ListCheckRunsForRef": 1})
		for method, budgets := range f.budgets {
			for i, left := range budgets {
				assert.Check(t, left > 0 && left <= want, "%s call %d: %s left before its deadline; want (0, %s]", method, i+1, left, want)
			}
		}
	}
}

// TestAuthorizeReadErrors says which bound ended a read, or that the run was cancelled.
func TestAuthorizeReadErrors(t *testing.T) {
	wait := &reqpolicy.WaitError{Wait: 10 * time.Minute, Remaining: 40 * time.Second, Reason: "Retry-After after 403 Forbidden", Status: 403}
	tests := []struct {
		name    string
		err     error
		cancel  bool
		wantErr string
	}{
		{name: "rate limit wait past the deadline", err: wait,
			wantErr: "read PR #7: GitHub asks for a pause that does not fit the 1m0s read deadline: wait 10m0s (Retry-After after 403 Forbidden)"},
		{name: "plain error", err: errors.New("502 Bad Gateway"), wantErr: "read PR #7: 502 Bad Gateway"},
		{name: "cancelled run", err: context.Canceled, cancel: true, wantErr: "read PR #7: cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			f := &fakeGitHub{roles: map[string]string{"bob": "admin"}, err: tc.err}
			_, err := Authorize(ctx, f, AuthorizeRequest{Repository: repo, PRNumber: 7, Actor: "bob"})
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, !errors.Is(err, ErrRefused))
		})
	}
}

// treeGitHub is a fakeGitHub that can read commit trees (TreeReader).
type treeGitHub struct {
	*fakeGitHub
	tree    string
	treeErr error
	reads   []string
}

func (g *treeGitHub) CommitTree(_ context.Context, sha string) (string, error) {
	g.reads = append(g.reads, sha)
	return g.tree, g.treeErr
}

// Authorize's tree key: read only with a lane and a tree reader, and any
// doubt (a lane field missing, an unreadable or invalid tree) answers no key
// with a note in the reason, never a wider match.
func TestAuthorizeTreeKey(t *testing.T) {
	const treeSHA = "7777777777777777777777777777777777777777"
	good := gatecheck.LaneDefinition{Config: []byte(`{"max_provision_attempts":3}`), TestCommand: "make test-gpu",
		ImageDigest: "ghcr.io/actions/actions-runner:latest@sha256:" + strings.Repeat("1", 64),
		Workflow:    "o/r/.github/workflows/gpu.yml@refs/heads/main", Version: "v1.2.3"}
	digest, err := gatecheck.LaneDigest(good)
	assert.NilError(t, err)
	noGateReason := "no earlier gate for tested ref " + merge
	noKey := ": only this exact tested ref can be reused"
	broken := good
	broken.TestCommand = " "
	tests := []struct {
		name       string
		lane       *gatecheck.LaneDefinition
		reader     bool
		tree       string
		treeErr    error
		wantKey    *gatecheck.TreeKey
		wantReason string
		wantReads  int
	}{
		{name: "lane and tree: keyed", lane: &good, reader: true, tree: treeSHA, wantReads: 1,
			wantKey:    &gatecheck.TreeKey{Tree: treeSHA, Lane: digest},
			wantReason: noGateReason + " (tree:" + treeSHA + ":lane:" + digest + "): running the paid path"},
		{name: "no lane: no key, no note, no tree read", reader: true, tree: treeSHA,
			wantReason: noGateReason + ": running the paid path"},
		{name: "lane but no tree reader: no key, no note", lane: &good,
			wantReason: noGateReason + ": running the paid path"},
		{name: "a lane field missing", lane: &broken, reader: true, tree: treeSHA,
			wantReason: noGateReason + ": running the paid path; no tree key (lane digest: test command is empty: want the command the GPU job runs (input test-command))" + noKey},
		{name: "tree unreadable", lane: &good, reader: true, treeErr: errors.New("502 Bad Gateway"), wantReads: 1,
			wantReason: noGateReason + ": running the paid path; no tree key (read the tree of " + merge + ": 502 Bad Gateway)" + noKey},
		{name: "tree not a SHA", lane: &good, reader: true, tree: "main", wantReads: 1,
			wantReason: noGateReason + ": running the paid path; no tree key (tree key: tree \"main\": want a full lowercase tree SHA)" + noKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: map[string]string{"alice": "maintain", "bob": "admin"}}
			var gh PullRequests = base
			tg := &treeGitHub{fakeGitHub: base, tree: tc.tree, treeErr: tc.treeErr}
			if tc.reader {
				gh = tg
			}

			a, err := Authorize(context.Background(), gh, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Lane: tc.lane})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.DeepEqual(t, a.TreeKey, tc.wantKey)
			assert.Equal(t, a.Reason, tc.wantReason)
			assert.Equal(t, len(tg.reads), tc.wantReads)
			wantOut := ""
			if tc.wantKey != nil {
				wantOut = tc.wantKey.String()
			}
			assert.Equal(t, a.Outputs().TreeKey, wantOut)
		})
	}
}

// claimGitHub is a fakeGitHub that can publish check runs (gatecheck.ClaimClient).
type claimGitHub struct {
	*fakeGitHub
	created []ghapi.CheckRunInput
}

func (g *claimGitHub) CreateCheckRun(_ context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	g.created = append(g.created, in)
	return &github.CheckRun{ID: github.Int64(int64(500 + len(g.created))), ExternalID: github.String(in.ExternalID)}, nil
}

func (g *claimGitHub) UpdateCheckRun(_ context.Context, id int64, _ ghapi.CheckRunInput) (*github.CheckRun, error) {
	return &github.CheckRun{ID: github.Int64(id)}, nil
}

// With ClaimOptions and a client that can publish, Authorize stakes this
// lane's in-progress gate and hands its id on; without ClaimOptions it
// publishes nothing, whatever the client can do.
func TestAuthorizeStakesOnlyWhenAskedTo(t *testing.T) {
	for _, tc := range []struct {
		name        string
		claim       *ClaimOptions
		wantCreated int
		wantOutput  string
	}{
		{name: "claim options: staked", claim: &ClaimOptions{LaneBound: time.Hour, RunURL: "https://github.com/o/r/actions/runs/1"}, wantCreated: 1, wantOutput: "501"},
		{name: "no claim options: nothing published", wantCreated: 0, wantOutput: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := &claimGitHub{fakeGitHub: &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: map[string]string{"alice": "maintain", "bob": "admin"}}}

			a, err := Authorize(context.Background(), gh, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Claim: tc.claim})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.Equal(t, len(gh.created), tc.wantCreated)
			assert.Equal(t, a.Outputs().GateCheckRunID, tc.wantOutput)
			if tc.wantCreated > 0 {
				assert.Equal(t, gh.created[0].Status, "in_progress")
				assert.Equal(t, a.GateCheckRunID, int64(501))
			}
		})
	}
}

// historyGitHub is a treeGitHub that reads the PR's head history and lists
// gates per head, recording every read.
type historyGitHub struct {
	*treeGitHub
	pushes     []ghapi.HeadPush
	historyErr error
	history    []int // the last of each history read
	gates      map[string][]*github.CheckRun
	listed     []string
}

func (g *historyGitHub) PullRequestHeadHistory(_ context.Context, _, last int) ([]ghapi.HeadPush, error) {
	g.history = append(g.history, last)
	return g.pushes, g.historyErr
}

func (g *historyGitHub) ListCheckRunsForRef(_ context.Context, ref, _ string, _ int) ([]*github.CheckRun, error) {
	g.listed = append(g.listed, ref)
	return g.gates[ref], nil
}

// A PR trigger with a tree key finds the PR's earlier heads itself, in one
// history read, newest first (force-pushes' heads before commits pushed), and
// lists at most gatecheck.MaxEarlierHeads of them: 1 + 1 + MaxEarlierHeads reads.
func TestAuthorizeFindsEarlierHeadsInTheHistory(t *testing.T) {
	const treeSHA = "7777777777777777777777777777777777777777"
	lane := gatecheck.LaneDefinition{Config: []byte(`{}`), TestCommand: "make test-gpu",
		ImageDigest: "ghcr.io/actions/actions-runner:latest@sha256:" + strings.Repeat("1", 64), Workflow: "o/r/.github/workflows/gpu.yml@refs/heads/main", Version: "v1"}
	digest, err := gatecheck.LaneDigest(lane)
	assert.NilError(t, err)
	key := &gatecheck.TreeKey{Tree: treeSHA, Lane: digest}
	sha := func(c byte) string { return strings.Repeat(string(c), 40) }
	amended, older, oldMerge := sha('1'), sha('2'), sha('3')
	passed := ok(99, oldMerge, gatecheck.KindPaid, t0)
	marker, err := gatecheck.FormatMarker(oldMerge, gatecheck.KindPaid, key)
	assert.NilError(t, err)
	passed.ExternalID = github.String(marker)

	tests := []struct {
		name        string
		pushes      []ghapi.HeadPush
		historyErr  error
		gates       map[string][]*github.CheckRun
		noLane      bool
		wantOutcome Outcome
		wantListed  []string
		wantHistory int
		wantReason  string
	}{
		{name: "an amended head (force-push) with the identical tree reuses its gate",
			pushes:      []ghapi.HeadPush{{Commit: older}, {Force: true, Before: amended, After: head}},
			gates:       map[string][]*github.CheckRun{amended: {passed}},
			wantOutcome: OutcomeReuse, wantListed: []string{head, amended, older}, wantHistory: 1, wantReason: "identical tree and lane"},
		{name: "a commit pushed on top of the passed head reuses it",
			pushes:      []ghapi.HeadPush{{Commit: older}, {Commit: head}},
			gates:       map[string][]*github.CheckRun{older: {passed}},
			wantOutcome: OutcomeReuse, wantListed: []string{head, older}, wantHistory: 1},
		{name: "force-pushed heads come before pushed commits; the listing is bounded",
			pushes: []ghapi.HeadPush{{Commit: sha('4')}, {Commit: sha('5')}, {Force: true, Before: sha('6'), After: sha('8')},
				{Commit: sha('9')}, {Force: true, Before: amended, After: head}},
			wantOutcome: OutcomeRun, wantListed: []string{head, amended, sha('8'), sha('6')}, wantHistory: 1},
		{name: "an unreadable history narrows the lookup to this head and says so", historyErr: errors.New("502 Bad Gateway"),
			gates:       map[string][]*github.CheckRun{amended: {passed}},
			wantOutcome: OutcomeRun, wantListed: []string{head}, wantHistory: 1,
			wantReason: "the PR's earlier heads are unknown (read the head history of PR #7: 502 Bad Gateway): only gates on this head count"},
		{name: "no tree key: no history read, only the exact tested ref", noLane: true,
			pushes:      []ghapi.HeadPush{{Force: true, Before: amended, After: head}},
			gates:       map[string][]*github.CheckRun{amended: {passed}},
			wantOutcome: OutcomeRun, wantListed: []string{head}, wantHistory: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gh := &historyGitHub{treeGitHub: &treeGitHub{fakeGitHub: &fakeGitHub{prs: []*github.PullRequest{pullRequest()},
				roles: map[string]string{"alice": "maintain", "bob": "admin"}}, tree: treeSHA},
				pushes: tc.pushes, historyErr: tc.historyErr, gates: tc.gates}
			req := AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob", Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Lane: &lane}
			if tc.noLane {
				req.Lane = nil
			}

			a, err := Authorize(context.Background(), gh, req)

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, tc.wantOutcome, a.Reason)
			assert.Check(t, is.DeepEqual(gh.listed, tc.wantListed))
			assert.Check(t, is.Len(gh.history, tc.wantHistory))
			for _, last := range gh.history {
				assert.Check(t, is.Equal(last, HeadHistoryItems))
			}
			assert.Check(t, len(gh.history)+len(gh.listed) <= 1+1+gatecheck.MaxEarlierHeads, "reads bounded")
			assert.Check(t, is.Contains(a.Reason, tc.wantReason))
		})
	}
}

// The bound on earlier heads is the one the README states.
func TestEarlierHeadReadBounds(t *testing.T) {
	assert.Equal(t, HeadHistoryItems, 30)
	assert.Equal(t, gatecheck.MaxEarlierHeads, 3)
	assert.Check(t, HeadHistoryItems <= ghapi.MaxHeadHistoryItems)
}
