package provision

// Creating a candidate's pod: its runner config, its create request, and the
// one-POST-at-a-time loop that decides, after a failed POST, between waiting,
// reconciling by name and one informed retry.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
)

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
	r.mountVolume(&body, c) // volume.go
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
