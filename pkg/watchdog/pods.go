package watchdog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
)

// PodWatch is one pod's watch in a lane of several pods (provision's pods
// output): its own deadlines, its own GPU job and its own verdict.
type PodWatch struct {
	Pod    lanetiers.Pod
	Result Result
	Err    error
}

// RunPods watches every pod of the lane at once, each beside its GPU job:
// the job named lanetiers.JobName(base.GPUJob, tier), as GitHub lists a
// matrix job per pod. A pod whose snapshot is unusable is still watched, its
// cost report falling back to unknown. Log lines carry the pod's tier.
func RunPods(ctx context.Context, deps Deps, base Request, pods []lanetiers.Pod) []PodWatch {
	out := make([]PodWatch, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		req := base
		req.PodID, req.RunnerLabel, req.Tier, req.Rerun = pod.PodID, pod.RunnerLabel, pod.Tier, pod.Rerun
		req.HandOverWait = pod.HandOverWait() // the setup deadline's (SetupDeadline)
		req.GPUJob = lanetiers.JobName(cmp.Or(base.GPUJob, DefaultGPUJob), pod.Tier)
		req.Snapshot, _ = cost.ParseSnapshot(pod.PricePerHour, pod.StartedAt, pod.GPUType, pod.GPUTier)
		d := deps
		if pod.Tier != "" && deps.Logf != nil {
			prefix := "[" + pod.Tier + "] "
			d.Logf = func(format string, args ...any) { deps.Logf(prefix+format, args...) }
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Run(ctx, d, req)
			if f := res.HostFault; f != nil {
				lost := f.Lose(pod) // with the runner, price and start cleanup prices it by
				res.HostFault = &lost
			}
			out[i] = PodWatch{Pod: pod, Result: res, Err: err}
		}()
	}
	wg.Wait()
	return out
}

// LaneOutputs are the outputs of a watch of several pods: each outcome
// (tier=outcome, comma-separated), and the pods lost to their hosts.
func LaneOutputs(watches []PodWatch) (Outputs, []lanetiers.HostFault) {
	out := Outputs{PodDeleted: len(watches) > 0, TestsStarted: len(watches) > 0}
	faults := []lanetiers.HostFault{}
	var outcomes []string
	for _, w := range watches {
		r := w.Result
		if len(watches) == 1 {
			out.Outcome = r.Outcome
		} else {
			outcomes = append(outcomes, fmt.Sprintf("%s=%s", w.Pod.Tier, r.Outcome))
		}
		out.PodDeleted = out.PodDeleted && r.Deleted
		out.TestsStarted = out.TestsStarted && r.TestsStarted
		out.RunCancelled = out.RunCancelled || r.Cancel.Requested
		if r.HostFault != nil {
			faults = append(faults, *r.HostFault)
		}
	}
	if len(watches) == 0 {
		out.Outcome = OutcomeNoPod
	} else if len(watches) > 1 {
		out.Outcome = Outcome(strings.Join(outcomes, ","))
	}
	return out, faults
}

// LaneSummary renders the job summary of several watches, each under its
// tier, and the error of them all.
func LaneSummary(watches []PodWatch) (string, error) {
	if len(watches) == 1 && watches[0].Pod.Tier == "" {
		return watches[0].Result.Summary(watches[0].Err), watches[0].Err
	}
	var b strings.Builder
	var errs []error
	b.WriteString("## RunPod GPU watchdog\n\n")
	if len(watches) == 0 {
		b.WriteString("No pod was handed to a GPU job: nothing to watch.\n")
	}
	for _, w := range watches {
		body := strings.TrimPrefix(w.Result.Summary(w.Err), "## RunPod GPU watchdog\n\n")
		fmt.Fprintf(&b, "### %s\n\n%s\n", tierName(w.Pod.Tier), body)
		if w.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tierName(w.Pod.Tier), w.Err))
		}
	}
	return b.String(), errors.Join(errs...)
}

func tierName(t string) string {
	if t == "" {
		return "the pod"
	}
	return "tier " + t
}
