package provision

// Tests for lines that mutation testing (.ci/mutation) found unguarded: each
// asserts an exact behaviour — an error's text, a call count, a boundary —
// that a one-line break of the code changes.

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
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// mintGitHub fails the first runner-config mint with mintErr and answers the
// by-name lookup that follows with runner (found when non-nil) or lookupErr;
// deleting that runner fails with deleteErr. Later mints reach GitHub.
type mintGitHub struct {
	GitHub
	mintErr   error
	runner    *github.Runner
	lookupErr error
	deleteErr error

	mu      sync.Mutex
	mints   []string // names minted, in order
	deleted []int64
}

func (g *mintGitHub) GenerateJITConfig(ctx context.Context, req ghapi.JITRequest) (*ghapi.JITConfig, error) {
	g.mu.Lock()
	g.mints = append(g.mints, req.Name)
	first := len(g.mints) == 1
	g.mu.Unlock()
	if first {
		return nil, g.mintErr
	}
	return g.GitHub.GenerateJITConfig(ctx, req)
}

func (g *mintGitHub) RunnerByName(ctx context.Context, name string, scope ghapi.Scope) (*github.Runner, bool, error) {
	g.mu.Lock()
	minting := len(g.mints) == 1
	g.mu.Unlock()
	if !minting { // the watch's registry reads go to GitHub
		return g.GitHub.RunnerByName(ctx, name, scope)
	}
	return g.runner, g.runner != nil, g.lookupErr
}

func (g *mintGitHub) DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error {
	g.mu.Lock()
	g.deleted = append(g.deleted, id)
	g.mu.Unlock()
	if id == g.runner.GetID() && g.deleteErr != nil {
		return g.deleteErr
	}
	return g.GitHub.DeleteRunner(ctx, id, scope)
}

// TestRunnerConfigMintFailures: a mint that fails is never retried blindly.
// Only an offline, idle runner of the attempt's name is removed before one
// informed re-mint; otherwise the run stops before any pod is created, with
// the mint's own error named in the attempt and the run's error.
func TestRunnerConfigMintFailures(t *testing.T) {
	conflict := errors.New("409 Conflict: runner name taken")
	const runnerID = 4242
	runner := func(status string, busy bool) *github.Runner {
		return &github.Runner{ID: github.Int64(runnerID), Status: github.String(status), Busy: github.Bool(busy)}
	}
	for _, tc := range []struct {
		name        string
		gh          *mintGitHub
		wantMints   int
		wantDeleted []int64
		wantErr     string // with %s for the label; "" means accepted
		wantReason  string // the failed attempt's reason, with %s for the label
	}{
		{
			name: "no runner of that name: the failure stands", gh: &mintGitHub{mintErr: conflict},
			wantMints: 1, wantErr: "provisioning stopped: could not mint a runner config for %s: 409 Conflict: runner name taken",
			wantReason: "JIT runner config: 409 Conflict: runner name taken",
		},
		{
			// An unreadable lookup is no licence to remove anything, whatever it returned.
			name: "lookup fails: the mint's failure stands", gh: &mintGitHub{mintErr: conflict, runner: runner("offline", false), lookupErr: errors.New("lookup 502")},
			wantMints: 1, wantErr: "provisioning stopped: could not mint a runner config for %s: 409 Conflict: runner name taken",
			wantReason: "JIT runner config: 409 Conflict: runner name taken",
		},
		{
			name: "online runner is never replaced", gh: &mintGitHub{mintErr: conflict, runner: runner("online", false)},
			wantMints: 1, wantErr: "provisioning stopped: could not mint a runner config for %s: runner %s already exists and is online; refusing to replace it",
			wantReason: "JIT runner config: runner %s already exists and is online; refusing to replace it",
		},
		{
			name: "busy runner is never replaced", gh: &mintGitHub{mintErr: conflict, runner: runner("offline", true)},
			wantMints: 1, wantErr: "provisioning stopped: could not mint a runner config for %s: runner %s already exists and is offline; refusing to replace it",
			wantReason: "JIT runner config: runner %s already exists and is offline; refusing to replace it",
		},
		{
			name: "offline runner that cannot be removed", gh: &mintGitHub{mintErr: conflict, runner: runner("offline", false), deleteErr: errors.New("delete 500")},
			wantMints: 1, wantDeleted: []int64{runnerID},
			wantErr:    "provisioning stopped: could not mint a runner config for %s: 409 Conflict: runner name taken\ndelete 500",
			wantReason: "JIT runner config: 409 Conflict: runner name taken\ndelete 500",
		},
		{
			name: "offline idle runner is removed, then one re-mint", gh: &mintGitHub{mintErr: conflict, runner: runner("offline", false)},
			wantMints: 2, wantDeleted: []int64{runnerID},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
			gh := tc.gh
			gh.GitHub = s.deps.GitHub
			s.deps.GitHub = gh

			res, err := s.run(t)

			assert.Assert(t, len(gh.mints) >= 1)
			label := gh.mints[0]
			assert.Check(t, is.Len(gh.mints, tc.wantMints))
			for _, name := range gh.mints {
				assert.Check(t, is.Equal(name, label), "the re-mint is of the same name")
			}
			assert.Check(t, is.DeepEqual(gh.deleted, tc.wantDeleted))
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Assert(t, res.Accepted != nil)
				assert.Check(t, is.Equal(res.Accepted.RunnerLabel, label))
				assert.Check(t, is.Contains(s.obs.log(), fmt.Sprintf("runner %s existed offline after 409 Conflict: runner name taken; removed it and minting once more", label)))
				return
			}
			assert.Check(t, errors.Is(err, ErrStopped), "got %v", err)
			assert.Check(t, is.ErrorContains(err, strings.ReplaceAll(tc.wantErr, "%s", label)))
			assert.Check(t, is.Len(s.obs.created, 0), "no pod without a runner config")
			assert.Assert(t, is.Len(res.Attempts, 1))
			assert.Check(t, is.Equal(res.Attempts[0].Outcome, cost.OutcomeFailed))
			assert.Check(t, is.Equal(res.Attempts[0].Reason, strings.ReplaceAll(tc.wantReason, "%s", label)))
		})
	}
}

// TestRateLimitedCreate: a 429 on a create certainly made no pod. Its
// Retry-After is waited out and the create sent once more when that fits
// create_deadline_seconds; when it does not fit, the candidate ends as not
// created, naming the deadline, and nothing more is paid. A second 429 on the
// retry stops the run.
// (The plan holds one candidate, so a candidate not created exhausts it.)
func TestRateLimitedCreate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter time.Duration
		nth        []int
		wantPOSTs  int
		wantErr    string // "" means accepted
		wantReason string // first attempt's reason (failed), when not accepted
	}{
		{name: "Retry-After fits the create deadline", retryAfter: 20 * time.Second, nth: []int{1}, wantPOSTs: 2},
		{name: "Retry-After just inside the create deadline", retryAfter: 59 * time.Second, nth: []int{1}, wantPOSTs: 2},
		{
			name: "Retry-After the whole create deadline", retryAfter: 60 * time.Second, nth: []int{1}, wantPOSTs: 1,
			wantErr:    "provision attempts exhausted: all 1 candidates tried",
			wantReason: "no pod was created: create of rgpu-7001-1-c1 rate limited and the wait does not fit create_deadline_seconds 60",
		},
		{
			name: "a second 429 on the retry stops the run", retryAfter: 5 * time.Second, nth: []int{1, 2}, wantPOSTs: 2,
			wantErr:    "provisioning stopped: create pod rgpu-7001-1-c1:",
			wantReason: "create pod rgpu-7001-1-c1:",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{
				RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: tc.nth}, RetryAfter: tc.retryAfter}},
			}}, onlyA4000)
			start := s.clock.Now()

			res, err := s.run(t)

			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), tc.wantPOSTs))
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Assert(t, res.Accepted != nil)
				assert.Check(t, !res.Accepted.StartedAt.Before(start.Add(tc.retryAfter)), "the retry waited out Retry-After: started %s after the run", res.Accepted.StartedAt.Sub(start))
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.Len(s.obs.created, 0))
			assert.Assert(t, len(res.Attempts) >= 1)
			assert.Check(t, is.Equal(res.Attempts[0].Outcome, cost.OutcomeFailed))
			assert.Check(t, strings.HasPrefix(res.Attempts[0].Reason, tc.wantReason), "reason %q", res.Attempts[0].Reason)
		})
	}
}

// cancelWithoutCreate cancels the run while its create is in flight, and the
// create never reached RunPod; it counts pod-list reads.
type cancelWithoutCreate struct {
	RunPod
	cancel context.CancelFunc
	create bool // the create does happen on the server

	mu    sync.Mutex
	lists int
}

func (c *cancelWithoutCreate) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	if c.create {
		_, _ = c.RunPod.CreatePod(context.WithoutCancel(ctx), r)
	}
	c.cancel()
	return nil, ctx.Err()
}

func (c *cancelWithoutCreate) ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.RunPod.ListPods(ctx, q)
}

// TestSIGTERMDuringACreateLooksForItsPodWithinTheBudget: after a SIGTERM
// during a create, the pod list is read every 1.5 s for CancelReconcileBudget
// (8 s) — six reads — when no pod of the name shows up, and the run ends with
// the cleanup job's sweep named as the backstop; a pod that is listed stops
// the search at the first read, and is deleted. (Run's last look at uncertain
// creates, sweepUncertain, adds one read either way.)
func TestSIGTERMDuringACreateLooksForItsPodWithinTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		create    bool
		wantLists int
		wantLog   string
	}{
		{name: "nothing was created", wantLists: 6 + 1,
			wantLog: "cancelled during the create of rgpu-7001-1-c1: no pod of that name found within 8s; the cleanup job's tag sweep is the backstop"},
		{name: "the pod exists", create: true, wantLists: 1 + 1, wantLog: "reconciled: pod rgpu-7001-1-c1 exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rp := &cancelWithoutCreate{RunPod: s.deps.RunPod, cancel: cancel, create: tc.create}
			s.deps.RunPod = rp

			_, err := Run(ctx, s.deps, s.req)

			assert.Check(t, is.ErrorContains(err, "provisioning cancelled: provisioning stopped: create of rgpu-7001-1-c1 interrupted: context canceled"))
			assert.Check(t, is.Equal(rp.lists, tc.wantLists))
			assert.Check(t, is.Contains(s.obs.log(), tc.wantLog))
			assert.Check(t, is.Len(aliveInSim(s), 0))
			if !tc.create {
				assert.Check(t, !strings.Contains(s.obs.log(), "reconciled:"))
			}
		})
	}
}

// slowCreate makes the pod, then holds the answer until the create's own
// deadline has passed in wall time and answers with that expiry.
type slowCreate struct{ RunPod }

func (c slowCreate) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	_, _ = c.RunPod.CreatePod(context.WithoutCancel(ctx), r)
	<-ctx.Done()
	return nil, fmt.Errorf("create: %w", ctx.Err())
}

// TestCreateThatUsedUpItsDeadlineIsReconciledOnItsOwnBudget: a create whose
// answer never came before create_deadline_seconds (1 s here, in wall time)
// may have made the pod; the reconciliation gets a short budget of its own
// rather than the expired one, so the pod is found and used, never left
// billing unseen while the run stops.
func TestCreateThatUsedUpItsDeadlineIsReconciledOnItsOwnBudget(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, func(c *config.Config) {
		onlyA4000(c)
		c.CreateDeadlineSeconds = 1
	})
	s.deps.RunPod = slowCreate{s.deps.RunPod}

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists as "+res.Accepted.PodID))
	assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
}
