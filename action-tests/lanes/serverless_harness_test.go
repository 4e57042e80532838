package lanes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

var slsBuild struct {
	once           sync.Once
	worker, libDir string
	err            error
}

// slsArtifacts builds the Go worker and the CUDA driver stand-in once.
func slsArtifacts(t *testing.T) (worker, libDir string) {
	t.Helper()
	slsBuild.once.Do(func() {
		slsBuild.worker = filepath.Join(harness.BinDir(), "serverless-worker")
		cmd := exec.Command("go", "build", "-o", slsBuild.worker, "./pkg/cmd/serverless-worker")
		cmd.Dir, cmd.Env = harness.RepoRoot, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			slsBuild.err = errors.New("build serverless-worker: " + err.Error() + "\n" + string(out))
			return
		}
		slsBuild.libDir = filepath.Join(harness.BinDir(), "cuda-lib")
		if err := os.MkdirAll(slsBuild.libDir, 0o755); err != nil {
			slsBuild.err = err
			return
		}
		_, slsBuild.err = smoketest.BuildStandInDriver(slsBuild.libDir)
	})
	if errors.Is(slsBuild.err, smoketest.ErrNoCompiler) {
		t.Skipf("skipping: %v", slsBuild.err)
	}
	assert.NilError(t, slsBuild.err)
	return slsBuild.worker, slsBuild.libDir
}

// processWorker runs the real Go worker for each job in a private directory
// against the CUDA driver stand-in, as the pinned handler would in the image.
type processWorker struct {
	bin, libDir, root string
	driver            smoketest.DriverConfig
	started           chan struct{} // closed (once) when a job starts
	once              sync.Once
}

func (w *processWorker) Run(ctx context.Context, job runpodsim.WorkerJob) runpodsim.WorkerResult {
	if w.started != nil {
		w.once.Do(func() { close(w.started) })
	}
	dir, err := os.MkdirTemp(w.root, "job-")
	if err != nil {
		return runpodsim.WorkerResult{Error: err.Error()}
	}
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(in, job.Input, 0o600); err != nil {
		return runpodsim.WorkerResult{Error: err.Error()}
	}
	cmd := exec.CommandContext(ctx, w.bin, "--input", in, "--output", out)
	cmd.Dir = dir
	// The stand-in driver names the card the simulator placed the worker on.
	driver := w.driver
	if driver.DeviceName == "" {
		driver.DeviceName = job.GPUType
	}
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LD_LIBRARY_PATH=" + w.libDir}, driver.Env()...)
	for k, v := range job.Env { // the container's environment: public values only
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return runpodsim.WorkerResult{Error: "handler: worker failed: " + err.Error() + ": " + string(msg)}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return runpodsim.WorkerResult{Error: "handler: " + err.Error()}
	}
	var o struct{ Error string }
	_ = json.Unmarshal(data, &o)
	return runpodsim.WorkerResult{Output: data, Error: o.Error}
}

// slsCloud is a simulated cloud with the job host and a consumer workspace
// whose sources are the payload.
type slsCloud struct {
	*simulated
	jobURL string
	worker *processWorker
}

const slsWorkerSHA = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"

func startServerless(t *testing.T, faults runpodsim.ServerlessFaults, driver smoketest.DriverConfig, worker runpodsim.JobWorker) *slsCloud {
	t.Helper()
	return startServerlessWith(t, slsOptions{faults: faults, driver: driver, worker: worker})
}

// slsOptions configure a simulated cloud for the Serverless lane.
type slsOptions struct {
	faults runpodsim.ServerlessFaults
	api    runpodsim.Faults // management and job-host faults by route
	driver smoketest.DriverConfig
	worker runpodsim.JobWorker // nil: the real Go worker on the driver stand-in
	market *runpodsim.Market
	place  func(eligible []string) string
}

func startServerlessWith(t *testing.T, o slsOptions) *slsCloud {
	t.Helper()
	s := &slsCloud{}
	worker := o.worker
	if worker == nil {
		bin, lib := slsArtifacts(t)
		s.worker = &processWorker{bin: bin, libDir: lib, root: t.TempDir(), driver: o.driver, started: make(chan struct{})}
		worker = s.worker
	}
	c, err := cloud.Start(cloud.Options{Clock: simclock.Real{}, Market: o.market, Faults: o.api, RunPodOptions: []runpodsim.Option{
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: worker, ColdStart: 200 * time.Millisecond, Faults: o.faults, Placement: o.place})}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	jobs := httptest.NewServer(c.RunPod.JobHost())
	t.Cleanup(jobs.Close)
	ws := t.TempDir()
	for name, body := range map[string]string{
		"src/kernel.cu":   "__global__ void k() {}\n",
		"tests/run.sh":    "echo running GPU tests\n",
		"pyproject.toml":  "[project]\nname = \"gpu-project\"\n",
		".env":            "SECRET=never-sent\n",
		".git/HEAD":       "ref: refs/heads/main\n",
		"README.md":       "# gpu project\n",
		"tests/helper.py": "print('ok')\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	s.simulated = &simulated{&harness.Simulated{Cloud: c, Workspace: ws, RunID: 9300}}
	s.jobURL = jobs.URL
	return s
}

// payloadSHA is what prepare computes for the workspace: the approval a reviewer gives.
func (s *slsCloud) payloadSHA(t *testing.T) string {
	t.Helper()
	p, err := serverless.BuildPayload(s.Workspace, jobwire.DefaultPayloadLimits)
	if err != nil {
		return slsWorkerSHA // a payload that cannot be built is refused before approval matters
	}
	return p.SHA256
}

func (s *slsCloud) step(t *testing.T, testCommand string) harness.Step {
	env := s.RunnerEnv()
	env["RUNNER_TEMP"] = t.TempDir()
	return harness.Step{Action: "serverless", Workspace: s.Workspace, Env: env, Inputs: map[string]string{
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": s.RunPodURL, "runpod-job-url": s.jobURL,
		"execute": "true", "approved-payload-sha256": s.payloadSHA(t), "test-command": testCommand,
		"worker-url": "https://github.com/org/runpod-gpu/releases/download/v1/serverless-worker", "worker-sha256": slsWorkerSHA,
		"poll-seconds": "1", "output-dir": "out", "github-token": cloud.GitHubToken, "ledger-branch": "main",
	}}
}

func (s *slsCloud) cleanupStep(t *testing.T) harness.Step {
	st := s.step(t, "")
	st.Inputs = map[string]string{"runpod-api-key": cloud.RunPodKey, "runpod-api-url": s.RunPodURL, "runpod-job-url": s.jobURL, "mode": "cleanup"}
	return st
}

// nothingLeft checks that every template and endpoint is deleted and no worker bills.
func (s *slsCloud) nothingLeft(t *testing.T) {
	t.Helper()
	for _, r := range s.RunPod.ServerlessResources() {
		assert.Check(t, r.Deleted, "%s %s (%s) was left behind", r.Kind, r.ID, r.Name)
		for k, v := range r.Env {
			assert.Check(t, !strings.Contains(v, cloud.RunPodKey), "the API key reached %s env %s", r.Kind, k)
		}
	}
	assert.Check(t, s.RunPod.ServerlessBill().LiveWorkers == 0, "a worker still bills")
}

func (s *slsCloud) receipt(t *testing.T) *serverless.Receipt {
	t.Helper()
	r, err := serverless.LoadReceipt(filepath.Join(s.Workspace, ".runpod-gpu/serverless/receipt.json"))
	assert.NilError(t, err)
	return r
}
