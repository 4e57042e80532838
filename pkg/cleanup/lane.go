package cleanup

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
)

// A lane of several pods (lanetiers): each tier's pod, and each pod lost to
// its host, is deleted and reported on its own — its record captured, its
// runner removed, its GPU job (found by its runner) read for its stages and
// conclusion — and becomes a row of the gate. A lost pod's report says its
// host failed, so the cost history's reputation counts it against the host.

// trackedPod is one pod cleanup was told about, with what its report needs.
type trackedPod struct {
	ID          string
	Tier        string
	RunnerLabel string
	Snapshot    cost.Snapshot
	Provision   cost.ProvisionAttempts
	// Cloud and DataCenter are where provision saw the pod run: the
	// report's when the pod's record is gone before cleanup reads it.
	Cloud, DataCenter string
	// Fault is set for a pod lost to its host; Rerun for a re-run's pod.
	Fault *lanetiers.HostFault
	Rerun bool
}

// tracked lists the request's pods: the lane's, tier by tier (lost pods
// first), or the one pod-id; never none, so a report always exists (it may
// name no pod: then it holds the untracked pods and the rejected ones).
func (req Request) tracked() []trackedPod {
	if req.Lane == nil {
		return []trackedPod{{ID: req.PodID, RunnerLabel: req.RunnerLabel, Snapshot: req.Snapshot, Provision: req.Provision,
			Fault: req.faultOf(req.PodID)}}
	}
	var pods []trackedPod
	var orphaned []cost.Attempt // rejected candidates of tiers without a pod
	for _, t := range req.Lane.Tiers {
		first := len(pods)
		for _, f := range t.Lost {
			snap, _ := cost.ParseSnapshot(f.PricePerHour, f.StartedAt, f.GPUType, "")
			fault := f
			pods = append(pods, trackedPod{ID: f.PodID, Tier: t.Name, RunnerLabel: f.RunnerLabel, Snapshot: snap, Fault: &fault, Rerun: f.Rerun,
				Cloud: f.Cloud, DataCenter: f.DataCenter})
		}
		if p := t.Pod; p != nil {
			snap, _ := cost.ParseSnapshot(p.PricePerHour, p.StartedAt, p.GPUType, p.GPUTier)
			pods = append(pods, trackedPod{ID: p.PodID, Tier: t.Name, RunnerLabel: p.RunnerLabel, Snapshot: snap, Rerun: p.Rerun,
				Fault: req.faultOf(p.PodID), Cloud: p.Cloud, DataCenter: p.DataCenter})
		}
		if len(pods) > first {
			pods[first].Provision.Rejected = append(pods[first].Provision.Rejected, t.Rejected...)
		} else {
			orphaned = append(orphaned, t.Rejected...)
		}
	}
	if len(pods) == 0 {
		pods = append(pods, trackedPod{})
	}
	pods[0].Provision.Rejected = append(pods[0].Provision.Rejected, orphaned...)
	for i := range pods {
		pods[i].Provision.Reported = true
	}
	return pods
}

// faultOf is the watchdog's host fault of pod id, or nil.
func (req Request) faultOf(id string) *lanetiers.HostFault {
	for _, f := range req.HostFaults {
		if f.PodID == id && id != "" {
			return &f
		}
	}
	return nil
}

// retained lists the lane's kept pods beside the request's own.
func (req Request) retained() []string {
	ids := slices.Clone(req.RetainedPodIDs)
	if req.Lane != nil {
		for _, t := range req.Lane.Tiers {
			ids = append(ids, t.Retained...)
		}
	}
	return ids
}

// mark completes a pod's report with where provision saw it run (the
// reputation's pair, when its record was gone before cleanup read it) and a
// lost pod's with what its loss says about its host. A GPU job that
// succeeded had no host fault: a loss seen after it is only noted. Only a
// loss RunPod itself shows — the pod vanished or lost its runtime — counts
// against the host (HostFailed): a stopped container or an offline runner
// is what the tests' own code can cause too (killing its runner or its
// container), so it earns the re-run but never blames the host.
func (p trackedPod) mark(r *cost.Report) {
	if p.ID == "" || r.PodID == "" {
		return
	}
	r.Cloud, r.DataCenter = cmp.Or(r.Cloud, p.Cloud), cmp.Or(r.DataCenter, p.DataCenter)
	switch f := p.Fault; {
	case f == nil:
	case r.Conclusion() == cost.ConclusionSuccess:
		r.Notes = append(r.Notes, fmt.Sprintf("A host fault was seen after its GPU job succeeded (%s: %s): noted only; the job passed.", f.Kind, f.Detail))
	case f.Kind == lanetiers.FaultVanished || f.Kind == lanetiers.FaultRuntimeLost:
		r.Host = cost.HostFailed
		r.Notes = append(r.Notes, fmt.Sprintf("Lost to its host while its GPU job ran (%s: %s): a host fault, counted against the host, not the tests.", f.Kind, f.Detail))
	default:
		r.Notes = append(r.Notes, fmt.Sprintf("Lost while its GPU job ran (%s: %s): re-run as a host fault, but not counted against the host: the tests' own code can stop its container or its runner.", f.Kind, f.Detail))
	}
}

// rows are the gate's rows: every tracked pod with what its GPU job did and
// what it cost, then each tier of the lane that had no pod.
func (req Request) rows(pods []trackedPod, reports []cost.Report) []lanetiers.Result {
	rows := []lanetiers.Result{}
	for i, p := range pods {
		if p.ID != "" {
			rows = append(rows, podRow(p, reports[i]))
		}
	}
	if req.Lane == nil {
		return rows
	}
	var out []lanetiers.Result
	for _, t := range req.Lane.Tiers {
		has := false
		for _, r := range rows {
			if r.Tier == t.Name {
				out, has = append(out, r), true
			}
		}
		switch {
		case t.Pod != nil:
		case t.PaidPath == "reused":
			out = append(out, lanetiers.Result{Tier: t.Name, Outcome: lanetiers.OutcomeReused, ReusedCheckURL: t.ReusedCheckURL,
				Reason: "passed earlier for the tested tree: " + t.ReusedCheckURL})
		case t.PaidPath == "skipped" && t.Error == "":
		default:
			why := cmp.Or(t.Error, "provisioning handed no pod over")
			if has {
				why = "no re-run: " + why
			}
			out = append(out, lanetiers.Result{Tier: t.Name, Outcome: lanetiers.OutcomeNoPod, Reason: why})
		}
	}
	return out
}

// podRow is a pod's row: its job's conclusion, or its host fault.
func podRow(p trackedPod, r cost.Report) lanetiers.Result {
	row := lanetiers.Result{Tier: p.Tier, PodID: p.ID, GPUType: cmp.Or(r.GPU, p.Snapshot.GPU), DataCenter: r.DataCenter, Rerun: p.Rerun}
	if r.Price.Known {
		price := r.Price.PerHour
		row.PricePerHour = &price
	}
	if s := r.Window.Seconds(); s.Known {
		n := s.N
		row.PaidSeconds = &n
	}
	if d := r.Dollars(); d.Known {
		usd := d.USD
		row.Dollars = &usd
	}
	// A job that succeeded passed, whatever was seen of its host after.
	switch c := r.Conclusion(); {
	case c == cost.ConclusionSuccess && p.Fault != nil:
		row.Outcome = lanetiers.OutcomePassed
		row.Reason = fmt.Sprintf("the GPU job succeeded (the pod %s after it, noted only)", faultWords(p.Fault.Kind))
	case c == cost.ConclusionSuccess:
		row.Outcome, row.Reason = lanetiers.OutcomePassed, "the GPU job succeeded"
	case p.Fault != nil:
		row.Outcome = lanetiers.OutcomeHostFault
		row.DataCenter = cmp.Or(row.DataCenter, p.Fault.DataCenter)
		row.Reason = fmt.Sprintf("host fault: the pod %s (%s)", faultWords(p.Fault.Kind), p.Fault.Detail)
	case c == cost.ConclusionFailure:
		row.Outcome, row.Reason = lanetiers.OutcomeFailed, "the GPU job failed"
	case c == cost.ConclusionCancelled:
		row.Outcome, row.Reason = lanetiers.OutcomeCancelled, "the GPU job was cancelled"
	case c == cost.ConclusionSkipped:
		row.Outcome, row.Reason = lanetiers.OutcomeSkipped, "the GPU job never ran"
	default:
		row.Outcome, row.Reason = lanetiers.OutcomeUnknown, "the GPU job's conclusion could not be read"
	}
	if p.Rerun {
		row.Reason = "re-run after a host fault: " + row.Reason
	}
	return row
}

func faultWords(kind string) string {
	switch kind {
	case lanetiers.FaultVanished:
		return "vanished"
	case lanetiers.FaultExited:
		return "stopped"
	case lanetiers.FaultRuntimeLost:
		return "lost its runtime"
	case lanetiers.FaultRunnerOffline:
		return "lost its runner"
	}
	return kind
}
