package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Each attempt with a pod records where RunPod placed it (cloud, data center,
// the host's driver), when it ended and what it showed about the host — the
// reputation's evidence. Only a pod that never delivered a runner through its
// host's fault is a failed host; a rejection for the PR's sake blames none.
func TestAttemptsRecordPlacementAndHostVerdict(t *testing.T) {
	eu := func(h *runpodsim.HostProfile) { h.DataCenterID, h.DriverCUDA = "EU-RO-1", "12.9" }
	tests := []struct {
		name  string
		hosts []runpodsim.HostProfile
		// movePR moves the PR's head while the first pod boots.
		movePR bool
		want   []cost.Attempt // the fields compared: GPU, Outcome, Cloud, DataCenter, Driver, Host
	}{
		{
			name:  "a failed proof blames the host, the accepted pod vouches for its own",
			hosts: []runpodsim.HostProfile{host("h1", a4000, oldPTX), host("h2", a5000, eu)},
			want: []cost.Attempt{
				{GPU: a4000, Outcome: cost.OutcomeRejected, Cloud: "SECURE", DataCenter: "US-TX-3", Driver: "12.8", Host: cost.HostFailed},
				{GPU: a5000, Outcome: cost.OutcomeAccepted, Cloud: "SECURE", DataCenter: "EU-RO-1", Driver: "12.9", Host: cost.HostWorked},
			},
		},
		{
			name:   "a pod rejected because the PR moved says nothing about its host",
			hosts:  []runpodsim.HostProfile{host("h1", a4000), host("h2", a5000)},
			movePR: true,
			want: []cost.Attempt{
				{GPU: a4000, Outcome: cost.OutcomeRejected, Cloud: "SECURE", DataCenter: "US-TX-3", Driver: "12.8"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := market(tc.hosts...)
			m.DataCenters = append(m.DataCenters, runpodsim.DataCenter{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE",
				CountryCode: "RO", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}})
			s := newScenario(t, cloud.Options{Market: m}, nil)
			if tc.movePR {
				s.obs.onCreate = func(string) {
					_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead })
				}
			}
			started := s.clock.Now()
			res, _ := s.run(t)
			var got []cost.Attempt
			for _, a := range res.Attempts {
				assert.Check(t, !a.At.Before(started) && !a.At.After(s.clock.Now()), "attempt %d ended at %v", a.Number, a.At)
				got = append(got, cost.Attempt{GPU: a.GPU, Outcome: a.Outcome, Cloud: a.Cloud, DataCenter: a.DataCenter, Driver: a.Driver, Host: a.Host})
			}
			assert.DeepEqual(t, got, tc.want)

			// The record survives provision's rejected-attempts output, which cleanup reads.
			var rejected []cost.Attempt
			for _, a := range res.Attempts {
				if a.Outcome != cost.OutcomeAccepted {
					rejected = append(rejected, a)
				}
			}
			back, err := cost.ParseAttempts(cost.FormatAttempts(rejected))
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(back, rejected))
		})
	}
}

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
// create_deadline_seconds; when it does not fit, it is waited out within the
// provision budget, the name looked up, and the candidate ends as not
// created, naming the pause; nothing more is paid. A second 429 on the
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
			wantReason: "no pod was created: create of rgpu-7001-1-c1 rate limited for 1m0s and no pod of that name exists after the pause",
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

// A create answered 429 is looked up by its unique name before it is sent
// again: when an edge passed the POST on and the pod exists, it is the pod
// used, never a second one of the same name.
func TestRateLimitedCreateIsLookedUpBeforeItIsSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		applied   bool // the 429'd POST created the pod
		wantPOSTs int
	}{
		{name: "the 429 created the pod", applied: true, wantPOSTs: 1},
		{name: "the 429 created nothing", wantPOSTs: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 5 * time.Second}}}
			if tc.applied {
				f = runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}}, Status: 429,
					Body: func(int, []byte) []byte {
						return []byte(`{"title":"Too Many Requests","status":429,"detail":"slow down"}`)
					}}}}
			}
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)), Faults: f}, onlyA4000)

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), tc.wantPOSTs))
			live := s.livePods(t)
			assert.Assert(t, is.Len(live, 1), "one pod of the name")
			assert.Check(t, is.Equal(res.Accepted.PodID, live[0].ID))
			reqs := s.cloud.RunPod.Requests()
			for i, r := range reqs {
				if r.Route == "POST /v2/pods" && r.Status == 429 {
					assert.Check(t, i+1 < len(reqs) && reqs[i+1].Route == "GET /v2/pods", "the name is looked up right after the 429: %v", reqs)
				}
			}
			if tc.applied {
				assert.Check(t, is.Contains(s.obs.log(), "create of rgpu-7001-1-c1 answered 429, yet the pod exists: used, not created again"))
			}
		})
	}
}

// A create answered 503 with a Retry-After longer than create_deadline_seconds
// does not stop the run: once the pause is over the pod is looked for by name,
// within the provision budget, and the run goes on — with the pod
// when the create made it, else with the next candidate — never a second pod
// of the same name, and never a pod-list read during the pause.
func TestCreatePausedByALongRetryAfterIsReconciledWhenThePauseIsOver(t *testing.T) {
	const pause = 2 * time.Minute // create_deadline_seconds is 60
	for _, tc := range []struct {
		name         string
		faults       runpodsim.Faults
		wantOutcomes []string
	}{
		{
			name:         "the create made its pod",
			faults:       runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 accepted"},
		},
		{
			name: "nothing was created",
			faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
				{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}}, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 failed", "live-2 RTX A5000 accepted"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: tc.faults}, nil)
			start := s.clock.Now()

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.DeepEqual(t, outcomes(res), tc.wantOutcomes)
			live := s.livePods(t)
			assert.Assert(t, is.Len(live, 1))
			assert.Check(t, is.Equal(res.Accepted.PodID, live[0].ID))
			posts := map[string]int{}
			for _, p := range s.cloud.RunPod.Pods() {
				posts[p.Name]++
			}
			assert.Check(t, is.Equal(posts["rgpu-7001-1-c1"], min(1, len(tc.faults.LostCreates))), "never a second pod of the name")
			for _, r := range s.cloud.RunPod.Requests() {
				if r.Route == "GET /v2/pods" && r.At.Before(start.Add(pause)) {
					t.Errorf("the pod list was read %s into the %s pause", r.At.Sub(start), pause)
				}
			}
			assert.Check(t, is.Contains(s.obs.log(), "longer than create_deadline_seconds 60"))
		})
	}
}

// A create paused by a Retry-After (120 s) longer than create_deadline_seconds
// (60 s) and than the candidate's startup_timeout_seconds (100 s) does not end
// the run: the pause is waited out within the provision budget, the first name
// is reconciled — found (and deleted unwatched: its startup budget went by in
// RunPod's pause, no host's fault) or confirmed absent — and the next
// candidate is created after the pause; never a second pod of the first name.
func TestCreatePausedLongerThanTheStartupTimeout(t *testing.T) {
	const pause = 120 * time.Second
	first := runpodsim.Trigger{Nth: []int{1}}
	for _, tc := range []struct {
		name         string
		faults       runpodsim.Faults
		wantOutcomes []string
		wantFirst    int // pods of the first name ever created
	}{
		{
			name:         "503, the create made its pod",
			faults:       runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: first, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"},
			wantFirst:    1,
		},
		{
			name: "503, nothing was created",
			faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
				{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: first, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 failed", "live-2 RTX A5000 accepted"},
		},
		{
			name: "429, nothing was created",
			faults: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
				{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: first, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 failed", "live-2 RTX A5000 accepted"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: tc.faults}, func(c *config.Config) {
				c.CreateDeadlineSeconds, c.StartupTimeoutSeconds = 60, 100
			})
			start := s.clock.Now()

			res, err := s.run(t)

			assert.NilError(t, err, "the run goes on after the pause")
			assert.DeepEqual(t, outcomes(res), tc.wantOutcomes)
			assert.Check(t, res.Attempts[0].Host == cost.HostVerdict(""), "RunPod's pause is no evidence against a host")
			live := s.livePods(t)
			assert.Assert(t, is.Len(live, 1), "the first name's pod, if any, was deleted")
			assert.Check(t, is.Equal(res.Accepted.PodID, live[0].ID))
			posts := map[string]int{}
			for _, p := range s.cloud.RunPod.Pods() {
				posts[p.Name]++
			}
			assert.Check(t, is.Equal(posts["rgpu-7001-1-c1"], tc.wantFirst), "never a second pod of the first name")
			var lookedUp bool
			for _, r := range s.cloud.RunPod.Requests() {
				switch {
				case r.Route == "GET /v2/pods" && r.At.Before(start.Add(pause)):
					t.Errorf("the pod list was read %s into the %s pause", r.At.Sub(start), pause)
				case r.Route == "GET /v2/pods":
					lookedUp = true
				case r.Route == "POST /v2/pods" && r.Status < 300 && r.At.Before(start.Add(pause)) && tc.wantFirst == 0:
					t.Errorf("a pod was created %s into the %s pause", r.At.Sub(start), pause)
				}
			}
			assert.Check(t, lookedUp, "the first name is reconciled once the pause is over")
			assert.Check(t, is.Contains(s.obs.log(), "longer than create_deadline_seconds 60: reconciling by name once it is over, within the provision budget"))
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

// TestAcceptedPodsStartupSeconds: the accepted pod's startup seconds are
// whole seconds from the provider's start to acceptance — more than none and
// at most the startup budget — and the same figure the attempt record carries.
func TestAcceptedPodsStartupSeconds(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	secs := res.Accepted.StartupSeconds
	assert.Check(t, secs > 0 && secs <= 420, "startup seconds %d", secs)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].Seconds, cost.KnownSeconds(secs)))
}

// removalGitHub fails every runner removal with err.
type removalGitHub struct {
	GitHub
	err error

	mu      sync.Mutex
	removed int
}

func (g *removalGitHub) DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error {
	g.mu.Lock()
	g.removed++
	g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	return g.GitHub.DeleteRunner(ctx, id, scope)
}

// TestUnusedRunnerRemoval: the registration of a rejected pod's runner is
// removed once; a removal that fails is logged with its error and never
// stops the run, and one that succeeds logs nothing.
func TestUnusedRunnerRemoval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantLog bool
	}{
		{name: "removed"},
		{name: "removal fails", err: errors.New("GitHub 502"), wantLog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
			gh := &removalGitHub{GitHub: s.deps.GitHub, err: tc.err}
			s.deps.GitHub = gh

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
			assert.Check(t, is.Equal(gh.removed, 1), "the rejected attempt's runner only")
			logged := strings.Contains(s.obs.log(), ": could not remove its registration (GitHub drops it within a day): GitHub 502")
			assert.Check(t, is.Equal(logged, tc.wantLog), "log:\n%s", s.obs.log())
		})
	}
}

// TestRejectedPodsDeletionWaitsOutALongRetryAfter: the deletion of a
// rejected pod has its whole budget (180 s) on the policy's clock; its wall
// clock backstop is longer, never shorter, so a 429 whose Retry-After takes
// most of that budget is waited out and the pod is deleted, not reported
// unconfirmed.
func TestRejectedPodsDeletionWaitsOutALongRetryAfter(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)), Faults: runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "DELETE /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 175 * time.Second}},
	}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 2))
	assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
}

// TestReconciliationReadsFourTimesBeforeTheRetry: a create answered 503
// that made nothing is reconciled by exactly four list reads (at 0, 2, 6 and
// 14 s) before its one informed retry.
func TestReconciliationReadsFourTimesBeforeTheRetry(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{
		ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 503}},
	}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(listReadsBeforeSecondCreate(s), 4))
	var lists []time.Time
	var post time.Time
	for _, r := range s.cloud.RunPod.Requests() {
		switch r.Route {
		case "GET /v2/pods":
			if post.IsZero() {
				lists = append(lists, r.At)
			}
		case "POST /v2/pods":
			if len(lists) > 0 && post.IsZero() {
				post = r.At
			}
		}
	}
	assert.Assert(t, is.Len(lists, 4))
	var gaps []time.Duration
	for i := 1; i < len(lists); i++ {
		gaps = append(gaps, lists[i].Sub(lists[i-1]).Round(time.Second))
	}
	assert.Check(t, is.DeepEqual(gaps, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}))
}

// TestDuplicatesOfARetriedCreateAreDeleted: both POSTs of a retried create
// made a pod of the same name. Whichever way the other pod comes to light —
// listed together with the one used, or only after the one used was
// rejected at once — it is deleted before the run ends, never left billing.
func TestDuplicatesOfARetriedCreateAreDeleted(t *testing.T) {
	anotherGPU := func(status int, body []byte) []byte {
		var pod map[string]any
		if status >= 300 || json.Unmarshal(body, &pod) != nil {
			return body
		}
		pod["gpu"] = map[string]any{"id": "NVIDIA H100 80GB HBM3", "count": 1}
		out, _ := json.Marshal(pod)
		return out
	}
	for _, tc := range []struct {
		name         string
		faults       runpodsim.Faults
		wantAccepted bool
		wantDeletes  int
	}{
		{
			// Both answers lost; the first reconciliation (four reads) lists
			// nothing, the second lists both pods: one is used, the other is a
			// duplicate already tracked.
			name: "both listed by the second reconciliation", wantAccepted: true, wantDeletes: 1,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1, 2}}, Status: 502}},
				Rewrites:    []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4)},
			},
		},
		{
			// The first answer lost and its pod not listed during the
			// reconciliation; the retry's pod is another GPU, rejected on its
			// create answer before any watch read: only the look after the
			// watch can find the first pod.
			name: "the first listed only after the retry's pod was rejected", wantDeletes: 2,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
				Rewrites: []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4),
					{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, Body: anotherGPU}},
			},
		},
		{
			// As above, and the first DELETE (the duplicate's) answers 429 with
			// a Retry-After that takes most of the deletion's 180 s budget: the
			// duplicate's deletion has that whole budget, in wall time too.
			name: "the duplicate's deletion waits out a long Retry-After", wantDeletes: 3,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
				Rewrites: []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4),
					{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, Body: anotherGPU}},
				RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "DELETE /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 175 * time.Second}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)), Faults: tc.faults}, onlyA4000)

			res, err := s.run(t)

			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2))
			assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), tc.wantDeletes), "each pod not used is deleted once")
			assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 2), "both POSTs made a pod")
			if !tc.wantAccepted {
				assert.Check(t, err != nil)
				assert.Check(t, is.Len(aliveInSim(s), 0))
				return
			}
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
		})
	}
}

// TestCreateDeadlineBoundsEachCandidate: create_deadline_seconds (default 60)
// bounds one candidate's create, answer reconciliation and any retry
// included. Every create is refused with a 503 that creates nothing, so each
// candidate ends with nothing created — each within its deadline of when it
// began, never later.
func TestCreateDeadlineBoundsEachCandidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seconds  int // 0: the default
		deadline time.Duration
	}{
		{name: "default 60 s", deadline: 60 * time.Second},
		{name: "configured 20 s", seconds: 20, deadline: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000), host("h3", l4)), Faults: runpodsim.Faults{
				ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Status: 503}},
			}}, func(c *config.Config) {
				if tc.seconds > 0 {
					c.CreateDeadlineSeconds = tc.seconds
				}
			})
			assert.Equal(t, s.req.Config.CreateDeadline(), tc.deadline)
			obs := &timedObserver{Observer: s.deps.Observer, now: s.clock.Now}
			s.deps.Observer = obs
			start := s.clock.Now()
			res, err := s.run(t)
			assert.Check(t, err != nil, "no create ever succeeds")
			assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 0), "nothing was created")
			assert.Assert(t, len(res.Attempts) >= 2, "the run moves on to later candidates: %v", outcomes(res))
			assert.Assert(t, is.Len(obs.ends, len(res.Attempts)))
			began := start
			for i, end := range obs.ends {
				assert.Check(t, end.Sub(began) <= tc.deadline, "attempt %d (%s) took %s, past create_deadline_seconds %s",
					i+1, res.Attempts[i].Candidate, end.Sub(began), tc.deadline)
				began = end
			}
		})
	}
}

// TestLateListedPodIsFoundWithinTheCreateDeadline: a create whose answer is
// lost made a pod that the pod list shows only 25 s later (eventual
// listing). The create deadline (60 s) leaves time to find it: the run ends
// with that one pod — the cheapest candidate — accepted, never with it left
// billing beside a pricier candidate's.
func TestLateListedPodIsFoundWithinTheCreateDeadline(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: runpodsim.Faults{
		LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
		ListingDelay: 25 * time.Second,
	}}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Accepted.GPU, a4000), "the late-listed pod of the first candidate is the one used")
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "one live pod, the accepted one")
	assert.Check(t, is.Equal(live[0].ID, res.Accepted.PodID))
}

// A 2xx create answer that does not name a usable pod is
// reconciled by the pod's unique name, never tracked as pod "".
func TestCreateAnswerWithoutAUsablePodIsReconciledByName(t *testing.T) {
	tests := []struct {
		name    string
		rewrite func(body []byte) []byte
	}{
		{name: "empty object", rewrite: func([]byte) []byte { return []byte(`{}`) }},
		{name: "not JSON", rewrite: func([]byte) []byte { return []byte(`<html>created</html>`) }},
		{name: "another pod's name", rewrite: func(body []byte) []byte {
			return []byte(strings.Replace(string(body), `"name":"rgpu-7001-1-c1"`, `"name":"rgpu-7001-1-c9"`, 1))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
				Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
					Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}},
					Body: func(_ int, body []byte) []byte { return tc.rewrite(body) },
				}}}}, nil)

			res, err := s.run(t)

			assert.NilError(t, err)
			live := s.livePods(t)
			assert.Assert(t, is.Len(live, 1), "exactly the one real pod")
			assert.Equal(t, res.Accepted.PodID, live[0].ID, "the pod that exists is the one tracked and accepted")
			assert.Equal(t, res.Accepted.GPU, a4000)
			assert.DeepEqual(t, s.obs.created, []string{live[0].ID})
			assert.Equal(t, countRoute(s, "POST /v2/pods"), 1, "never a second POST for a pod that exists")
			assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists as "+live[0].ID))
		})
	}
}

// A create answer that names the id of a pod the run created earlier (the
// rejected first candidate's) is a lost answer: the second candidate's real
// pod is found by name and used, never left billing untracked, and the first
// pod is not watched again as if it were the second.
func TestCreateAnswerNamingAnotherPodsIDIsReconciledByName(t *testing.T) {
	var s *scenario
	s = newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}},
			Body: func(_ int, body []byte) []byte {
				var pod map[string]any
				assert.Check(t, json.Unmarshal(body, &pod))
				s.obs.mu.Lock()
				pod["id"] = s.obs.created[0] // the first candidate's pod
				s.obs.mu.Unlock()
				out, err := json.Marshal(pod)
				assert.Check(t, err)
				return out
			},
		}}}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "exactly the second candidate's pod")
	assert.Check(t, is.Equal(res.Accepted.PodID, live[0].ID))
	assert.Check(t, is.Equal(live[0].Name, "rgpu-7001-1-c2"))
	assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2), "never a second POST for a pod that exists")
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c2 exists as "+live[0].ID))
}

// A create answer naming the id of a pod that is not this run's (another
// pod of the account) is a lost answer too: that pod's record, named
// otherwise, is never judged, priced or deleted as the candidate's; its id is
// forgotten, and the candidate's real pod is found by name and used.
func TestCreateAnswerNamingAForeignPodsIDNeverTouchesThatPod(t *testing.T) {
	var s *scenario
	var foreign string
	s = newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}},
			Body: func(_ int, body []byte) []byte {
				var pod map[string]any
				assert.Check(t, json.Unmarshal(body, &pod))
				pod["id"] = foreign
				out, err := json.Marshal(pod)
				assert.Check(t, err)
				return out
			},
		}}}}, onlyA4000)
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	notebook, err := rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "alice-notebook", Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: a4000, Count: 1}})
	assert.NilError(t, err)
	foreign = notebook.ID

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, res.Accepted.PodID != foreign)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists as "+res.Accepted.PodID))
	var alive []string
	for _, p := range s.livePods(t) {
		alive = append(alive, p.Name)
	}
	assert.Check(t, is.DeepEqual(alive, []string{"alice-notebook", "rgpu-7001-1-c1"}), "the foreign pod is untouched")
	assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2), "the notebook's and the candidate's: never a second")
}

// cancellingRunPod cancels the run while a create is in flight: the create
// happens on the server, its answer is lost to the cancellation (SIGTERM).
type cancellingRunPod struct {
	RunPod
	cancel context.CancelFunc
}

func (c cancellingRunPod) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	_, _ = c.RunPod.CreatePod(context.WithoutCancel(ctx), r)
	c.cancel()
	return nil, ctx.Err()
}

func TestSIGTERMDuringACreateDeletesThePodItMade(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.deps.RunPod = cancellingRunPod{RunPod: s.deps.RunPod, cancel: cancel}

	_, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(s.obs.created, 1), "the in-flight pod was found by name and published")
	assert.Check(t, is.Len(s.livePods(t), 0), "and deleted")
}

// A transient create error costs no more than a prompt
// reconciliation and one informed retry of the same (cheapest) candidate.
func TestTransientCreateErrorRetriesTheSameCandidateOnce(t *testing.T) {
	tests := []struct {
		name   string
		faults runpodsim.Faults
	}{
		{name: "503, nothing created", faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
			{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 503}}}},
		{name: "408, nothing created", faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
			{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 408}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.faults.RateLimits = nil
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: tc.faults}, nil)
			start := s.clock.Now()

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Equal(t, res.Accepted.GPU, a4000, "the cheapest candidate, not a pricier one")
			assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 accepted"})
			assert.Equal(t, countRoute(s, "POST /v2/pods"), 2, "one informed retry")
			assert.Check(t, listReadsBeforeSecondCreate(s) <= 4, "four reconciliation reads, not a poll to the deadline")
			assert.Check(t, is.Contains(s.obs.log(), "no pod of that name exists; one informed retry"))
			assert.Check(t, res.Accepted.StartedAt.Sub(start) < 60*time.Second, "reconciled promptly: pod started %s after the run", res.Accepted.StartedAt.Sub(start))
			assert.Check(t, is.Len(s.livePods(t), 1))
		})
	}
}

// A lost create whose pod reaches the list only late: the retry makes a
// second pod, and the late first one is found and deleted — never two live
// pods for one candidate.
func TestLateListedPodOfARetriedCreateIsDeleted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "one live pod")
	assert.Equal(t, live[0].ID, res.Accepted.PodID)
	assert.Equal(t, len(s.obs.created), 2, "both pods were tracked")
}

// A lost create whose pod is listed only after the create deadline: the run
// moves on, and its last look before returning finds and deletes that pod.
func TestPodOfAnUncertainCreateListedAfterTheDeadlineIsDeleted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 90 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Equal(t, res.Accepted.GPU, a5000)
	var alive []string // from the simulator's own state: the list hides young pods
	for _, p := range s.cloud.RunPod.Pods() {
		if p.Status != runpodsim.StatusTerminated {
			alive = append(alive, p.ID)
		}
	}
	assert.DeepEqual(t, alive, []string{res.Accepted.PodID})
	assert.Check(t, is.Contains(s.obs.log(), "of an uncertain create of rgpu-7001-1-c1 was listed late; deleted"))
}

// The startup budget runs from the first POST, also for a pod found by
// reconciliation long after it: it was billing since its create.
func TestStartupBudgetOfAReconciledPodRunsFromItsCreate(t *testing.T) {
	neverBoots := func(h *runpodsim.HostProfile) { h.BootSeconds = 100000 }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, neverBoots)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 40 * time.Second,
		}}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 2
	})
	start := s.clock.Now()

	res, err := s.run(t)

	assert.Check(t, err != nil)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists"), "found late, by the create-deadline search")
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 1))
	assert.Equal(t, pods[0].Status, runpodsim.StatusTerminated)
	lived := pods[0].TerminatedAt.Sub(start)
	assert.Check(t, lived <= 425*time.Second, "deleted %s after its create: past startup_timeout_seconds 420", lived)
	assert.Check(t, is.Len(res.Attempts, 1))
}

// A create whose answer is lost, an informed retry whose answer is lost too,
// and a pod list that shows new pods only after 20 s: both POSTs made a pod.
// Reconciliation finds the first; the second must not be left billing
// untracked until the cleanup job.
func TestTwoLostCreatesOfOneCandidateLeaveOneLivePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1, 2}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.DeepEqual(t, aliveInSim(s), []string{res.Accepted.PodID})
	assert.Check(t, is.Len(s.obs.created, 2), "both pods were tracked and published")
}

// cancelDuringList cancels the run (SIGTERM) while the first pod-list read is
// in flight, and answers that read with the cancellation; later reads (on
// fresh contexts) pass through.
type cancelDuringList struct {
	RunPod
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelDuringList) ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error) {
	fired := false
	c.once.Do(func() { c.cancel(); fired = true })
	if fired {
		return nil, ctx.Err()
	}
	return c.RunPod.ListPods(ctx, q)
}

// SIGTERM arriving while a lost create is being reconciled: the create did
// make a pod, and the cancellation path must find and delete it.
func TestSIGTERMDuringReconciliationDeletesThePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)),
		Faults: runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}}}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.deps.RunPod = &cancelDuringList{RunPod: s.deps.RunPod, cancel: cancel}

	_, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(aliveInSim(s), 0), "the pod of the lost create was found and deleted")
}

// A lost create (its pod listed only after 20 s), then a 429 on the informed
// retry: the run stops, and the pod of the first POST must still be looked
// for before it returns, not left to the cleanup job.
func TestUncertainCreateThenRateLimitedRetryIsSwept(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			RateLimits:   []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, RetryAfter: 30 * time.Second}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, _ := s.run(t)

	var want []string
	if res.Accepted != nil {
		want = []string{res.Accepted.PodID}
	}
	assert.DeepEqual(t, aliveInSim(s), want)
}

// Both POSTs of a retried create share the candidate's single-use runner
// config. When the first one's pod (listed 20 s late) is left alive during the
// watch, its runner comes online first and the second pod is accepted on that
// runner's strength; the first is then deleted, and the accepted pod's own
// runner can never connect. The accepted pod must run its own runner.
func TestAcceptedPodOfARetriedCreateRunsItsOwnRunner(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	s.clock.Advance(5 * time.Minute) // the accepted pod's own proof and runner have long finished

	verdict, _ := s.cloud.Model.Verdict(res.Accepted.PodID)
	assert.Check(t, is.Equal(verdict, ""), "the accepted pod failed after acceptance")
	assert.DeepEqual(t, aliveInSim(s), []string{res.Accepted.PodID})
}

// A lost create whose reconciliation is answered 429 with an hour's
// Retry-After: provision stops rather than risk a second pod, and its last
// look for the uncertain name still goes out under that cooldown (urgent), so
// the pod it created is found and deleted instead of billing untracked until
// the cleanup job (chaos seed 769).
func TestLastLookForAnUncertainCreateGoesOutUnderAnHourCooldown(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods"},
				When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: time.Hour}},
		}}, nil)

	_, err := s.run(t)

	assert.Check(t, err != nil, "a create that cannot be reconciled stops provisioning")
	for _, p := range s.cloud.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "pod %s (%s) left alive", p.ID, p.Name)
	}
	assert.Check(t, is.Contains(s.obs.log(), "of an uncertain create of rgpu-7001-1-c1 was listed late; deleted"))
}

// hideListedPods answers the pod-list reads it hits with an empty list: pods
// that exist but are not listed yet, read by read.
func hideListedPods(nth ...int) runpodsim.RewriteFault {
	return runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Nth: nth},
		Body: func(status int, body []byte) []byte {
			if status != http.StatusOK {
				return body
			}
			return []byte("[]")
		}}
}

// listReadsBeforeSecondCreate counts the pod-list reads of the reconciliation
// between the first POST and the informed retry (the watch's duplicate checks
// come after it).
func listReadsBeforeSecondCreate(s *scenario) int {
	n, posts := 0, 0
	for _, r := range s.cloud.RunPod.Requests() {
		switch r.Route {
		case "POST /v2/pods":
			if posts++; posts == 2 {
				return n
			}
		case "GET /v2/pods":
			n++
		}
	}
	return n
}

// A pod of an uncertain create that the run's last look finds and deletes
// billed too: it is an attempt of the run (with its cost bound and why it
// went) and counts in SpentBound, so the lane's committed spend, the next
// tier's and the re-run's ceilings and the cost report all see it.
func TestPodOfAnUncertainCreateIsCountedAndRecorded(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 90 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	recorded := map[string]cost.Attempt{}
	for _, a := range res.Attempts {
		if a.PodID != "" {
			recorded[a.PodID] = a
		}
	}
	others := 0
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == res.Accepted.PodID {
			continue
		}
		others++
		a, ok := recorded[p.ID]
		assert.Check(t, ok, "pod %s (%s) billed and is no attempt of the run: %v", p.ID, p.Name, outcomes(res))
		assert.Check(t, is.Equal(a.Outcome, cost.OutcomeRejected))
		assert.Check(t, is.Contains(a.Reason, "uncertain create"))
		bill, err := s.cloud.RunPod.Bill(p.ID)
		assert.NilError(t, err)
		assert.Check(t, res.SpentBound >= money.FromDollars(bill.Dollars), "SpentBound %s < the pod's bill $%.6f", res.SpentBound.Format(money.Exact), bill.Dollars)
	}
	assert.Check(t, is.Equal(others, 1), "the scenario: one pod of the lost create")
	assert.Check(t, is.Len(s.obs.attempts, len(res.Attempts)), "the observer heard every attempt")
}
