// Package serverlessaction is the Serverless lane's action: one job that prepares
// the source-only payload, sets up a 0–1 worker endpoint, checks its health,
// runs exactly one approved job and cleans up (deferred — its failure fails
// the step — and again in a separate if: always() step with mode: cleanup
// reading the receipt).
package serverlessaction

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/spend"
)

// Set by the release build (-X) to the published serverless-worker asset.
var (
	defaultWorkerURL    = ""
	defaultWorkerSHA256 = ""
)

// Action is the serverless action, as the image's program runs it (role serverless).
var Action = actionkit.NewAction(run, reflect.TypeFor[prepareOutputs](), reflect.TypeFor[runOutputs](), reflect.TypeFor[cleanupOutputs]())

// Inputs are the serverless action's inputs.
type Inputs struct {
	// APIKey is not required: the prepare mode calls nothing (it runs in a
	// job that holds no secret); the other modes refuse an empty one.
	APIKey    string              `input:"runpod-api-key,secret" default:"" desc:"RunPod API key (not needed with mode prepare). Store it as a secret; it stays on the hosted runner and never reaches the worker."`
	APIURL    actionio.ServiceURL `input:"runpod-api-url" default:"https://api.runpod.io" desc:"RunPod management API base URL (override for proxies and tests): https, without user info (http only on a loopback host)."`
	JobURL    actionio.ServiceURL `input:"runpod-job-url" default:"https://api.runpod.ai" desc:"RunPod Serverless job host (run, status, health, cancel): https, without user info (http only on a loopback host)."`
	Mode      string              `input:"mode" default:"run" desc:"run (prepare, setup, health, run, cleanup), prepare (build the payload and print its SHA-256 only; no key, no cloud call) or cleanup (delete what the receipt records)."`
	SourceDir string              `input:"source-dir" default:"." path:"GITHUB_WORKSPACE" desc:"The checked-out tested ref whose sources become the payload (inside the workspace)."`
	Execute   bool                `input:"execute" default:"false" desc:"Must be true to create anything or submit the (billable) job."`
	Approved  string              `input:"approved-payload-sha256" default:"" desc:"The reviewed payload_sha256; the job is refused unless it equals the payload's."`
	// TestCommand and MinCUDA travel to the worker in the job's input.
	TestCommand       string        `input:"test-command" default:"" desc:"Shell command (bash) the worker runs in the unpacked sources after the CUDA proof; JUnit XML goes to $RUNPOD_GPU_JUNIT. Required with mode run: an empty one is refused before anything is created."`
	MinCUDA           string        `input:"min-cuda" default:"" desc:"The CUDA proof's driver floor (major.minor); empty means the proof's default. An invalid one is refused before anything is created."`
	WorkerURL         string        `input:"worker-url" default:"" desc:"HTTPS URL of the serverless-worker release asset (default set by the release)."`
	WorkerSHA256      string        `input:"worker-sha256" default:"" desc:"SHA-256 of the serverless-worker asset (default set by the release)."`
	Image             string        `input:"image" default:"runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04@sha256:cb154fcca15d1d6ce858cfa672b76505e30861ef981d28ec94bd44168767d853" desc:"The template's image, pinned by digest."`
	GPUPool           string        `input:"gpu-pool" default:"AMPERE_16" desc:"Serverless GPU pool of the one worker (AMPERE_16 is the A4000 class)."`
	GPUType           string        `input:"gpu-type" default:"NVIDIA RTX A4000" desc:"The one GPU type of the pool the worker may run on: the endpoint excludes the pool's other cards, and the worker refuses any other device before the tests."`
	DataCenters       string        `input:"data-centers" default:"" desc:"Data centers the worker may run in (ids such as EU-RO-1, comma- or space-separated); empty lets RunPod choose."`
	StatePath         string        `input:"state-path" default:".runpod-gpu/serverless/receipt.json" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"The ownership receipt (a new file per attempt; never overwritten)."`
	LedgerPath        string        `input:"ledger-path" default:".runpod-gpu/serverless/budget.json" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"The budget ledger shared across attempts."`
	LedgerName        string        `input:"ledger-artifact" form:"artifact" default:"runpod-gpu-serverless-ledger" desc:"Artifact that carries the repository's ledger across runs: the lane starts from the newest one a run of this workflow on the default branch uploaded (upload ledger-path under this name when the job ends). Empty keeps the ledger in ledger-path only."`
	LedgerBranch      string        `input:"ledger-branch" form:"branch" default:"${{ github.event.repository.default_branch }}" desc:"The default branch, whose runs' ledger artifacts are trusted."`
	ReconcileLostRuns string        `input:"reconcile-lost-runs" default:"" desc:"Runs of this workflow on the default branch whose ledger upload was lost, which the lane otherwise refuses to start after (a newer trusted run that left no ledger artifact): RUN=DOLLARS entries (what RunPod billed that run, from its Serverless billing), comma-separated; a RUN alone is charged a whole attempt's worst case (two stages at max-stage-cents). Each is charged to the carried ledger once."`
	GitHubToken       string        `input:"github-token,secret" default:"${{ github.token }}" desc:"Token that reads the ledger artifact (actions: read); only with ledger-artifact."`
	OutputDir         string        `input:"output-dir" default:".runpod-gpu/serverless/results" path:"GITHUB_WORKSPACE" desc:"Where the provider's answer and the checked results are written (must be new or empty)."`
	TestedRef         string        `input:"tested-ref" form:"sha" default:"" desc:"The tested ref authorize pinned, recorded in the cost artifact."`
	PRNumber          int           `input:"pr-number" default:"0" min:"0" max:"2147483647" desc:"The pull request under test (0 for none), recorded in the cost artifact."`
	CostFile          string        `input:"cost-file" default:".runpod-gpu/serverless/runpod-gpu-cost.json" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"Where the attempt's cost artifact file is written for the cost history (upload it as runpod-gpu-cost-<run>-<attempt>-job-<the job's check_run_id>: the cost history counts only a lane job's upload)."`
	MinStage          int64         `input:"min-stage-cents" default:"100" min:"1" max:"100000" desc:"Least reservation of a stage, in US cents."`
	MaxStage          int64         `input:"max-stage-cents" default:"300" min:"1" max:"100000" desc:"Largest reservation of a stage, in US cents."`
	Total             int64         `input:"total-cents" default:"1000" min:"1" max:"100000" desc:"All reservations of the ledger together, in US cents."`
	Poll              time.Duration `input:"poll-seconds" default:"10" min:"1" max:"300" desc:"Seconds between job status polls (1 to 300); polling ends at the job TTL."`
	// The budget shared with the pod lane: the configuration read from the
	// default branch (never the tested ref's), and its fallback record.
	ConfigPath string `input:"config-path" default:"" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"The runpod-gpu configuration as the default branch has it (not the tested ref's: a pull request must not raise its own budget), inside the workspace or RUNNER_TEMP. With a budget in it, setup first checks that what RunPod billed, what is in flight and this attempt's reservations stay within it, shared with the pod lane. Empty: no budget."`
	actionkit.SpendRecordInput
}

// run is the action: prepare, cleanup, or the whole lane. In run mode every
// refusal that needs no cloud call comes before anything is created, and the
// deferred cleanup's failure fails the step: a step that leaves an endpoint
// or template it cannot confirm deleted never passes.
func run(ctx context.Context, io *actionio.IO, in Inputs) (err error) {
	switch in.Mode {
	case "prepare":
		// No key and no cloud call: the reusable workflow runs this in a job
		// without secrets, and its payload-sha256 is what the run approves.
		_, err := prepare(io, in)
		return err
	case "run", "cleanup":
	default:
		return &actionio.InputError{Input: "mode", Value: in.Mode, Expected: "run, prepare or cleanup"}
	}
	lane, err := newLane(io, in)
	if err != nil {
		return err
	}
	if in.Mode == "cleanup" {
		return cleanup(io, lane)
	}
	job := jobwire.JobInput{TestCommand: in.TestCommand, Smoke: jobwire.SmokeArgs{MinCUDA: in.MinCUDA}}
	a, err := plan(io, in, job)
	if err != nil {
		return err
	}
	if err := carryLedger(ctx, io, in, lane); err != nil {
		return err
	}
	// Cleanup runs whatever happens next, SIGTERM included, on its own
	// bounded context; its failure is the step's failure.
	defer func() {
		err = errors.Join(err, cleanup(io, lane))
		report(io, in, outcome(in, lane, a, err))
	}()
	if _, err := lane.Setup(ctx, a.setup); err != nil {
		return err
	}
	res, runErr := lane.Run(ctx, serverless.RunRequest{Execute: true, Payload: a.payload, Output: in.OutputDir, Input: job})
	if res != nil {
		a.result = res
		_ = actionio.WriteOutputs[runOutputs](io, runOutputs{JobID: res.JobID, JobStatus: string(res.State), CUDAExecuted: res.CUDAExecuted, Receipt: lane.Receipt})
	}
	return runErr
}

// attempt is what run mode decided before anything was created.
type attempt struct {
	payload serverless.ApprovedPayload
	setup   serverless.SetupRequest
	result  *serverless.RunResult
}

// plan does every check that needs no cloud call: the payload and its
// approval, the job (a test command, a valid min-cuda, an empty results
// directory), the worker asset and the run's identity.
func plan(io *actionio.IO, in Inputs, job jobwire.JobInput) (*attempt, error) {
	payload, err := prepare(io, in)
	if err != nil {
		return nil, err
	}
	if !in.Execute {
		return nil, fmt.Errorf("input execute is not true: %w", serverless.ErrNotExecuted)
	}
	approved, err := serverless.Approve(payload, in.Approved)
	if err != nil {
		return nil, fmt.Errorf("input approved-payload-sha256: %w", err)
	}
	if err := serverless.CheckJob(job, in.OutputDir); err != nil {
		return nil, valueInputError(err)
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return nil, err
	}
	name, err := ownership.ServerlessAttemptName(current.Repository, current.ID, current.Attempt)
	if err != nil {
		return nil, err
	}
	env, err := serverless.TemplateEnv(cmp.Or(in.WorkerURL, defaultWorkerURL), cmp.Or(in.WorkerSHA256, defaultWorkerSHA256), current.Repository, name)
	if err != nil {
		return nil, valueInputError(err)
	}
	return &attempt{payload: approved, setup: serverless.SetupRequest{Attempt: name, Repository: current.Repository, RunID: current.ID,
		RunAttempt: current.Attempt, Args: serverless.BootstrapArgs, Env: env}}, nil
}

// prepare builds the source-only payload of source-dir and reports its
// SHA-256 and the worker's (outputs payload-sha256 and worker-sha256).
func prepare(io *actionio.IO, in Inputs) (*serverless.Payload, error) {
	payload, err := serverless.BuildPayload(in.SourceDir, jobwire.DefaultPayloadLimits)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	workerSHA := cmp.Or(in.WorkerSHA256, defaultWorkerSHA256)
	io.Infof("prepare: payload_sha256 %s (%d files, %d bytes); worker_sha256 %s", payload.SHA256, len(payload.Files), payload.Bytes, workerSHA)
	for _, s := range payload.Skipped {
		io.Warningf("prepare: %s is a link or special file and is not sent", s)
	}
	if err := actionio.WriteOutputs[prepareOutputs](io, prepareOutputs{PayloadSHA256: payload.SHA256, WorkerSHA256: workerSHA}); err != nil {
		return nil, err
	}
	return payload, nil
}

func newLane(io *actionio.IO, in Inputs) (*serverless.Lane, error) {
	rp, policy, err := actionkit.RunPod(io, actionkit.RunPodInputs{APIKey: in.APIKey, APIURL: in.APIURL})
	if err != nil {
		return nil, err
	}
	jobs := runpod.NewJobClient(in.JobURL.String(), in.APIKey, runpod.WithPolicy(policy))
	for _, p := range []string{in.StatePath, in.LedgerPath} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
	}
	caps := spend.LedgerCaps{MinStage: money.FromCents(in.MinStage), MaxStage: money.FromCents(in.MaxStage), Total: money.FromCents(in.Total)}
	if err := caps.Validate(); err != nil {
		return nil, err
	}
	s := serverless.DefaultSettings()
	s.Image, s.GPUPool, s.GPUType = cmp.Or(in.Image, s.Image), cmp.Or(in.GPUPool, s.GPUPool), cmp.Or(in.GPUType, s.GPUType)
	s.DataCenters = strings.FieldsFunc(in.DataCenters, func(r rune) bool { return r == ',' || r == ' ' })
	if err := s.Validate(); err != nil {
		return nil, err
	}
	guard, err := laneBudget(io, in, rp)
	if err != nil {
		return nil, err
	}
	return &serverless.Lane{Mgmt: rp, Jobs: jobs, Policy: policy, Settings: s, Receipt: in.StatePath, Poll: in.Poll, Budget: guard,
		Ledger: serverless.LedgerFile{Path: in.LedgerPath, Caps: caps, LockWait: 30 * time.Second}, Logf: io.Infof}, nil
}

// valueInputError names the input behind a value the lane refused (the
// lane's errors name the value, not this action's input).
func valueInputError(err error) error {
	var v *serverless.ValueError
	if !errors.As(err, &v) {
		return err
	}
	input := map[string]string{serverless.WorkerURLValue: "worker-url", serverless.WorkerSHA256Value: "worker-sha256",
		serverless.TestCommandValue: "test-command", serverless.MinCUDAValue: "min-cuda", serverless.OutputValue: "output-dir"}[v.Name]
	if input == "" {
		return err
	}
	return &actionio.InputError{Input: input, Value: v.Value, Expected: v.Want}
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
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
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
