package watchdog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestJobNameMatches(t *testing.T) {
	tests := []struct {
		listed, name string
		want         bool
	}{
		{listed: "GPU tests", name: "GPU tests", want: true},
		{listed: "gpu / GPU tests", name: "GPU tests", want: true},      // gpu-lane.yml called from a job named gpu
		{listed: "ci / gpu / GPU tests", name: "GPU tests", want: true}, // two levels of calls
		{listed: "Lint", name: "GPU tests"},                             // another job
		{listed: "GPU tests (ampere)", name: "GPU tests"},               // a matrix job names itself
		{listed: "not GPU tests", name: "GPU tests"},                    // a longer name is another name
		{listed: "gpu/GPU tests", name: "GPU tests"},                    // GitHub writes " / "
		{listed: "GPU tests (ampere)", name: "GPU tests (ampere)", want: true},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(jobNameMatches(tc.listed, tc.name), tc.want), "%q for %q", tc.listed, tc.name)
	}
}

// gpuAndOther is this attempt's GPU job, waiting for the runner, and another
// job of the same attempt whose runs-on also names the runner's label and
// that the runner took.
func gpuAndOther(name string) []*github.WorkflowJob {
	jobs := queuedGPUJob()
	other := &github.WorkflowJob{ID: github.Int64(55), RunID: github.Int64(runID), RunAttempt: github.Int64(1), Name: github.String(name),
		Status: github.String("in_progress"), Labels: []string{testLabel}, RunnerName: github.String(testLabel), StartedAt: stamp(70)}
	return append(jobs, other)
}

// The runner is the GPU job's and only its (issue 28 point 6): a job of the
// same run attempt other than the GPU job, found on the runner, took the paid
// pod, which goes at once with that job named; without the GPU job's name the
// watch took such a job for the GPU job and billed to the setup deadline.
func TestRunAnotherJobOfTheAttemptOnTheRunner(t *testing.T) {
	tests := []struct {
		name        string
		gpuJob      string
		jobs        func(since time.Duration) ([]*github.WorkflowJob, error)
		wantOutcome Outcome
		wantReason  string
		wantJournal string
	}{
		{
			name: "a Lint job took the runner while the GPU job waits",
			jobs: func(time.Duration) ([]*github.WorkflowJob, error) { return gpuAndOther("Lint"), nil },
			// At the first poll (the watch begins 15 s after the pod's start).
			wantOutcome: OutcomeRunnerTaken, wantReason: `runner taken by job 55 "Lint" of this run attempt on runner ` + testLabel,
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
		},
		{
			name: "a Lint job took the runner later",
			jobs: func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 4*time.Minute {
					return queuedGPUJob(), nil
				}
				return gpuAndOther("Lint"), nil
			},
			wantOutcome: OutcomeRunnerTaken, wantReason: `runner taken by job 55 "Lint" of this run attempt`,
			wantJournal: "+4m15s DELETE pod0watched001\n+4m15s GET run 9100\n+4m15s CANCEL run 9100",
		},
		{
			name:        "the GPU job is named otherwise than gpu-job-name says: named, with the fix",
			gpuJob:      "Tests on the GPU",
			jobs:        func(time.Duration) ([]*github.WorkflowJob, error) { return job("in_progress", ""), nil },
			wantOutcome: OutcomeRunnerTaken, wantReason: `only the GPU job "Tests on the GPU" may run on the pod's runner (no other job may use its label; if "GPU tests" is the GPU job, pass that name as gpu-job-name)`,
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
		},
		{
			name: "the GPU job of a called workflow is the GPU job",
			jobs: func(since time.Duration) ([]*github.WorkflowJob, error) {
				jobs := job("completed", "completed")
				if since < 5*time.Minute {
					jobs = job("in_progress", "in_progress")
				}
				jobs[1].Name = github.String("gpu / GPU tests")
				return jobs, nil
			},
			wantOutcome: OutcomeJobFinished, wantReason: "GPU job finished (failure)",
			wantJournal: "+5m15s DELETE pod0watched001",
		},
		{
			name: "the GPU job skipped (a job it needs failed) ends the pod at once, not at the setup deadline",
			jobs: func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 3*time.Minute {
					return queuedGPUJob(), nil
				}
				jobs := queuedGPUJob()
				jobs[1].Status, jobs[1].Conclusion, jobs[1].Labels, jobs[1].Steps = github.String("completed"), github.String("skipped"), nil, nil
				return jobs, nil
			},
			wantOutcome: OutcomeNoTests, wantReason: `GPU job ended (skipped) before its test step "Run GPU tests" started`,
			wantJournal: "+3m15s DELETE pod0watched001",
		},
		{
			name: "another job that waits for the label is not the GPU job, and never disarms the setup deadline",
			jobs: func(time.Duration) ([]*github.WorkflowJob, error) {
				jobs := queuedGPUJob()
				jobs[1].Name = github.String("Lint")
				return jobs, nil
			},
			wantOutcome: OutcomeSetupExpired,
			wantReason:  `setup budget of 15m0s expired before the GPU job "GPU tests" started its test step "Run GPU tests"; no job of that name ever waited for runner ` + testLabel,
			wantJournal: "+16m0s DELETE pod0watched001\n+16m0s GET run 9100\n+16m0s CANCEL run 9100",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.req.GPUJob = tc.gpuJob
			h.gh.jobs = tc.jobs
			res, err := h.run()
			assert.Equal(t, h.j.String(), tc.wantJournal, "log:\n%s", strings.Join(h.logs, "\n"))
			assert.Equal(t, res.Outcome, tc.wantOutcome)
			assert.Check(t, is.Contains(res.Reason, tc.wantReason))
			assert.Check(t, res.Deleted)
			if tc.wantOutcome == OutcomeRunnerTaken {
				assert.Check(t, errors.Is(err, ErrRunnerTaken), "%v", err)
				assert.Check(t, is.ErrorContains(err, tc.wantReason))
				assert.Check(t, !res.TestsStarted, "another job's steps never disarm anything")
			}
		})
	}
}
