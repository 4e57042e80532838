package provision

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

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

// The scenario harness the package's tests share: a simulated RunPod and
// GitHub on one virtual clock. Scenario tests observe only what a run exposes —
// its Result, the attempt records the Observer hears, the simulated cloud's
// state — so they hold whatever the watch and create code look like inside.

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
	mu      sync.Mutex
	lines   []string
	created []string
	// forgotten are the created ids the run took back: another pod's.
	forgotten []string
	attempts  []cost.Attempt
	onCreate  func(id string)
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

func (r *recorder) PodForgotten(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgotten = append(r.forgotten, id)
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

// onlyA4000 narrows the plan to one candidate, so a rejection is the run's end
// and its reason is the only one.
func onlyA4000(c *config.Config) {
	c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}}
	c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 2
}

// timedObserver records, on the scenario's clock, when each attempt ended.
type timedObserver struct {
	Observer
	now  func() time.Time
	mu   sync.Mutex
	ends []time.Time
}

func (o *timedObserver) AttemptDone(a cost.Attempt) {
	o.mu.Lock()
	o.ends = append(o.ends, o.now())
	o.mu.Unlock()
	o.Observer.AttemptDone(a)
}

// unitRun is a run with a default config, a virtual clock and a recording
// observer, for calling one method without a cloud.
func unitRun(t *testing.T, mutate func(*config.Config)) (*run, *recorder) {
	t.Helper()
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	clock := simclock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	obs := &recorder{}
	return &run{cfg: cfg, live: map[string]bool{}, deps: Deps{Observer: obs,
		Policy: reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))}}, obs
}

// aliveInSim lists the pods the simulator itself holds alive (its list API
// hides young pods under ListingDelay).
func aliveInSim(s *scenario) []string {
	var alive []string
	for _, p := range s.cloud.RunPod.Pods() {
		if p.Status != runpodsim.StatusTerminated {
			alive = append(alive, p.ID)
		}
	}
	return alive
}
