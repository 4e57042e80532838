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
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The tests in this file pin what mutation testing (issue 21) found
// untested: the request's exact validity edges, the default clock, the
// search for the job that took the runner, and the cancel's failure texts.

// The edges of a valid request: attempt 0 is rejected like run 0, a setup
// budget equal to the lifetime and pull request 0 (none) are accepted.
func TestRunRequestEdges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deps    func(*Deps)
		mutate  func(*Request)
		wantErr string // exact; "" when valid
	}{
		{name: "attempt 0", mutate: func(r *Request) { r.Attempt = 0 },
			wantErr: "invalid watchdog request: run 9100 attempt 0: want positive numbers"},
		{name: "negative run", mutate: func(r *Request) { r.RunID = -1 },
			wantErr: "invalid watchdog request: run -1 attempt 1: want positive numbers"},
		{name: "setup budget a nanosecond over the lifetime", mutate: func(r *Request) { r.SetupBudget = r.Lifetime + 1 },
			wantErr: "invalid watchdog request: setup budget 1h0m0.000000001s exceeds the lifetime 1h0m0s"},
		{name: "pull request -1", mutate: func(r *Request) { r.PRNumber = -1 },
			wantErr: "invalid watchdog request: pull request number -1: want 0 (none) or more"},
		{name: "no pods client", deps: func(d *Deps) { d.Pods = nil },
			wantErr: "invalid watchdog request: Pods, GitHub and Policy are required"},
		{name: "no GitHub client", deps: func(d *Deps) { d.GitHub = nil },
			wantErr: "invalid watchdog request: Pods, GitHub and Policy are required"},
		{name: "no policy", deps: func(d *Deps) { d.Policy = nil },
			wantErr: "invalid watchdog request: Pods, GitHub and Policy are required"},
		{name: "setup budget equal to the lifetime", mutate: func(r *Request) { r.SetupBudget = r.Lifetime }},
		{name: "pull request 0: no obsolescence check", mutate: func(r *Request) { r.PRNumber = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// The job ends at the third poll, so the pull request would be read before.
			h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 130*time.Second {
					return job("in_progress", "in_progress"), nil
				}
				return job("completed", "completed"), nil
			}
			prReads := 0
			h.gh.pr = func(time.Duration) (*github.PullRequest, error) { prReads++; return openPR(headSHA), nil }
			if tc.mutate != nil {
				tc.mutate(&h.req)
			}
			policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
			deps := Deps{Pods: h.pods, GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep}
			if tc.deps != nil {
				tc.deps(&deps)
			}
			res, err := Run(context.Background(), deps, h.req)
			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrInvalidRequest))
				assert.Equal(t, h.j.String(), "", "nothing deleted or cancelled")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, res.Outcome, OutcomeJobFinished)
			if h.req.PRNumber == 0 {
				assert.Equal(t, prReads, 0, "no pull request to read")
			} else {
				assert.Equal(t, prReads, 2, "read in each poll before the job ended")
			}
		})
	}
}

// Zero bounds take the documented defaults: 15 min setup, 1 h lifetime,
// 30 s polls. A pod whose job never starts goes at exactly start + 15 min.
func TestRunZeroBoundsTakeTheDefaults(t *testing.T) {
	h := newHarness(t)
	h.req.SetupBudget, h.req.Lifetime, h.req.Poll, h.req.RequestTimeout = 0, 0, 0, 0
	polls := 0
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { polls++; return queuedGPUJob(), nil }

	res, err := h.run()

	var deadline *DeadlineError
	assert.Assert(t, errors.As(err, &deadline), "%v", err)
	assert.Equal(t, deadline.Budget, DefaultSetupBudget)
	assert.Equal(t, res.DeletedAt, afterStart(DefaultSetupBudget))
	assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), "(15m0s), lifetime deadline 2030-01-02T04:01:00Z (1h0m0s); polling every 30s"))
	// +75 s to +960 s, every 30 s, plus the last look at the deadline.
	assert.Equal(t, polls, 31)
}

// Without Deps.Clock and Deps.Sleep the watch runs on the policy's clock and
// a real sleep; a job that has already finished needs neither to sleep.
func TestRunDefaultsToThePolicysClock(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("completed", "completed"), nil }
	policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))

	res, err := Run(context.Background(), Deps{Pods: h.pods, GitHub: h.gh, Policy: policy}, h.req)

	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeJobFinished)
	assert.Equal(t, res.DeletedAt, epoch.Add(75*time.Second), "confirmed on the policy's (virtual) clock")
}

// Once a failed pull request read succeeds again the log says so, once; the
// failure itself is logged once per streak.
func TestRunLogsPullRequestStreaks(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
		if since < 200*time.Second {
			return job("in_progress", "in_progress"), nil
		}
		return job("completed", "completed"), nil
	}
	h.gh.pr = func(since time.Duration) (*github.PullRequest, error) {
		if since < 130*time.Second {
			return nil, errors.New("502 Bad Gateway")
		}
		return openPR(headSHA), nil
	}

	_, err := h.run()

	assert.NilError(t, err)
	var prLines []string
	for _, l := range h.logs {
		if strings.HasPrefix(l, "pull request #42") {
			prLines = append(prLines, l)
		}
	}
	assert.DeepEqual(t, prLines, []string{
		"pull request #42 state unknown (502 Bad Gateway): not treated as obsolete",
		"pull request #42 state readable again",
	})
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

// A cancel that cannot rest on a usable run answer fails with both causes.
func TestRunCancelNeedsAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		runs    []*github.WorkflowRun
		cancel  error
		wantErr string
	}{
		{name: "no answer before cancelling", runs: []*github.WorkflowRun{nil},
			wantErr: "workflow run not cancelled: reading run 9100 before cancelling it failed: no answer: unusable answer"},
		{name: "an answer without an attempt", runs: []*github.WorkflowRun{workflowRun(0, "in_progress", "")},
			wantErr: `workflow run not cancelled: reading run 9100 before cancelling it failed: the answer has attempt 0 and status "in_progress"; want both: unusable answer`},
		{name: "409, and no answer to the re-read", runs: []*github.WorkflowRun{workflowRun(1, "in_progress", ""), nil},
			cancel:  fmt.Errorf("409 Conflict: %w", ghapi.ErrRunCompleted),
			wantErr: "workflow run not cancelled: run 9100: 409 Conflict: workflow run already completed\nno answer: unusable answer"},
		{name: "409, and the re-read shows a newer attempt", runs: []*github.WorkflowRun{workflowRun(1, "in_progress", ""), workflowRun(2, "in_progress", "")},
			cancel: fmt.Errorf("409 Conflict: %w", ghapi.ErrRunCompleted)},
		{name: "a refusal other than 409", runs: []*github.WorkflowRun{workflowRun(1, "in_progress", "")},
			cancel:  errors.New("403 Forbidden"),
			wantErr: "workflow run not cancelled: run 9100: 403 Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
			h.gh.runs, h.gh.cancel = tc.runs, tc.cancel

			res, err := h.run()

			assert.Equal(t, res.Outcome, OutcomeObsolete)
			assert.Check(t, !res.Cancel.Requested)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Check(t, is.Equal(res.Cancel.Skipped, "run 9100 is at attempt 2, not this attempt 1: a newer attempt is never cancelled"))
				return
			}
			assert.Check(t, is.Error(res.Cancel.Err, tc.wantErr))
			assert.Check(t, errors.Is(err, ErrCancel))
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

// The summary says what became of the pod and the run in every case: only
// an early end that did not confirm the deletion warns that the pod may bill.
func TestSummaryNamesThePodsAndTheRunsFate(t *testing.T) {
	started := wire.KnownTime(afterStart(0))
	for _, tc := range []struct {
		name   string
		res    Result
		runErr error
		want   []string
	}{
		{name: "pod already gone", res: Result{Outcome: OutcomePodGone, Reason: "pod p1 was already deleted", PodID: "p1"},
			want: []string{"**pod-gone**: pod p1 was already deleted.", "- Pod `p1`: not deleted by the watchdog\n"}},
		{name: "watch interrupted", res: Result{Outcome: OutcomeInterrupted, Reason: "the watch was\ncancelled", PodID: "p1", StartedAt: started},
			want: []string{"**interrupted**: the watch was cancelled.", "- Pod `p1`: not deleted by the watchdog\n",
				"- Provider start: 2030-01-02T03:01:00Z; test step reached: false\n"}},
		{name: "deletion unconfirmed", res: Result{Outcome: OutcomeSetupExpired, PodID: "p1",
			Cancel: Cancel{Skipped: "the pod's deletion is unconfirmed;\ncancelling only follows a confirmed deletion"}},
			runErr: errors.New("deletion of pod p1 unconfirmed"),
			want: []string{"- Pod `p1`: **deletion unconfirmed: it may still be billing**; cleanup retries, or delete it by hand\n",
				"- Workflow run: not cancelled: the pod's deletion is unconfirmed; cancelling only follows a confirmed deletion\n",
				"\n**Watchdog failed:** deletion of pod p1 unconfirmed\n"}},
		{name: "cancel failed", res: Result{Outcome: OutcomeObsolete, PodID: "p1", Deleted: true, DeletedAt: afterStart(time.Minute), TestsStarted: true, StartedAt: started,
			Cancel: Cancel{Err: errors.New("workflow run not cancelled: 403")}},
			want: []string{"- Pod `p1`: deleted, confirmed at 2030-01-02T03:02:00Z\n", "test step reached: true\n",
				"- Workflow run: **cancel failed**: workflow run not cancelled: 403\n"}},
		{name: "cancelled", res: Result{Outcome: OutcomeObsolete, PodID: "p1", Deleted: true, DeletedAt: afterStart(time.Minute), Cancel: Cancel{Requested: true}},
			want: []string{"- Workflow run: cancelled (this attempt only; a newer attempt is never cancelled)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.res.Summary(tc.runErr)
			for _, w := range tc.want {
				assert.Check(t, is.Contains(got, w))
			}
			assert.Check(t, is.Equal(strings.Contains(got, "may still be billing"), tc.name == "deletion unconfirmed"), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Workflow run:"), tc.res.Cancel != (Cancel{})), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Provider start:"), tc.res.StartedAt.Known()), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Watchdog failed"), tc.runErr != nil), got)
		})
	}
}

// nilRecord answers the pod read with neither a record nor an error.
type nilRecord struct{ *fakePods }

func (nilRecord) GetPod(context.Context, string) (*runpod.Pod, error) { return nil, nil }

// An unusable pod record is named in the reason: whose record it was, or none.
func TestRunNamesTheUnusableRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods func(h *harness) lifecycle.PodAPI
		want string
	}{
		{name: "another pod's record", pods: func(h *harness) lifecycle.PodAPI { h.pods.record.ID = "pod0other00001"; return h.pods },
			want: `reading pod pod0watched001 answered the record of pod "pod0other00001": unusable`},
		{name: "no record", pods: func(h *harness) lifecycle.PodAPI { return nilRecord{h.pods} },
			want: "reading pod pod0watched001 answered no record: unusable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
			deps := Deps{Pods: tc.pods(h), GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep}

			res, err := Run(context.Background(), deps, h.req)

			assert.Check(t, errors.Is(err, ErrStartUnreadable))
			assert.Equal(t, res.Outcome, OutcomeStartUnknown)
			assert.Equal(t, res.Reason, tc.want)
			assert.Equal(t, h.j.String(), "+1m15s DELETE pod0watched001")
		})
	}
}

// A jobs read that uses up the whole poll leaves nothing for the pull
// request read: it is not sent with a zero budget (it could only fail, and
// a fake that ignores its context would even answer).
func TestRunNoPullRequestReadWithNothingLeftOfThePoll(t *testing.T) {
	h := newHarness(t)
	h.req.SetupBudget = 3 * time.Minute
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) {
		h.clock.Advance(h.req.Poll) // the read answers just as the next poll is due
		return queuedGPUJob(), nil
	}
	prReads := 0
	h.gh.pr = func(time.Duration) (*github.PullRequest, error) {
		prReads++
		pr := openPR(headSHA)
		pr.State = github.String("closed")
		return pr, nil
	}

	res, _ := h.run()

	assert.Equal(t, res.Outcome, OutcomeSetupExpired)
	assert.Equal(t, prReads, 0)
}

// The interrupted pod's report says which evidence the watch lacked — the
// record, the job — and only that.
func TestRunReportNamesTheMissingEvidence(t *testing.T) {
	const noRecord = "Pod record before deletion unavailable (the pod record could not be read)"
	const noJob = "Stage breakdown unknown: the GPU job was never observed."
	for _, tc := range []struct {
		name       string
		setup      func(h *harness)
		wantAbsent []string
		wantNotes  []string
	}{
		{name: "record and job seen", setup: func(h *harness) {
			h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return queuedGPUJob(), nil }
		}, wantAbsent: []string{noRecord, noJob}},
		{name: "record unreadable, job never read", setup: func(h *harness) {
			h.pods.getErr = fmt.Errorf("503: %w", runpod.ErrServer)
		}, wantNotes: []string{noRecord, noJob}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.setup(h)
			res, _ := h.run()
			assert.Assert(t, res.Report != nil)
			notes := strings.Join(res.Report.Notes, "\n")
			for _, n := range tc.wantNotes {
				assert.Check(t, is.Contains(notes, n))
			}
			for _, n := range tc.wantAbsent {
				assert.Check(t, !strings.Contains(notes, n), notes)
			}
		})
	}
}
