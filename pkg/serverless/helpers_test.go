package serverless

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/spend"
)

const (
	simKey    = "rpa_SERVERLESS_LANE_TEST_KEY_0123456789"
	simWorker = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
	simRepo   = "org/gpu-project"
)

// simWorld is the lane on the simulated RunPod (management and job host) on a
// virtual clock: every wait of the lane is the passage of simulated time.
type simWorld struct {
	t     *testing.T
	sim   *runpodsim.Server
	clock *simclock.Virtual
	lane  *Lane
	logs  *strings.Builder
	dir   string
}

type simConfig struct {
	worker runpodsim.JobWorker // nil: a worker that passes
	faults runpodsim.ServerlessFaults
	api    runpodsim.Faults // management and job-host faults by route
	market *runpodsim.Market
	place  func([]string) string
}

func newSimWorld(t *testing.T, cfg simConfig) *simWorld {
	t.Helper()
	clock := simclock.NewVirtual(runpodsim.Epoch)
	worker := cfg.worker
	if worker == nil {
		worker = passingWorker(t)
	}
	opts := []runpodsim.Option{runpodsim.WithClock(clock), runpodsim.WithAPIKey(simKey), runpodsim.WithFaults(cfg.api),
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: worker, ColdStart: time.Second, Faults: cfg.faults, Placement: cfg.place})}
	if cfg.market != nil {
		opts = append(opts, runpodsim.WithMarket(*cfg.market))
	}
	sim, err := runpodsim.New(opts...)
	assert.NilError(t, err)
	mgmt := httptest.NewServer(sim)
	t.Cleanup(mgmt.Close)
	jobs := httptest.NewServer(sim.JobHost())
	t.Cleanup(jobs.Close)
	logs := &strings.Builder{}
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	dir := t.TempDir()
	jobClient := settledJobs{JobClient: runpod.NewJobClient(jobs.URL, simKey, runpod.WithPolicy(policy)), sim: sim}
	lane := &Lane{Mgmt: runpod.New(mgmt.URL, simKey, runpod.WithPolicy(policy)), Jobs: jobClient,
		Policy: policy, Settings: DefaultSettings(), Receipt: filepath.Join(dir, "receipt.json"),
		Ledger: LedgerFile{Path: filepath.Join(dir, "budget.json"), Caps: spend.DefaultLedgerCaps},
		Logf:   func(format string, args ...any) { fmt.Fprintf(logs, format+"\n", args...) }}
	return &simWorld{t: t, sim: sim, clock: clock, lane: lane, logs: logs, dir: dir}
}

// settledJobs reads a job's status once the simulator's workers are done:
// the virtual clock must not run past a job whose worker is still answering
// in real time. (A stuck job has no worker running.)
type settledJobs struct {
	*runpod.JobClient
	sim *runpodsim.Server
}

func (j settledJobs) Status(ctx context.Context, endpoint, job string) (*runpod.JobStatus, error) {
	j.sim.WaitServerlessWorkers()
	return j.JobClient.Status(ctx, endpoint, job)
}

// setup runs the lane's setup for a new attempt of simRepo.
func (w *simWorld) setup() (*Receipt, error) {
	w.t.Helper()
	name, err := ownership.ServerlessAttemptName(simRepo, 9300, 1)
	assert.NilError(w.t, err)
	env, err := TemplateEnv("https://example.com/serverless-worker", simWorker, simRepo, name)
	assert.NilError(w.t, err)
	return w.lane.Setup(context.Background(), SetupRequest{Attempt: name, Repository: simRepo, RunID: 9300, RunAttempt: 1, Args: BootstrapArgs, Env: env})
}

// run submits the one job with an approved payload into a new results directory.
func (w *simWorld) run(ctx context.Context) (*RunResult, error) {
	w.t.Helper()
	p := &Payload{Version: PayloadVersion, Archive: tarGz(w.t, map[string]string{"tests/run.sh": "echo ok"})}
	p.SHA256 = jobwire.SHA256Hex(p.Archive)
	approved, err := Approve(p, p.SHA256)
	assert.NilError(w.t, err)
	return w.lane.Run(ctx, RunRequest{Execute: true, Payload: approved, Output: w.results(), Input: jobwire.JobInput{TestCommand: "bash tests/run.sh"}})
}

func (w *simWorld) results() string { return filepath.Join(w.dir, "out") }

// requests counts the simulator's answered requests by route ("POST /v2/templates").
func (w *simWorld) requests() map[string]int {
	out := map[string]int{}
	for _, r := range append(w.sim.Requests(), w.sim.JobRequests()...) {
		out[r.Route]++
	}
	return out
}

// live lists the templates and endpoints not deleted, as "kind name".
func (w *simWorld) live() []string {
	var out []string
	for _, r := range w.sim.ServerlessResources() {
		if !r.Deleted {
			out = append(out, r.Kind+" "+r.Name)
		}
	}
	return out
}

// passingWorker answers like the Go worker after a passing run.
func passingWorker(t *testing.T) runpodsim.JobWorker {
	return answeringWorker(t, func(out *jobwire.JobOutput) {})
}

// answeringWorker answers a passing run's output, changed by edit.
func answeringWorker(t *testing.T, edit func(*jobwire.JobOutput)) runpodsim.JobWorker {
	return runpodsim.JobWorkerFunc(func(context.Context, runpodsim.WorkerJob) runpodsim.WorkerResult {
		archive := tarGz(t, map[string]string{"junit.xml": `<testsuite tests="1" failures="0"/>`, "test.log": "ok\n"})
		code := 0
		out := jobwire.JobOutput{ResultB64: base64.StdEncoding.EncodeToString(archive), ResultSHA256: jobwire.SHA256Hex(archive), CUDAExecuted: true, TestsExitCode: &code}
		edit(&out)
		data, err := json.Marshal(out)
		assert.Check(t, err)
		return runpodsim.WorkerResult{Output: data, Error: out.Error}
	})
}

func tarGz(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		assert.NilError(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}))
		_, err := tw.Write([]byte(body))
		assert.NilError(t, err)
	}
	assert.NilError(t, tw.Close())
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}
