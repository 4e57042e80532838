package provision

// Finding pods by their unique name: after an uncertain create, after a
// create answer naming another pod, for a retried create's duplicate and in
// the run's last look; every pod found is tracked, deleted or counted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// unlessForeign checks that the pod the watch rejected is this candidate's
// before anything deletes it: a create answer can name another pod's id
// (the watch reads its record, named otherwise). Such an answer is a lost
// answer: the id is forgotten (never deleted, never published as this run's)
// along with what its log said, and the pod is looked for by its unique name
// within the candidate's budget, then watched (and screened by what its own
// log says); a nil pod means none was found.
func (r *run) unlessForeign(ctx context.Context, a *attemptState, pod *runpod.Pod, w watchResult) (*runpod.Pod, watchResult) {
	if !w.foreign && (w.accepted || w.seen || w.screened || ctx.Err() != nil || !r.namedOtherwise(ctx, pod)) {
		return pod, w
	}
	r.untrack(pod.ID)
	r.logf("create of %s: the answer named pod %s, another pod's id: a lost answer; looking for %s by name", pod.Name, pod.ID, pod.Name)
	rctx, cancel := r.bound(ctx, max(a.createdAt.Add(r.cfg.StartupTimeout()).Sub(r.now()), 0))
	found, err := r.reconcile(rctx, pod.Name)
	cancel()
	if found == nil {
		r.uncertain = append(r.uncertain, r.current) // the run's last look
		return nil, watchResult{reason: fmt.Sprintf("create of %s answered with another pod's id (%s) and no pod of that name was found (%v)", pod.Name, pod.ID, err)}
	}
	return found, r.watch(ctx, found, a.c, a.label, a.createdAt)
}

// namedOtherwise reads pod's record once and reports whether it names another
// pod; an unreadable record counts as this pod's (the create answer named it).
func (r *run) namedOtherwise(ctx context.Context, pod *runpod.Pod) bool {
	name, err := r.recordName(ctx, pod)
	return err == nil && name != pod.Name
}

// recordName reads pod's record once (one request, bounded) by the id the
// create answered, and returns the name it gives.
func (r *run) recordName(ctx context.Context, pod *runpod.Pod) (string, error) {
	rctx, cancel := r.bound(context.WithoutCancel(ctx), lifecycle.DefaultRequestTimeout)
	defer cancel()
	p, err := r.deps.RunPod.GetPod(reqpolicy.WithAttemptLimit(rctx, 1), pod.ID)
	if err != nil {
		return "", err
	}
	return p.Name, nil
}

// untrack forgets a pod id that is not this run's: never deleted, and no
// longer published as created by it (observers that can are told).
func (r *run) untrack(id string) {
	delete(r.live, id)
	r.created = slices.DeleteFunc(r.created, func(c string) bool { return c == id })
	if f, ok := r.deps.Observer.(interface{ PodForgotten(podID string) }); ok {
		f.PodForgotten(id)
	}
}

// dropLateDuplicates deletes the other pod of a retried create: a first
// create whose answer was lost may reach the pod list late; by the end of
// the watch it shows: never two live pods for one candidate.
func (r *run) dropLateDuplicates(ctx context.Context, pod *runpod.Pod) {
	if !r.retriedCreate {
		return
	}
	r.retriedCreate = false
	dctx, cancel := r.bound(context.WithoutCancel(ctx), CatalogBudget)
	r.adoptDuplicates(dctx, pod.Name, pod.ID)
	cancel()
}

// Reconciliation reads the pod list a few times with backoff: a new pod can
// reach the list a little after its create.
var reconcileWaits = []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}

// reconcile finds the pods named name (the run-unique pod name) and tracks
// every one. It returns the first, or nil when none appeared in a few reads;
// an error means the list could not be read, so a pod may exist.
func (r *run) reconcile(ctx context.Context, name string) (*runpod.Pod, error) {
	var lastErr error
	for i := 0; ; i++ {
		pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
		lastErr = err
		if err == nil {
			if found := r.adopt(pods, name, ""); len(found) > 0 {
				return found[0], nil
			}
		}
		if i == len(reconcileWaits) {
			return nil, lastErr
		}
		if werr := r.deps.Policy.Wait(ctx, reconcileWaits[i], "reconcile by name"); werr != nil {
			if err != nil {
				return nil, errors.Join(err, werr)
			}
			return nil, nil // the reads that fitted found nothing
		}
	}
}

// reconcileUntilDeadline reads the pod list every startup poll until ctx's
// deadline, for a pod named name that may be listed late.
func (r *run) reconcileUntilDeadline(ctx context.Context, name string) *runpod.Pod {
	for {
		if pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{}); err == nil {
			if found := r.adopt(pods, name, ""); len(found) > 0 {
				return found[0]
			}
		}
		if r.deps.Policy.Wait(ctx, r.cfg.StartupPoll(), "reconcile by name") != nil {
			return nil
		}
	}
}

// sweepUncertain is the last look for pods whose create stayed uncertain (no
// pod of the name found in time): one list read on a fresh bounded context;
// any such pod still alive is tracked and deleted, never left billing
// untracked until the cleanup job, and counted: its bound joins the spent
// bound and it becomes an attempt of the run (latePod).
func (r *run) sweepUncertain(ctx context.Context) {
	if len(r.uncertain) == 0 {
		return
	}
	sctx, cancel := r.bound(context.WithoutCancel(ctx), CancelReconcileBudget+lifecycle.DefaultDeleteBudget)
	defer cancel()
	// Urgent: a pod of an uncertain create bills untracked until found, so a
	// cooldown longer than the budget must not keep this last look unsent.
	pods, err := r.deps.RunPod.ListPods(reqpolicy.Urgent(sctx), runpod.ListPodsQuery{})
	if err != nil {
		names := make([]string, len(r.uncertain))
		for i, u := range r.uncertain {
			names[i] = r.podName(u.cand)
		}
		r.logf("warning: could not check for pods of uncertain creates (%s): %v; the cleanup job's tag sweep covers them", strings.Join(names, ", "), err)
		return
	}
	accepted := "" // handed over to the GPU job: never touched here
	if r.res.Accepted != nil {
		accepted = r.res.Accepted.PodID
	}
	for _, u := range r.uncertain {
		name := r.podName(u.cand)
		for _, p := range r.adopt(pods, name, accepted) {
			at, derr := r.deleter.Delete(sctx, p.ID)
			if derr != nil {
				r.logf("warning: pod %s of an uncertain create: %v", p.ID, derr)
				// Still billing until the cleanup job deletes it: bounded as a candidate's worst case.
				end := u.postAt.Add(r.cfg.StartupTimeout() + r.cfg.Lifetime())
				r.latePod(u, p, end, fmt.Sprintf("pod of an uncertain create of %s, listed late; deletion unconfirmed: %v", name, derr))
				continue
			}
			delete(r.live, p.ID)
			r.logf("pod %s of an uncertain create of %s was listed late; deleted", p.ID, name)
			r.latePod(u, p, at, fmt.Sprintf("pod of an uncertain create of %s, listed late and deleted by the run's last look", name))
		}
	}
}

// podName is candidate c's pod name in this run.
func (r *run) podName(c plan.Candidate) string {
	tags := r.req.Owner
	tags.Candidate = c.N
	return tags.PodName()
}

// latePod counts a pod of candidate u that no attempt accounted for (listed
// after its create was given up, or a retried create's duplicate) and that
// billed until end: at its highest known price from the candidate's first
// POST, in the spent bound, and as a rejected attempt of the run, so the
// lane's committed spend, later ceiling checks and the cost report see it.
func (r *run) latePod(u currentAttempt, p *runpod.Pod, end time.Time, reason string) {
	r.res.SpentBound += spend.RejectedBound(money.PerHour(float64(p.Cost)), u.price, u.postAt, end)
	price := max(u.price, money.PerHour(float64(p.Cost)))
	rec := cost.Attempt{Number: u.cand.N, Candidate: u.cand.Name, GPU: u.cand.GPUID, PodID: p.ID,
		Outcome: cost.OutcomeRejected, Reason: reason, Cloud: p.Cloud, DataCenter: p.DataCenterID, Driver: p.CudaVersion, At: r.now()}
	if price > 0 {
		rec.Price = cost.KnownPrice(price, "the highest known price of the pod")
	}
	if start, ok := p.StartedAt.Get(); ok {
		rec.Seconds = secondsBetween(start, end)
	}
	r.res.Attempts = append(r.res.Attempts, rec)
	r.deps.Observer.AttemptDone(rec)
	r.logf("attempt %d %s: %s on %s, %s: %s (%s paid seconds, %s)", rec.Number, rec.Candidate, rec.Outcome, rec.GPU, rec.Price, reason, rec.Seconds, rec.Dollars())
}

// adopt tracks every live pod named name other than except (and not yet
// tracked), and returns them.
func (r *run) adopt(pods []runpod.Pod, name, except string) []*runpod.Pod {
	var found []*runpod.Pod
	for i := range pods {
		p := &pods[i]
		if p.Name != name || p.ID == "" || p.ID == except || p.Status == runpod.PodTerminated || r.live[p.ID] {
			continue
		}
		if !runpod.ValidPodID(p.ID) {
			// It cannot be read or deleted by that id: never tracked as if it could.
			r.logf("warning: a pod named %s is listed with a malformed id %q: it cannot be tracked; delete it by hand", name, p.ID)
			continue
		}
		r.logf("reconciled: pod %s exists as %s", name, p.ID)
		r.track(p.ID)
		found = append(found, p)
	}
	return found
}

// adoptDuplicates deletes any other pod of the same name that a retried create
// left behind (one list read; a pod it cannot delete stays tracked, so
// cancellation and the cleanup job's tag sweep still delete it).
func (r *run) adoptDuplicates(ctx context.Context, name, keep string) {
	pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
	if err != nil {
		r.logf("create of %s: could not check for a duplicate after the retry (%v); the cleanup job's tag sweep covers it", name, err)
		return
	}
	r.deleteDuplicates(r.duplicates(pods, name, keep), name)
}

// dropDuplicates is one look during the watch for the other pod of a retried
// create. found reports that one was listed (and deleted); why is non-empty
// when the attempt's runner was already online (or could not be read) by
// then: it may be the duplicate's, so the candidate cannot be accepted.
func (r *run) dropDuplicates(ctx context.Context, name, keep, label string) (found bool, why string) {
	pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
	if err != nil {
		r.logf("create of %s: duplicate check failed (%v): looking again at the next poll", name, err)
		return false, ""
	}
	dups := r.duplicates(pods, name, keep)
	if len(dups) == 0 {
		return false, ""
	}
	online, rerr := r.runnerOnline(ctx, label)
	r.deleteDuplicates(dups, name)
	if online || rerr != nil {
		return true, fmt.Sprintf("a duplicate pod of %s (from the first create) was listed after runner %s could have come online on it: "+
			"which pod runs the runner is unknown, so neither is accepted", name, label)
	}
	return true, ""
}

// duplicates returns the live pods named name other than keep, tracking any
// not yet tracked (a pod already tracked is included: it is still billing).
func (r *run) duplicates(pods []runpod.Pod, name, keep string) []*runpod.Pod {
	dups := r.adopt(pods, name, keep)
	for i := range pods {
		p := &pods[i]
		if p.Name == name && p.ID != keep && p.Status != runpod.PodTerminated && r.live[p.ID] && !slices.ContainsFunc(dups, func(d *runpod.Pod) bool { return d.ID == p.ID }) {
			dups = append(dups, p)
		}
	}
	return dups
}

// deleteDuplicates deletes each duplicate at once, on a fresh context: the
// caller's may be cancelled or carry a shorter budget (the watch's) than a
// deletion's own.
func (r *run) deleteDuplicates(dups []*runpod.Pod, name string) {
	for _, dup := range dups {
		dctx, cancel := context.WithTimeout(context.Background(), lifecycle.DefaultDeleteBudget+10*time.Second)
		if at, derr := r.deleter.Delete(dctx, dup.ID); derr == nil {
			delete(r.live, dup.ID)
			r.logf("pod %s: a duplicate of %s left by the first create; deleted", dup.ID, name)
			// It billed too: counted from the candidate's first POST, and an attempt of its own.
			r.latePod(r.current, dup, at, fmt.Sprintf("a duplicate of %s left by the first of two creates; deleted", name))
		}
		cancel()
	}
}

// reconcileAfterCancel looks for a pod whose create was in flight when the run
// was cancelled, on a fresh context bounded by CancelReconcileBudget, and
// tracks it so Run's cancellation path deletes it.
func (r *run) reconcileAfterCancel(name string) {
	ctx, cancel := r.bound(context.Background(), CancelReconcileBudget)
	defer cancel()
	// The whole budget is used: a new pod can reach the list seconds after
	// its create, and once provision exits only the cleanup job's tag sweep
	// (a single listing) is left to find it.
	for {
		if pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{}); err == nil && len(r.adopt(pods, name, "")) > 0 {
			return
		}
		if r.deps.Policy.Wait(ctx, cancelReconcilePoll, "reconcile after cancellation") != nil {
			break
		}
	}
	r.logf("cancelled during the create of %s: no pod of that name found within %s; the cleanup job's tag sweep is the backstop", name, CancelReconcileBudget)
}

// cancelReconcilePoll spaces the by-name listings after a cancellation.
const cancelReconcilePoll = 1500 * time.Millisecond
