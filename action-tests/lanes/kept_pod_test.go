package lanes

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/startup"
)

// keptPodMaintainerKey is the maintainer's key a repository secret holds;
// keptPodEventKey a key a pull request's author wrote into the event.
const (
	keptPodMaintainerKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm1QqZ6pN3wV0b1v8bJcE1bWJm4W8jB9N7mR6Gd1tXb"
	keptPodEventKey      = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMalloryMalloryMalloryMalloryMalloryMallory1"
)

// keptPodCaller is the workflows page's caller of gpu-lane.yml, with its
// commented debugging lines taken in when optIn: keep-failed-pods and the
// secret RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY, exactly as a maintainer writes them.
func keptPodCaller(t *testing.T, optIn bool) string {
	t.Helper()
	caller := readmeCallerNaming(t, "/.github/workflows/gpu-lane.yml@")
	if !optIn {
		return caller
	}
	for _, line := range []string{"keep-failed-pods: true", "RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY: ${{ secrets.RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY }}"} {
		re := regexp.MustCompile(`(?m)^(\s*)# ` + regexp.QuoteMeta(line))
		assert.Assert(t, re.MatchString(caller), "the caller has no commented %q to take in:\n%s", line, caller)
		caller = re.ReplaceAllString(caller, "${1}"+line)
	}
	return caller
}

// playWithSecrets runs the lane's caller as podLane.play does, with the
// repository's secrets and a dispatch event that carries eventKey in its
// inputs (text the dispatcher, not a maintainer's secret, chose).
func (l *podLane) playWithSecrets(t *testing.T, secrets map[string]string, eventKey string) (map[string]harness.JobRun, map[string]runpod.Pod) {
	t.Helper()
	// What RunPod answers for each pod as its GPU job starts: a deleted pod's
	// record is gone afterwards, and its ports with it.
	seen := map[string]runpod.Pod{}
	api := runpod.New(l.RunPodURL, cloud.RunPodKey)
	job := func(id string, wj *harness.WorkflowJob, ctx harness.Contexts) (string, map[string]string) {
		if runsOn, _ := wj.RunsOn.(string); strings.Contains(runsOn, "runner-label") {
			for _, p := range l.RunPod.Pods() {
				rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if pod, err := api.GetPod(rctx, p.ID); err == nil {
					seen[p.ID] = *pod
				}
				cancel()
			}
		}
		return l.job(id, wj, ctx)
	}
	p := &harness.Play{
		Github: map[string]any{
			"event_name": "workflow_dispatch", "token": cloud.GitHubToken, "repository": cloud.Repository,
			"run_id": float64(l.runID), "run_attempt": "1", "job": "gpu",
			"event": map[string]any{"repository": map[string]any{"default_branch": "main"},
				"inputs": map[string]any{"pr-number": harness.Itoa(l.pr), "sha": "", "ssh-key": eventKey}},
		},
		Vars:   map[string]any{"RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY": eventKey},
		Action: l.action(t),
		Job:    job,
		Load:   harness.LoadWorkflow,
	}
	_, runs, err := p.Run(l.caller, map[string]any{"pr-number": harness.Itoa(l.pr), "sha": ""}, secrets)
	assert.NilError(t, err)
	return runs, seen
}

// keptPodRecord is the cleanup job's retention record as the shipped
// workflow writes it: whether its upload step runs, and the artifact's name,
// from cleanup's outputs.
func keptPodRecord(t *testing.T, cleanupOutputs map[string]string, runID int64) (bool, string) {
	t.Helper()
	lane := gpuLane(t)
	upload := lane.step(t, "cleanup", "Keep the kept pods' record")
	assert.Check(t, strings.HasPrefix(upload.Uses, "actions/upload-artifact@"), upload.Uses)
	outputs := map[string]any{}
	for k, v := range cleanupOutputs {
		outputs[k] = v
	}
	ctx := map[string]any{
		"github": map[string]any{"run_id": float64(runID), "run_attempt": "1"},
		"steps":  map[string]any{"cleanup": map[string]any{"outputs": outputs, "outcome": "success", "conclusion": "success"}},
	}
	if !evalCondition(t, upload.If, ctx) {
		return false, ""
	}
	return true, stepInputs(t, upload, ctx)["name"]
}

// The shipped lane (gpu-lane.yml from the workflows page's caller, played on
// the simulated cloud) keeps the pod whose GPU tests failed, enterable with
// the maintainer's key only, and records it for the reaper, when the
// maintainer opted in with keep-failed-pods and the secret; without the
// opt-in the pod is deleted and never had a port. A key in the event (or a
// repository variable the event could name) is never the one let in.
func TestKeptPodIsReachableThroughTheShippedLane(t *testing.T) {
	tests := []struct {
		name     string
		optIn    bool
		secret   string // RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY in the repository's secrets
		wantKept bool
	}{
		{name: "opted in, tests failed: kept, enterable with the maintainer's key", optIn: true, secret: keptPodMaintainerKey, wantKept: true},
		{name: "secret set, keep-failed-pods not: deleted, no port", secret: keptPodMaintainerKey},
		{name: "keep-failed-pods without the secret: deleted, no port, the event's key unused", optIn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, hostFaultConfig)
			l := newPodLane(t, s, s.openPR(t), keptPodCaller(t, tc.optIn))
			l.stepsFor = failingTests("GPU tests")
			secrets := map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey}
			if tc.secret != "" {
				secrets["RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY"] = tc.secret
			}
			runs, seen := l.playWithSecrets(t, secrets, keptPodEventKey)
			assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))

			pods := l.RunPod.Pods()
			assert.Assert(t, is.Len(pods, 1))
			id := pods[0].ID
			during, ok := seen[id]
			assert.Assert(t, ok, "pod %s was never read while its GPU job ran", id)
			info, err := l.RunPod.Pod(id)
			assert.NilError(t, err)
			assert.Check(t, info.Env[startup.DebugKeyEnv] != keptPodEventKey, "the event's key reached the pod")
			cleanup := l.result(t, "cleanup")
			uploads, name := keptPodRecord(t, cleanup.Outputs, l.runID)

			if !tc.wantKept {
				assert.Check(t, is.Equal(info.Status, runpodsim.StatusTerminated))
				assert.Check(t, is.Len(during.Ports, 0), "the pod published %v", during.Ports)
				assert.Check(t, is.Equal(info.Env[startup.DebugKeyEnv], ""))
				assert.Check(t, is.Equal(cleanup.Outputs["kept-pod-ids"], ""))
				assert.Check(t, !uploads, "a retention record %q for a deleted pod", name)
				assert.Check(t, !strings.Contains(cleanup.Stdout, "runpod-gpu ssh"), cleanup.Stdout)
				return
			}
			// Kept, running, 22/tcp with the maintainer's key and nothing else.
			assert.Check(t, is.Equal(info.Status, runpodsim.StatusRunning))
			assert.Check(t, is.DeepEqual(during.Ports, []string{startup.SSHPort}))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			pod, err := runpod.New(s.RunPodURL, cloud.RunPodKey).GetPod(ctx, id)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(pod.Ports, []string{startup.SSHPort}))
			assert.Check(t, is.Equal(info.Env[startup.DebugKeyEnv], keptPodMaintainerKey))
			endpoint, ok := pod.DirectSSH()
			assert.Check(t, ok, "no SSH endpoint: %+v", pod.Runtime)
			assert.Check(t, is.Equal(cleanup.Outputs["kept-pod-ids"], id))
			summary := cleanup.Summary
			assert.Check(t, is.Contains(summary, "runpod-gpu ssh "+id), summary)

			// The cleanup job uploads the record the reaper honours, naming this run and pod.
			assert.Assert(t, uploads, "the cleanup job uploads no retention record")
			retention, err := ownership.ParseRetentionName(name)
			assert.NilError(t, err, name)
			assert.Check(t, retention.Retains(l.runID, 1, id), "%q does not retain %s", name, id)

			// runpod-gpu ssh reaches the pod's published 22/tcp as root.
			w := keptPodCLI(t, s.RunPodURL)
			code, stdout, stderr := w.run(t, "ssh", id, "--", "nvidia-smi")
			assert.Assert(t, is.Equal(code, 0), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			args, err := os.ReadFile(filepath.Join(w.home, "ssh-args"))
			assert.NilError(t, err)
			argv := strings.Fields(string(args))
			assert.Check(t, is.Contains(argv, strconv.Itoa(endpoint.Port)), "ssh argv %v, endpoint %+v", argv, endpoint)
			assert.Check(t, is.Contains(argv, "root@"+endpoint.Host), "ssh argv %v, endpoint %+v", argv, endpoint)
			assert.Check(t, is.Equal(argv[len(argv)-1], "nvidia-smi"))
		})
	}
}

// keptPodCLI is a developer's home for the runpod-gpu binary against the
// lane's simulated RunPod: the lane's API key in the config file and a fake
// ssh on PATH that records its arguments.
func keptPodCLI(t *testing.T, url string) *cliWorld {
	t.Helper()
	w := &cliWorld{url: url, home: t.TempDir(), bin: t.TempDir()}
	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(w.home, ".runpod", "config.toml"), []byte("[runpod]\napi_key = \""+cloud.RunPodKey+"\"\n"), 0o600))
	fakeSSH := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$HOME/ssh-args\"\n"
	assert.NilError(t, os.WriteFile(filepath.Join(w.bin, "ssh"), []byte(fakeSSH), 0o755))
	return w
}

// Every shipped workflow passes provision's debug-ssh-public-key from the
// secret alone, and only with keep-failed-pods: nothing of the event, no
// variable, no input a caller could fill from the pull request.
func TestKeptPodIsReachableNeverWithAKeyFromTheEvent(t *testing.T) {
	want := regexp.MustCompile(`^\$\{\{ (inputs\.keep-failed-pods|fromJSON\(inputs\.lane\)\.inputs\.keep-failed-pods) && secrets\.RUNPOD_GPU_DEBUG_SSH_PUBLIC_KEY \|\| '' \}\}$`)
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot, ".github", "workflows", "gpu-lane*.yml"))
	assert.NilError(t, err)
	provisions := 0
	for _, file := range files {
		wf, err := harness.LoadWorkflow(filepath.Base(file))
		assert.NilError(t, err)
		for id, job := range wf.Jobs {
			for _, st := range job.Steps {
				if !strings.HasSuffix(st.Uses, "/actions/provision@v1") {
					continue
				}
				provisions++
				key := st.With["debug-ssh-public-key"]
				assert.Check(t, want.MatchString(key), "%s job %s: debug-ssh-public-key is %q", filepath.Base(file), id, key)
			}
		}
	}
	assert.Check(t, provisions >= 3, "found %d provision steps (gpu-lane.yml's two, the provision part's)", provisions)
}
