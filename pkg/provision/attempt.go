package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/startup"
)

// outcome is how one candidate ended, for the loop's counters.
type outcome int

const (
	outcomeAccepted       outcome = iota
	outcomeStartupFailure         // created, never online: counts toward the early stop
	outcomeNoCapacity             // nothing created, nothing paid
	outcomeLocal                  // the PR was labelled for local validation meanwhile: stop, nothing more paid
	outcomeScreened               // placed on a machine the reputation holds bad: deleted before its proof (reputation.go)
)

// attemptState is what one candidate's attempt carries from its create to
// its end: the steps that accept, reject or screen out its pod share it.
type attemptState struct {
	c         plan.Candidate
	label     string           // its runner label, unique to the attempt
	jit       *ghapi.JITConfig // its single-use runner config
	rec       *cost.Attempt    // its record, stamped and published by done
	listPrice cost.Price       // the candidate's catalog price (unknown without one)
	createdAt time.Time        // its first POST: no pod of it is older
	done      func(o cost.Outcome, reason string)
}

// attempt tries one candidate. A returned error stops the whole run.
func (r *run) attempt(ctx context.Context, c plan.Candidate) (outcome, error) {
	label, err := r.runnerLabel(c.N)
	if err != nil {
		return 0, r.fail(ErrStopped, err.Error())
	}
	listPrice := listPriceOf(c)
	rec := cost.Attempt{Number: c.N, Candidate: c.Name, GPU: c.GPUID, Price: listPrice}
	done := r.attemptDone(c, &rec)

	jit, err := r.mintJIT(ctx, label)
	if err != nil {
		done(cost.OutcomeFailed, "JIT runner config: "+err.Error())
		return 0, r.fail(ErrStopped, fmt.Sprintf("could not mint a runner config for %s: %v", label, err))
	}
	postAt := r.now() // no pod of this candidate exists before its first POST
	r.current = currentAttempt{postAt: postAt, price: money.PerHour(listPrice.PerHour), cand: c}
	pod, err := r.create(ctx, c, label, jit)
	switch {
	case errors.Is(err, runpod.ErrCapacity):
		r.removeRunner(ctx, jit)
		done(cost.OutcomeNoCapacity, "no capacity: "+err.Error())
		return outcomeNoCapacity, nil
	case errors.Is(err, errNotCreated):
		r.removeRunner(ctx, jit)
		done(cost.OutcomeFailed, err.Error())
		return outcomeNoCapacity, nil
	case err != nil:
		done(cost.OutcomeFailed, err.Error())
		return 0, r.fail(ErrStopped, err.Error())
	}
	a := &attemptState{c: c, label: label, jit: jit, rec: &rec, listPrice: listPrice, createdAt: postAt, done: done}
	if spent := r.now().Sub(a.createdAt); spent >= r.cfg.StartupTimeout() {
		return r.foundTooLate(ctx, a, pod, spent)
	}
	if out, err, stop := r.afterCreate(ctx, a, pod); stop {
		return out, err
	}
	w := r.watch(ctx, pod, c, label, a.createdAt)
	pod, w = r.unlessForeign(ctx, a, pod, w)
	if pod == nil {
		r.removeRunner(ctx, jit)
		done(cost.OutcomeFailed, w.reason)
		return outcomeNoCapacity, nil
	}
	rec.Machine = w.machine
	if w.screened { // its log named a machine the reputation holds bad (reputation.go)
		return r.screenOut(ctx, a, pod, w)
	}
	rec.PodID = pod.ID
	// Where the pod ran: the watch's records, else the create's answer.
	rec.Cloud, rec.DataCenter, rec.Driver = cmp.Or(w.cloud, pod.Cloud), cmp.Or(w.dataCenter, pod.DataCenterID), cmp.Or(w.driver, pod.CudaVersion)
	r.dropLateDuplicates(ctx, pod)
	if !w.start.IsZero() {
		rec.Price = cost.FirstKnown(w.price, listPrice)
	}
	if w.accepted {
		return r.accept(a, pod, w)
	}
	return r.reject(ctx, a, pod, w)
}

// listPriceOf is the candidate's catalog price, unknown when the plan had none.
func listPriceOf(c plan.Candidate) cost.Price {
	if !c.PriceKnown {
		return cost.Price{}
	}
	return cost.KnownPrice(c.PricePerHour, "catalog list price")
}

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

// attemptDone returns the end of c's attempt: it stamps rec with the outcome
// and publishes it (the result, the observer, the log).
func (r *run) attemptDone(c plan.Candidate, rec *cost.Attempt) func(o cost.Outcome, reason string) {
	return func(o cost.Outcome, reason string) {
		rec.Outcome, rec.Reason, rec.At = o, reason, r.now()
		r.res.Attempts = append(r.res.Attempts, *rec)
		r.deps.Observer.AttemptDone(*rec)
		r.logf("attempt %d %s: %s on %s, %s: %s (%s paid seconds, %s)", c.N, c.Name, o, c.GPUID, rec.Price, orDash(reason), rec.Seconds, rec.Dollars())
	}
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
	switch price := max(money.PerHour(a.rec.Price.PerHour), money.PerHour(a.c.PricePerHour)); {
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
			r.res.SpentBound += r.spendRun().UnconfirmedBound(money.PerHour(a.rec.Price.PerHour), money.PerHour(a.listPrice.PerHour))
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
	r.res.SpentBound += spend.RejectedBound(money.PerHour(a.rec.Price.PerHour), money.PerHour(a.listPrice.PerHour), a.createdAt, end)
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mintJIT mints the attempt's single-use runner config with one POST. After a
// 409 or a lost answer a runner of that name may exist without us holding its
// config: if one does and is idle, it is removed before one informed re-mint.
func (r *run) mintJIT(ctx context.Context, name string) (*ghapi.JITConfig, error) {
	ctx, cancel := r.bound(ctx, JITBudget)
	defer cancel()
	req := ghapi.JITRequest{Name: name, Labels: []string{name}, RunnerGroupID: r.req.RunnerGroupID, Scope: r.req.Scope}
	jit, err := r.deps.GitHub.GenerateJITConfig(ctx, req)
	if err == nil || ctx.Err() != nil {
		return jit, err
	}
	runner, found, lerr := r.deps.GitHub.RunnerByName(ctx, name, r.req.Scope)
	if lerr != nil || !found {
		return nil, err // nothing registered under the name: the failure stands
	}
	if runner.GetBusy() || runner.GetStatus() == "online" {
		return nil, fmt.Errorf("runner %s already exists and is %s; refusing to replace it", name, runner.GetStatus())
	}
	if derr := r.deps.GitHub.DeleteRunner(ctx, runner.GetID(), r.req.Scope); derr != nil {
		return nil, errors.Join(err, derr)
	}
	r.logf("runner %s existed offline after %v; removed it and minting once more", name, err)
	return r.deps.GitHub.GenerateJITConfig(ctx, req)
}

// errNotCreated marks a create that certainly made no pod (refused, or a lost
// answer whose reconciliation found nothing): the next candidate may go.
var errNotCreated = errors.New("no pod was created")

// create makes the candidate's pod with one POST. A lost or 5xx answer is
// reconciled by the pod's unique name before anything else; it is never
// silently re-sent. A 429 (certainly not created) waits out the cooldown and
// is sent once more within the create deadline.
func (r *run) create(ctx context.Context, c plan.Candidate, label string, jit *ghapi.JITConfig) (*runpod.Pod, error) {
	body, err := r.createRequest(c, label, jit)
	if err != nil {
		return nil, err
	}
	return r.sendCreate(ctx, body)
}

// createRequest builds the candidate's create: its unique name and owner
// tags, the runner image, the GPU and where it may run, and the startup
// script with the runner's label and single-use config.
func (r *run) createRequest(c plan.Candidate, label string, jit *ghapi.JITConfig) (runpod.CreatePodRequest, error) {
	tags := r.req.Owner
	tags.Candidate, tags.KeepFailed = c.N, r.req.KeepFailedPods
	params := r.startupParams()
	script, err := startup.Render(params)
	if err != nil {
		return runpod.CreatePodRequest{}, err
	}
	env := startup.PodEnv(params)
	for k, v := range tags.Env() {
		env[k] = v
	}
	env["RUNPOD_GPU_RUNNER_LABEL"] = label
	env[startup.JITConfigEnv] = jit.EncodedConfig
	body := runpod.CreatePodRequest{
		Name:          tags.PodName(),
		Image:         r.res.Image,
		GPU:           &runpod.CreateGPU{ID: c.GPUID, Count: r.cfg.GPUCount, MinCudaVersion: r.cfg.MinCUDAVersion.String()},
		Cloud:         c.Cloud,
		DataCenterIDs: c.DataCenterIDs,
		Disk:          r.cfg.DiskGB,
		Env:           env,
		Entrypoint:    startup.Entrypoint(),
		Cmd:           startup.Cmd(script),
	}
	if v := r.cfg.Volume; v != nil {
		body.Mounts = &runpod.Mounts{Persistent: &runpod.PersistentMount{Size: v.SizeGB, Path: v.Path}}
	}
	r.openDebugSSH(&body)
	return body, nil
}

// createTry is the state of one candidate's create across its POSTs.
type createTry struct {
	name      string
	retried   bool // a second POST has been allowed
	uncertain bool // an earlier POST of this name may have created a pod
	limited   bool // an earlier POST was answered 429 and the name was not listed then
}

// sendCreate is create's retry and reconciliation loop for body: each POST
// goes once, and only this loop decides whether another follows.
func (r *run) sendCreate(ctx context.Context, body runpod.CreatePodRequest) (created *runpod.Pod, _ error) {
	// Everything about this create — the POST, a 429's wait, reconciliation
	// and one informed retry — fits create_deadline_seconds (a pause RunPod
	// asks for beyond it is waited out within the provision budget instead: pausedContext).
	cctx, cancel := r.bound(ctx, r.cfg.CreateDeadline())
	defer cancel()
	t := &createTry{name: body.Name}
	defer func() {
		// However the create ends without a pod in hand — a second failure,
		// a 429 or refusal on the retry, an unreadable list, cancellation —
		// a POST that may have made one leaves its name to the run's last
		// look (sweepUncertain), never to the cleanup job alone.
		if t.uncertain && created == nil {
			r.uncertain = append(r.uncertain, r.current)
		}
	}()
	for {
		// One POST per send: this loop, not the policy, decides whether a
		// create goes again (once after a 429, informed after a lost answer).
		pod, err := r.deps.RunPod.CreatePod(reqpolicy.WithAttemptLimit(cctx, 1), body)
		if err == nil && slices.Contains(r.created, pod.ID) {
			// An answer naming a pod this run already has (under another
			// name) is a lost answer, not a pod to track twice.
			pod, err = nil, fmt.Errorf("create pod %s: %w: the answer names pod %s, which this run created earlier", body.Name, runpod.ErrUnusableRecord, pod.ID)
		}
		if err == nil {
			r.track(pod.ID)
			r.retriedCreate = t.uncertain || t.limited // checked for a late-listed duplicate after the watch
			return pod, nil
		}
		if found, again, ferr := r.afterFailedCreate(ctx, cctx, t, err); !again {
			return found, ferr
		}
	}
}

// afterFailedCreate decides what follows a failed POST of t: again reports
// that the loop sends once more; otherwise the create ends with the pod found
// (by name) or an error.
func (r *run) afterFailedCreate(ctx, cctx context.Context, t *createTry, err error) (_ *runpod.Pod, again bool, _ error) {
	switch {
	case ctx.Err() != nil:
		// Cancelled (SIGTERM) while the create was in flight: it may have
		// happened. Find it on a fresh, bounded context so Run deletes it.
		t.uncertain = true
		r.reconcileAfterCancel(t.name)
		return nil, false, fmt.Errorf("create of %s interrupted: %w", t.name, ctx.Err())
	case errors.Is(err, runpod.ErrCapacity) && t.uncertain:
		found, ferr := r.capacityAfterUncertainCreate(cctx, t.name, err)
		return found, false, ferr
	case errors.Is(err, runpod.ErrCapacity):
		return nil, false, err
	case errors.Is(err, runpod.ErrInsufficientBalance):
		return nil, false, fmt.Errorf("RunPod balance too low; no candidate can start: %w", err)
	case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		// The policy refuses to send a POST it would have to hold past the
		// deadline (the shared cooldown): certainly nothing was created.
		return nil, false, fmt.Errorf("%w: create of %s not sent: %v", errNotCreated, t.name, err)
	case errors.Is(err, runpod.ErrRateLimited) && !t.retried:
		// A 429 should have created nothing: wait out its Retry-After (the
		// shared cooldown), look the name up — an edge may have passed the
		// POST on before answering — and only then send once more, if that
		// fits the deadline.
		t.retried = true
		if pause := r.deps.Policy.Cooldown().Remaining(r.now()); pause > 0 && !fits(r.deps.Policy, cctx, pause) {
			return r.afterLongRateLimit(ctx, t, pause)
		}
		if werr := r.deps.Policy.Wait(cctx, 0, "create after 429"); werr != nil {
			return nil, false, fmt.Errorf("%w: create of %s rate limited and the wait does not fit create_deadline_seconds %d: %v", errNotCreated, t.name, r.cfg.CreateDeadlineSeconds, werr)
		}
		if found, ferr := r.lookupAfterRateLimit(cctx, t.name); found != nil || ferr != nil {
			t.uncertain = ferr != nil
			return found, false, ferr
		}
		t.limited = true
		return nil, true, nil
	case uncertainCreate(err):
		t.uncertain = true
		if found, rerr := r.reconcileCreate(ctx, cctx, t.name, err, t.retried); found != nil || rerr != nil {
			return found, false, rerr
		}
		t.retried = true
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("create pod %s: %w", t.name, err)
}

// afterLongRateLimit ends a create answered 429 with a pause longer than
// create_deadline_seconds: the pause is waited out within the provision
// budget, the name looked up once, and the run goes on with the pod found or,
// none being listed, with the next candidate; this name is never sent again.
func (r *run) afterLongRateLimit(ctx context.Context, t *createTry, pause time.Duration) (*runpod.Pod, bool, error) {
	pctx, cancel := r.pausedContext(ctx, t.name, pause)
	defer cancel()
	if werr := r.deps.Policy.Wait(pctx, 0, "create after 429"); werr != nil {
		return nil, false, fmt.Errorf("%w: create of %s rate limited for %s, longer than the provision budget left: %v", errNotCreated, t.name, pause.Round(time.Second), werr)
	}
	if found, ferr := r.lookupAfterRateLimit(pctx, t.name); found != nil || ferr != nil {
		t.uncertain = ferr != nil
		return found, false, ferr
	}
	return nil, false, fmt.Errorf("%w: create of %s rate limited for %s and no pod of that name exists after the pause", errNotCreated, t.name, pause.Round(time.Second))
}

// lookupAfterRateLimit reads the pod list once, after a 429's wait, for a pod
// named name before the create goes again. It returns the pod when one is
// listed; an error when the list cannot be read (the create is not sent
// again: a pod may exist); nil, nil when none is listed.
func (r *run) lookupAfterRateLimit(ctx context.Context, name string) (*runpod.Pod, error) {
	pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
	if err != nil {
		return nil, fmt.Errorf("%w: create of %s answered 429 and the pod list could not be read before sending it again (%v); "+
			"not sent twice: the run's last look and the cleanup job's tag sweep cover a pod of that name", errNotCreated, name, err)
	}
	if found := r.adopt(pods, name, ""); len(found) > 0 {
		r.logf("create of %s answered 429, yet the pod exists: used, not created again", name)
		return found[0], nil
	}
	return nil, nil
}

// capacityAfterUncertainCreate handles the informed retry finding no
// capacity: the first POST may hold the machine and reach the pod list late.
// It keeps looking until the create deadline (cctx's) before moving on.
func (r *run) capacityAfterUncertainCreate(cctx context.Context, name string, err error) (*runpod.Pod, error) {
	r.logf("create of %s: the retry found no capacity; the first create may have taken it: reading the pod list until the create deadline", name)
	if found := r.reconcileUntilDeadline(cctx, name); found != nil {
		return found, nil
	}
	return nil, err
}

// reconcileCreate reconciles by name a create whose answer was lost (err),
// within the create deadline (cctx's) or, when the POST used it up, a short
// one of its own. It returns the pod found, or an error when the create ends
// without one; neither means no pod of that name exists and the cooldown was
// waited out: the caller sends its one informed retry.
func (r *run) reconcileCreate(ctx, cctx context.Context, name string, err error, retried bool) (*runpod.Pod, error) {
	r.logf("create of %s: %v; reconciling by name before anything else", name, err)
	rctx, rcancel, paused := r.reconcileContext(ctx, cctx, name)
	defer rcancel()
	found, rerr := r.reconcile(rctx, name)
	switch {
	case found != nil:
		// After a retry both POSTs may have made a pod, sharing the
		// runner config: the other one is looked for during the watch.
		r.retriedCreate = retried
		return found, nil
	case ctx.Err() != nil:
		// Cancelled (SIGTERM) during the reconciliation: look once more
		// on a fresh, bounded context so Run deletes what exists.
		r.reconcileAfterCancel(name)
		return nil, fmt.Errorf("create of %s interrupted during its reconciliation: %w", name, ctx.Err())
	case rerr != nil:
		return nil, fmt.Errorf("create of %s: %v; the pod list could not be read (%v), so it may exist: stopping rather than risk a second pod", name, err, rerr)
	case retried:
		return nil, fmt.Errorf("%w: create of %s failed twice (%v) and no pod of that name exists", errNotCreated, name, err)
	case paused:
		// The create deadline went by in RunPod's pause: the run goes on
		// with the next candidate, never a second POST of this name (the
		// run's last look still covers a pod of it listed late).
		return nil, fmt.Errorf("%w: create of %s: %v; no pod of that name exists after RunPod's pause", errNotCreated, name, err)
	}
	// Certainly not created: one informed retry of the same candidate,
	// if the shared cooldown leaves time for it.
	if werr := r.deps.Policy.Wait(cctx, 0, "create retry after reconciliation"); werr != nil || !fits(r.deps.Policy, cctx, 0) {
		return nil, fmt.Errorf("%w: create of %s: %v; no pod of that name exists and no retry fits create_deadline_seconds %d", errNotCreated, name, err, r.cfg.CreateDeadlineSeconds)
	}
	r.logf("create of %s: no pod of that name exists; one informed retry", name)
	return nil, nil
}

// reconcileContext bounds the by-name search after an uncertain create: the
// create deadline (cctx's), or a short budget of its own when the create used
// that up in wall time, or — paused — the rest of the candidate's startup
// budget when RunPod asked for a pause (Retry-After) longer than the create
// deadline, so the search goes out once the pause is over.
func (r *run) reconcileContext(ctx, cctx context.Context, name string) (_ context.Context, _ context.CancelFunc, paused bool) {
	pause := r.deps.Policy.Cooldown().Remaining(r.now())
	switch {
	case cctx.Err() != nil:
		rctx, cancel := r.bound(ctx, 2*lifecycle.DefaultRequestTimeout)
		return rctx, cancel, false
	case pause > 0 && !fits(r.deps.Policy, cctx, pause):
		rctx, cancel := r.pausedContext(ctx, name, pause)
		return rctx, cancel, true
	}
	return cctx, func() {}, false
}

// pausedContext bounds what follows a create RunPod paused (Retry-After) for
// longer than create_deadline_seconds: the rest of the run's provision
// budget, not the candidate's startup budget, which a pause may outlast (a
// 120 s pause, a 100 s startup timeout): the name is looked up once the
// pause is over and the run goes on with the next candidate.
func (r *run) pausedContext(ctx context.Context, name string, pause time.Duration) (context.Context, context.CancelFunc) {
	left := r.provisionLeft()
	r.logf("create of %s: RunPod asks for a pause of %s, longer than create_deadline_seconds %d: "+
		"reconciling by name once it is over, within the provision budget (%s left)", name, pause.Round(time.Second), r.cfg.CreateDeadlineSeconds, left.Round(time.Second))
	return r.bound(ctx, left)
}

// fits reports whether a pause of d fits what is left of ctx's deadline on
// the policy's clock (a context without one fits any pause).
func fits(p *reqpolicy.Policy, ctx context.Context, d time.Duration) bool {
	left, bounded := p.Remaining(ctx)
	return !bounded || d < left
}

// uncertainCreate reports whether a create's failure leaves it unknown if the
// pod exists: a lost or 5xx answer, an expired deadline, or a 2xx that does not
// name a usable pod.
func uncertainCreate(err error) bool {
	for _, e := range []error{runpod.ErrTransport, runpod.ErrServer, runpod.ErrMalformedResponse, runpod.ErrUnusableRecord,
		runpod.ErrUnexpected, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
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
	price := max(u.price.Dollars(), float64(p.Cost))
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

// track records and publishes a created pod at once.
func (r *run) track(id string) {
	r.created = append(r.created, id)
	r.live[id] = true
	r.deps.Observer.PodCreated(id)
	r.logf("created pod %s", id)
}

func (r *run) startupParams() startup.Params {
	p := startup.Params{
		ProofURL: r.req.ProofURL, ProofSHA256: r.req.ProofSHA256,
		MinCUDA: r.cfg.MinCUDAVersion.String(), FullTier: r.cfg.RuntimeTiers.Full.String(),
		BaselineTier: r.cfg.RuntimeTiers.Baseline.String(), MinVRAMGB: r.cfg.MinVRAMGB,
		RunnerDir: r.req.RunnerDir, WorkDir: r.req.WorkDir,
	}
	for _, tier := range []config.RuntimeTier{config.RuntimeBaseline, config.RuntimeFull} {
		if pin := r.cfg.NVRTC.For(tier); pin != nil {
			p.NVRTC = append(p.NVRTC, startup.NVRTCPin{Tier: string(tier), URL: pin.URL, SHA256: pin.SHA256})
		}
	}
	return p
}
