package watchdog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// testsRunning is the GPU job on the runner with its tests running until
// `until` (since epoch), then completed with the test step's conclusion.
func testsRunning(until time.Duration, conclusion string) func(time.Duration) ([]*github.WorkflowJob, error) {
	return func(since time.Duration) ([]*github.WorkflowJob, error) {
		if since < until {
			return job("in_progress", "in_progress"), nil
		}
		jobs := job("completed", "completed")
		jobs[1].Steps[1].Conclusion = github.String(conclusion)
		jobs[1].Conclusion = github.String(conclusion)
		return jobs, nil
	}
}

// Host or code: a pod lost while its GPU job runs (seen on three polls in a
// row) is the host's fault; the watch ends, deletes what is left, removes
// the runner and cancels nothing. A test failure, a test step that passed,
// a normal end (even one the jobs API shows late) or a loss seen once is
// never a host fault.
func TestRunHostFault(t *testing.T) {
	lost := 10 * time.Minute // since epoch; the pod started at +1m
	tests := []struct {
		name     string
		setup    func(h *harness)
		want     Outcome
		wantKind string
		// wantJournal lists the fakes' calls that change something.
		wantJournal string
	}{
		{
			name: "the runtime is lost mid-tests: confirmed over the next polls",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(time.Hour, "success") // GitHub has not noticed yet
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Runtime = nil
					}
					return nil
				}
			},
			want: OutcomeHostFault, wantKind: lanetiers.FaultRuntimeLost, wantJournal: "+11m15s DELETE pod0watched001",
		},
		{
			name: "the pod vanished",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(time.Hour, "success")
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						return fmt.Errorf("get pod: 404: %w", runpod.ErrNotFound)
					}
					return nil
				}
			},
			want: OutcomeHostFault, wantKind: lanetiers.FaultVanished, wantJournal: "+11m15s DELETE pod0watched001",
		},
		{
			name: "the container stopped",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(time.Hour, "success")
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Status, p.Runtime = runpod.PodExited, nil
					}
					return nil
				}
			},
			want: OutcomeHostFault, wantKind: lanetiers.FaultExited, wantJournal: "+11m15s DELETE pod0watched001",
		},
		{
			name: "the runner went offline mid-job",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(time.Hour, "success")
				h.gh.runner = func(since time.Duration) (*github.Runner, error) {
					status := "online"
					if since >= lost {
						status = "offline"
					}
					return &github.Runner{ID: github.Int64(77), Name: github.String(testLabel), Status: github.String(status), Busy: github.Bool(true)}, nil
				}
			},
			want: OutcomeHostFault, wantKind: lanetiers.FaultRunnerOffline, wantJournal: "+11m15s DELETE pod0watched001",
		},
		{
			name: "a loss seen once is not a fault",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(20*time.Minute, "success")
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost && since < lost+30*time.Second {
						p.Runtime = nil
					}
					return nil
				}
			},
			want: OutcomeJobFinished, wantJournal: "+20m15s DELETE pod0watched001",
		},
		{
			name: "a normal end: the container stops as the job completes",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(lost+20*time.Second, "success")
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Status, p.Runtime = runpod.PodExited, nil
					}
					return nil
				}
			},
			want: OutcomeJobFinished, wantJournal: "+10m45s DELETE pod0watched001",
		},
		{
			name: "the tests failed first: never a host fault",
			setup: func(h *harness) {
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					jobs := job("in_progress", "completed") // the results upload still runs
					jobs[1].Steps[1].Conclusion = github.String("failure")
					if since >= 30*time.Minute {
						jobs = job("completed", "completed")
						jobs[1].Steps[1].Conclusion = github.String("failure")
					}
					return jobs, nil
				}
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						return fmt.Errorf("get pod: 404: %w", runpod.ErrNotFound)
					}
					return nil
				}
			},
			want: OutcomeJobFinished, wantJournal: "+30m15s DELETE pod0watched001",
		},
		{
			name: "the tests passed, then the pod went: noted, never a host fault",
			setup: func(h *harness) {
				h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
					jobs := job("in_progress", "completed") // the post steps still run
					jobs[1].Steps[1].Conclusion = github.String("success")
					if since >= 30*time.Minute {
						jobs = job("completed", "completed")
						jobs[1].Steps[1].Conclusion, jobs[1].Conclusion = github.String("success"), github.String("success")
					}
					return jobs, nil
				}
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Status, p.Runtime = runpod.PodExited, nil
					}
					return nil
				}
			},
			want: OutcomeJobFinished, wantJournal: "+30m15s DELETE pod0watched001",
		},
		{
			// A JIT runner exits its container as its job ends; the jobs API
			// still shows the job (and its test step) running for two polls.
			name: "a normal end the jobs API shows two polls late",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(lost+70*time.Second, "success")
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Status, p.Runtime = runpod.PodExited, nil
					}
					return nil
				}
			},
			want: OutcomeJobFinished, wantJournal: "+11m15s DELETE pod0watched001",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.req.Tier, h.req.Rerun = "ampere", true
			tc.setup(h)
			res, err := h.run()
			logs := strings.Join(h.logs, "\n")
			assert.NilError(t, err, logs)
			assert.Check(t, is.Equal(res.Outcome, tc.want), logs)
			assert.Check(t, is.Equal(h.j.String(), tc.wantJournal), logs)
			checkCancel(t, res.Cancel, "") // a host fault cancels nothing: the lane re-runs the job
			if tc.wantKind == "" {
				assert.Check(t, res.HostFault == nil)
				return
			}
			assert.Assert(t, res.HostFault != nil)
			want := lanetiers.HostFault{Tier: "ampere", PodID: podID, GPUType: "NVIDIA GeForce RTX 4090", DataCenter: "US-TX-3", Kind: tc.wantKind,
				Detail: res.HostFault.Detail, Rerun: true}
			assert.Check(t, is.DeepEqual(*res.HostFault, want))
			assert.Check(t, res.Deleted)
			assert.Check(t, res.Report == nil, "the lost pod's cost is cleanup's to report")
			assert.Check(t, is.Contains(res.Reason, "host fault: pod pod0watched001 on NVIDIA GeForce RTX 4090 in US-TX-3 "+tc.wantKind))
			assert.Check(t, is.Contains(logs, "confirming over the next 2 polls"))
		})
	}
}

// A lane's pods are watched each beside its own GPU job: the matrix job
// GitHub lists as "<gpu-job-name> (<tier>)", with the tier on every log line.
func TestRunPodsWatchesEachPodBesideItsTiersJob(t *testing.T) {
	h := newHarness(t)
	h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
		jobs, _ := testsRunning(5*time.Minute, "success")(since)
		jobs[1].Name = github.String("GPU tests (ampere)")
		return jobs, nil
	}
	policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
	deps := Deps{Pods: h.pods, GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep,
		Logf: func(format string, args ...any) { h.logs = append(h.logs, fmt.Sprintf(format, args...)) }}
	h.req.PodID, h.req.RunnerLabel = "", ""
	pods := []lanetiers.Pod{{Tier: "ampere", PodID: podID, RunnerLabel: testLabel, GPUType: "NVIDIA GeForce RTX 4090", PricePerHour: "0.69"}}
	watches := RunPods(context.Background(), deps, h.req, pods)
	assert.Assert(t, is.Len(watches, 1))
	assert.NilError(t, watches[0].Err)
	assert.Check(t, is.Equal(watches[0].Result.Outcome, OutcomeJobFinished), strings.Join(h.logs, "\n"))
	assert.Check(t, is.Contains(strings.Join(h.logs, "\n"), `[ampere] GPU job "GPU tests (ampere)" found`))

	out, faults := LaneOutputs(append(watches, PodWatch{Pod: lanetiers.Pod{Tier: "ada"},
		Result: Result{Outcome: OutcomeHostFault, Deleted: true, TestsStarted: true, HostFault: &lanetiers.HostFault{Tier: "ada", PodID: "p2", Kind: lanetiers.FaultVanished}}}))
	assert.Check(t, is.Equal(out.Outcome, Outcome("ampere=job-finished,ada=host-fault")))
	assert.Check(t, out.PodDeleted && out.TestsStarted && !out.RunCancelled)
	assert.Check(t, is.Len(faults, 1))
	summary, err := LaneSummary(watches)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(summary, "### tier ampere"))
	none, faults := LaneOutputs(nil)
	assert.Check(t, is.Equal(none.Outcome, OutcomeNoPod))
	assert.Check(t, faults != nil && len(faults) == 0, "[] rather than null")
}
