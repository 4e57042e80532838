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
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

var movedSHA = strings.Repeat("b", 40)

func TestRun(t *testing.T) {
	setupOnly := func(time.Duration) ([]*github.WorkflowJob, error) { return job("in_progress", ""), nil }
	tests := []struct {
		name  string
		setup func(h *harness)
		// wantJournal lists the fakes' calls that change something, at their
		// virtual time since epoch (the pod started at +1m0s).
		wantJournal string
		wantOutcome Outcome
		wantCancel  string // "requested", "skipped: <substring>", "error: <substring>" or "" (none wanted)
		wantErrIs   []error
		wantTests   bool
		// wantPaid is the interrupted pod's reported paid seconds; "" when no report.
		wantPaid string
	}{
		{
			name: "no progress: deleted at the setup deadline, then cancelled",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("queued", ""), nil }
			},
			wantJournal: "+16m0s DELETE pod0watched001\n+16m0s GET run 9100\n+16m0s CANCEL run 9100",
			wantOutcome: OutcomeSetupExpired, wantCancel: "requested", wantErrIs: []error{ErrDeadline}, wantPaid: "900",
		},
		{
			name: "tests started: setup deadline disarmed, lifetime still enforced",
			setup: func(h *harness) {
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					if since < 600*time.Second {
						return job("in_progress", ""), nil
					}
					return job("in_progress", "in_progress"), nil
				}
			},
			wantJournal: "+1h1m0s DELETE pod0watched001\n+1h1m0s GET run 9100\n+1h1m0s CANCEL run 9100",
			wantOutcome: OutcomeLifetimeExpired, wantCancel: "requested", wantErrIs: []error{ErrDeadline}, wantTests: true, wantPaid: "3600",
		},
		{
			name: "tests start in the last poll before the setup deadline: the last look disarms it",
			setup: func(h *harness) {
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					switch {
					case since < 959*time.Second: // one second before the setup deadline
						return job("in_progress", ""), nil
					case since < 1200*time.Second:
						return job("in_progress", "in_progress"), nil
					}
					return job("completed", "completed"), nil
				}
			},
			wantJournal: "+20m0s DELETE pod0watched001",
			wantOutcome: OutcomeJobFinished, wantTests: true,
		},
		{
			name: "progress API down: the deadline is not extended",
			setup: func(h *harness) {
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					if since < 100*time.Second {
						return job("in_progress", ""), nil
					}
					return nil, errors.New("list jobs: 503 Service Unavailable")
				}
			},
			wantJournal: "+16m0s DELETE pod0watched001\n+16m0s GET run 9100\n+16m0s CANCEL run 9100",
			wantOutcome: OutcomeSetupExpired, wantCancel: "requested", wantErrIs: []error{ErrDeadline}, wantPaid: "900",
		},
		{
			name: "head moved: deleted, confirmed, then cancelled",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(since time.Duration) (*github.PullRequest, error) {
					if since < 300*time.Second {
						return openPR(headSHA), nil
					}
					return openPR(movedSHA), nil
				}
			},
			wantJournal: "+5m15s DELETE pod0watched001\n+5m15s GET run 9100\n+5m15s CANCEL run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "requested", wantPaid: "255",
		},
		{
			name: "closed pull request: deleted, then cancelled",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) {
					pr := openPR(headSHA)
					pr.State = github.String("closed")
					return pr, nil
				}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "requested", wantPaid: "15",
		},
		{
			name: "unknown pull request state is never obsolete",
			setup: func(h *harness) {
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return nil, errors.New("get pull request #42: 502") }
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					switch {
					case since < 200*time.Second:
						return job("in_progress", ""), nil
					case since < 400*time.Second:
						return job("in_progress", "in_progress"), nil
					}
					finished := job("completed", "completed")
					finished[1].Conclusion = github.String("success")
					return finished, nil
				}
			},
			wantJournal: "+6m45s DELETE pod0watched001",
			wantOutcome: OutcomeJobFinished, wantTests: true,
		},
		{
			name: "GPU job ends before its tests: deleted, not cancelled",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("completed", ""), nil }
			},
			wantJournal: "+1m15s DELETE pod0watched001",
			wantOutcome: OutcomeNoTests,
		},
		{
			name:        "pod record unreadable: deleted and failed",
			setup:       func(h *harness) { h.pods.getErr = fmt.Errorf("get pod %s: %w", podID, runpod.ErrServer) },
			wantJournal: "+1m15s DELETE pod0watched001",
			wantOutcome: OutcomeStartUnknown, wantErrIs: []error{ErrStartUnreadable}, wantPaid: "unknown",
		},
		{
			name:        "pod without a provider start: deleted and failed",
			setup:       func(h *harness) { h.pods.record.StartedAt = wire.Time{} },
			wantJournal: "+1m15s DELETE pod0watched001",
			wantOutcome: OutcomeStartUnknown, wantErrIs: []error{ErrStartUnreadable}, wantPaid: "unknown",
		},
		{
			name:        "another pod's record: deleted and failed",
			setup:       func(h *harness) { h.pods.record.ID = "pod0other00001" },
			wantJournal: "+1m15s DELETE pod0watched001",
			wantOutcome: OutcomeStartUnknown, wantErrIs: []error{ErrStartUnreadable}, wantPaid: "unknown",
		},
		{
			name: "another pod's terminated record does not mean this one is gone",
			setup: func(h *harness) {
				h.pods.record.ID, h.pods.record.Status = "pod0other00001", runpod.PodTerminated
			},
			wantJournal: "+1m15s DELETE pod0watched001",
			wantOutcome: OutcomeStartUnknown, wantErrIs: []error{ErrStartUnreadable}, wantPaid: "unknown",
		},
		{
			// The label is this attempt's own and unguessable: another run's job
			// on it took the paid runner, so the pod goes at the first poll.
			name: "a job of another run on the runner took it: deleted at once",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) {
					jobs := job("in_progress", "in_progress")
					jobs[1].RunID = github.Int64(runID + 1)
					return jobs, nil
				}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
			wantOutcome: OutcomeRunnerTaken, wantCancel: "requested", wantErrIs: []error{ErrRunnerTaken}, wantPaid: "15",
		},
		{
			name: "a job of another attempt on the runner took it: it neither disarms nor ends anything, the pod goes at once",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) {
					jobs := job("completed", "completed")
					jobs[1].RunID, jobs[1].RunAttempt = github.Int64(runID), github.Int64(2)
					return jobs, nil
				}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
			wantOutcome: OutcomeRunnerTaken, wantCancel: "requested", wantErrIs: []error{ErrRunnerTaken}, wantPaid: "15",
		},
		{
			name: "a job of another attempt queued for the label but not on the runner is an unusable answer",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) {
					jobs := job("queued", "")
					jobs[1].RunnerName = nil
					jobs[1].RunID, jobs[1].RunAttempt = github.Int64(runID), github.Int64(2)
					return jobs, nil
				}
			},
			wantJournal: "+16m0s DELETE pod0watched001\n+16m0s GET run 9100\n+16m0s CANCEL run 9100",
			wantOutcome: OutcomeSetupExpired, wantCancel: "requested", wantErrIs: []error{ErrDeadline}, wantPaid: "900",
		},
		{
			name: "a run answer for another run is not cancelled on",
			setup: func(h *harness) {
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				other := workflowRun(1, "in_progress", "")
				other.ID = github.Int64(runID + 1)
				h.gh.runs = []*github.WorkflowRun{other}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "error: the answer describes run 9101", wantErrIs: []error{ErrCancel, ghapi.ErrUnusableAnswer}, wantPaid: "15",
		},
		{
			name: "a run answer without a status is not cancelled on",
			setup: func(h *harness) {
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				h.gh.runs = []*github.WorkflowRun{workflowRun(1, "", "")}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "error: status \"\"", wantErrIs: []error{ErrCancel, ghapi.ErrUnusableAnswer}, wantPaid: "15",
		},
		{
			name:        "pod already gone: nothing to do",
			setup:       func(h *harness) { h.pods.getErr = fmt.Errorf("get pod %s: %w", podID, runpod.ErrNotFound) },
			wantOutcome: OutcomePodGone,
		},
		{
			name: "a newer attempt is never cancelled",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				h.gh.runs = []*github.WorkflowRun{workflowRun(2, "in_progress", "")}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "skipped: a newer attempt is never cancelled", wantPaid: "15",
		},
		{
			name: "a completed run is not cancelled",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.runs = []*github.WorkflowRun{workflowRun(1, "completed", "failure")}
			},
			wantJournal: "+16m0s DELETE pod0watched001\n+16m0s GET run 9100",
			wantOutcome: OutcomeSetupExpired, wantCancel: "skipped: already completed (failure)", wantErrIs: []error{ErrDeadline}, wantPaid: "900",
		},
		{
			name: "409 on cancel re-reads the run",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				h.gh.cancel = fmt.Errorf("cancel workflow run %d: 409 Conflict: %w", runID, ghapi.ErrRunCompleted)
				h.gh.runs = []*github.WorkflowRun{workflowRun(1, "in_progress", ""), workflowRun(1, "completed", "cancelled")}
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "skipped: already completed (cancelled)", wantPaid: "15",
		},
		{
			name: "409 on cancel while the run still runs fails visibly",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				h.gh.cancel = fmt.Errorf("cancel workflow run %d: 409 Conflict: %w", runID, ghapi.ErrRunCompleted)
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100\n+1m15s CANCEL run 9100\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "error: re-read shows attempt 1 in_progress", wantErrIs: []error{ErrCancel}, wantPaid: "15",
		},
		{
			name: "unreadable run is not cancelled blind",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
				h.gh.runs = nil
			},
			wantJournal: "+1m15s DELETE pod0watched001\n+1m15s GET run 9100",
			wantOutcome: OutcomeObsolete, wantCancel: "error: reading run 9100 before cancelling it failed", wantErrIs: []error{ErrCancel}, wantPaid: "15",
		},
		{
			name: "unconfirmed deletion: the run is not cancelled",
			setup: func(h *harness) {
				h.gh.jobs = setupOnly
				h.pods.deleteErr = fmt.Errorf("delete pod %s: 403: %w", podID, runpod.ErrForbidden)
			},
			wantJournal: "+16m0s DELETE pod0watched001",
			wantOutcome: OutcomeSetupExpired, wantCancel: "skipped: deletion is unconfirmed", wantErrIs: []error{ErrDeadline, lifecycle.ErrUnconfirmed},
			wantPaid: "unknown",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.setup(h)
			res, err := h.run()
			assert.Equal(t, h.j.String(), tc.wantJournal, "log:\n%s", strings.Join(h.logs, "\n"))
			assert.Equal(t, res.Outcome, tc.wantOutcome)
			assert.Equal(t, res.TestsStarted, tc.wantTests)
			if len(tc.wantErrIs) == 0 {
				assert.NilError(t, err)
			}
			for _, target := range tc.wantErrIs {
				assert.Check(t, errors.Is(err, target), "%v is not %v", err, target)
			}
			checkCancel(t, res.Cancel, tc.wantCancel)
			if tc.wantPaid == "" {
				assert.Check(t, res.Report == nil)
				return
			}
			assert.Assert(t, res.Report != nil, "an interrupted pod's cost is reported")
			assert.Equal(t, res.Report.Window.Seconds().String(), tc.wantPaid)
			assert.NilError(t, res.Report.Validate())
			assert.Check(t, is.Contains(res.Summary(err), res.Report.Markdown()))
		})
	}
}

func checkCancel(t *testing.T, got Cancel, want string) {
	t.Helper()
	switch kind, detail, _ := strings.Cut(want, ": "); kind {
	case "":
		assert.Check(t, !got.Requested && got.Skipped == "" && got.Err == nil, "no cancel wanted: %+v", got)
	case "requested":
		assert.Check(t, got.Requested && got.Err == nil, "%+v", got)
	case "skipped":
		assert.Check(t, !got.Requested && got.Err == nil)
		assert.Check(t, is.Contains(got.Skipped, detail))
	case "error":
		assert.Check(t, !got.Requested)
		assert.Check(t, is.ErrorContains(got.Err, detail))
	}
}

func TestRunReportsTheInterruptedPodsCost(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("in_progress", ""), nil }
	res, err := h.run()
	assert.Check(t, errors.Is(err, ErrDeadline))
	var deadline *DeadlineError
	assert.Assert(t, errors.As(err, &deadline))
	assert.Equal(t, deadline.Which, "setup")
	assert.Equal(t, deadline.Deadline, afterStart(900*time.Second))

	r := res.Report
	assert.Equal(t, r.Price.String(), "$0.69/h (v2 cost before deletion)")
	assert.Equal(t, r.GPU, "NVIDIA GeForce RTX 4090")
	assert.Equal(t, r.Window.Start, wire.KnownTime(afterStart(0)))
	assert.Equal(t, res.DeletedAt, afterStart(900*time.Second))
	assert.Equal(t, r.Dollars().String(), "$0.1725")
	// The breakdown comes from the job as last observed: still in setup.
	assert.Check(t, len(r.Stages) > 0)
	assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), "ended this pod early (setup-expired)"))
	assert.DeepEqual(t, res.Outputs(), Outputs{Outcome: "setup-expired", PodDeleted: true, RunCancelled: true, TestsStarted: false})
	golden.Assert(t, res.Summary(err), "summary-setup-expired.golden")
}

func TestRunPriceFallsBackToTheSnapshot(t *testing.T) {
	h := newHarness(t)
	h.pods.record.Cost = 0 // a record read after the pod stopped shows no price
	h.req.Snapshot.Price = mustSnapshotPrice(t, "0.74")
	h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
	res, err := h.run()
	assert.NilError(t, err)
	assert.Equal(t, res.Report.Price.String(), "$0.74/h (provision snapshot)")
}

func TestRunWithoutPod(t *testing.T) {
	h := newHarness(t)
	h.req.PodID = ""
	res, err := h.run()
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeNoPod)
	assert.Equal(t, h.j.String(), "")
	assert.Check(t, is.Contains(res.Summary(nil), "nothing to watch"))
}

func TestRunCancelledWatch(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) {
		if polls++; polls == 3 {
			cancel()
		}
		return job("in_progress", ""), nil
	}
	policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
	res, err := Run(ctx, Deps{Pods: h.pods, GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep}, h.req)
	assert.Check(t, errors.Is(err, context.Canceled))
	assert.Equal(t, res.Outcome, OutcomeInterrupted)
	assert.Equal(t, h.j.String(), "", "cleanup, not a cancelled watch, deletes the pod")
}

func TestRunRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Request)
		wantErr string
	}{
		{name: "no run", mutate: func(r *Request) { r.RunID = 0 }, wantErr: "run 0 attempt 1: want positive numbers"},
		{name: "setup beyond lifetime", mutate: func(r *Request) { r.SetupBudget = 2 * time.Hour }, wantErr: "setup budget 2h0m0s exceeds the lifetime 1h0m0s"},
		{name: "negative pull request", mutate: func(r *Request) { r.PRNumber = -1 }, wantErr: "pull request number -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.mutate(&h.req)
			_, err := h.run()
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, ErrInvalidRequest))
			assert.Equal(t, h.j.String(), "")
		})
	}
}

func TestRunLogsTheCostBeforeRequestingCancellation(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
		want  string
	}{
		{
			name: "setup expired",
			setup: func(h *harness) {
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("queued", ""), nil }
			},
			want: "+16m0s DELETE pod0watched001\n+16m0s LOG cost\n+16m0s GET run 9100\n+16m0s CANCEL run 9100",
		},
		{
			name: "obsolete",
			setup: func(h *harness) {
				h.gh.pr = func(time.Duration) (*github.PullRequest, error) { return openPR(movedSHA), nil }
			},
			want: "+1m15s DELETE pod0watched001\n+1m15s LOG cost\n+1m15s GET run 9100\n+1m15s CANCEL run 9100",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.setup(h)
			policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
			var costLine string
			logf := func(format string, args ...any) {
				if line := fmt.Sprintf(format, args...); strings.HasPrefix(line, cost.LinePrefix+"cost ") {
					costLine = line
					h.j.add("LOG cost")
				}
			}
			res, _ := Run(context.Background(), Deps{Pods: h.pods, GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep, Logf: logf}, h.req)
			assert.Equal(t, h.j.String(), tc.want)
			assert.Assert(t, res.Report != nil)
			assert.Equal(t, costLine, cost.CostLine(*res.Report).Format(), "the logged line is the reported cost")
		})
	}
}

func TestRunUnusablePullRequestAnswerIsNeverObsolete(t *testing.T) {
	closedAnswer := func(mutate func(*github.PullRequest)) func(time.Duration) (*github.PullRequest, error) {
		return func(time.Duration) (*github.PullRequest, error) {
			pr := openPR(movedSHA) // would be obsolete if it were trusted
			pr.State = github.String("closed")
			mutate(pr)
			return pr, nil
		}
	}
	tests := []struct {
		name string
		pr   func(time.Duration) (*github.PullRequest, error)
	}{
		{name: "empty answer", pr: func(time.Duration) (*github.PullRequest, error) { return &github.PullRequest{}, nil }},
		{name: "no answer", pr: func(time.Duration) (*github.PullRequest, error) { return nil, nil }},
		{name: "no state", pr: closedAnswer(func(pr *github.PullRequest) { pr.State = nil })},
		{name: "unknown state", pr: closedAnswer(func(pr *github.PullRequest) { pr.State = github.String("merged") })},
		{name: "no head", pr: closedAnswer(func(pr *github.PullRequest) { pr.Head = nil })},
		{name: "empty head sha", pr: closedAnswer(func(pr *github.PullRequest) { pr.Head.SHA = github.String("") })},
		{name: "another pull request", pr: closedAnswer(func(pr *github.PullRequest) { pr.Number = github.Int(43) })},
		{name: "no number", pr: closedAnswer(func(pr *github.PullRequest) { pr.Number = nil })},
		{name: "ghapi's unusable answer", pr: func(time.Duration) (*github.PullRequest, error) {
			return nil, fmt.Errorf("ghapi: get pull request #42: state \"\"; want open or closed: %w", ghapi.ErrUnusableAnswer)
		}},
		{name: "not found", pr: func(time.Duration) (*github.PullRequest, error) {
			return nil, fmt.Errorf("get pull request #42: 404: %w", ghapi.ErrNotFound)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.pr = tc.pr
			h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 400*time.Second {
					return job("in_progress", "in_progress"), nil
				}
				return job("completed", "completed"), nil
			}
			res, err := h.run()
			assert.NilError(t, err)
			assert.Equal(t, res.Outcome, OutcomeJobFinished, "log:\n%s", strings.Join(h.logs, "\n"))
			assert.Equal(t, h.j.String(), "+6m45s DELETE pod0watched001", "deleted when the job ended, never cancelled")
			assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), "pull request #42 state unknown"))
		})
	}
}
