package provision

import (
	"cmp"
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

// A create answered 429 whose pod exists, when the pod list cannot be read
// before the create would go again: it is not sent twice, the run goes on to
// the next candidate, and the name is left to the run's last look, which
// finds the pod and deletes it; it does not bill on until the cleanup job.
func TestRateLimitedCreateWithAnUnreadableListIsFoundByTheLastLook(t *testing.T) {
	f := runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}}, Status: 429,
			Body: func(int, []byte) []byte {
				return []byte(`{"title":"Too Many Requests","status":429,"detail":"slow down"}`)
			}}},
		ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{First: 6}, Status: 500}},
	}
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: f}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	// The last look's find is the first candidate's pod, rejected unwatched.
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 failed", "live-2 RTX A5000 accepted", "live-1 RTX A4000 rejected"})
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "the pod list could not be read before sending it again"))
	posts := map[string]int{}
	for _, p := range s.cloud.RunPod.Pods() {
		posts[p.Name]++
	}
	assert.Check(t, is.Equal(posts["rgpu-7001-1-c1"], 1), "the first name's pod was created once, by the 429'd POST")
	assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}), "the last look deleted the first name's pod")
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
// candidate is created after the pause; never a second pod of the first name;
// and the found pod does not count as a startup failure.
func TestCreatePausedLongerThanTheStartupTimeout(t *testing.T) {
	const pause = 120 * time.Second
	first := runpodsim.Trigger{Nth: []int{1}}
	for _, tc := range []struct {
		name         string
		faults       runpodsim.Faults
		wantOutcomes []string
		wantFirst    int // pods of the first name ever created
		startup      int // startup_timeout_seconds; 0: 100
	}{
		{
			name:         "503, the create made its pod",
			faults:       runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: first, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"},
			wantFirst:    1,
		},
		{
			name:         "503, the create made its pod, found as its startup budget ends",
			faults:       runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: first, Status: 503, RetryAfter: pause}}},
			wantOutcomes: []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"},
			wantFirst:    1,
			startup:      int(pause / time.Second),
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
				c.CreateDeadlineSeconds, c.StartupTimeoutSeconds = 60, cmp.Or(tc.startup, 100)
				// A pod found too late is RunPod's pause, not a startup
				// failure: with one allowed, counting it would stop the run.
				c.MaxConsecutiveStartupFailures = 1
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
