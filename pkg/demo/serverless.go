package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
)

// serverlessWorkflow is the demo repository's caller of serverless-lane.yml.
const serverlessWorkflow = ".github/workflows/runpod-gpu-serverless.yml"

// settledJobs reads a job's status once the simulator's workers are done:
// on the virtual clock the lane's polls must not run past a job whose
// worker is still running its tests in real time.
type settledJobs struct {
	*runpod.JobClient
	sim *runpodsim.Server
}

func (j settledJobs) Status(ctx context.Context, endpoint, job string) (*runpod.JobStatus, error) {
	j.sim.WaitServerlessWorkers()
	return j.JobClient.Status(ctx, endpoint, job)
}

// serverlessLane plays the Serverless lane for the PR's tested ref, as
// serverless-lane.yml's serverless job does: the payload, setup (one A4000,
// the pool's other cards excluded), the one job run by the lane's own worker
// code with a model of the CUDA proof, and the cleanup; it prints the job
// summary the action writes and uploads the cost artifact the cost history reads.
func (w *world) serverlessLane(ctx context.Context) error {
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: serverlessWorkflow,
		Event: "workflow_dispatch", HeadSHA: headSHA, Status: "completed", Conclusion: "success",
		Jobs: []githubsim.JobSpec{{Name: "gpu / One Serverless job", Status: "completed", Conclusion: "success"}}})
	if err != nil {
		return err
	}
	w.section(fmt.Sprintf("The Serverless lane for PR #%d (workflow run %d)", w.pr, runID))
	dir, err := os.MkdirTemp("", "runpod-gpu-demo-serverless-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src")
	for name, body := range map[string]string{"src/reduce.cu": "__global__ void reduce() {}\n", "tests/run.sh": "echo reduction matches the CPU\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	payload, err := serverless.BuildPayload(src, jobwire.DefaultPayloadLimits)
	if err != nil {
		return err
	}
	approved, err := serverless.Approve(payload, payload.SHA256)
	if err != nil {
		return err
	}
	lane := &serverless.Lane{Mgmt: w.rp, Jobs: settledJobs{runpod.NewJobClient(w.cloud.JobURL, cloud.RunPodKey, runpod.WithPolicy(w.policy)), w.cloud.RunPod},
		Policy: w.policy, Settings: serverless.DefaultSettings(), Receipt: filepath.Join(dir, "receipt.json"),
		Ledger: serverless.LedgerFile{Path: filepath.Join(dir, "budget.json"), Caps: spend.DefaultLedgerCaps}}
	// The summary names the results directory as the workflow has it.
	o := serverless.Outcome{Settings: lane.Settings, Payload: payload.SHA256, Output: ".runpod-gpu/serverless/results"}
	o.Result, o.Err = w.playServerless(ctx, lane, runID, approved, filepath.Join(dir, "results"))
	if o.Receipt, err = serverless.LoadReceipt(lane.Receipt); err != nil {
		return err
	}
	if o.Ledger, err = serverless.ReadLedger(lane.Ledger.Path); err != nil {
		return err
	}
	if o.Err != nil {
		return fmt.Errorf("serverless lane: %w", o.Err)
	}
	w.job("serverless", o.Summary())
	art := o.CostArtifact(cost.Run{Repository: cloud.Repository, ID: runID, Attempt: 1, TestedRef: mergeSHA, Trigger: cost.TriggerManual, PRNumber: w.pr})
	seal, err := w.uploadCostArtifact(runID, history.JobServerless, art)
	if err != nil {
		return err
	}
	stamp := w.clock.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	return w.cloud.GitHub.SetRunLogs(cloud.Repository, runID, 1, map[string]string{
		"0_gpu  One Serverless job.txt": stamp + " run: job " + o.Result.JobID + " completed; CUDA executed\n" + stamp + " " + seal + "\n"})
}

// playServerless runs setup, the job and the cleanup of one attempt.
func (w *world) playServerless(ctx context.Context, lane *serverless.Lane, runID int64, approved serverless.ApprovedPayload, output string) (*serverless.RunResult, error) {
	attempt, err := ownership.ServerlessAttemptName(cloud.Repository, runID, 1)
	if err != nil {
		return nil, err
	}
	env, err := serverless.TemplateEnv(cloud.SimWorkerURL, cloud.SimWorkerSHA256, cloud.Repository, attempt)
	if err != nil {
		return nil, err
	}
	if _, err := lane.Setup(ctx, serverless.SetupRequest{Attempt: attempt, Repository: cloud.Repository, RunID: runID, RunAttempt: 1,
		Args: serverless.BootstrapArgs, Env: env}); err != nil {
		return nil, err
	}
	res, runErr := lane.Run(ctx, serverless.RunRequest{Execute: true, Payload: approved, Output: output,
		Input: jobwire.JobInput{TestCommand: "bash tests/run.sh"}})
	if _, err := lane.Cleanup(ctx); err != nil {
		return res, err
	}
	return res, runErr
}
