package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Market churn cadence: stock moves every half hour, prices every six hours.
const (
	stockTick = 30 * time.Minute
	priceTick = 6 * time.Hour
)

// Run measures each policy on its own copy of the scenario's market with
// the scenario's workload and returns one result per policy, in order.
func Run(ctx context.Context, s Scenario, policies []Policy) (Report, error) {
	s, err := s.withDefaults()
	if err != nil {
		return Report{}, err
	}
	fleet, err := NewFleet(s)
	if err != nil {
		return Report{}, err
	}
	refs := workload(s)
	rep := Report{Scenario: s, Machines: len(fleet.Machines), BadShare: fleet.BadShare(), Refs: len(refs)}
	for _, p := range policies {
		res, err := runPolicy(ctx, s, fleet, refs, p)
		if err != nil {
			return rep, fmt.Errorf("policy %s: %w", p.Name, err)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// sim is one policy's run: its own cloud, clients and ledger.
type sim struct {
	s      Scenario
	policy Policy
	cfg    *config.Config
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	http   *http.Client // to the cloud's handlers, in process
	// ops is the simulation's own client pair (ending jobs), not the lane's.
	ops struct {
		runpod *runpod.Client
		gh     *ghapi.Client
	}
	runID int64
	// jobs is what accepted pods cost while their GPU job ran, by pod id:
	// the pod is deleted the moment it is accepted (the next ref's plan does
	// not wait for it) and its job time is billed here instead.
	jobs map[string]float64
	// record is the reputation evidence of the policy's own runs, as the
	// lane's history keeps it; only a Reputation policy reads it.
	record   reputation.Record
	machines map[string]Machine // by host id, for each pod's driver
	res      Result
}

func runPolicy(ctx context.Context, s Scenario, fleet Fleet, refs []ref, p Policy) (Result, error) {
	cfg := config.Default()
	p.Configure(cfg)
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("configuration: %w", err)
	}
	clock := simclock.NewVirtual(s.Start)
	h := newHosts(clock, s.Seed, fleet)
	m := fleet.Market()
	c, err := cloud.Start(cloud.Options{Seed: s.Seed, Clock: clock, Market: &m, Hosts: h,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(15 * time.Second)}})
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	h.proof = cloud.NewProofModel(clock, c.GitHub)
	sm := &sim{s: s, policy: p, cfg: cfg, cloud: c, clock: clock, runID: 1000, jobs: map[string]float64{}, machines: h.machines,
		res: Result{Policy: p.Name, Summary: p.Summary},
	}
	tr, err := newInProcess(c)
	if err != nil {
		return Result{}, err
	}
	sm.http = &http.Client{Transport: tr}
	opsPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	sm.ops.runpod = runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(opsPolicy), runpod.WithHTTPClient(sm.http))
	if sm.ops.gh, err = ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
		Policy: opsPolicy, HTTPClient: sm.http}); err != nil {
		return Result{}, err
	}
	sm.churn(fleet)
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if wait := r.At.Sub(clock.Now()); wait > 0 {
			clock.Advance(wait)
		}
		if err := sm.test(ctx, r); err != nil {
			return Result{}, err
		}
	}
	sm.bill()
	return sm.res, nil
}

// test provisions a runner for one ref. Of its three deliveries the first
// runs; the other two arrive while it runs, and GitHub keeps only the newest
// waiting one, which starts after the first: it reuses a passed gate (no
// pod) or, after a run that ended with no pod, provisions once more.
func (sm *sim) test(ctx context.Context, r ref) error {
	sm.res.Refs++
	for delivery := 1; delivery <= min(deliveriesPerRef, 2); delivery++ {
		accepted, err := sm.provision(ctx)
		if err != nil {
			return err
		}
		if accepted != nil {
			sm.res.RefsTested++
			sm.res.TimesToRunner = append(sm.res.TimesToRunner, sm.clock.Now().Sub(r.At))
			sm.jobs[accepted.PodID] = accepted.Price.PerHour * r.Job.Hours()
			return sm.release(ctx, accepted.PodID)
		}
	}
	return nil
}

// provision runs the lane once and records its attempts.
func (sm *sim) provision(ctx context.Context) (*provision.Accepted, error) {
	sm.runID++
	req := provision.Request{
		Config:      sm.cfg,
		Owner:       ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: sm.runID, Attempt: 1},
		LabelPrefix: "gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		ProofURL: sm.cloud.ProofURL, ProofSHA256: sm.cloud.ProofSHA256,
	}
	if sm.policy.Reputation {
		req.Reputation = &sm.record
	}
	deps, err := sm.lane(ctx)
	if err != nil {
		return nil, err
	}
	res, err := provision.Run(ctx, deps, req)
	sm.res.Runs++
	if err := sm.remember(res.Attempts); err != nil {
		return nil, err
	}
	for _, a := range res.Attempts {
		switch a.Outcome {
		case cost.OutcomeAccepted:
			sm.res.Accepted++
		case cost.OutcomeRejected:
			sm.res.Rejected++
		}
	}
	if res.Accepted == nil {
		sm.res.RunsNoPod++
		var re *provision.RunError
		if err != nil && !errors.As(err, &re) {
			return nil, err // not a provisioning outcome: the simulation is broken
		}
	}
	return res.Accepted, nil
}

// remember keeps each created pod's evidence — GPU, data center, driver,
// outcome and paid seconds — as the lane's history does.
func (sm *sim) remember(attempts []cost.Attempt) error {
	now := sm.clock.Now()
	for _, a := range attempts {
		if a.PodID == "" {
			continue
		}
		p, err := sm.cloud.RunPod.Pod(a.PodID)
		if err != nil {
			return err
		}
		secs, _ := p.BilledFromCreation(now)
		sm.record.Add(reputation.Observation{
			At: now, GPU: p.GPUTypeID, DataCenter: p.DataCenterID, Cloud: p.Cloud,
			Driver: sm.machines[p.HostID].Profile.DriverCUDA, OK: a.Outcome == cost.OutcomeAccepted,
			Seconds: secs, PricePerHour: p.HourlyPrice,
		})
	}
	return nil
}

// lane is what one lane run starts with: its own request policies and
// clients, as each run of the action is a new process. (One set for the
// whole replay would also hold every runner config ever minted as a secret
// to redact, which a real run never does.)
func (sm *sim) lane(ctx context.Context) (provision.Deps, error) {
	clock := sm.clock
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: sm.cloud.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
		Policy: ghPolicy, HTTPClient: sm.http})
	if err != nil {
		return provision.Deps{}, err
	}
	return provision.Deps{
		RunPod: runpod.New(sm.cloud.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy), runpod.WithHTTPClient(sm.http)),
		GitHub: gh, Images: pinned{}, Policy: rpPolicy, Observer: quiet{},
	}, nil
}

// release ends an accepted pod's GPU job: its ephemeral runner leaves the
// registry, as a JIT runner does after its one job, and the pod is deleted
// (its job is billed from the ledger).
func (sm *sim) release(ctx context.Context, podID string) error {
	p, err := sm.cloud.RunPod.Pod(podID)
	if err != nil {
		return err
	}
	label := p.Env["RUNPOD_GPU_RUNNER_LABEL"]
	for _, r := range sm.cloud.GitHub.Runners() {
		if r.Name == label {
			if err := sm.ops.gh.DeleteRunner(ctx, r.ID, ghapi.ScopeRepo); err != nil {
				return err
			}
		}
	}
	return sm.ops.runpod.DeletePod(ctx, podID)
}

// bill totals every pod from its creation to its confirmed deletion, per
// second, plus the accepted pods' jobs.
func (sm *sim) bill() {
	now := sm.clock.Now()
	for _, p := range sm.cloud.RunPod.Pods() {
		_, usd := p.BilledFromCreation(now)
		sm.res.Pods++
		sm.res.Dollars += usd
		if job, ok := sm.jobs[p.ID]; ok {
			sm.res.Dollars += job
		} else {
			sm.res.Wasted += usd
		}
	}
}

// churn moves the market while the policy runs: other customers' load
// follows the day (busiest in the afternoon, UTC) with noise per machine,
// and prices drift within ±12 % of list. Draws are keyed by tick, so every
// policy sees the same market at the same virtual time.
func (sm *sim) churn(fleet Fleet) {
	var stock func(k uint64)
	stock = func(k uint64) {
		r := rand.New(rand.NewPCG(sm.s.Seed, 0x73746f636b00+k)) // "stock"
		at := sm.s.Start.Add(time.Duration(k) * stockTick)
		hour := float64(at.Hour()) + float64(at.Minute())/60
		load := 0.55 + 0.3*math.Sin(2*math.Pi*(hour-9)/24)
		busy := make(map[string]int, len(fleet.Machines))
		for _, m := range fleet.Machines {
			u := min(max(load+0.25*r.NormFloat64(), 0), 1)
			busy[m.Profile.ID] = int(math.Round(u * float64(m.Profile.GPUCount)))
		}
		_ = sm.cloud.RunPod.SetBusy(busy) // every id is the fleet's
		sm.clock.AfterFunc(stockTick, func() { stock(k + 1) })
	}
	var prices func(k uint64)
	prices = func(k uint64) {
		r := rand.New(rand.NewPCG(sm.s.Seed, 0x707269636500+k)) // "price"
		for _, g := range fleet.GPUTypes {
			f := 1 + 0.12*(2*r.Float64()-1)
			_ = sm.cloud.RunPod.SetPrice(g.ID, round2(g.SecurePrice*f), round2(g.CommunityPrice*f))
		}
		sm.clock.AfterFunc(priceTick, func() { prices(k + 1) })
	}
	stock(0)
	prices(0)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// pinned is the image resolver: the simulated registry's digest, no call.
type pinned struct{}

func (pinned) Resolve(context.Context, string) (string, error) {
	return "ghcr.io/actions/actions-runner@" + cloud.RunnerImageDigest, nil
}

// quiet drops the lane's log lines: the report is the output.
type quiet struct{}

func (quiet) Logf(string, ...any)        {}
func (quiet) PodCreated(string)          {}
func (quiet) AttemptDone(a cost.Attempt) {}
