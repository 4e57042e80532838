package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
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
	reps, err := RunAll(ctx, []Scenario{s}, policies, 1)
	if err != nil {
		return Report{}, err
	}
	return reps[0], nil
}

// RunAll runs every scenario under every policy, workers policy runs at a
// time (each on its own simulated cloud and clock, so the results are the
// same whatever the number), and returns one report per scenario, in order.
func RunAll(ctx context.Context, scenarios []Scenario, policies []Policy, workers int) ([]Report, error) {
	type job struct{ scenario, policy int }
	reps := make([]Report, len(scenarios))
	fleets := make([]Fleet, len(scenarios))
	refs := make([][]ref, len(scenarios))
	var jobs []job
	for i, s := range scenarios {
		s, err := s.withDefaults()
		if err != nil {
			return nil, err
		}
		if fleets[i], err = NewFleet(s); err != nil {
			return nil, err
		}
		refs[i] = workload(s)
		measured := 0
		for _, r := range refs[i] {
			if !r.Warm {
				measured++
			}
		}
		reps[i] = Report{Scenario: s, Machines: len(fleets[i].Machines), BadShare: fleets[i].BadShare(), Refs: measured,
			Results: make([]Result, len(policies))}
		for j := range policies {
			jobs = append(jobs, job{i, j})
		}
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Go(func() {
			for k := range next {
				j := jobs[k]
				res, err := runPolicy(ctx, reps[j.scenario].Scenario, fleets[j.scenario], refs[j.scenario], policies[j.policy])
				reps[j.scenario].Results[j.policy], errs[k] = res, err
				if err != nil {
					errs[k] = fmt.Errorf("%s, policy %s: %w", reps[j.scenario].Title(), policies[j.policy].Name, err)
				}
			}
		})
	}
	for k := range jobs {
		next <- k
	}
	close(next)
	wg.Wait()
	return reps, errors.Join(errs...)
}

// sim is one policy's run: its own cloud, clients and ledger.
type sim struct {
	s      Scenario
	policy Policy
	cfg    *config.Config
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	sched  *scheduler   // runs each ref's lane beside the others
	logs   *logStreams  // paces the pods' log streams with the clock
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
	// evidence is what the policy's own runs left in the lane's history and
	// the daily record it publishes; only a Reputation policy reads it.
	evidence *evidence
	// warmPods are the warm-up refs' pods, left out of the bill.
	warmPods map[string]bool
	machines map[string]Machine // by host id: where the waste went
	// screened are the pods deleted before their proof because the record
	// held their machine bad, in order.
	screened []string
	res      Result
}

func runPolicy(ctx context.Context, s Scenario, fleet Fleet, refs []ref, p Policy) (Result, error) {
	sm, err := replay(ctx, s, fleet, refs, p)
	if err != nil {
		return Result{}, err
	}
	return sm.res, nil
}

// replay runs one policy and returns its finished run.
func replay(ctx context.Context, s Scenario, fleet Fleet, refs []ref, p Policy) (*sim, error) {
	cfg := config.Default()
	p.Configure(cfg)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	clock := simclock.NewVirtual(s.Start.Add(-s.WarmUp))
	h := newHosts(clock, s.Seed, fleet)
	m := fleet.Market()
	c, err := cloud.Start(cloud.Options{Seed: s.Seed, Clock: clock, Market: &m, Hosts: h,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(15 * time.Second)}})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	h.proof = cloud.NewProofModel(clock, c.GitHub)
	sm := &sim{s: s, policy: p, cfg: cfg, cloud: c, clock: clock, runID: 1000, jobs: map[string]float64{}, machines: h.machines,
		evidence: newEvidence(clock.Now(), s.InstantRecord, s.NoMachines), warmPods: map[string]bool{},
		res: Result{Policy: p.Name, Summary: p.Summary},
	}
	sched := newScheduler(clock)
	sm.sched = sched
	sm.logs = newLogStreams(c.RunPod)
	sched.settle = sm.logs.settle
	tr, err := newInProcess(c, sched.pause, sm.logs)
	if err != nil {
		return nil, err
	}
	sm.http = &http.Client{Transport: tr}
	opsPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(sched.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	sm.ops.runpod = runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(opsPolicy), runpod.WithHTTPClient(sm.http))
	sm.churn(fleet)
	// Each ref's lane starts when its push arrives and runs beside the
	// lanes still running, as the shipped lanes of different trees do.
	outcomes := make([]refOutcome, len(refs))
	errs := make([]error, len(refs)+1)
	if err := sched.Run(func() {
		if sm.ops.gh, errs[len(refs)] = ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
			Policy: opsPolicy, HTTPClient: sm.http}); errs[len(refs)] != nil {
			return
		}
		for i, r := range refs {
			if errs[len(refs)] = ctx.Err(); errs[len(refs)] != nil {
				break
			}
			if wait := r.At.Sub(clock.Now()); wait > 0 {
				sched.pause(wait)
			}
			sched.Go(func() { outcomes[i], errs[i] = sm.test(ctx, r) })
		}
		sched.Join()
	}); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, r := range refs {
		if !r.Warm { // a warm-up ref runs as any other, its outcome thrown away
			outcomes[i].addTo(&sm.res)
		}
	}
	sm.bill()
	return sm, nil
}

// screenedReason starts the reason of an attempt whose pod was deleted
// before its proof because the record holds its machine bad
// (provision.screenOut).
const screenedReason = "placed on a machine held bad"

// refOutcome is what one ref's lane runs did.
type refOutcome struct {
	tested             bool
	timeToRunner       time.Duration
	runs, runsNoPod    int
	accepted, rejected int
	screened           int
}

func (o refOutcome) addTo(res *Result) {
	res.Refs++
	res.Runs += o.runs
	res.RunsNoPod += o.runsNoPod
	res.Accepted += o.accepted
	res.Rejected += o.rejected
	res.Screened += o.screened
	if o.tested {
		res.RefsTested++
		res.TimesToRunner = append(res.TimesToRunner, o.timeToRunner)
	}
}

// test provisions a runner for one ref. Of its three deliveries the first
// runs; the other two arrive while it runs, and GitHub keeps only the newest
// waiting one, which starts after the first: it reuses a passed gate (no
// pod) or, after a run that ended with no pod, provisions once more.
func (sm *sim) test(ctx context.Context, r ref) (refOutcome, error) {
	var o refOutcome
	for delivery := 1; delivery <= min(deliveriesPerRef, 2); delivery++ {
		accepted, err := sm.provision(ctx, &o, r.Warm)
		if err != nil {
			return o, err
		}
		if accepted != nil {
			o.tested, o.timeToRunner = true, sm.clock.Now().Sub(r.At)
			sm.jobs[accepted.PodID] = accepted.Price.PerHour.Dollars() * r.Job.Hours()
			return o, sm.release(ctx, accepted.PodID)
		}
	}
	return o, nil
}

// provision runs the lane once and records its attempts in o; a warm-up
// ref's pods are left out of the bill.
func (sm *sim) provision(ctx context.Context, o *refOutcome, warm bool) (*provision.Accepted, error) {
	sm.runID++
	req := provision.Request{
		Config:      sm.cfg,
		Owner:       ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: sm.runID, Attempt: 1},
		LabelPrefix: "gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		ProofURL: sm.cloud.ProofURL, ProofSHA256: sm.cloud.ProofSHA256,
	}
	if sm.policy.Reputation {
		req.Reputation = sm.evidence.record(sm.clock.Now())
	}
	deps, err := sm.lane(ctx)
	if err != nil {
		return nil, err
	}
	res, err := provision.Run(ctx, deps, req)
	o.runs++
	sm.evidence.add(res.Attempts)
	for _, a := range res.Attempts {
		if warm && a.PodID != "" {
			sm.warmPods[a.PodID] = true
		}
		switch a.Outcome {
		case cost.OutcomeAccepted:
			o.accepted++
		case cost.OutcomeRejected:
			o.rejected++
			if strings.HasPrefix(a.Reason, screenedReason) {
				o.screened++
				sm.screened = append(sm.screened, a.PodID)
			}
		}
	}
	if res.Accepted == nil {
		o.runsNoPod++
		var re *provision.RunError
		if err != nil && !errors.As(err, &re) {
			return nil, err // not a provisioning outcome: the simulation is broken
		}
	}
	return res.Accepted, nil
}

// lane is what one lane run starts with: its own request policies and
// clients, as each run of the action is a new process. (One set for the
// whole replay would also hold every runner config ever minted as a secret
// to redact, which a real run never does.)
func (sm *sim) lane(ctx context.Context) (provision.Deps, error) {
	clock := sm.clock
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(sm.sched.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(sm.sched.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: sm.cloud.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
		Policy: ghPolicy, HTTPClient: sm.http})
	if err != nil {
		return provision.Deps{}, err
	}
	return provision.Deps{
		RunPod: runpod.New(sm.cloud.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy), runpod.WithHTTPClient(sm.http)),
		GitHub: gh, Images: pinned{}, Policy: rpPolicy, Observer: quiet{}, LogPacer: sm.logs,
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
		if sm.warmPods[p.ID] {
			continue
		}
		_, usd := p.BilledFromCreation(now)
		sm.res.Pods++
		sm.res.Dollars += usd
		if job, ok := sm.jobs[p.ID]; ok {
			sm.res.Dollars += job
			continue
		}
		sm.res.Wasted += usd
		if sm.res.WasteByFault == nil {
			sm.res.WasteByFault = map[Fault]float64{}
			sm.res.RejectedOn = map[string]int{}
		}
		sm.res.WasteByFault[sm.machines[p.HostID].Fault] += usd
		sm.res.RejectedOn[p.HostID]++
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
		// The clock starts with the warm-up.
		at := sm.s.Start.Add(time.Duration(k)*stockTick - sm.s.WarmUp)
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
