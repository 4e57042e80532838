package watchdog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Host or code: while the GPU job runs on the pod's runner, every poll also
// reads the pod, and the runner read that begins the poll says whether the
// runner is online. A pod that vanished (deleted, not by the lane), whose
// container stopped, that lost its runtime, or whose runner went offline
// while its job was still running is the host's fault, not the tests': the
// watch ends with OutcomeHostFault, deletes what is left of the pod, removes
// the runner and cancels nothing, so the lane can re-run the job once on
// another host. A suspicion counts only when three polls in a row see it with
// the job still running (a runner that ends its job normally exits and its
// container stops; the job then shows completed within seconds, and a
// third poll leaves the jobs API time to show it), and never once the test
// step has ended: a test failure is never re-run, and neither is a test
// step that passed — a loss seen after it is only noted.

// hostConfirmPolls is how many polls in a row must see the loss.
const hostConfirmPolls = 3

// suspicion is a host fault seen, not yet confirmed.
type suspicion struct {
	kind, detail string
	polls        int
}

// hostLost checks the pod and the runner while the GPU job runs on it; it
// returns OutcomeHostFault once a loss is confirmed.
func (w *watch) hostLost(ctx context.Context, job *github.WorkflowJob, budget time.Duration) (Outcome, string) {
	if ended := testStepEnded(job, w.req.TestStep); ended != "" {
		if w.suspect != nil && ended == "success" {
			w.logf("pod %s: %s seen after its test step %q passed: noted only, not a host fault (the job passed; nothing is re-run)", w.req.PodID, w.suspect.kind, w.req.TestStep)
		}
		w.suspect = nil
		return "", ""
	}
	if job == nil || !w.onRunner || job.GetStatus() != "in_progress" || budget <= 0 {
		w.suspect = nil
		return "", ""
	}
	kind, detail := w.podLost(ctx, budget)
	if kind == "" && w.runnerOffline {
		kind, detail = lanetiers.FaultRunnerOffline, fmt.Sprintf("runner %s went offline while its job ran", w.req.RunnerLabel)
	}
	if kind == "" {
		if w.suspect != nil {
			w.logf("pod %s looks well again (%s was seen once): no host fault", w.req.PodID, w.suspect.kind)
		}
		w.suspect = nil
		return "", ""
	}
	if w.suspect == nil || w.suspect.kind != kind {
		w.suspect = &suspicion{kind: kind, detail: detail}
		w.logf("pod %s: %s while its GPU job runs (%s); confirming over the next %d polls", w.req.PodID, kind, detail, hostConfirmPolls-1)
	}
	w.suspect.polls++
	if w.suspect.polls < hostConfirmPolls {
		return "", ""
	}
	w.fault = &lanetiers.HostFault{Tier: w.req.Tier, PodID: w.req.PodID, GPUType: w.gpuType(), DataCenter: w.dataCenter(),
		Kind: kind, Detail: detail, Rerun: w.req.Rerun}
	return OutcomeHostFault, fmt.Sprintf("host fault: pod %s on %s %s while its GPU job ran (%s)", w.req.PodID, w.fault.Where(), kind, detail)
}

// podLost reads the pod once within budget: the kind of loss it shows, or
// "" when it runs (or could not be read: unknown is never a fault).
func (w *watch) podLost(ctx context.Context, budget time.Duration) (kind, detail string) {
	rctx, cancel := reqpolicy.Bound(reqpolicy.WithAttemptLimit(ctx, 1), w.clock, budget)
	defer cancel()
	pod, err := w.deps.Pods.GetPod(rctx, w.req.PodID)
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		return lanetiers.FaultVanished, "the pod is not found: deleted, not by the lane"
	case err != nil || pod == nil || pod.ID != w.req.PodID:
		return "", ""
	case pod.Status == runpod.PodTerminated:
		return lanetiers.FaultVanished, "the pod is TERMINATED: deleted, not by the lane"
	case pod.Status == runpod.PodRunning && pod.Runtime == nil:
		return lanetiers.FaultRuntimeLost, "the pod is RUNNING without a runtime"
	case pod.Status != runpod.PodRunning:
		return lanetiers.FaultExited, fmt.Sprintf("the pod is %s: its container stopped", pod.Status)
	}
	return "", ""
}

// testStepEnded is the test step's conclusion once it completed ("" while
// it has not): then the tests passed or failed, whatever becomes of the host.
func testStepEnded(job *github.WorkflowJob, name string) string {
	if job == nil {
		return ""
	}
	for _, s := range job.Steps {
		if s.GetName() == name && s.GetStatus() == "completed" && s.GetConclusion() != "skipped" {
			return cmp.Or(s.GetConclusion(), "completed")
		}
	}
	return ""
}

func (w *watch) gpuType() string {
	if w.record != nil && w.record.GPU != nil && w.record.GPU.ID != "" {
		return w.record.GPU.ID
	}
	return w.req.Snapshot.GPU
}

func (w *watch) dataCenter() string {
	if w.record != nil {
		return w.record.DataCenterID
	}
	return ""
}
