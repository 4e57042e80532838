package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	a4000 = "NVIDIA RTX A4000"
	a5000 = "NVIDIA RTX A5000"
	l4    = "NVIDIA L4"
	a6000 = "NVIDIA RTX A6000"
)

var (
	headSHA   = strings.Repeat("a", 40)
	mergeSHA  = strings.Repeat("b", 40)
	movedHead = strings.Repeat("c", 40)
)

// host is a healthy 12.8 machine unless changed.
func host(id, gpu string, mut ...func(*runpodsim.HostProfile)) runpodsim.HostProfile {
	h := runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 30, Healthy: true}
	for _, m := range mut {
		m(&h)
	}
	return h
}

// oldPTX is a same-SKU host whose driver reports 12.8 but loads PTX only up to 8.5.
func oldPTX(h *runpodsim.HostProfile) { h.MaxPTXISA = "8.5" }

func market(hosts ...runpodsim.HostProfile) *runpodsim.Market {
	return &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: a4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: a5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: l4, Name: "L4", MemoryGB: 24, SecurePrice: 0.43, CommunityPrice: 0.28},
			{ID: a6000, Name: "RTX A6000", MemoryGB: 48, SecurePrice: 0.49, CommunityPrice: 0.33},
		},
		DataCenters: []runpodsim.DataCenter{
			{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}},
		},
		Hosts: hosts,
	}
}

// recorder is the Observer of a test run.
type recorder struct {
	mu       sync.Mutex
	lines    []string
	created  []string
	attempts []cost.Attempt
	onCreate func(id string)
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}
func (r *recorder) PodCreated(id string) {
	r.mu.Lock()
	r.created = append(r.created, id)
	hook := r.onCreate
	r.mu.Unlock()
	if hook != nil {
		hook(id)
	}
}
func (r *recorder) AttemptDone(a cost.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, a)
}
func (r *recorder) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

type scenario struct {
	cloud *cloud.Cloud
	clock *simclock.Virtual
	deps  Deps
	req   Request
	obs   *recorder
	pr    int
}

func newScenario(t testing.TB, o cloud.Options, mutate func(*config.Config)) *scenario {
	t.Helper()
	c, err := cloud.Start(o)
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: headSHA, HeadRef: "feature", MergeCommitSHA: mergeSHA})
	assert.NilError(t, err)

	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000, l4, a6000}}}
	cfg.MaxPriceCandidates = 3
	if mutate != nil {
		mutate(cfg)
	}
	assert.NilError(t, cfg.Validate())
	obs := &recorder{}
	s := &scenario{cloud: c, clock: clock, obs: obs, pr: pr,
		deps: Deps{
			RunPod: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy)),
			GitHub: gh, Images: &registry.Resolver{APIURL: c.RegistryURL}, Policy: rpPolicy, Observer: obs,
		},
		req: Request{
			Config:      cfg,
			Owner:       ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: 7001, Attempt: 1},
			LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
			PRNumber: pr, ExpectedHeadSHA: headSHA, TestedRef: mergeSHA, Reuse: gatecheck.ReuseQuery{AppID: cloud.AppID},
			ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256,
		},
	}
	return s
}

func (s *scenario) run(t *testing.T) (Result, error) {
	t.Helper()
	return Run(context.Background(), s.deps, s.req)
}

// livePods lists pods that are not gone, through the simulator's own API.
func (s *scenario) livePods(t *testing.T) []runpod.Pod {
	t.Helper()
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	pods, err := rp.ListPods(context.Background(), runpod.ListPodsQuery{})
	assert.NilError(t, err)
	var live []runpod.Pod
	for _, p := range pods {
		if p.Status != runpod.PodTerminated {
			live = append(live, p)
		}
	}
	return live
}

func outcomes(r Result) []string {
	var out []string
	for _, a := range r.Attempts {
		out = append(out, fmt.Sprintf("%s %s %s", a.Candidate, strings.TrimPrefix(a.GPU, "NVIDIA "), a.Outcome))
	}
	return out
}

func TestFirstCandidateAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Equal(t, res.Decision, DecisionPaid)
	assert.Assert(t, res.Accepted != nil)
	assert.Equal(t, res.Accepted.GPU, a4000)
	assert.Check(t, is.Regexp(`^runpod-gpu-7001-1-c1-[0-9a-f]{16}$`, res.Accepted.RunnerLabel))
	assert.Equal(t, res.Accepted.Price.PerHour, 0.25)
	assert.Equal(t, res.Image, cloud.RunnerImage+"@"+cloud.RunnerImageDigest)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 accepted"})
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, live[0].ID, res.Accepted.PodID)
	assert.Equal(t, live[0].Name, "rgpu-7001-1-c1")
	// The pod was created from a digest-pinned image with the ownership tags.
	assert.Equal(t, live[0].Env[ownership.EnvRunID], "7001")
}

func TestProofFailureRejectedThenSecondAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	rej := res.Attempts[0]
	assert.Check(t, rej.Seconds.Known && rej.Seconds.N > 0, "rejected pod's paid seconds: %v", rej.Seconds)
	assert.Check(t, rej.Dollars().Known && rej.Dollars().USD > 0)
	assert.Check(t, is.Contains(rej.Reason, "EXITED while starting"))
	verdict, _ := s.cloud.Model.Verdict(rej.PodID)
	assert.Check(t, is.Contains(verdict, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"))
	// The rejected pod is gone and billed only for what it ran.
	assert.Assert(t, is.Len(s.livePods(t), 1))
	bill, err := s.cloud.RunPod.Bill(rej.PodID)
	assert.NilError(t, err)
	assert.Check(t, !bill.Accruing, "a rejected pod stops billing")
	assert.Check(t, is.Equal(bill.Seconds, rej.Seconds.N), "the reported paid seconds are the billed seconds")
	assert.Check(t, is.Regexp(`^runpod-gpu-7001-1-c2-[0-9a-f]{16}$`, res.Accepted.RunnerLabel), "each attempt has its own label")
}

func TestCapacityFailureMovesOnWithoutCounting(t *testing.T) {
	// L4 and A6000 have no host: they are planned as static candidates and the
	// create finds no capacity; the early stop (2) is not reached by them.
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{l4, a6000, a4000, a5000}}}
		c.MaxPriceCandidates = 1
	})
	res, err := s.run(t)
	assert.NilError(t, err)
	got := outcomes(res)
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "RTX A4000 rejected"))
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "L4 no-capacity"))
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "RTX A5000 accepted"))
	for _, a := range res.Attempts {
		if a.Outcome == cost.OutcomeNoCapacity {
			assert.Check(t, a.PodID == "", "no pod for a capacity failure")
		}
	}
	// Only the accepted attempt's runner is still registered: the capacity
	// failures' and the rejected pod's registrations were removed at once.
	var names []string
	for _, rn := range s.cloud.GitHub.Runners() {
		names = append(names, rn.Name)
	}
	assert.DeepEqual(t, names, []string{res.Accepted.RunnerLabel})
}

func TestTwoNeverOnlinePodsStopEarly(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000, oldPTX), host("h3", l4))}, nil)
	res, err := s.run(t)
	var re *RunError
	assert.Assert(t, errors.As(err, &re), "got %v", err)
	assert.Check(t, errors.Is(err, ErrStartupFailures))
	assert.Equal(t, re.Rejected, 2)
	assert.Check(t, re.Seconds > 0)
	assert.Check(t, re.Dollars.Known && re.Dollars.USD > 0)
	assert.Check(t, is.Contains(err.Error(), "2 pod(s) rejected"))
	assert.Check(t, is.Contains(err.Error(), "estimated"))
	assert.Check(t, res.Accepted == nil)
	assert.Check(t, is.Len(s.livePods(t), 0), "the third candidate (L4) is never created")
}

func TestAttemptsExhausted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000, oldPTX))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts, c.MaxConsecutiveStartupFailures = 1, 2, 0
	})
	_, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrExhausted), "got %v", err)
	assert.Check(t, is.Contains(err.Error(), "all 2 candidates tried"))
	assert.Check(t, is.Len(s.livePods(t), 0))
}

func TestClosedPRCreatesNothing(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" }))
	_, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 0))
}

func TestHeadMovedWhileWaitingDeletesThePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	s.obs.onCreate = func(string) {
		// The push lands while the first pod boots.
		_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead })
	}
	s.req.KeepFailedPods = true // obsolescence deletes even in debug mode
	res, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 1), "no further create")
	assert.Check(t, is.Len(s.livePods(t), 0))
	assert.Check(t, is.Len(res.RetainedPodIDs, 0))
}

func TestLostCreateAnswerFindsThePodByName(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}}}}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists"))
	assert.Check(t, is.Len(s.livePods(t), 1), "exactly one pod")
	assert.Equal(t, countRoute(s, "POST /v2/pods"), 1, "never a second POST")
	assert.Equal(t, res.Accepted.GPU, a4000)
}

func TestUnconfirmedDeletionStopsCreation(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)),
		Faults: runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 503}}}, nil)
	_, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrUnconfirmedDeletion), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 1), "never leak two")
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 5), "at most 5 DELETEs, all of them tried")
}

func TestKeepFailedPodsRetainsRejectedPods(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	s.req.KeepFailedPods = true
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.DeepEqual(t, res.RetainedPodIDs, []string{res.Attempts[0].PodID})
	kept, err := ownership.ParseRetentionName(res.RetentionArtifact)
	assert.NilError(t, err, "the reaper reads the name provision writes")
	assert.Check(t, kept.Retains(7001, 1, res.Attempts[0].PodID))
	assert.Check(t, is.Len(s.livePods(t), 2))
}

func TestCancellationDeletesEveryCreatedPod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.obs.onCreate = func(string) { cancel() } // SIGTERM arrives while the pod boots
	_, err := Run(ctx, s.deps, s.req)
	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(s.obs.created, 1))
	assert.Check(t, is.Len(s.livePods(t), 0))
}

func TestReusableGateSkipsThePaidPath(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	ext, _ := gatecheck.FormatExternalID(mergeSHA, gatecheck.KindPaid)
	_, err := s.cloud.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{
		Name: gatecheck.DefaultCheckName, HeadSHA: headSHA, ExternalID: ext, Status: "completed", Conclusion: "success",
		AppID: cloud.AppID, CompletedAt: s.clock.Now().Add(-time.Hour),
	})
	assert.NilError(t, err)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Equal(t, res.Decision, DecisionReused)
	assert.Check(t, strings.HasPrefix(res.ReusedCheckURL, "https://github.com/"+cloud.Repository))
	assert.Check(t, is.Len(s.obs.created, 0))
}

// countRoute counts the requests the simulated RunPod received on a route.
func countRoute(s *scenario, route string) int {
	n := 0
	for _, r := range s.cloud.RunPod.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// A reviewed GPU id the catalog does not know (a typo) must not silently
// shrink the allowlist: it is tried as a static candidate and the job summary
// warns about it.
func TestUnknownGPUIDIsWarnedInTheSummary(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}, {Name: "typo", GPUIDs: []string{"NVIDIA RTX A4O00"}}}
		c.MaxPriceCandidates = 1
	})
	res, err := s.run(t)
	assert.NilError(t, err)
	summary := res.Summary(err)
	assert.Check(t, is.Contains(summary, `> [!WARNING]`))
	assert.Check(t, is.Contains(summary, `GPU id "NVIDIA RTX A4O00" in gpu_tiers is not in the RunPod catalog (a typo?)`))
	assert.Check(t, is.Contains(res.Plan.Table(), "NVIDIA RTX A4O00"), "still planned as a static candidate")
}
