package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
)

// outcome is how one candidate ended, for the loop's counters.
type outcome int

const (
	outcomeAccepted       outcome = iota
	outcomeStartupFailure         // created, never online: counts toward the early stop
	outcomeNoCapacity             // nothing created, nothing paid
)

// attempt tries one candidate. A returned error stops the whole run.
func (r *run) attempt(ctx context.Context, c plan.Candidate) (outcome, error) {
	label := r.runnerLabel(c.N)
	listPrice := cost.Price{}
	if c.PriceKnown {
		listPrice = cost.KnownPrice(c.PricePerHour, "catalog list price")
	}
	rec := cost.Attempt{Number: c.N, Candidate: c.Name, GPU: c.GPUID, Price: listPrice}
	done := func(o cost.Outcome, reason string) {
		rec.Outcome, rec.Reason = o, reason
		r.res.Attempts = append(r.res.Attempts, rec)
		r.deps.Observer.AttemptDone(rec)
		r.logf("attempt %d %s: %s on %s, %s: %s (%s paid seconds, %s)", c.N, c.Name, o, c.GPUID, rec.Price, orDash(reason), rec.Seconds, rec.Dollars())
	}

	jit, err := r.mintJIT(ctx, label)
	if err != nil {
		done(cost.OutcomeFailed, "JIT runner config: "+err.Error())
		return 0, r.fail(ErrStopped, fmt.Sprintf("could not mint a runner config for %s: %v", label, err))
	}
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
	rec.PodID = pod.ID

	w := r.watch(ctx, pod, label)
	if !w.start.IsZero() {
		rec.Price = cost.FirstKnown(w.price, listPrice)
	}
	if w.accepted {
		secs := int64(0)
		if !w.start.IsZero() {
			secs = int64(w.acceptedAt.Sub(w.start).Round(time.Second) / time.Second)
		}
		rec.Seconds = cost.KnownSeconds(secs)
		delete(r.live, pod.ID) // handed over to the GPU job; cleanup deletes it
		r.res.Accepted = &Accepted{PodID: pod.ID, RunnerLabel: label, GPU: c.GPUID, Candidate: c.Name, Tier: c.Tier,
			Cloud: c.Cloud, Price: rec.Price, StartupSeconds: secs, StartedAt: w.start}
		done(cost.OutcomeAccepted, "")
		return outcomeAccepted, nil
	}

	// Rejected: delete at once (bounded), unless the pod is kept for debugging.
	// A pod made obsolete by the PR is deleted even in debug mode.
	keep := r.req.KeepFailedPods && !w.obsolete && ctx.Err() == nil
	end := r.now()
	if keep {
		r.res.RetainedPodIDs = append(r.res.RetainedPodIDs, pod.ID)
		delete(r.live, pod.ID)
		r.logf("pod %s kept for inspection (keep-failed-pods): it keeps billing until the reaper or you delete it", pod.ID)
	} else {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lifecycle.DefaultDeleteBudget+10*time.Second)
		deletedAt, derr := r.deleter.Delete(dctx, pod.ID)
		cancel()
		if derr != nil {
			rec.Seconds = secondsBetween(w.start, r.now())
			done(cost.OutcomeRejected, w.reason+"; deletion unconfirmed")
			return 0, r.fail(ErrUnconfirmedDeletion, fmt.Sprintf("no further pod is created while pod %s may still run: %v", pod.ID, derr))
		}
		delete(r.live, pod.ID)
		end = deletedAt
		r.removeRunner(ctx, jit) // its pod is gone: nothing can use the registration
	}
	rec.Seconds = secondsBetween(w.start, end)
	done(cost.OutcomeRejected, w.reason)
	if w.obsolete {
		return 0, r.fail(ErrObsolete, w.reason)
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return outcomeStartupFailure, nil
}

// removeRunner removes the registration of a runner no pod will ever run, so
// the runner list does not fill with offline leftovers until GitHub expires
// them a day later. Best effort: a failure is logged, never fatal.
func (r *run) removeRunner(ctx context.Context, jit *ghapi.JITConfig) {
	if jit == nil || jit.RunnerID == 0 {
		return
	}
	if err := r.deps.GitHub.DeleteRunner(context.WithoutCancel(ctx), jit.RunnerID, r.req.Scope); err != nil {
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
	tags := r.req.Owner
	tags.Candidate, tags.KeepFailed = c.N, r.req.KeepFailedPods
	params := r.startupParams()
	script, err := startup.Render(params)
	if err != nil {
		return nil, err
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

	deadline := r.now().Add(r.cfg.CreateDeadline())
	cctx, cancel := context.WithTimeout(reqpolicy.WithDeadline(ctx, deadline), r.cfg.CreateDeadline())
	defer cancel()
	for tries := 1; ; tries++ {
		pod, err := r.deps.RunPod.CreatePod(cctx, body)
		switch {
		case err == nil:
			r.track(pod.ID)
			return pod, nil
		case errors.Is(err, runpod.ErrCapacity):
			return nil, err
		case errors.Is(err, runpod.ErrInsufficientBalance):
			return nil, fmt.Errorf("RunPod balance too low; no candidate can start: %w", err)
		case errors.Is(err, runpod.ErrRateLimited) && tries == 1:
			if werr := r.deps.Policy.Wait(cctx, 0, "create after 429"); werr != nil {
				return nil, fmt.Errorf("%w: create of %s rate limited and the wait does not fit the create deadline: %v", errNotCreated, body.Name, werr)
			}
			continue
		case errors.Is(err, runpod.ErrTransport) || errors.Is(err, runpod.ErrServer) || errors.Is(err, context.DeadlineExceeded):
			r.logf("create of %s: %v; reconciling by name before anything else", body.Name, err)
			return r.reconcile(ctx, body.Name, deadline, err)
		default:
			return nil, fmt.Errorf("create pod %s: %w", body.Name, err)
		}
	}
}

// reconcile looks for a pod created despite a lost answer, polling the list
// until the create deadline (a new pod may appear in the list late).
func (r *run) reconcile(ctx context.Context, name string, deadline time.Time, cause error) (*runpod.Pod, error) {
	for {
		pods, err := r.deps.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
		if err == nil {
			for i := range pods {
				if pods[i].Name == name {
					r.logf("reconciled: pod %s exists as %s", name, pods[i].ID)
					r.track(pods[i].ID)
					return &pods[i], nil
				}
			}
		}
		wait := r.cfg.StartupPoll()
		if r.now().Add(wait).After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("create of %s: %v; the pod list could not be read (%v), so it may exist: stopping rather than risk a second pod", name, cause, err)
			}
			return nil, fmt.Errorf("%w: create of %s: %v; no pod of that name appeared by the create deadline", errNotCreated, name, cause)
		}
		if werr := r.deps.Policy.Wait(ctx, wait, "reconcile poll"); werr != nil {
			return nil, fmt.Errorf("create of %s: %v; reconcile interrupted: %v", name, cause, werr)
		}
	}
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
