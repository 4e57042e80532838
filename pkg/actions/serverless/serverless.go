// Package serverless is the Serverless lane's action: one job that prepares
// the source-only payload, sets up a 0–1 worker endpoint, checks its health,
// runs exactly one approved job and cleans up (deferred, and again in a
// separate if: always() step with mode: cleanup reading the receipt).
package serverless

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// Set by the release build (-X) to the published serverless-worker asset.
var (
	defaultWorkerURL    = ""
	defaultWorkerSHA256 = ""
)

// Run is the serverless action: it reads its inputs and writes its outputs and job
// summary through io. actions/serverless/main.go and the image's multi-call binary
// (role serverless) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	mode := io.InputOr("mode", "run")
	switch mode {
	case "prepare":
		// No key and no cloud call: the reusable workflow runs this in a job
		// without secrets, and its payload-sha256 is what the run approves.
		_, err := prepare(io)
		return err
	case "run", "cleanup":
	default:
		return &actionio.InputError{Input: "mode", Value: mode, Expected: "run, prepare or cleanup"}
	}
	lane, err := newLane(io)
	if err != nil {
		return err
	}
	if mode == "cleanup" {
		return cleanup(io, lane)
	}
	payload, err := prepare(io)
	if err != nil {
		return err
	}
	workerSHA := io.InputOr("worker-sha256", defaultWorkerSHA256)
	execute, err := io.Bool("execute", false)
	if err != nil {
		return err
	}
	if !execute {
		return fmt.Errorf("input execute is not true: %w", serverless.ErrNotExecuted)
	}
	approved, err := serverless.Approve(payload, io.Input("approved-payload-sha256"))
	if err != nil {
		return fmt.Errorf("input approved-payload-sha256: %w", err)
	}
	out, err := io.PathInput("output-dir", ".runpod-gpu/serverless/results", actionio.RootWorkspace)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	attempt, err := ownership.ServerlessAttemptName(current.Repository, current.ID, current.Attempt)
	if err != nil {
		return err
	}
	env, err := serverless.TemplateEnv(io.InputOr("worker-url", defaultWorkerURL), workerSHA, current.Repository, attempt)
	if err != nil {
		return err
	}
	// Cleanup runs whatever happens next, SIGTERM included, on its own bounded context.
	defer func() { _ = cleanup(io, lane) }()
	if _, err := lane.Setup(ctx, serverless.SetupRequest{Attempt: attempt, Repository: current.Repository, RunID: current.ID,
		RunAttempt: current.Attempt, Args: serverless.BootstrapArgs, Env: env}); err != nil {
		return err
	}
	res, runErr := lane.Run(ctx, serverless.RunRequest{Execute: true, Payload: approved, Output: out,
		Input: jobwire.JobInput{TestCommand: io.Input("test-command"), Smoke: jobwire.SmokeArgs{MinCUDA: io.Input("min-cuda")}}})
	if res != nil {
		_ = actionio.WriteOutputs[runOutputs](io, runOutputs{JobID: res.JobID, JobStatus: string(res.State), CUDAExecuted: res.CUDAExecuted, Receipt: lane.Receipt})
		_ = io.AddSummary(fmt.Sprintf("### Serverless lane\n\nJob `%s` ended `%s`; CUDA executed: %t; %d result files in `%s`; payload `%s`.\n",
			res.JobID, res.State, res.CUDAExecuted, len(res.Files), out, payload.SHA256))
	}
	return runErr
}

// prepare builds the source-only payload of source-dir and reports its
// SHA-256 and the worker's (outputs payload-sha256 and worker-sha256).
func prepare(io *actionio.IO) (*serverless.Payload, error) {
	src, err := io.PathInput("source-dir", ".", actionio.RootWorkspace)
	if err != nil {
		return nil, err
	}
	payload, err := serverless.BuildPayload(src, jobwire.DefaultPayloadLimits)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	workerSHA := io.InputOr("worker-sha256", defaultWorkerSHA256)
	io.Infof("prepare: payload_sha256 %s (%d files, %d bytes); worker_sha256 %s", payload.SHA256, len(payload.Files), payload.Bytes, workerSHA)
	for _, s := range payload.Skipped {
		io.Warningf("prepare: %s is a link or special file and is not sent", s)
	}
	if err := actionio.WriteOutputs[prepareOutputs](io, prepareOutputs{PayloadSHA256: payload.SHA256, WorkerSHA256: workerSHA}); err != nil {
		return nil, err
	}
	return payload, nil
}

func newLane(io *actionio.IO) (*serverless.Lane, error) {
	rp, policy, err := actionkit.RunPod(io)
	if err != nil {
		return nil, err
	}
	jobs := runpod.NewJobClient(io.Input("runpod-job-url"), io.SecretInput(actionkit.InputRunPodKey), runpod.WithPolicy(policy))
	receipt, err := io.PathInput("state-path", ".runpod-gpu/serverless/receipt.json", actionio.RootWorkspace, actionio.RootTemp)
	if err != nil {
		return nil, err
	}
	ledger, err := io.PathInput("ledger-path", ".runpod-gpu/serverless/budget.json", actionio.RootWorkspace, actionio.RootTemp)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{receipt, ledger} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
	}
	caps := serverless.DefaultCaps
	//runpod-gpu:inputs min-stage-cents,max-stage-cents,total-cents
	for _, c := range []struct {
		name string
		dst  *int64
	}{{"min-stage-cents", &caps.MinStage}, {"max-stage-cents", &caps.MaxStage}, {"total-cents", &caps.Total}} {
		if *c.dst, err = io.Int(c.name, *c.dst, 1, 100000); err != nil {
			return nil, err
		}
	}
	if err := caps.Validate(); err != nil {
		return nil, err
	}
	poll, err := io.Duration("poll-seconds", serverless.DefaultPoll, time.Second, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	s := serverless.DefaultSettings()
	s.Image, s.GPUPool = io.InputOr("image", s.Image), io.InputOr("gpu-pool", s.GPUPool)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &serverless.Lane{Mgmt: rp, Jobs: jobs, Policy: policy, Settings: s, Receipt: receipt, Poll: poll,
		Ledger: serverless.LedgerFile{Path: ledger, Caps: caps, LockWait: 30 * time.Second}, Logf: io.Infof}, nil
}

// cleanup deletes the receipt's resources with a fresh context: the job's may be cancelled.
func cleanup(io *actionio.IO, lane *serverless.Lane) error {
	if _, err := os.Stat(lane.Receipt); errors.Is(err, fs.ErrNotExist) {
		io.Infof("cleanup: no receipt at %s: nothing was created", lane.Receipt)
		_ = actionio.WriteOutputs[cleanupOutputs](io, cleanupOutputs{Confirmed: true})
		return nil
	}
	ctx, cancel := reqpolicy.Bound(context.Background(), lane.Policy, serverless.CleanupTimeout)
	defer cancel()
	res, err := lane.Cleanup(ctx)
	_ = actionio.WriteOutputs[cleanupOutputs](io, cleanupOutputs{Confirmed: err == nil && res != nil && res.Confirmed})
	if err != nil {
		io.Errorf("cleanup: %v", err)
	}
	return err
}

// prepareOutputs are what the prepare mode publishes: the payload to approve and the worker.
type prepareOutputs struct {
	PayloadSHA256 string `output:"payload-sha256"`
	WorkerSHA256  string `output:"worker-sha256"`
}

// runOutputs are what the run mode publishes once the job ended.
type runOutputs struct {
	JobID        string `output:"job-id"`
	JobStatus    string `output:"job-status"`
	CUDAExecuted bool   `output:"cuda-executed"`
	Receipt      string `output:"receipt"`
}

// cleanupOutputs say whether the run's Serverless resources are confirmed gone.
type cleanupOutputs struct {
	Confirmed bool `output:"cleanup-confirmed"`
}
