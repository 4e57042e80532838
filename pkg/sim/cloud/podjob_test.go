package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/startup"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// podWithRunner creates a pod on the simulated RunPod whose runner carries label and
// returns its id once the runner is online (the clock moved through boot and proof).
func podWithRunner(t *testing.T, c *Cloud, clock *simclock.Virtual, label string) string {
	t.Helper()
	ctx := context.Background()
	gh := github.NewClient(nil).WithAuthToken(GitHubToken)
	base, err := url.Parse(c.GitHubURL + "/")
	assert.NilError(t, err)
	gh.BaseURL = base
	jit, _, err := gh.Actions.GenerateRepoJITConfig(ctx, Owner, RepoName, &github.GenerateJITConfigRequest{Name: label, RunnerGroupID: 1, Labels: []string{label}})
	assert.NilError(t, err)
	body, err := json.Marshal(map[string]any{"name": label, "image": "ghcr.io/actions/actions-runner:latest",
		"gpu": map[string]any{"id": "NVIDIA L4", "count": 1, "minCudaVersion": "12.6"}, "env": map[string]string{startup.JITConfigEnv: jit.GetEncodedJITConfig()}})
	assert.NilError(t, err)
	req, err := http.NewRequest(http.MethodPost, c.RunPodURL+"/v2/pods", bytes.NewReader(body))
	assert.NilError(t, err)
	req.Header.Set("Authorization", "Bearer "+RunPodKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	var pod struct{ ID string }
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&pod))
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusCreated, "%+v", pod)
	clock.Advance(2 * time.Minute) // placed, booted, proved: the runner connects
	for _, r := range c.GitHub.Runners() {
		if r.Name == label {
			assert.Assert(t, r.Online, "the pod's runner is online")
			return pod.ID
		}
	}
	t.Fatalf("no runner %s", label)
	return ""
}

// A runner that loses its pod (the pod's runtime is lost: its container and the runner in
// it are gone) fails its job as GitHub does: the running step's processes end with the
// pod, the job stays in progress while GitHub waits for the runner's lock to expire, then
// fails, RunnerLostTimeout after the loss.
func TestWorkflowPlayerFailsTheJobOfALostPod(t *testing.T) {
	const lostAfter = 10 * time.Minute
	m := runpodsim.DefaultMarket()
	m.Hosts = []runpodsim.HostProfile{{ID: "h1", DataCenterID: "US-TX-3", GPUTypeID: "NVIDIA L4", DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: true, VRAMGB: 24}}
	c, err := Start(Options{Market: &m, Faults: runpodsim.Faults{LoseRuntime: runpodsim.Trigger{First: 1}, RuntimeLostAfter: lostAfter}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: Repository, WorkflowPath: Workflow, Event: "workflow_run"})
	assert.NilError(t, err)
	podID := podWithRunner(t, c, clock, "rp-1-1-c1")
	lostAt := c.RunPod.Pods()[0].StartedAt.Add(lostAfter)

	wf, err := workflowplay.ParseWorkflow(`on: push
jobs:
  gpu:
    name: GPU tests
    runs-on: rp-1-1-c1
    steps:
      - name: Run GPU tests
        run: echo $$ > "$RUNNER_TEMP/tests.pid"; echo up > "$RUNNER_TEMP/up"; exec sleep 3600
      - name: After
        if: always()
        run: echo never
`)
	assert.NilError(t, err)
	dir := t.TempDir()
	machine := &workflowplay.Machine{Workspace: filepath.Join(dir, "work"), Temp: filepath.Join(dir, "temp")}
	assert.NilError(t, os.MkdirAll(machine.Temp, 0o755))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(machine.Temp, "up"), 0o600))
	ended := make(chan string, 4)
	machine.Ended = func(_ int, conclusion string) { ended <- conclusion }
	done := make(chan string)
	go func() {
		conclusion, err := c.RunPodJob(context.Background(), PodJob{RunID: runID, Name: "GPU tests", Label: "rp-1-1-c1",
			Job: wf.Jobs["gpu"], Contexts: workflowplay.Contexts{Values: map[string]any{}}, Machine: machine})
		assert.Check(t, err)
		done <- conclusion
	}()
	up, err := os.ReadFile(filepath.Join(machine.Temp, "up")) // the test step's process is running on the pod
	assert.NilError(t, err)
	assert.Equal(t, string(up), "up\n")

	clock.Advance(lostAt.Sub(clock.Now())) // the pod's runtime is lost
	assert.Check(t, is.Equal(<-ended, "cancelled"), "the step's processes went with the pod")
	assert.Check(t, is.Equal(<-ended, "skipped"), "nothing runs on a lost pod, always() neither")
	jobs, err := c.GitHub.Jobs(Repository, runID, 0)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(jobs[0].Status, "in_progress"), "GitHub waits for the runner's lock to expire")
	assert.Check(t, is.Equal(jobs[0].RunnerLostAt, lostAt))
	pod, err := c.RunPod.Pod(podID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(pod.Status, runpodsim.StatusRunning), "the API still shows the pod running, its runtime lost")

	clock.Advance(githubsim.RunnerLostTimeout)
	assert.Check(t, is.Equal(<-done, "failure"))
	jobs, err = c.GitHub.Jobs(Repository, runID, 0)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(jobs[0].Conclusion, "failure"))
	assert.Check(t, is.Equal(jobs[0].CompletedAt, lostAt.Add(githubsim.RunnerLostTimeout)))
}
