package watchdog

import (
	"fmt"
	"strings"
)

// Outputs are the setup-watchdog action's outputs, one field per output
// (written by actionio.WriteOutputs).
type Outputs struct {
	Outcome      Outcome `output:"outcome"`
	PodDeleted   bool    `output:"pod-deleted"`
	RunCancelled bool    `output:"run-cancelled"`
	TestsStarted bool    `output:"tests-started"`
}

// Outputs are the action outputs of a watch.
func (r Result) Outputs() Outputs {
	return Outputs{Outcome: r.Outcome, PodDeleted: r.Deleted, RunCancelled: r.Cancel.Requested, TestsStarted: r.TestsStarted}
}

// Summary renders the job summary: how the watch ended, what became of the
// pod and the run, and an interrupted pod's cost.
func (r Result) Summary(runErr error) string {
	var b strings.Builder
	b.WriteString("## RunPod GPU watchdog\n\n")
	fmt.Fprintf(&b, "**%s**: %s.\n\n", r.Outcome, oneLine(r.Reason))
	if r.PodID != "" {
		pod := "not deleted by the watchdog"
		switch {
		case r.Deleted:
			pod = "deleted, confirmed at " + stampOf(r.DeletedAt)
		case r.KeptForSSH:
			pod = "left running: its GPU tests failed and the lane made it enterable (debug-ssh-public-key); cleanup keeps it for the maintainer, and it bills until the reaper's retention cap or `runpod-gpu down <pod> --force`"
		case r.Outcome != OutcomePodGone && r.Outcome != OutcomeInterrupted:
			pod = "**deletion unconfirmed: it may still be billing**; cleanup retries, or delete it by hand"
		}
		fmt.Fprintf(&b, "- Pod `%s`: %s\n", r.PodID, pod)
	}
	if r.StartedAt.Known() {
		fmt.Fprintf(&b, "- Provider start: %s; test step reached: %t\n", r.StartedAt, r.TestsStarted)
	}
	switch c := r.Cancel; {
	case c.Requested:
		b.WriteString("- Workflow run: cancelled (this attempt only; a newer attempt is never cancelled)\n")
	case c.Skipped != "":
		fmt.Fprintf(&b, "- Workflow run: not cancelled: %s\n", oneLine(c.Skipped))
	case c.Err != nil:
		fmt.Fprintf(&b, "- Workflow run: **cancel failed**: %s\n", oneLine(c.Err.Error()))
	}
	if runErr != nil {
		fmt.Fprintf(&b, "\n**Watchdog failed:** %s\n", oneLine(runErr.Error()))
	}
	if r.Report != nil {
		b.WriteString("\n" + r.Report.Markdown())
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
