package provision

import (
	"context"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// watchResult is what the startup watch saw.
type watchResult struct {
	accepted   bool
	acceptedAt time.Time
	obsolete   bool
	reason     string
	start      time.Time  // provider start (startedAt), zero when never seen
	price      cost.Price // hourly cost captured while RUNNING
}

// watch polls the pod every startup_poll_seconds until it is accepted or
// rejected. The pod status comes first; the runner registry is read only after
// a live RUNNING observation. Unknown or malformed observations back off and
// never count as death or health; the startup timeout runs from creation.
func (r *run) watch(ctx context.Context, pod *runpod.Pod, label string) watchResult {
	var w watchResult
	created := r.now()
	deadline := created.Add(r.cfg.StartupTimeout())
	poll := r.cfg.StartupPoll()
	runtimeSeen := false
	for {
		if ctx.Err() != nil {
			w.reason = "cancelled"
			return w
		}
		if obsolete, why := r.prObsolete(ctx); obsolete {
			w.obsolete, w.reason = true, why
			return w
		}
		p, err := r.deps.RunPod.GetPod(ctx, pod.ID)
		switch {
		case err != nil:
			r.logf("pod %s: observation failed (%v): backing off, not counted", pod.ID, err)
		default:
			if t, ok := p.StartedAt.Get(); ok && w.start.IsZero() {
				w.start = t
			}
			switch {
			case p.Status.Ended():
				w.reason = fmt.Sprintf("pod %s while starting (the CUDA smoke proof or the runner failed)", p.Status)
				return w
			case p.Status == runpod.PodRunning && p.Runtime != nil:
				runtimeSeen = true
				if c := float64(p.Cost); c > 0 {
					w.price = cost.KnownPrice(c, "v2 cost while running")
				}
				online, rerr := r.runnerOnline(ctx, label)
				if rerr != nil {
					r.logf("runner %s: registry unreadable (%v): not counted", label, rerr)
				} else if online {
					w.accepted, w.acceptedAt = true, r.now()
					return w
				}
			case runtimeSeen && p.Runtime == nil:
				w.reason = fmt.Sprintf("pod runtime lost after boot (status %s)", p.Status)
				return w
			}
		}
		now := r.now()
		if !now.Before(deadline) {
			w.reason = fmt.Sprintf("runner %s not online within startup_timeout_seconds %d", label, r.cfg.StartupTimeoutSeconds)
			return w
		}
		wait := min(poll, deadline.Sub(now))
		if err := r.deps.Policy.Wait(ctx, wait, "startup poll"); err != nil {
			if ctx.Err() != nil {
				w.reason = "cancelled"
			} else {
				w.reason = fmt.Sprintf("startup watch ended: %v", err)
			}
			return w
		}
	}
}

// runnerOnline looks the attempt's runner up by its unique name and checks it
// is online with the attempt's label (a stale record of another pod cannot pass).
func (r *run) runnerOnline(ctx context.Context, label string) (bool, error) {
	runner, found, err := r.deps.GitHub.RunnerByName(ctx, label, r.req.Scope)
	if err != nil || !found {
		return false, err
	}
	if runner.GetStatus() != "online" {
		return false, nil
	}
	for _, l := range runner.Labels {
		if l.GetName() == label {
			return true, nil
		}
	}
	return false, nil
}
