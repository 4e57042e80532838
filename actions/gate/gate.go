// Package gateaction is the gate action (ci-gpu-gate): it publishes the "CI GPU gate"
// check run that ends a workflow run, with the evidence it relies on, or
// nothing for a PR whose gate the local relay owns.
package gateaction

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanetiers"
)

// budget bounds the whole gate, inside the workflow's five-minute step
// timeout: a rate limit asking for a longer wait (Retry-After of an hour)
// fails the step at once with an error saying so, rather than sleeping until
// the runner kills it mid-retry.
const budget = 4 * time.Minute

// Action is the gate action, as the image's program runs it (role gate).
var Action = actionkit.NewAction(run, reflect.TypeFor[outputs]())

// Inputs are the gate action's inputs.
type Inputs struct {
	actionkit.GitHubInputs `desc.github-token:"Token that reads the PR and creates check runs, used when app-id is empty (github.token publishes as GitHub Actions)." desc.app-id:"GitHub App id to publish the gate as (preferred over github-token)." desc.app-installation-id:"The App's installation id on this repository (required with app-id)."`

	Kind          string `input:"kind" default:"" desc:"The gate to publish: paid, serverless, reused, failed, not-required or skipped. Empty derives it from decision, gate-kind and gpu-job-result; given with either of them, it must be the kind they choose. Inputs of no one run are refused: a pod-id beside a gate that paid for no pod, a Serverless payload beside a pod's gate, a GPU job result beside a decision that runs none."`
	Decision      string `input:"decision" default:"" desc:"The authorize step's decision output (run, reuse or skip); required when kind is empty."`
	GateKind      string `input:"gate-kind" default:"" desc:"The authorize step's gate-kind output, what a skip publishes (empty publishes nothing)."`
	GPUJobResult  string `input:"gpu-job-result" default:"" desc:"The GPU test job's needs.<job>.result (success, failure, cancelled or skipped); required when decision is run."`
	Tiers         string `input:"tiers" default:"" desc:"Provision's tiers output (the last provision's): the tiers the lane tests, each of which must pass. With it and tier-results the gate is decided per pod, shows a row per pod (GPU, data center, price, paid seconds, result) and, for a matrix lane, publishes each tier's own check \"<check-name> (<tier>)\" for its reuse by tree."`
	TierResults   string `input:"tier-results" default:"" desc:"Cleanup's tier-results output: what each pod's GPU job did (and a pod lost to its host, its re-run, a tier reused or without a pod). A tier with no row fails the gate."`
	RerunResult   string `input:"rerun-gpu-job-result" default:"" desc:"The host-fault re-run GPU job's needs.<job>.result; a gate whose pod was lost to its host passes only when it is success."`
	Lane          string `input:"lane" default:"pod" desc:"The path that ran the GPU tests: pod (default) or serverless. In the serverless lane a successful job publishes the serverless kind, which records the payload's SHA-256 and is reusable like paid."`
	PayloadSHA256 string `input:"payload-sha256" default:"" desc:"The serverless step's payload-sha256 output; required for a serverless gate, recorded on a failed one."`
	WorkerSHA256  string `input:"worker-sha256" default:"" desc:"The serverless step's worker-sha256 output (the Go worker the template fetched)."`
	JobID         string `input:"job-id" default:"" desc:"The serverless step's job-id output."`
	JobStatus     string `input:"job-status" default:"" desc:"The serverless step's job-status output (COMPLETED, FAILED, CANCELLED, TIMED_OUT)."`
	GPUPool       string `input:"gpu-pool" default:"" desc:"The Serverless GPU pool the job ran on (e.g. AMPERE_16)."`
	CUDAExecuted  bool   `input:"cuda-executed" default:"false" desc:"The serverless step's cuda-executed output; a serverless gate needs true."`
	PRNumber      int64  `input:"pr-number" default:"0" max:"2147483647" desc:"Pull request whose label is re-read before publishing; 0 (manual validation) skips the re-read."`
	// HeadSHA may be empty: Conclude says when a published gate needs it.
	HeadSHA        actionio.CommitSHA `input:"head-sha" default:"" desc:"Commit the gate check is attached to (authorize's head-sha output); required when a gate is published."`
	TestedRef      actionio.CommitSHA `input:"tested-ref" default:"" desc:"The pinned SHA that was tested (authorize's tested-ref output), named in the external_id; required when a gate is published."`
	ReusedCheckURL string             `input:"reused-check-url" default:"" desc:"URL of the earlier gate a reused gate relies on (authorize's or provision's reused-check-url output)."`
	PodID          string             `input:"pod-id" form:"pod-id" default:"" desc:"The accepted pod (provision's pod-id output); required for a paid gate, empty when no pod ran."`
	GPUType        string             `input:"gpu-type" form:"gpu-type" default:"" desc:"The accepted pod's GPU type (provision's gpu-type output)."`
	Tier           string             `input:"tier" form:"tier" default:"" desc:"The accepted GPU's reviewed tier (provision's tier output)."`
	PricePerHour   string             `input:"price-per-hour" form:"price" default:"" desc:"The accepted pod's hourly price in USD (provision's price-per-hour output); empty shows unknown."`
	StartupSeconds int64              `input:"startup-seconds" default:"0" max:"2147483647" desc:"Seconds the accepted pod took to start (provision's startup-seconds output)."`
	Attempts       int64              `input:"attempts" default:"1" min:"1" max:"2147483647" desc:"Candidates tried before the pod was accepted (provision's attempts output)."`
	// CostReportPath goes into a check run anyone with read access sees:
	// only a file of this job's workspace or temp dir, never /etc/passwd or
	// a link to it, and redacted.
	CostReportPath string                 `input:"cost-report-path" default:"" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"Markdown cost report to include, redacted, as the check's text (with a pod); it must lie inside the workspace or RUNNER_TEMP (symbolic links resolved), else the step fails and publishes nothing; unreadable means left out with a warning."`
	Reason         string                 `input:"reason" default:"" desc:"Why: for skipped and not-required gates pass authorize's reason output; for a failed gate it adds detail after the GPU job's result."`
	CheckName      string                 `input:"check-name" form:"name" default:"CI GPU gate" desc:"Name of the gate check run; must match the check branch protection requires."`
	TreeKey        actionkit.TreeKeyInput `input:"tree-key" default:"" want:"authorize's tree-key output (tree:<sha>:lane:<digest>), or empty" desc:"authorize's tree-key output: recorded in a v2 external_id (runpod-gpu-gate:v2:<tested ref>:<kind>:tree:<sha>:lane:<digest>) so an identical tree with an identical lane reuses this gate. Empty publishes the v1 marker."`
	// InProgressCheckRunID is authorize's in-progress gate, completed here.
	InProgressCheckRunID int64  `input:"in-progress-check-run-id" default:"" min:"1" desc:"authorize's gate-check-run-id output; that in-progress gate is completed instead of a new one created."`
	LaneImage            string `input:"lane-image" form:"image" default:"" desc:"authorize's lane-image output, the image digest the tree key names."`
	Image                string `input:"image" form:"image" default:"" desc:"provision's image output; a paid or failed gate records the tree key only when it equals lane-image."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	pod, err := podEvidence(io, in)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, "")
	if err != nil {
		return err
	}
	done, err := gate.Conclude(ctx, gh, gate.ConcludeRequest{
		PRNumber: int(in.PRNumber), Kind: gatecheck.Kind(in.Kind),
		Decision: gate.Outcome(in.Decision), SkipKind: gatecheck.Kind(in.GateKind),
		GPUJobResult: gate.JobResult(in.GPUJobResult), Lane: gate.Lane(in.Lane),
		Evidence: gatecheck.Evidence{
			HeadSHA: string(in.HeadSHA), TestedRef: string(in.TestedRef), CheckName: in.CheckName,
			Reason: in.Reason, Pod: pod, Serverless: serverlessEvidence(in), ReusedCheckURL: in.ReusedCheckURL,
			RunID: current.ID, RunURL: current.URL(), Key: in.TreeKey.Key(), CheckRunID: in.InProgressCheckRunID,
		},
		LaneImage: in.LaneImage, Image: in.Image, Tiers: tierRequest(io, in),
	})
	if err != nil {
		return err
	}
	if done.FollowersErr != nil {
		io.Warningf("follow gates of lanes that waited for this one: %v", done.FollowersErr)
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

// tierRequest reads the lane's tiers and cleanup's rows. An unreadable value
// never passes a gate: the tiers then have no result, and the gate fails.
func tierRequest(io *actionio.IO, in Inputs) gate.TierRequest {
	t := gate.TierRequest{RerunJobResult: gate.JobResult(in.RerunResult)}
	lane, err := lanetiers.ParseRecord(in.Tiers)
	switch {
	case err != nil:
		io.Warningf("input tiers: %v; the gate fails: its tiers cannot be known", err)
		t.Expected = []string{"(unreadable tiers)"}
	case lane != nil:
		for _, tier := range lane.Tiers {
			t.Expected = append(t.Expected, tier.Name)
		}
	}
	rows, err := lanetiers.ParseResults(in.TierResults)
	if err != nil {
		io.Warningf("input tier-results: %v; no tier has a result, so the gate fails", err)
	}
	t.Rows = rows
	return t
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
func podEvidence(io *actionio.IO, in Inputs) (*gatecheck.PodEvidence, error) {
	if in.PodID == "" {
		return nil, nil
	}
	// cost's one price rule, as cleanup and the watchdog read the same output: 0 is unknown.
	price, err := cost.ParsePricePerHour(in.PricePerHour)
	if err != nil {
		return nil, &actionio.InputError{Input: "price-per-hour", Value: in.PricePerHour, Expected: cost.PriceForm + " (the provision step's output)"}
	}
	pod := &gatecheck.PodEvidence{ID: in.PodID, GPU: in.GPUType, Tier: in.Tier,
		StartupSeconds: int(in.StartupSeconds), Attempts: int(in.Attempts), PricePerHour: price.PerHour, PriceUnknown: !price.Known}
	if in.CostReportPath != "" {
		report, err := os.ReadFile(in.CostReportPath)
		if err != nil {
			io.Warningf("cost-report-path: %v; the gate is published without the cost report", err)
		}
		pod.CostMarkdown = io.Redactor().Redact(string(report))
	}
	return pod, nil
}

// serverlessEvidence reads the serverless step's outputs; no payload-sha256
// and no job-id means the Serverless lane did not run (the pod lane's gate).
func serverlessEvidence(in Inputs) *gatecheck.ServerlessEvidence {
	if in.PayloadSHA256 == "" && in.JobID == "" && in.Lane != string(gate.LaneServerless) {
		return nil
	}
	return &gatecheck.ServerlessEvidence{PayloadSHA256: in.PayloadSHA256, WorkerSHA256: in.WorkerSHA256,
		JobID: in.JobID, JobStatus: in.JobStatus, GPUPool: in.GPUPool, CUDAExecuted: in.CUDAExecuted}
}
