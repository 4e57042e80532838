package provision

// The lane around the runs: several tiers tested together (matrix_tiers),
// one pod each, and a host-fault re-run. RunLane plans every tier from one
// catalog read, prints the lane's worst case before the first create, and
// runs one Run per tier in turn, each with the
// lane's other pods counted against max_run_spend_usd (Request.Committed),
// its own candidate numbers (Request.CandidateBase), and in a matrix its
// tier's own reuse by tree (gatecheck.TreeKey.ForTier). The lane's record
// (lanetiers.Record) says what every tier came to and what the lane's pods
// can cost at most; a re-run reads it back and adds to it.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/spend"
)

// LaneRequest is one provisioning of a lane: the first (every tier the lane
// tests), or a host-fault re-run (the tiers whose pods the watchdog lost).
type LaneRequest struct {
	// Request is the base of every tier's run; its Config is the lane's.
	Request
	// Previous is the lane's record so far (a re-run's); nil for the first.
	Previous *lanetiers.Record
	// HostFaults are the pods the watchdog lost to their hosts. With them the
	// run re-provisions each such tier once, on another host: the lost
	// pod's GPU type is not created again in the data center it was lost in.
	HostFaults []lanetiers.HostFault
}

// TierRun is one tier's run within a provisioning of the lane.
type TierRun struct {
	Tier   string
	Result Result
	Err    error
}

// LaneResult is what one provisioning of a lane did.
type LaneResult struct {
	// Record is the lane's record after this provisioning.
	Record lanetiers.Record
	// Pods are the pods this provisioning handed to GPU jobs.
	Pods []lanetiers.Pod
	// Runs are this provisioning's runs, in tier order.
	Runs []TierRun
	// Rerun is set for a host-fault re-run.
	Rerun bool
	// WorstCase is the bound printed before the first create.
	WorstCase spend.LaneWorstCase
	// NoRerun says why lost pods were not provisioned again, by tier.
	NoRerun map[string]string
}

func tierLabel(t string) string {
	if t == "" {
		return "any reviewed tier"
	}
	return t
}

// RunLane provisions the lane's tiers in turn (see the file comment). It
// stops at the first error that ends the lane (the pull request moved, the
// run was cancelled, a deletion is unconfirmed) and otherwise records each
// tier's failure and goes on: it fails only when no tier got a pod and not
// every tier was reused.
func RunLane(ctx context.Context, deps Deps, req LaneRequest) (LaneResult, error) {
	cfg := req.Config
	res := LaneResult{Rerun: len(req.HostFaults) > 0, NoRerun: map[string]string{}}
	res.Record = startRecord(req, cfg)
	targets := res.targets(req, cfg)
	targets = res.unlessPassed(ctx, deps, req, targets)
	if len(targets) == 0 {
		return res, nil
	}
	plans, err := planTiers(ctx, deps, req.Request, targets, req.HostFaults)
	if err != nil {
		return res, err
	}
	res.WorstCase = spend.LaneWorstCase{Committed: res.Record.CommittedUSD}
	for i, p := range plans {
		res.WorstCase.Tiers = append(res.WorstCase.Tiers, tierLabel(targets[i]))
		res.WorstCase.PerTier = append(res.WorstCase.PerTier, spend.OfPlan(p, cfg.StartupTimeout(), cfg.Lifetime()))
	}
	res.logPlan(deps, cfg)
	var errs []error
	for i, tier := range targets {
		run, err := res.runTier(ctx, deps, req, tier, &plans[i])
		res.Runs = append(res.Runs, run)
		if err != nil {
			res.handOver(deps.Policy.Now())
			return res, err
		}
		if run.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tierLabel(tier), run.Err))
		}
		if run.Result.Decision == DecisionSkipped {
			break // a maintainer's GPU stands in: nothing more is paid
		}
	}
	res.handOver(deps.Policy.Now())
	if len(res.Pods) > 0 || len(errs) == 0 {
		return res, nil
	}
	return res, errors.Join(errs...)
}

// startRecord is the record this provisioning adds to: the previous one,
// with each lost pod moved from its tier's pod to its lost pods.
func startRecord(req LaneRequest, cfg *config.Config) lanetiers.Record {
	if req.Previous == nil {
		rec := lanetiers.Record{}
		for _, t := range laneTiers(cfg) {
			rec.Tiers = append(rec.Tiers, lanetiers.Tier{Name: t})
		}
		return rec
	}
	rec := *req.Previous
	rec.Tiers = slices.Clone(rec.Tiers)
	for _, f := range req.HostFaults {
		t, ok := rec.Tier(f.Tier)
		if !ok || slices.ContainsFunc(t.Lost, func(l lanetiers.HostFault) bool { return l.PodID == f.PodID }) {
			continue
		}
		if t.Pod != nil && t.Pod.PodID == f.PodID {
			f = f.Lose(*t.Pod)
			t.Pod = nil
		}
		t.Lost = append(slices.Clone(t.Lost), f)
	}
	return rec
}

// laneTiers are the tiers the lane tests: matrix_tiers, or "" (one pod of
// whichever reviewed tier is cheapest).
func laneTiers(cfg *config.Config) []string {
	if cfg.Matrix() {
		return slices.Clone(cfg.MatrixTiers)
	}
	return []string{""}
}

// targets are the tiers to provision now: every tier at first; in a re-run
// each tier with a lost pod that was not a re-run's already (once only).
func (res *LaneResult) targets(req LaneRequest, cfg *config.Config) []string {
	if !res.Rerun {
		return laneTiers(cfg)
	}
	var out []string
	for _, f := range req.HostFaults {
		t, known := res.Record.Tier(f.Tier)
		switch {
		case slices.Contains(out, f.Tier):
		case !known:
			res.NoRerun[f.Tier] = fmt.Sprintf("pod %s names tier %q, which this lane does not test", f.PodID, f.Tier)
		case f.Rerun || slices.ContainsFunc(t.Lost, func(l lanetiers.HostFault) bool { return l.Rerun }):
			res.NoRerun[f.Tier] = fmt.Sprintf("pod %s was already a re-run: a lane re-runs a tier once", f.PodID)
		default:
			out = append(out, f.Tier)
		}
	}
	return out
}

// JobLister lists one run attempt's jobs. *ghapi.Client has it.
type JobLister interface {
	ListAttemptJobs(ctx context.Context, runID int64, attempt int) ([]*github.WorkflowJob, error)
}

// JobsReadBudget bounds the re-run's one read of the attempt's jobs.
const JobsReadBudget = 30 * time.Second

// unlessPassed drops from a re-run's targets each tier whose lost pod's GPU
// job (the job that ran on its runner) concluded success: a passed job is
// never paid for again, whatever the watchdog saw of its host after it (a
// JIT runner exits its container as its job ends, and the jobs API can show
// that late). Its pod stays on the record as lost, and cleanup's row for it
// says the job passed, the fault only noted. One read of the attempt's
// jobs with provision's GitHub credential (an App's Actions permission: the
// provision job grants its workflow token no actions: read); an unreadable
// list re-runs, the watchdog's confirmation standing.
func (res *LaneResult) unlessPassed(ctx context.Context, deps Deps, req LaneRequest, targets []string) []string {
	jl, ok := deps.GitHub.(JobLister)
	if !res.Rerun || len(targets) == 0 || !ok {
		return targets
	}
	jctx, cancel := reqpolicy.Bound(ctx, deps.Policy, JobsReadBudget)
	jobs, err := jl.ListAttemptJobs(jctx, req.Owner.RunID, req.Owner.Attempt)
	cancel()
	if err != nil {
		deps.Observer.Logf("host-fault re-run: this attempt's jobs could not be read (%v): every lost pod is re-run", err)
		return targets
	}
	var out []string
	for _, tier := range targets {
		f, passed := passedDespite(req.HostFaults, tier, jobs)
		if !passed {
			out = append(out, tier)
			continue
		}
		res.NoRerun[tier] = fmt.Sprintf("pod %s's GPU job (runner %s) concluded success: the host fault seen after it is only noted, and nothing is paid again", f.PodID, f.RunnerLabel)
		deps.Observer.Logf("host-fault re-run of %s: %s", tierLabel(tier), res.NoRerun[tier])
	}
	return out
}

// passedDespite is tier's lost pod whose GPU job concluded success, if any.
func passedDespite(faults []lanetiers.HostFault, tier string, jobs []*github.WorkflowJob) (lanetiers.HostFault, bool) {
	for _, f := range faults {
		if f.Tier != tier || f.RunnerLabel == "" {
			continue
		}
		for _, j := range jobs {
			if j.GetRunnerName() == f.RunnerLabel && j.GetStatus() == "completed" && j.GetConclusion() == "success" {
				return f, true
			}
		}
	}
	return lanetiers.HostFault{}, false
}

// planTiers plans every target from one catalog read: a tier of a matrix
// from its own GPU ids, "" from the whole allowlist; a re-run's tier away
// from where its pods were lost.
func planTiers(ctx context.Context, deps Deps, base Request, targets []string, lost []lanetiers.HostFault) ([]plan.Plan, error) {
	r := &run{deps: deps, req: base, cfg: base.Config, live: map[string]bool{}}
	vol, err := resolveVolume(ctx, deps, base.Config) // volume.go: before any create
	if err != nil {
		return nil, err
	}
	if vol != nil {
		return r.planWithVolume(ctx, vol, func(in plan.Input) []plan.Plan { return tierPlans(r, base, in, targets, lost, vol) })
	}
	pctx, cancel := r.bound(ctx, CatalogBudget)
	in := r.planInput(pctx)
	cancel()
	return tierPlans(r, base, in, targets, lost, nil), nil
}

// tierPlans builds each target's plan from one catalog read (in), for the
// network volume vol when one is configured.
func tierPlans(r *run, base Request, in plan.Input, targets []string, lost []lanetiers.HostFault, vol *plan.Volume) []plan.Plan {
	plans := make([]plan.Plan, len(targets))
	for i, tier := range targets {
		tin := in
		if tier != "" {
			t, _ := base.Config.Tier(tier)
			tin.Tiers = []plan.Tier{{Name: t.Name, GPUIDs: t.GPUIDs}}
		}
		var where []lanetiers.HostFault
		for _, f := range lost {
			if f.Tier == tier {
				where = append(where, f)
			}
		}
		if len(where) > 0 {
			tin.Rank = avoiding(in.Rank, where)
		}
		if vol != nil {
			plans[i] = plan.BuildWithVolume(tin, *vol)
		} else {
			plans[i] = plan.Build(tin)
		}
		plans[i].Warnings = append(slices.Clone(r.res.Warnings), plans[i].Warnings...)
	}
	return plans
}

// logPlan prints the lane's worst case before the first create: every tier
// together, with what a host-fault re-run could add on top. A lane of one
// pod prints it too (its run prints its own plan besides): gpu-lane.yml
// always holds the re-run, so the pod's plan alone is not the lane's worst case.
func (res *LaneResult) logPlan(deps Deps, cfg *config.Config) {
	ceiling := "no max_run_spend_usd: nothing bounds it further"
	if c, ok := cfg.MaxRunSpend(); ok {
		ceiling = fmt.Sprintf("max_run_spend_usd %s covers all of it: no create that could pass it is made", c)
	}
	again := ""
	if !res.Rerun {
		again = fmt.Sprintf("; a host-fault re-run (once per tier) could add up to %s", res.WorstCase.Rerun())
		if n := res.WorstCase.Unpriced(); n > 0 {
			again += fmt.Sprintf(" + %d unpriced candidate(s)", n)
		}
	}
	deps.Observer.Logf("lane plan: worst-case spend %s%s; %s", res.WorstCase, again, ceiling)
}

// runTier runs one tier and records it; the error is one that ends the lane.
func (res *LaneResult) runTier(ctx context.Context, deps Deps, req LaneRequest, tier string, p *plan.Plan) (TierRun, error) {
	rec := &res.Record
	treq := req.Request
	treq.Plan, treq.CandidateBase = p, rec.NextCandidate
	treq.Committed, treq.CommittedUnknown, treq.CommittedPods = rec.CommittedUSD, rec.CommittedUnknown, rec.PodIDs()
	if tier != "" {
		t, _ := req.Config.Tier(tier)
		tcfg := *req.Config
		tcfg.GPUTiers = []config.GPUTier{t}
		treq.Config = &tcfg
		treq.Reuse.CheckName = gatecheck.TierCheckName(treq.Reuse.CheckName, tier)
		if k := treq.Reuse.Key; k != nil {
			tk := k.ForTier(tier)
			treq.Reuse.Key = &tk
		}
	}
	treq.NoReuse = res.Rerun
	end := func() {}
	switch {
	case res.Rerun:
		end = phase(deps, "host-fault re-run: %s", tierLabel(tier))
	case tier != "":
		end = phase(deps, "tier %s", tier)
	}
	result, err := Run(ctx, deps, treq)
	end()
	rec.NextCandidate = max(rec.NextCandidate, treq.CandidateBase+len(result.Plan.Candidates), treq.CandidateBase+1)
	rec.CommittedUSD += result.SpentBound + result.AcceptedWorst
	rec.CommittedUnknown = rec.CommittedUnknown || result.AcceptedUnpriced
	t, _ := rec.Tier(tier)
	t.PaidPath, t.ReusedCheckURL = string(result.Decision), result.ReusedCheckURL
	t.Rejected = append(t.Rejected, result.rejected()...)
	t.Retained = append(t.Retained, result.RetainedPodIDs...)
	t.Error, t.Pod = "", nil
	if err != nil {
		t.Error = err.Error()
	}
	if a := result.Accepted; a != nil {
		pod := podOf(tier, *a, res.Rerun)
		t.Pod = &pod
		res.Pods = append(res.Pods, pod)
	}
	run := TierRun{Tier: tier, Result: result, Err: err}
	if err != nil && endsLane(ctx, err) {
		return run, err
	}
	return run, nil
}

// endsLane reports an error after which no tier may spend: the pull request
// moved or closed, the run was cancelled, or a pod may still bill unseen.
func endsLane(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrObsolete) || errors.Is(err, ErrUnconfirmedDeletion)
}

func phase(deps Deps, format string, args ...any) func() {
	if p, ok := deps.Observer.(PhaseObserver); ok {
		return p.Phase(fmt.Sprintf(format, args...))
	}
	return func() {}
}

// podOf is the accepted pod as a GPU job's matrix element.
func podOf(tier string, a Accepted, rerun bool) lanetiers.Pod {
	out := Result{Accepted: &a}.Outputs()
	pod := lanetiers.Pod{Tier: tier, RunnerLabel: a.RunnerLabel, PodID: a.PodID, GPUType: a.GPU, GPUTier: a.Tier,
		Cloud: a.Cloud, DataCenter: a.DataCenter, PricePerHour: out.PricePerHour, StartedAt: out.StartedAt, StartupSeconds: out.StartupSeconds, Rerun: rerun}
	if !a.AcceptedAt.IsZero() {
		pod.AcceptedAt = a.AcceptedAt.UTC().Format(time.RFC3339)
	}
	return pod
}

// handOver stamps the pods this provisioning hands to GPU jobs, in its
// result and its record, with the moment it hands them over: its end. A
// tier's pod accepted earlier waited until then (lanetiers.Pod.HandOverWait),
// which the watchdog adds to its setup budget.
func (res *LaneResult) handOver(now time.Time) {
	at := now.UTC().Format(time.RFC3339)
	for i := range res.Pods {
		res.Pods[i].HandedOverAt = at
		if t, ok := res.Record.Tier(res.Pods[i].Tier); ok && t.Pod != nil && t.Pod.PodID == res.Pods[i].PodID {
			pod := *t.Pod
			pod.HandedOverAt = at
			t.Pod = &pod
		}
	}
}

// avoiding ranks with rank and then keeps every candidate of a lost pod's
// GPU type out of the data centers it was lost in: pinned to the type's
// other data centers with stock, or dropped when it has none. Another GPU
// type is another host already.
func avoiding(rank plan.Ranker, lost []lanetiers.HostFault) plan.Ranker {
	return func(in plan.Input, cands []plan.Candidate) []plan.Candidate {
		if rank != nil {
			cands = rank(in, cands)
		}
		var out []plan.Candidate
		for _, c := range cands {
			var avoid []string
			for _, f := range lost {
				if f.GPUType == c.GPUID && f.DataCenter != "" {
					avoid = append(avoid, f.DataCenter)
				}
			}
			if len(avoid) == 0 {
				out = append(out, c)
				continue
			}
			dcs := c.DataCenterIDs
			if len(dcs) == 0 {
				dcs = stockedDataCenters(in.Offers, c.GPUID, c.Cloud)
			}
			dcs = slices.DeleteFunc(slices.Clone(dcs), func(id string) bool {
				return slices.ContainsFunc(avoid, func(a string) bool { return strings.EqualFold(a, id) })
			})
			if len(dcs) > 0 {
				c.DataCenterIDs = dcs
				out = append(out, c)
			}
		}
		return out
	}
}

// stockedDataCenters are the data centers the catalog shows stock of gpu in cloud.
func stockedDataCenters(offers []plan.Offer, gpu, cloud string) []string {
	var ids []string
	for _, o := range offers {
		if o.GPUID != gpu || !strings.EqualFold(o.Cloud, cloud) {
			continue
		}
		for _, dc := range o.DataCenters {
			if !strings.EqualFold(dc.Availability, "NONE") && dc.Availability != "" {
				ids = append(ids, dc.ID)
			}
		}
	}
	return ids
}

// Outputs are the lane's plain outputs: one run's own when the lane is one
// pod on any tier, else the runs summed, with no single pod named (the GPU
// jobs take the pods output).
func (res LaneResult) Outputs() Outputs {
	if len(res.Runs) == 1 && res.Runs[0].Tier == "" {
		return res.Runs[0].Result.Outputs()
	}
	var all Result
	paid, reused := 0, 0
	for _, r := range res.Runs {
		all.Attempts = append(all.Attempts, r.Result.Attempts...)
		all.RetainedPodIDs = append(all.RetainedPodIDs, r.Result.RetainedPodIDs...)
		all.Image = cmp.Or(all.Image, r.Result.Image)
		switch r.Result.Decision {
		case DecisionPaid:
			paid++
		case DecisionReused:
			reused++
		case DecisionSkipped:
			all.Decision = DecisionSkipped
		}
	}
	switch {
	case all.Decision == DecisionSkipped:
	case paid > 0:
		all.Decision = DecisionPaid
	case reused > 0 && reused == len(res.Runs):
		all.Decision = DecisionReused
	}
	out := all.Outputs()
	for _, r := range res.Runs {
		out.RetentionArtifactName = cmp.Or(out.RetentionArtifactName, r.Result.RetentionArtifact)
	}
	return out
}

// PodsOutput is the pods output: the pods handed to GPU jobs now ("[]" for none).
func (res LaneResult) PodsOutput() string {
	if res.Pods == nil {
		return "[]"
	}
	return lanetiers.Format(res.Pods)
}

// Summary renders the job summary: one run's own, or the lane's worst case
// and each tier's run under its name.
func (res LaneResult) Summary(runErr error) string {
	if len(res.Runs) == 1 && res.Runs[0].Tier == "" && !res.Rerun {
		return res.Runs[0].Result.Summary(runErr)
	}
	var b strings.Builder
	title := "## RunPod GPU provision"
	if res.Rerun {
		title += ": host-fault re-run"
	}
	fmt.Fprintf(&b, "%s\n\n", title)
	if len(res.WorstCase.Tiers) > 0 {
		fmt.Fprintf(&b, "Worst-case spend %s.\n\n", res.WorstCase)
	}
	for tier, why := range res.NoRerun {
		fmt.Fprintf(&b, "**No re-run for %s**: %s.\n\n", tierLabel(tier), why)
	}
	for _, r := range res.Runs {
		body := strings.TrimPrefix(r.Result.Summary(r.Err), "## RunPod GPU provision\n\n")
		body = strings.ReplaceAll(body, "\n"+cost.Disclaimer+"\n", "\n")
		fmt.Fprintf(&b, "### %s\n\n%s\n", tierLabel(r.Tier), body)
	}
	fmt.Fprintf(&b, "%s\n", cost.Disclaimer)
	return b.String()
}
