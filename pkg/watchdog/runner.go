package watchdog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// takenError is a job other than the GPU job found on this attempt's
// runner: one of another run or attempt, or (ours) another job of this one.
type takenError struct {
	label string
	job   *github.WorkflowJob
	ours  bool   // the job is of the watched run attempt
	want  string // the GPU job's name
}

func (e *takenError) Error() string {
	if e.ours {
		return fmt.Sprintf("runner taken by job %d %q of this run attempt on runner %s: only the GPU job %q may run on the pod's runner (no other job may use its label; if %q is the GPU job, pass that name as gpu-job-name)",
			e.job.GetID(), e.job.GetName(), e.label, e.want, e.job.GetName())
	}
	return fmt.Sprintf("runner taken by job %d of run %d (attempt %d, %q) on runner %s", e.job.GetID(), e.job.GetRunID(), e.job.GetRunAttempt(), e.job.GetName(), e.label)
}

// runnerBusy reads the runner by its unique name within budget and reports
// whether it is busy. A failed read, a missing runner or no label is "not
// busy": the check then rests on the jobs read and the deadlines. While the
// jobs reads fail the check cannot conclude, so the runner is not read then:
// an extra read into GitHub's shared cooldown would only delay the reads that
// keep the deadlines and the run's cancellation on time.
func (w *watch) runnerBusy(ctx context.Context, budget time.Duration) bool {
	w.runnerOffline = false
	if w.req.RunnerLabel == "" || budget <= 0 || w.jobsErr {
		return false
	}
	rctx, cancel := reqpolicy.Bound(reqpolicy.WithAttemptLimit(ctx, 1), w.clock, budget)
	defer cancel()
	runner, found, err := w.deps.GitHub.RunnerByName(rctx, w.req.RunnerLabel, w.req.RunnerScope)
	if err != nil {
		if !w.runnerErr {
			w.logf("runner %s unreadable (%v): the foreign-job check waits for the next poll (the watchdog needs a credential that reads self-hosted runners)", w.req.RunnerLabel, err)
		}
		w.runnerErr = true
		return false
	}
	w.runnerErr = false
	w.runnerOffline = found && runner.GetStatus() == "offline"
	return found && runner.GetBusy()
}

// removeRunner deletes the runner's registration by its unique name, so the
// credentials on the pod (which the job's code could read) are worth nothing
// once the job ends or the pod is gone. It reports whether no registration
// remains; a failure is logged, never fatal: GitHub drops an ephemeral
// runner's registration itself within a day.
func (w *watch) removeRunner(ctx context.Context) bool {
	if w.req.RunnerLabel == "" {
		return false
	}
	rctx, cancel := reqpolicy.Bound(ctx, w.clock, w.req.RequestTimeout)
	defer cancel()
	runner, found, err := w.deps.GitHub.RunnerByName(rctx, w.req.RunnerLabel, w.req.RunnerScope)
	switch {
	case err != nil:
		w.logf("warning: runner %s: could not look up its registration to remove it (%v); GitHub drops it within a day", w.req.RunnerLabel, err)
		return false
	case !found:
		w.logf("runner %s: no registration remains", w.req.RunnerLabel)
		return true
	}
	if err := w.deps.GitHub.DeleteRunner(rctx, runner.GetID(), w.req.RunnerScope); err != nil {
		w.logf("warning: runner %s: could not remove its registration (%v); GitHub drops it within a day", w.req.RunnerLabel, err)
		return false
	}
	w.logf("runner %s: registration removed", w.req.RunnerLabel)
	return true
}

// takerRuns bounds the search for the job that took the runner: the newest
// in-progress runs of the repository, one page.
const takerRuns = 20

// findTaker names the job that ran on the runner ("runner taken by job N of
// run M"), searching the repository's in-progress runs. It is best effort
// and runs after the pod's deletion, never before it; "" when not found (a
// job of another repository, for an organization runner, is not visible).
func (w *watch) findTaker(ctx context.Context) string {
	rctx, cancel := reqpolicy.Bound(ctx, w.clock, 2*w.req.RequestTimeout)
	defer cancel()
	runs, err := w.deps.GitHub.ListWorkflowRuns(rctx, "", ghapi.ListRunsFilter{Status: "in_progress"}, 1)
	if err != nil {
		w.logf("the job that took runner %s could not be looked up: %v", w.req.RunnerLabel, err)
		return ""
	}
	for i, run := range runs {
		if i == takerRuns {
			break
		}
		if run.GetID() == w.req.RunID && run.GetRunAttempt() == w.req.Attempt {
			continue
		}
		jobs, err := w.deps.GitHub.ListAttemptJobs(rctx, run.GetID(), run.GetRunAttempt())
		if err != nil {
			continue
		}
		for _, j := range jobs {
			if j.GetRunnerName() == w.req.RunnerLabel {
				return fmt.Sprintf("runner taken by job %d of run %d (attempt %d, workflow %q, event %s)",
					j.GetID(), run.GetID(), run.GetRunAttempt(), run.GetName(), run.GetEvent())
			}
		}
	}
	return ""
}
