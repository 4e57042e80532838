package watchdog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/lanetiers"
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

// Host or code: a pod lost while its GPU job runs (seen on two polls in a
// row) is the host's fault; the watch ends, deletes what is left, removes
// the runner and cancels nothing. A test failure, a normal end or a loss
// seen once is never a host fault.
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
			name: "the runtime is lost mid-tests: confirmed at the next poll",
			setup: func(h *harness) {
				h.gh.jobs = testsRunning(time.Hour, "success") // GitHub has not noticed yet
				h.pods.state = func(since time.Duration, p *runpod.Pod) error {
					if since >= lost {
						p.Runtime = nil
					}
					return nil
				}
			},
			want: OutcomeHostFault, wantKind: lanetiers.FaultRuntimeLost, wantJournal: "+10m45s DELETE pod0watched001",
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
			want: OutcomeHostFault, wantKind: lanetiers.FaultVanished, wantJournal: "+10m45s DELETE pod0watched001",
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
			want: OutcomeHostFault, wantKind: lanetiers.FaultExited, wantJournal: "+10m45s DELETE pod0watched001",
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
			want: OutcomeHostFault, wantKind: lanetiers.FaultRunnerOffline, wantJournal: "+10m45s DELETE pod0watched001",
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
			assert.Check(t, is.Contains(logs, "confirming at the next poll"))
		})
	}
}
