package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// watchResult is what the startup watch saw.
type watchResult struct {
	accepted   bool
	acceptedAt time.Time
	obsolete   bool // the PR closed or its head moved
	local      bool // the PR was labelled for local validation
	wrongGPU   bool // RunPod placed another GPU than the reviewed one requested
	overSpend  bool // the price RunPod bills could take the run past max_run_spend_usd
	taken      bool // the runner was busy with a job before the GPU job was even queued
	reason     string
	start      time.Time  // provider start (startedAt), zero when never seen
	price      cost.Price // hourly cost captured while RUNNING
}

// watch polls the pod every startup_poll_seconds until it is accepted or
// rejected. The pod status comes first; the runner registry is read only after
// a live RUNNING observation. Unknown or malformed observations back off and
// never count as death or health. Every call and every wait of the watch fits
// the candidate's startup budget (startup_timeout_seconds from creation): a
// pause that does not fit — a long Retry-After, the shared cooldown — ends the
// candidate instead of extending it.
func (r *run) watch(ctx context.Context, pod *runpod.Pod, c plan.Candidate, label string, created time.Time) watchResult {
	var w watchResult
	// The budget runs from the first POST: a reconciled pod may have been
	// billing since then, and no pod of the candidate can be older.
	deadline := created.Add(r.cfg.StartupTimeout())
	wctx, cancel := r.bound(ctx, max(deadline.Sub(r.now()), 0))
	defer cancel()
	poll := r.cfg.StartupPoll()
	runtimeSeen := false
	for {
		if ctx.Err() != nil {
			w.reason = "cancelled"
			return w
		}
		if r.retriedCreate {
			// Both POSTs of a retried create may have made a pod, sharing the
			// one runner config: the other is deleted as soon as it is listed,
			// before its runner can stand in for this pod's.
			if found, why := r.dropDuplicates(wctx, pod.Name, pod.ID, label); found {
				r.retriedCreate = false
				if why != "" {
					w.reason = why
					return w
				}
			}
		}
		switch verdict, why := r.readPR(wctx); verdict {
		case prObsolete:
			w.obsolete, w.reason = true, why
			return w
		case prLocal:
			w.local, w.reason = true, why
			return w
		}
		p, err := r.deps.RunPod.GetPod(wctx, pod.ID)
		switch {
		case err != nil && errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
			w.reason = fmt.Sprintf("pod %s: a required pause does not fit the rest of startup_timeout_seconds %d (%v)", pod.ID, r.cfg.StartupTimeoutSeconds, err)
			return w
		case err != nil:
			r.logf("pod %s: observation failed (%v): backing off, not counted", pod.ID, err)
		default:
			if t, ok := p.StartedAt.Get(); ok && w.start.IsZero() {
				w.start = t
			}
			if why := r.wrongGPU(p, c); why != "" {
				w.wrongGPU, w.reason = true, why
				return w
			}
			switch {
			case p.Status.Ended():
				w.reason = fmt.Sprintf("pod %s while starting (the CUDA smoke proof or the runner failed)", p.Status)
				return w
			case p.Status == runpod.PodRunning && p.Runtime != nil && p.GPU != nil && p.GPU.ID != "":
				runtimeSeen = true
				if c := float64(p.Cost); c > 0 {
					w.price = cost.KnownPrice(c, "v2 cost while running")
				}
				if why := r.overCeiling(c, w.price); why != "" {
					w.overSpend, w.reason = true, why
					return w
				}
				online, busy, rerr := r.runnerState(wctx, label)
				switch {
				case rerr != nil:
					r.logf("runner %s: registry unreadable (%v): not counted", label, rerr)
				case online && busy:
					// The GPU job is queued only after acceptance: whatever the
					// runner runs now is some other job, holding a paid GPU.
					w.taken, w.reason = true, fmt.Sprintf("runner %s was already busy with a job before this run's GPU job was queued: "+
						"another job took it (restrict the runner group to the lane's workflow)", label)
					return w
				case online:
					w.accepted, w.acceptedAt = true, r.now()
					return w
				}
			case p.Status == runpod.PodRunning && p.Runtime != nil:
				runtimeSeen = true
				r.logf("pod %s: RUNNING without its GPU id in the record: not counted", pod.ID)
			case runtimeSeen && p.Runtime == nil:
				w.reason = fmt.Sprintf("pod runtime lost after boot (status %s)", p.Status)
				return w
			}
		}
		now := r.now()
		if !now.Before(deadline) || wctx.Err() != nil {
			w.reason = fmt.Sprintf("runner %s not online within startup_timeout_seconds %d", label, r.cfg.StartupTimeoutSeconds)
			return w
		}
		// The poll never sleeps past the deadline; a cooldown that does not
		// fit the rest of the budget ends the candidate (a *WaitError).
		wait := min(poll, deadline.Sub(now))
		if err := r.deps.Policy.Wait(wctx, wait, "startup poll"); err != nil {
			switch {
			case ctx.Err() != nil:
				w.reason = "cancelled"
			case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline) && wait < deadline.Sub(now):
				w.reason = fmt.Sprintf("startup watch ended: %v (startup_timeout_seconds %d)", err, r.cfg.StartupTimeoutSeconds)
			default:
				w.reason = fmt.Sprintf("runner %s not online within startup_timeout_seconds %d", label, r.cfg.StartupTimeoutSeconds)
			}
			return w
		}
	}
}

// wrongGPU says why an observed pod is not the GPU the candidate requested
// (the reviewed allowlist is the boundary, also against a misplacement), or ""
// when its GPU matches or is not reported yet.
func (r *run) wrongGPU(p *runpod.Pod, c plan.Candidate) string {
	if p.GPU == nil || p.GPU.ID == "" {
		return ""
	}
	count := p.GPU.Count
	if count == 0 {
		count = 1 // RunPod's default count
	}
	if p.GPU.ID != c.GPUID || count != r.cfg.GPUCount {
		return fmt.Sprintf("RunPod gave %s x%d for a request of %s x%d: not the reviewed GPU", p.GPU.ID, count, c.GPUID, r.cfg.GPUCount)
	}
	return ""
}

// runnerOnline looks the attempt's runner up by its unique name and checks it
// is online with the attempt's label (a stale record of another pod cannot pass).
func (r *run) runnerOnline(ctx context.Context, label string) (bool, error) {
	online, _, err := r.runnerState(ctx, label)
	return online, err
}

// runnerState is runnerOnline that also says whether the runner is busy.
func (r *run) runnerState(ctx context.Context, label string) (online, busy bool, _ error) {
	runner, found, err := r.deps.GitHub.RunnerByName(ctx, label, r.req.Scope)
	if err != nil || !found {
		return false, false, err
	}
	if runner.GetStatus() != "online" {
		return false, false, nil
	}
	for _, l := range runner.Labels {
		if l.GetName() == label {
			return true, runner.GetBusy(), nil
		}
	}
	return false, false, nil
}

// overCeiling says why a running pod billed at price (RunPod's own figure)
// could take the run past max_run_spend_usd, or "" when it cannot or no
// ceiling is set. The check before the create used the catalog price; the
// same bound is applied again with the higher of the two, so a pod billing
// above its catalog price is never accepted past the ceiling.
func (r *run) overCeiling(c plan.Candidate, price cost.Price) string {
	ceiling, ok := r.cfg.SpendCeiling()
	if !ok || !price.Known || price.PerHour <= c.PricePerHour {
		return ""
	}
	worst := r.spentBound + CandidateWorstCase(price.PerHour, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	if worst <= ceiling {
		return ""
	}
	return fmt.Sprintf("max_run_spend_usd $%.2f: RunPod bills this pod at $%.4f/h (catalog $%.2f/h), which could bring the run to $%.4f "+
		"(rejected pods $%.4f + startup_timeout_seconds %d + lifetime_seconds %d at that price): not accepted",
		ceiling, price.PerHour, c.PricePerHour, worst, r.spentBound, r.cfg.StartupTimeoutSeconds, r.cfg.LifetimeSeconds)
}
