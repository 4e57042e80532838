package cleanup

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/startup"
)

const maintainerKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm1QqZ6pN3wV0b1v8bJcE1bWJm4W8jB9N7mR6Gd1tXb"

// failingGPUJob is a GPU job for runner label whose test step fails.
func failingGPUJob(label string) githubsim.JobSpec {
	job := gpuJob(label, 10, 60, 1)
	job.Steps[1].Conclusion = "failure"
	return job
}

// launchKept creates a keep-failed lane's pod as provision does; enterable
// adds what provision adds with debug-ssh-public-key (openDebugSSH): 22/tcp,
// the maintainer's key and the debug-shell wrapper.
func (s *scene) launchKept(t *testing.T, enterable bool) string {
	t.Helper()
	tags := s.tags(1)
	tags.KeepFailed = true
	env := tags.Env()
	jit, err := s.gh.GenerateJITConfig(context.Background(), ghapi.JITRequest{Name: label(1), Labels: []string{label(1)}, RunnerGroupID: 1})
	assert.NilError(t, err)
	env[startup.JITConfigEnv] = jit.EncodedConfig
	req := runpod.CreatePodRequest{Name: tags.PodName(), Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: gpuID, Count: 1, MinCudaVersion: "12.6"},
		Env: env, Cmd: startup.Cmd("/opt/runpod-gpu/start.sh")}
	if enterable {
		req.Ports, req.Env[startup.DebugKeyEnv], req.Cmd = []string{startup.SSHPort}, maintainerKey, startup.WithDebugShell(req.Cmd[0])
	}
	pod, err := s.rp.CreatePod(context.Background(), req)
	assert.NilError(t, err)
	return pod.ID
}

// A keep-failed lane's pod made enterable with the maintainer's key whose GPU
// tests failed is kept, reachable over SSH, and the summary says how to
// enter it, what it bills and when the reaper deletes it; a passing job's
// pod, or a failing one without the key, is deleted as always.
func TestKeptPodIsReachableAfterItsTestsFailed(t *testing.T) {
	tests := []struct {
		name      string
		job       func(string) githubsim.JobSpec
		enterable bool
		wantKept  bool
	}{
		{name: "tests failed, maintainer key: kept", job: failingGPUJob, enterable: true, wantKept: true},
		{name: "tests passed, maintainer key: deleted", job: func(l string) githubsim.JobSpec { return gpuJob(l, 10, 60, 1) }, enterable: true},
		{name: "tests failed, no key: deleted", job: failingGPUJob},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t, runpodsim.Faults{}, tc.job(label(1)))
			id := s.launchKept(t, tc.enterable)
			s.clock.Advance(4 * time.Minute) // boot, proof, the job's 71 s
			res, err := Run(context.Background(), s.deps(), s.request(id))
			assert.NilError(t, err)
			summary := res.Summary(nil)
			if !tc.wantKept {
				assert.Check(t, is.DeepEqual(res.Deleted(), []string{id}))
				assert.Check(t, is.Len(res.KeptForSSH, 0))
				assert.Check(t, !strings.Contains(summary, "runpod-gpu ssh"), summary)
				return
			}
			assert.Check(t, is.Len(res.Deleted(), 0))
			assert.Check(t, is.DeepEqual(res.Kept, []string{id}))
			assert.Check(t, is.Equal(s.status(t, id), runpodsim.StatusRunning))
			pod, err := s.rp.GetPod(context.Background(), id)
			assert.NilError(t, err)
			_, ok := pod.DirectSSH()
			assert.Check(t, ok, "the kept pod has an SSH endpoint: %+v", pod.Runtime)
			assert.Check(t, is.Equal(res.Outputs().KeptPodIDs, id))
			assert.Assert(t, is.Len(res.KeptForSSH, 1))
			k := res.KeptForSSH[0]
			assert.Check(t, k.PerHour > 0)
			assert.Check(t, is.Contains(summary, "enter pod `"+id+"` with `runpod-gpu ssh "+id+"`"))
			assert.Check(t, is.Contains(summary, "up to $"))
			assert.Check(t, is.Contains(summary, k.CreatedAt.Add(24*time.Hour).UTC().Format(time.RFC3339)))
			assert.Check(t, is.Contains(summary, "runpod-gpu down "+id+" --force"))
			// Its report still names the failed GPU job.
			assert.Check(t, is.Equal(res.Report.Conclusion(), cost.ConclusionFailure))
		})
	}
}

// A kept pod whose price its record did not give is said to bill at an
// unknown price, never at $0.00, which would read as free.
func TestKeptSummaryOfAPodOfUnknownPrice(t *testing.T) {
	got := keptSummary([]KeptPod{{ID: "p2"}})
	assert.Check(t, is.Contains(got, "`runpod-gpu ssh p2`"))
	assert.Check(t, is.Contains(got, "Its price is unknown; it bills until deleted."))
	assert.Check(t, !strings.Contains(got, "It bills $"), got)
	assert.Check(t, is.Contains(got, "24 h after its create"), "no create time: the cap counted from it")
}
