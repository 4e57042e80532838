package cleanup

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/startup"
)

// KeptPod is a tested pod cleanup left running because its GPU tests
// failed and the lane made it enterable: the maintainer's way in.
type KeptPod struct {
	ID string
	// PerHour is its price as its record gave it; 0 when unknown.
	PerHour money.Rate
	// CreatedAt is when its record says it was created (zero: unknown), from
	// which the reaper's retention cap counts.
	CreatedAt time.Time
}

// keptForSSH reports whether a tested pod is kept instead of deleted: its
// record (read before deletion) shows that provision made it enterable — a
// keep-failed lane's pod publishing 22/tcp with the maintainer's key, which
// provision does only when the lane's debug-ssh-public-key input is set —
// and its GPU job completed with a failure, so its tests ran and the
// startup script's sshd now lets the key in. Any other pod is deleted as
// always (SPEC: accepted pods are always deleted; this opt-in is the
// exception, bounded by the reaper's retention cap). The job read is kept
// for the pod's report.
func (c *cleaner) keptForSSH(ctx context.Context, p trackedPod, ev *cost.Evidence) (KeptPod, bool) {
	rec := ev.Record
	if rec == nil || !enterable(rec) {
		return KeptPod{}, false
	}
	ev.Job, ev.JobErr = c.gpuJob(ctx, p.RunnerLabel)
	if ev.Job == nil || ev.Job.GetStatus() != "completed" || ev.Job.GetConclusion() != "failure" {
		return KeptPod{}, false
	}
	k := KeptPod{ID: p.ID, PerHour: money.PerHour(float64(rec.Cost))}
	if at, ok := rec.CreatedAt.Get(); ok {
		k.CreatedAt = at
	}
	c.logf("pod %s: its GPU job failed and the lane made it enterable (debug-ssh-public-key): kept for the maintainer, not deleted", p.ID)
	return k, true
}

// enterable reports whether a pod record is a keep-failed lane pod with the
// maintainer's SSH opened by provision (openDebugSSH).
func enterable(p *runpod.Pod) bool {
	tags, err := ownership.FromPod(p.Name, p.Env)
	return err == nil && tags.KeepFailed && p.Env[startup.DebugKeyEnv] != "" && slices.Contains(p.Ports, startup.SSHPort)
}

// keptSummary tells the maintainer how to enter each pod kept for SSH, what
// it bills and when the reaper deletes it: at the retention cap when the
// run's debug-retention record names it (the workflow uploads one from
// kept-pod-ids), else at the reaper's first sweep after the run's grace.
func keptSummary(kept []KeptPod) string {
	var b strings.Builder
	capHours := ownership.DefaultRetentionCap.Hours()
	for _, k := range kept {
		fmt.Fprintf(&b, "- Its GPU tests failed: enter pod `%s` with `runpod-gpu ssh %s` (sshd lets the debug-ssh-public-key in now that its tests ended). ", k.ID, k.ID)
		if k.PerHour > 0 {
			fmt.Fprintf(&b, "It bills %s until deleted: up to %s over the reaper's %.0f h retention cap. ",
				k.PerHour.Format(money.Cents), spend.Retained(k.PerHour, ownership.DefaultRetentionCap).Format(money.Cents), capHours)
		} else {
			b.WriteString("Its price is unknown; it bills until deleted. ")
		}
		until := fmt.Sprintf("%.0f h after its create", capHours)
		if !k.CreatedAt.IsZero() {
			until = k.CreatedAt.Add(ownership.DefaultRetentionCap).UTC().Format(time.RFC3339) + " (" + until + ")"
		}
		fmt.Fprintf(&b, "The reaper deletes it at its first sweep after %s when this run's %s<run>-<attempt>-<pod ids> artifact names it "+
			"(a reap workflow's retention-cap-hours may set another cap), or, without one, at its first sweep once the run completed (and the reaper's grace passed); "+
			"`runpod-gpu down %s --force` ends it sooner.\n", until, ownership.RetentionPrefix, k.ID)
	}
	return b.String()
}
