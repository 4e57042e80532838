package watchdog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

const runnerID = int64(4242)

func runnerRecord(busy bool) *github.Runner {
	return &github.Runner{ID: github.Int64(runnerID), Name: github.String(testLabel), Status: github.String("online"), Busy: github.Bool(busy),
		Labels: []*github.RunnerLabels{{Name: github.String(testLabel)}}}
}

// A runner busy with a job that is not this attempt's GPU job is another
// job holding the paid GPU: the pod goes at the first poll that sees it, the
// taker is named, the registration is removed and the run is cancelled.
func TestRunnerTakenByAForeignJob(t *testing.T) {
	tests := []struct {
		name        string
		ourJob      func(since time.Duration) ([]*github.WorkflowJob, error)
		busyFrom    time.Duration
		wantJournal string
		wantOutcome Outcome
		wantReason  string
		wantErrIs   error
	}{
		{
			name:        "foreign job on the runner while the GPU job waits: deleted at the first poll that sees it",
			ourJob:      func(time.Duration) ([]*github.WorkflowJob, error) { return queuedGPUJob(), nil },
			busyFrom:    3 * time.Minute,
			wantJournal: "+3m15s DELETE pod0watched001\n+3m15s GET run 9100\n+3m15s CANCEL run 9100",
			wantOutcome: OutcomeRunnerTaken, wantReason: `runner taken by job 77 of run 9200 (attempt 1, workflow "fork-pr", event pull_request)`,
			wantErrIs: ErrRunnerTaken,
		},
		{
			name: "busy with this attempt's own GPU job: nothing is taken",
			ourJob: func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 5*time.Minute {
					return job("in_progress", "in_progress"), nil
				}
				return job("completed", "completed"), nil
			},
			busyFrom:    0,
			wantJournal: "+5m15s DELETE pod0watched001",
			wantOutcome: OutcomeJobFinished, wantReason: "GPU job finished (failure)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.jobs = tc.ourJob
			h.gh.runner = func(since time.Duration) (*github.Runner, error) { return runnerRecord(since >= tc.busyFrom), nil }
			h.gh.inProgress = []*github.WorkflowRun{
				{ID: github.Int64(runID), RunAttempt: github.Int(1), Name: github.String("gpu-lane")},
				{ID: github.Int64(9200), RunAttempt: github.Int(1), Name: github.String("fork-pr"), Event: github.String("pull_request")},
			}
			h.gh.foreignJobs = map[int64][]*github.WorkflowJob{9200: {{ID: github.Int64(77), Name: github.String("grab"),
				Status: github.String("in_progress"), RunnerName: github.String(testLabel)}}}
			res, err := h.run()
			assert.Equal(t, h.j.String(), tc.wantJournal, "log:\n%s", strings.Join(h.logs, "\n"))
			assert.Equal(t, res.Outcome, tc.wantOutcome)
			assert.Equal(t, res.Reason, tc.wantReason)
			if tc.wantErrIs == nil {
				assert.NilError(t, err)
			} else {
				assert.Check(t, errors.Is(err, tc.wantErrIs), "%v", err)
				assert.Check(t, is.ErrorContains(err, tc.wantReason))
			}
			assert.DeepEqual(t, h.gh.removed, []int64{runnerID})
			assert.Check(t, res.RunnerRemoved)
		})
	}
}

// The runner's registration goes whenever the pod does or the job ends,
// whichever comes first, on every path of the watch.
func TestRunnerRegistrationRemovedOnEveryEnd(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(h *harness)
		wantOutcome Outcome
	}{
		{name: "job finished", wantOutcome: OutcomeJobFinished, setup: func(h *harness) {
			h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("completed", "completed"), nil }
		}},
		{name: "job ended before its tests", wantOutcome: OutcomeNoTests, setup: func(h *harness) {
			h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("completed", ""), nil }
		}},
		{name: "setup deadline", wantOutcome: OutcomeSetupExpired, setup: func(h *harness) {
			h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return queuedGPUJob(), nil }
		}},
		{name: "pull request closed", wantOutcome: OutcomeObsolete, setup: func(h *harness) {
			h.gh.pr = func(time.Duration) (*github.PullRequest, error) {
				pr := openPR(headSHA)
				pr.State = github.String("closed")
				return pr, nil
			}
		}},
		{name: "pod already deleted before the watch", wantOutcome: OutcomePodGone, setup: func(h *harness) {
			h.pods.record.Status = runpod.PodTerminated
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.runner = func(time.Duration) (*github.Runner, error) { return runnerRecord(false), nil }
			tc.setup(h)
			res, _ := h.run()
			assert.Equal(t, res.Outcome, tc.wantOutcome)
			assert.DeepEqual(t, h.gh.removed, []int64{runnerID})
			assert.Check(t, res.RunnerRemoved)
			assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), "runner "+testLabel+": registration removed"))
		})
	}
}

// Without a credential that reads runners the watch goes on; it only warns.
func TestRunnerUnreadableOnlyWarns(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("completed", "completed"), nil }
	h.gh.runner = func(time.Duration) (*github.Runner, error) {
		return nil, errors.New("403 Resource not accessible by integration")
	}
	res, err := h.run()
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeJobFinished)
	assert.Check(t, !res.RunnerRemoved)
	assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), "could not look up its registration to remove it"))
}

// failingRuns answers the in-progress runs listing with an error.
type failingRuns struct{ *fakeGitHub }

func (failingRuns) ListWorkflowRuns(context.Context, string, ghapi.ListRunsFilter, int) ([]*github.WorkflowRun, error) {
	return nil, errors.New("503 Service Unavailable")
}

// timedRuns records how long the in-progress runs listing had to answer.
type timedRuns struct {
	*fakeGitHub
	left *time.Duration
}

func (f timedRuns) ListWorkflowRuns(ctx context.Context, workflow string, filter ghapi.ListRunsFilter, pages int) ([]*github.WorkflowRun, error) {
	if dl, ok := ctx.Deadline(); ok {
		*f.left = time.Until(dl)
	}
	return f.fakeGitHub.ListWorkflowRuns(ctx, workflow, filter, pages)
}

// The search for the job that took the runner reads at most 20 in-progress
// runs (this attempt's own counts, and is skipped), skips a run whose jobs
// cannot be read, and leaves the first reason when it finds nothing.
func TestRunFindTakerBounds(t *testing.T) {
	const unnamed = "runner runpod-gpu-9100-1-c1 is busy with a job that is not run 9100 attempt 1's GPU job"
	for _, tc := range []struct {
		name       string
		unreadable int // runs between ours and the taker whose jobs cannot be read
		listFails  bool
		wantReason string
		wantLog    string
	}{
		{name: "taker is the 20th run", unreadable: 18,
			wantReason: `runner taken by job 77 of run 9200 (attempt 1, workflow "fork-pr", event pull_request)`},
		{name: "taker is the 21st run: not searched", unreadable: 19, wantReason: unnamed},
		{name: "listing fails", listFails: true, wantReason: unnamed,
			wantLog: "the job that took runner runpod-gpu-9100-1-c1 could not be looked up: 503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return queuedGPUJob(), nil }
			h.gh.runner = func(time.Duration) (*github.Runner, error) { return runnerRecord(true), nil }
			h.gh.inProgress = []*github.WorkflowRun{{ID: github.Int64(runID), RunAttempt: github.Int(1)}}
			for i := range tc.unreadable {
				h.gh.inProgress = append(h.gh.inProgress, &github.WorkflowRun{ID: github.Int64(int64(5000 + i)), RunAttempt: github.Int(1)})
			}
			h.gh.inProgress = append(h.gh.inProgress, &github.WorkflowRun{ID: github.Int64(9200), RunAttempt: github.Int(1),
				Name: github.String("fork-pr"), Event: github.String("pull_request")})
			h.gh.foreignJobs = map[int64][]*github.WorkflowJob{9200: {{ID: github.Int64(77), RunnerName: github.String(testLabel)}}}
			var left time.Duration
			var gh GitHub = timedRuns{h.gh, &left}
			if tc.listFails {
				gh = failingRuns{h.gh}
			}
			policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
			deps := Deps{Pods: h.pods, GitHub: gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep,
				Logf: func(format string, args ...any) { h.logs = append(h.logs, fmt.Sprintf(format, args...)) }}

			res, err := Run(context.Background(), deps, h.req)

			assert.Check(t, errors.Is(err, ErrRunnerTaken))
			assert.Equal(t, res.Outcome, OutcomeRunnerTaken)
			assert.Equal(t, res.Reason, tc.wantReason)
			if tc.wantLog != "" {
				assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), tc.wantLog))
				return
			}
			// The search is best effort within two request timeouts (2 × 15 s).
			assert.Check(t, left <= 30*time.Second && left > 29*time.Second, "the listing had %s", left)
		})
	}
}

// attemptJobs answers the jobs of one other attempt of the watched run.
type attemptJobs struct {
	*fakeGitHub
	attempt int
	jobs    []*github.WorkflowJob
}

func (f attemptJobs) ListAttemptJobs(ctx context.Context, run int64, attempt int) ([]*github.WorkflowJob, error) {
	if run == runID && attempt == f.attempt {
		return f.jobs, nil
	}
	return f.fakeGitHub.ListAttemptJobs(ctx, run, attempt)
}

// Only this very attempt is skipped in the search: a newer attempt of the
// same run whose job ran on the runner is named as the taker.
func TestRunFindTakerSearchesOtherAttemptsOfTheRun(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return queuedGPUJob(), nil }
	h.gh.runner = func(time.Duration) (*github.Runner, error) { return runnerRecord(true), nil }
	h.gh.inProgress = []*github.WorkflowRun{
		{ID: github.Int64(runID), RunAttempt: github.Int(1)},
		{ID: github.Int64(runID), RunAttempt: github.Int(2), Name: github.String("gpu-lane"), Event: github.String("pull_request")},
	}
	gh := attemptJobs{fakeGitHub: h.gh, attempt: 2, jobs: []*github.WorkflowJob{{ID: github.Int64(78), RunnerName: github.String(testLabel)}}}
	policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))

	res, err := Run(context.Background(), Deps{Pods: h.pods, GitHub: gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep}, h.req)

	assert.Check(t, errors.Is(err, ErrRunnerTaken))
	assert.Equal(t, res.Reason, `runner taken by job 78 of run 9100 (attempt 2, workflow "gpu-lane", event pull_request)`)
}
