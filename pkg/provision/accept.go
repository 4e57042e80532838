package provision

// Ending an attempt: its pod is handed to the GPU job (accept) or deleted
// at once or kept for debugging (reject), its runner registration removed
// and what it billed counted.

import (
	"context"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/startup"
)

// foundTooLate ends a candidate whose pod was found by name only after a
// pause RunPod asked for outlasted its startup budget (from its first POST):
// it is deleted unwatched, with no host verdict (the pause was RunPod's,
// not the host's), and the run goes on with the next candidate.
func (r *run) foundTooLate(ctx context.Context, a *attemptState, pod *runpod.Pod, spent time.Duration) (outcome, error) {
	a.rec.PodID = pod.ID
	a.rec.Cloud, a.rec.DataCenter, a.rec.Driver = pod.Cloud, pod.DataCenterID, pod.CudaVersion
	w := watchResult{start: a.createdAt, reason: fmt.Sprintf("found by name %s after its first POST, once RunPod's pause was over: "+
		"startup_timeout_seconds %d was spent before it could be watched; deleted, the next candidate follows", spent.Round(time.Second), r.cfg.StartupTimeoutSeconds)}
	r.logf("pod %s: %s", pod.ID, w.reason)
	r.dropLateDuplicates(ctx, pod)
	out, err := r.reject(ctx, a, pod, w)
	if err != nil || out != outcomeStartupFailure {
		return out, err
	}
	return outcomeNoCapacity, nil // RunPod's pause, not a pod that failed to start
}

// accept hands the candidate's pod to the GPU job: it leaves the run's live
// pods (the cleanup job deletes it) and becomes the run's accepted pod.
func (r *run) accept(a *attemptState, pod *runpod.Pod, w watchResult) (outcome, error) {
	secs := int64(0)
	if !w.start.IsZero() {
		secs = int64(w.acceptedAt.Sub(w.start).Round(time.Second) / time.Second)
	}
	a.rec.Seconds, a.rec.Host = cost.KnownSeconds(secs), cost.HostWorked
	delete(r.live, pod.ID) // handed over to the GPU job; cleanup deletes it
	r.res.Accepted = &Accepted{PodID: pod.ID, RunnerLabel: a.label, GPU: a.c.GPUID, Candidate: a.c.Name, Tier: a.c.Tier,
		Cloud: a.c.Cloud, DataCenter: a.rec.DataCenter, Price: a.rec.Price, StartupSeconds: secs, StartedAt: w.start, AcceptedAt: w.acceptedAt}
	// What the pod can cost at most, at the higher of its billed and catalog prices.
	switch price := max(a.rec.Price.PerHour, a.c.PricePerHour); {
	case (a.rec.Price.Known || a.c.PriceKnown) && price > 0:
		r.res.AcceptedWorst = spend.Candidate(price, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	default:
		r.res.AcceptedUnpriced = true
	}
	a.done(cost.OutcomeAccepted, "")
	return outcomeAccepted, nil
}

// reject ends a candidate the watch rejected: its pod is deleted at once
// (bounded) or kept for debugging, what it billed counts toward the ceiling,
// and the outcome says whether the run goes on to the next candidate.
func (r *run) reject(ctx context.Context, a *attemptState, pod *runpod.Pod, w watchResult) (outcome, error) {
	if w.hostFailed && ctx.Err() == nil {
		a.rec.Host = cost.HostFailed // other rejections say nothing about the host
	}

	// Rejected: delete at once (bounded), unless the pod is kept for debugging.
	// A pod made obsolete by the PR (or by local validation), or one that is
	// not the GPU that was reviewed, is deleted even in debug mode.
	keep := r.req.KeepFailedPods && !w.obsolete && !w.local && !w.wrongGPU && !w.overSpend && !w.taken && !w.screened && ctx.Err() == nil
	end := r.now()
	if keep {
		r.res.RetainedPodIDs = append(r.res.RetainedPodIDs, pod.ID)
		r.keepForSSH(pod.ID, max(a.rec.Price.PerHour, a.listPrice.PerHour), a.createdAt)
		delete(r.live, pod.ID)
		r.logf("pod %s kept for inspection (keep-failed-pods): it keeps billing until the reaper or you delete it", pod.ID)
	} else {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lifecycle.DefaultDeleteBudget+10*time.Second)
		deletedAt, derr := r.deleter.Delete(dctx, pod.ID)
		cancel()
		if derr != nil {
			a.rec.Seconds = secondsBetween(w.start, r.now())
			// It may bill until the cleanup job or the reaper deletes it: the
			// lane's committed spend counts it at a candidate's worst case.
			r.res.SpentBound += r.spendRun().UnconfirmedBound(a.rec.Price.PerHour, a.listPrice.PerHour)
			a.done(cost.OutcomeRejected, w.reason+"; deletion unconfirmed")
			return 0, r.fail(ErrUnconfirmedDeletion, fmt.Sprintf("no further pod is created while pod %s may still run: %v", pod.ID, derr))
		}
		delete(r.live, pod.ID)
		end = deletedAt
		r.removeRunner(ctx, a.jit) // its pod is gone: nothing can use the registration
	}
	a.rec.Seconds = secondsBetween(w.start, end)
	// The ceiling's bound counts from creation (not the provider start) at the
	// highest price known for the pod.
	r.res.SpentBound += spend.RejectedBound(a.rec.Price.PerHour, a.listPrice.PerHour, a.createdAt, end)
	a.done(cost.OutcomeRejected, w.reason)
	switch {
	case w.obsolete:
		return 0, r.fail(ErrObsolete, w.reason)
	case w.taken:
		// A label that leaked once can leak again: no further pod is paid for.
		return 0, r.fail(ErrRunnerTaken, w.reason)
	case w.imageFault:
		// Every pod of this image would end so, on any host: none more is paid for.
		return 0, r.fail(ErrImageWithoutRunner, r.imageWithoutRunner())
	case w.local:
		return outcomeLocal, nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	return outcomeStartupFailure, nil
}

// imageWithoutRunner says what the run's image lacks and what it must contain.
func (r *run) imageWithoutRunner() string {
	dir := r.req.RunnerDir
	if dir == "" {
		dir = startup.DefaultRunnerDir
	}
	return fmt.Sprintf("image %s passed the CUDA proof but has no runner at %s/run.sh: a custom image must contain the GitHub Actions runner "+
		"there (set runner-dir to where it is) and a non-root user %q with passwordless sudo, as ghcr.io/actions/actions-runner does; "+
		"no further pod is paid for this image", r.res.Image, dir, startup.RunnerUser)
}

// removeRunner removes the registration of a runner no pod will ever run, so
// the runner list does not fill with offline leftovers until GitHub expires
// them a day later. Best effort: a failure is logged, never fatal.
func (r *run) removeRunner(ctx context.Context, jit *ghapi.JITConfig) {
	if jit == nil || jit.RunnerID == 0 {
		return
	}
	rctx, cancel := r.bound(context.WithoutCancel(ctx), RunnerRemovalBudget)
	defer cancel()
	if err := r.deps.GitHub.DeleteRunner(rctx, jit.RunnerID, r.req.Scope); err != nil {
		r.logf("runner %s: could not remove its registration (GitHub drops it within a day): %v", jit.Name, err)
	}
}

// secondsBetween is the paid time of a pod; unknown when it never started.
func secondsBetween(start, end time.Time) cost.Seconds {
	if start.IsZero() {
		return cost.Seconds{}
	}
	return cost.KnownSeconds(int64(end.Sub(start).Round(time.Second) / time.Second))
}
