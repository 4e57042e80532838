package watchdog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
)

// jobNameMatches reports whether a job, by the name GitHub lists it under, is
// the job named name: that name itself, or "<caller job> / <name>" when the
// job is in a called (reusable) workflow, at any depth.
func jobNameMatches(listed, name string) bool {
	return listed == name || strings.HasSuffix(listed, " / "+name)
}

// pickGPUJob finds the GPU job among this attempt's jobs: the job with the
// GPU job's name that runs on the runner, or, before the runner took it, the
// one with that name that waits for the runner's label or ended without a
// runner. The runner is the
// GPU job's and only its: a job of another name (a "Lint" job of the same
// run with the same runs-on, say), or of another run or attempt, found on it
// took it, and the pod goes at once.
func (w *watch) pickGPUJob(jobs []*github.WorkflowJob) (*github.WorkflowJob, error) {
	var onRunner, waiting *github.WorkflowJob
	for _, j := range jobs {
		if j == nil {
			continue
		}
		other := w.otherAttempt(j)
		named := jobNameMatches(j.GetName(), w.req.GPUJob)
		switch {
		case j.GetRunnerName() == w.req.RunnerLabel && (other || !named):
			return nil, &takenError{label: w.req.RunnerLabel, job: j, ours: !other, want: w.req.GPUJob}
		case j.GetRunnerName() == w.req.RunnerLabel:
			onRunner = j
		case waiting == nil && named && j.GetRunnerName() == "" &&
			(j.GetStatus() == "completed" || slices.ContainsFunc(j.Labels, func(l string) bool { return strings.EqualFold(l, w.req.RunnerLabel) })):
			// Waiting for the runner's label, or ended without ever running
			// (skipped, say, because a job it needs failed): the pod goes now.
			waiting = j
		}
	}
	if onRunner != nil {
		return onRunner, nil
	}
	if waiting != nil && w.otherAttempt(waiting) {
		// Queued elsewhere and never on our runner: an answer about another attempt.
		return nil, fmt.Errorf("the job %q for runner %s belongs to run %d attempt %d, not run %d attempt %d: %w",
			waiting.GetName(), w.req.RunnerLabel, waiting.GetRunID(), waiting.GetRunAttempt(), w.req.RunID, w.req.Attempt, ghapi.ErrUnusableAnswer)
	}
	return waiting, nil
}

// otherAttempt reports whether a listed job says it belongs to another run or
// attempt than the watched one.
func (w *watch) otherAttempt(j *github.WorkflowJob) bool {
	return (j.RunID != nil && j.GetRunID() != w.req.RunID) || (j.RunAttempt != nil && int(j.GetRunAttempt()) != w.req.Attempt)
}

// setupExpired says which signal the GPU job never gave: its test step never
// started within the setup budget (or the job was never seen at all).
func (w *watch) setupExpired() string {
	why := fmt.Sprintf("setup budget of %s expired before the GPU job %q started its test step %q", w.req.SetupBudget, w.req.GPUJob, w.req.TestStep)
	if !w.jobFound {
		return why + fmt.Sprintf("; no job of that name ever waited for runner %s (is gpu-job-name the GPU job's name?)", w.req.RunnerLabel)
	}
	return why + " (a step of that name starting is what disarms the setup deadline: test-step-name)"
}
