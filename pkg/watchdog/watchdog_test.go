package watchdog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
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
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/startup"
	"github.com/org/runpod-gpu/pkg/wire"
)

var movedSHA = strings.Repeat("b", 40)

// movedMerge is the merge commit after the push to movedSHA; testedTree is
// the tree the lane tests.
var movedMerge, testedTree = strings.Repeat("d", 40), strings.Repeat("7", 40)

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
			name: "a pod that waited 10m for the lane's other tiers: its setup deadline is 10m later, its lifetime is not",
			setup: func(h *harness) {
				h.req.HandOverWait = 10 * time.Minute
				h.gh.jobs = func(time.Duration) ([]*github.WorkflowJob, error) { return job("queued", ""), nil }
			},
			wantJournal: "+26m0s DELETE pod0watched001\n+26m0s GET run 9100\n+26m0s CANCEL run 9100",
			wantOutcome: OutcomeSetupExpired, wantCancel: "requested", wantErrIs: []error{ErrDeadline}, wantPaid: "1500",
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
			// An amended message: the lane tests the same tree the new head has,
			// and the new head's lane follows it.
			name: "head moved to the same merged tree: not obsolete, the job finishes",
			setup: func(h *harness) {
				h.req.TestedTree = testedTree
				h.gh.trees = map[string]string{movedMerge: testedTree}
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					if since < 600*time.Second {
						return job("in_progress", "in_progress"), nil
					}
					return job("completed", "completed"), nil
				}
				h.gh.pr = func(since time.Duration) (*github.PullRequest, error) {
					if since < 300*time.Second {
						return openPR(headSHA), nil
					}
					return movedPR(movedSHA, movedMerge), nil
				}
			},
			wantJournal: "+10m15s DELETE pod0watched001",
			wantOutcome: OutcomeJobFinished, wantTests: true,
		},
		{
			name: "head moved to another tree: obsolete",
			setup: func(h *harness) {
				h.req.TestedTree = testedTree
				h.gh.trees = map[string]string{movedMerge: "8888888888888888888888888888888888888888"}
				h.gh.jobs = setupOnly
				h.gh.pr = func(since time.Duration) (*github.PullRequest, error) {
					if since < 300*time.Second {
						return openPR(headSHA), nil
					}
					return movedPR(movedSHA, movedMerge), nil
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

// simulatedWatch runs the watchdog against the simulated RunPod and GitHub on
// one virtual clock: a pod created the way provision creates it, and a run
// whose GPU job waits for that pod's runner and then follows its steps.
type simulatedWatch struct {
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	deps   Deps
	req    Request
	runID  int64
	podID  string
	pr     int
	policy *reqpolicy.Policy
}

func startSimulatedWatch(t *testing.T, withRunner bool, steps ...githubsim.StepSpec) *simulatedWatch {
	t.Helper()
	return startSimulatedWatchWithJitter(t, 0.5, withRunner, steps...)
}

// startSimulatedWatchWithJitter fixes the GitHub policy's backoff jitter, which
// decides how far a run of failures pushes the shared cooldown.
func startSimulatedWatchWithJitter(t *testing.T, jitter float64, withRunner bool, steps ...githubsim.StepSpec) *simulatedWatch {
	t.Helper()
	ctx := context.Background()
	c, err := cloud.Start(cloud.Options{Start: epoch})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
		Policy: reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return jitter }),
			reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))})
	assert.NilError(t, err)
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy))

	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: headSHA, HeadRef: "feature"})
	assert.NilError(t, err)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: headSHA, PullRequests: []int{pr},
		Jobs: []githubsim.JobSpec{{Name: "GPU tests", Labels: []string{testLabel}, Steps: steps}}})
	assert.NilError(t, err)

	tags := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1, Candidate: 1}
	env := tags.Env()
	if withRunner {
		jit, err := gh.GenerateJITConfig(ctx, ghapi.JITRequest{Name: testLabel, Labels: []string{testLabel}, RunnerGroupID: 1})
		assert.NilError(t, err)
		env[startup.JITConfigEnv] = jit.EncodedConfig
	}
	pod, err := rp.CreatePod(ctx, runpod.CreatePodRequest{Name: tags.PodName(), Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: "NVIDIA RTX A4000", Count: 1, MinCudaVersion: "12.6"}, Env: env})
	assert.NilError(t, err)
	clock.Advance(2 * time.Minute) // booted; the watchdog's hosted job starts

	return &simulatedWatch{cloud: c, clock: clock, runID: runID, podID: pod.ID, pr: pr, policy: rpPolicy,
		deps: Deps{Pods: rp, GitHub: gh, Policy: rpPolicy, Clock: clock, Sleep: clock.Sleep},
		req: Request{PodID: pod.ID, RunID: runID, Attempt: 1, RunnerLabel: testLabel, PRNumber: pr, ExpectedHeadSHA: headSHA,
			SetupBudget: 900 * time.Second, Lifetime: 3600 * time.Second, Poll: 20 * time.Second}}
}

func (s *simulatedWatch) pod(t *testing.T) (status string, started, ended time.Time) {
	t.Helper()
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == s.podID {
			return p.Status, p.StartedAt, p.TerminatedAt
		}
	}
	t.Fatalf("no pod %s", s.podID)
	return "", time.Time{}, time.Time{}
}

func TestSimulatedNoProgressIsDeletedAtTheDeadlineThenCancelled(t *testing.T) {
	// No runner ever takes the GPU job: setup never reaches the tests.
	s := startSimulatedWatch(t, false, githubsim.StepSpec{Name: "Run GPU tests", Duration: time.Minute})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.Check(t, errors.Is(err, ErrDeadline))
	assert.Equal(t, res.Outcome, OutcomeSetupExpired)

	status, started, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	assert.Equal(t, ended, started.Add(900*time.Second), "deleted exactly at the setup deadline")
	cancels := s.cloud.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Equal(t, cancels[0].RunID, s.runID)
	assert.Check(t, !cancels[0].At.Before(ended), "cancelled only after the deletion was confirmed")
}

func TestSimulatedTestsDisarmTheSetupDeadline(t *testing.T) {
	// The job's setup alone outlasts the 900 s budget counted from the pod's
	// start, but its test step starts in time; the job then finishes.
	s := startSimulatedWatch(t, true,
		githubsim.StepSpec{Name: "Set up job", Duration: 10 * time.Minute},
		githubsim.StepSpec{Name: "Run GPU tests", Duration: 20 * time.Minute},
		githubsim.StepSpec{Name: "Complete job", Duration: 30 * time.Second})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeJobFinished)
	assert.Check(t, res.TestsStarted)
	status, started, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	assert.Check(t, ended.Sub(started) > 900*time.Second, "lived past the setup budget once tests ran")
	assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 0), "a finished job's run is not cancelled")
	assert.Check(t, res.Report == nil, "cleanup reports a normally finished pod")
}

func TestSimulatedHeadMovedIsDeletedThenCancelled(t *testing.T) {
	s := startSimulatedWatch(t, true, githubsim.StepSpec{Name: "Set up job", Duration: time.Hour})
	s.clock.AfterFunc(5*time.Minute, func() {
		_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedSHA })
	})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeObsolete)
	assert.Check(t, res.Cancel.Requested)
	status, _, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	cancels := s.cloud.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Check(t, !cancels[0].At.Before(ended))
	attempt, err := s.cloud.GitHub.WorkflowRunAttempt(cloud.Repository, s.runID, 1)
	assert.NilError(t, err)
	assert.Equal(t, attempt.Conclusion, "cancelled")
	bill, err := s.cloud.RunPod.Bill(s.podID)
	assert.NilError(t, err)
	assert.Equal(t, res.Report.Window.Seconds().N, bill.Seconds, "the interrupted pod's reported window is what the provider billed")
}

// prReadsFail makes every pull request read answer 503 for the whole watch.
var prReadsFail = githubsim.Fault{Kind: githubsim.FaultServerError, Status: http.StatusServiceUnavailable, Method: http.MethodGet, Path: "/repos/*/*/pulls/*"}

// Jitters cover the backoff schedules of the GitHub policy: at some of them a
// retried PR read used to leave a cooldown longer than the jobs read's limit.
var jitters = []float64{0, 0.5, 0.9, 1}

func TestSimulatedFailingPullRequestReadsDoNotHideRunningTests(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			// Setup alone outlasts the 900 s budget from the pod's start, but the
			// test step starts in time and runs past the setup deadline.
			s := startSimulatedWatchWithJitter(t, jitter, true,
				githubsim.StepSpec{Name: "Set up job", Duration: 10 * time.Minute},
				githubsim.StepSpec{Name: "Run GPU tests", Duration: 20 * time.Minute},
				githubsim.StepSpec{Name: "Complete job", Duration: 30 * time.Second})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.NilError(t, err)
			assert.Equal(t, res.Outcome, OutcomeJobFinished)
			assert.Check(t, res.TestsStarted)
			_, started, ended := s.pod(t)
			assert.Check(t, ended.Sub(started) > 900*time.Second, "the pod lived on after the tests started; lived %s", ended.Sub(started))
			assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 0))
			assert.Check(t, s.cloud.GitHub.CountRequests(http.MethodGet, "/repos/*/*/pulls/*") > 0, "the PR was read (and failed)")
			checkJobsReadEveryPoll(t, s)
		})
	}
}

func TestSimulatedLifetimeFiresWithinOnePollWhilePullRequestReadsFail(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			s := startSimulatedWatchWithJitter(t, jitter, true,
				githubsim.StepSpec{Name: "Set up job", Duration: 5 * time.Minute},
				githubsim.StepSpec{Name: "Run GPU tests", Duration: 2 * time.Hour})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.Check(t, errors.Is(err, ErrDeadline), "%v", err)
			assert.Equal(t, res.Outcome, OutcomeLifetimeExpired)
			assert.Check(t, res.TestsStarted)
			_, started, ended := s.pod(t)
			lived := ended.Sub(started)
			assert.Check(t, lived >= s.req.Lifetime && lived <= s.req.Lifetime+s.req.Poll,
				"deleted within one poll (%s) of the lifetime deadline; lived %s", s.req.Poll, lived)
		})
	}
}

// checkJobsReadEveryPoll asserts that the GPU job was read at least once per
// poll throughout the watch: no failing read in between held it back.
func checkJobsReadEveryPoll(t *testing.T, s *simulatedWatch) {
	t.Helper()
	var last time.Time
	reads := 0
	for _, r := range s.cloud.GitHub.Requests() {
		if ok, _ := path.Match("/repos/*/*/actions/runs/*/attempts/*/jobs", r.Path); !ok || r.Method != http.MethodGet {
			continue
		}
		if reads++; reads > 1 {
			assert.Check(t, r.At.Sub(last) <= s.req.Poll, "jobs read %d came %s after the previous one; want at most one poll (%s)", reads, r.At.Sub(last), s.req.Poll)
		}
		last = r.At
	}
	assert.Check(t, reads > 1, "the GPU job was read %d times", reads)
}

func TestSimulatedCancelWaitsOutTheCooldownOfFailingReads(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			// The job never reaches its tests and every progress read fails: the
			// retried reads leave a long cooldown when the setup deadline comes.
			s := startSimulatedWatchWithJitter(t, jitter, true, githubsim.StepSpec{Name: "Set up job", Duration: time.Hour})
			s.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: http.StatusServiceUnavailable,
				Method: http.MethodGet, Path: "/repos/*/*/actions/runs/*/attempts/*/jobs"})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.Check(t, errors.Is(err, ErrDeadline), "%v", err)
			assert.Check(t, !errors.Is(err, ErrCancel), "%v", err)
			assert.Equal(t, res.Outcome, OutcomeSetupExpired)
			_, started, ended := s.pod(t)
			assert.Check(t, ended.Sub(started) >= s.req.SetupBudget && ended.Sub(started) <= s.req.SetupBudget+s.req.Poll, "lived %s", ended.Sub(started))
			assert.Check(t, res.Cancel.Requested, "%+v", res.Cancel)
			assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 1))
		})
	}
}
