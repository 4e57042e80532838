// Package gate is the ci-gpu-gate action: it publishes the "CI GPU gate"
// check run that ends a workflow run, with the evidence it relies on, or
// nothing for a PR whose gate the local relay owns.
package gate

import (
	"context"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/gatecheck"
)

// budget bounds the whole gate, inside the workflow's five-minute step
// timeout: a rate limit asking for a longer wait (Retry-After of an hour)
// fails the step at once with an error saying so, rather than sleeping until
// the runner kills it mid-retry.
const budget = 4 * time.Minute

// Run is the gate action: it reads its inputs and writes its outputs and job
// summary through io. actions/gate/main.go and the image's multi-call binary
// (role gate) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	pr, err := io.Int("pr-number", 0, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	head, err := io.SHA("head-sha", false) // Conclude says when a published gate needs it
	if err != nil {
		return err
	}
	tested, err := io.SHA("tested-ref", false)
	if err != nil {
		return err
	}
	pod, err := podEvidence(io)
	if err != nil {
		return err
	}
	sls, err := serverlessEvidence(io)
	if err != nil {
		return err
	}
	key, err := gatecheck.ParseTreeKey(io.Input("tree-key"))
	if err != nil {
		return &actionio.InputError{Input: "tree-key", Value: io.Input("tree-key"), Expected: "authorize's tree-key output (tree:<sha>:lane:<digest>), or empty"}
	}
	staked, err := io.Int("in-progress-check-run-id", 0, 1, 1<<53) // authorize's in-progress gate, completed here
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	done, err := gate.Conclude(ctx, gh, gate.ConcludeRequest{
		PRNumber: int(pr), Kind: gatecheck.Kind(io.Input("kind")),
		Decision: gate.Outcome(io.Input("decision")), SkipKind: gatecheck.Kind(io.Input("gate-kind")),
		GPUJobResult: gate.JobResult(io.Input("gpu-job-result")), Lane: gate.Lane(io.Input("lane")),
		Evidence: gatecheck.Evidence{
			HeadSHA: head, TestedRef: tested, CheckName: io.Input("check-name"),
			Reason: io.Input("reason"), Pod: pod, Serverless: sls, ReusedCheckURL: io.Input("reused-check-url"),
			RunID: current.ID, RunURL: current.URL(), Key: key, CheckRunID: staked,
		},
		LaneImage: io.Input("lane-image"), Image: io.Input("image"),
	})
	if err != nil {
		return err
	}
	checkRunID := "" // empty, not "0", when nothing was published
	if done.CheckRun == nil {
		io.Infof("no gate published: %s", done.Reason)
	} else {
		checkRunID = strconv.FormatInt(done.CheckRun.GetID(), 10)
		io.Infof("published %s (%s): %s", done.CheckRun.GetExternalID(), done.CheckRun.GetHTMLURL(), done.Reason)
	}
	if err := actionio.WriteOutputs[outputs](io, outputs{Kind: string(done.Kind), CheckRunID: checkRunID,
		CheckRunURL: done.CheckRun.GetHTMLURL(), ExternalID: done.CheckRun.GetExternalID()}); err != nil {
		return err
	}
	return io.AddSummary(done.Summary())
}

// outputs are the ci-gpu-gate action's outputs; each is empty when no gate was published.
type outputs struct {
	Kind        string `output:"kind"`
	CheckRunID  string `output:"check-run-id"`
	CheckRunURL string `output:"check-run-url"`
	ExternalID  string `output:"external-id"`
}

// podEvidence reads the accepted pod's outputs of the provision step; no
// pod-id means no pod ran. A cost report that cannot be read is left out with
// a warning: reporting never stops the gate.
func podEvidence(io *actionio.IO) (*gatecheck.PodEvidence, error) {
	id := io.Input("pod-id")
	if id == "" {
		return nil, nil
	}
	startup, err := io.Int("startup-seconds", 0, 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	attempts, err := io.Int("attempts", 1, 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	// cost's one price rule, as cleanup and the watchdog read the same output: 0 is unknown.
	price, err := cost.ParsePricePerHour(io.Input("price-per-hour"))
	if err != nil {
		return nil, &actionio.InputError{Input: "price-per-hour", Value: io.Input("price-per-hour"), Expected: cost.PriceForm + " (the provision step's output)"}
	}
	pod := &gatecheck.PodEvidence{ID: id, GPU: io.Input("gpu-type"), Tier: io.Input("tier"),
		StartupSeconds: int(startup), Attempts: int(attempts), PricePerHour: price.PerHour, PriceUnknown: !price.Known}
	if io.Input("cost-report-path") != "" {
		// The report goes into a check run anyone with read access sees: only
		// a file of this job's workspace or temp dir, never /etc/passwd or a
		// link to it, and redacted.
		path, err := io.PathInput("cost-report-path", "", actionio.RootWorkspace, actionio.RootTemp)
		if err != nil {
			return nil, err
		}
		report, err := os.ReadFile(path)
		if err != nil {
			io.Warningf("cost-report-path: %v; the gate is published without the cost report", err)
		}
		pod.CostMarkdown = io.Redactor().Redact(string(report))
	}
	return pod, nil
}

// serverlessEvidence reads the serverless step's outputs; no payload-sha256
// and no job-id means the Serverless lane did not run (the pod lane's gate).
func serverlessEvidence(io *actionio.IO) (*gatecheck.ServerlessEvidence, error) {
	sls := &gatecheck.ServerlessEvidence{PayloadSHA256: io.Input("payload-sha256"), WorkerSHA256: io.Input("worker-sha256"),
		JobID: io.Input("job-id"), JobStatus: io.Input("job-status"), GPUPool: io.Input("gpu-pool")}
	cuda, err := io.Bool("cuda-executed", false)
	if err != nil {
		return nil, err
	}
	sls.CUDAExecuted = cuda
	if sls.PayloadSHA256 == "" && sls.JobID == "" && io.Input("lane") != string(gate.LaneServerless) {
		return nil, nil
	}
	return sls, nil
}
