// Package cleanupaction is the cleanup action (cleanup-runpod) (if: always()): it deletes the
// run attempt's pods — the published one and any provision never published —
// and then reports what the accepted pod cost.
package cleanupaction

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cleanup"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
)

// Action is the cleanup action, as the image's program runs it (role cleanup).
var Action = actionkit.NewAction(run, reflect.TypeFor[cleanup.Outputs]())

// Inputs are the cleanup action's inputs. Only the RunPod key can stop the
// deletion: inputs that feed the report or the runner's removal are lenient,
// a bad one warns and reads as unknown.
type Inputs struct {
	actionkit.RunPodInputs
	actionkit.GitHubInputs `lenient:"the stage breakdown will be unknown" desc.github-token:"Token that reads this run's jobs, for the stage breakdown (actions: read). Without it, or without app-id, the breakdown is reported as unknown; deletion never needs it." desc.app-id:"GitHub App id to read the jobs with instead of github-token."`
	actionkit.RunnerInputs `desc.runner-scope:"Where the runner is registered, repo or org (as given to provision); its registration is removed there."`

	Tiers            string             `input:"tiers" default:"" lenient:"the lane's pods are reported as one" desc:"Provision's tiers output (the last provision's, a host-fault re-run's included): every pod of the lane is deleted and reported on its own, and tier-results gives the gate a row per pod. When set, pod-id, price-per-hour, started-at, gpu-type, tier, rejected-attempts and runner-label are not read."`
	HostFaults       string             `input:"host-faults" default:"" lenient:"no pod is reported as lost to its host" desc:"The watchdog's host-faults output: each pod it names is reported as lost to its host (the cost artifact's host verdict, which the reputation counts against the host) and shown as a host fault in tier-results."`
	PodID            string             `input:"pod-id" form:"pod-id" lenient:"this run attempt's pods are still found by their tags" default:"" desc:"Provision's pod-id output; may be empty (pods of this run attempt are still found by their tags)."`
	RetainedPodIDs   string             `input:"retained-pod-ids" default:"" desc:"Provision's retained-pod-ids output; these rejected pods, kept with keep-failed-pods, are left alone."`
	PricePerHour     string             `input:"price-per-hour" form:"price" lenient:"the price is read from the pod record, else unknown" default:"" desc:"Provision's price-per-hour output, the price fallback when the pod record cannot be read."`
	StartedAt        string             `input:"started-at" default:"" desc:"Provision's started-at output (RFC 3339), the start fallback when the pod record cannot be read."`
	GPUType          string             `input:"gpu-type" form:"gpu-type" lenient:"the report shows no GPU type" default:"" desc:"Provision's gpu-type output, shown in the report."`
	Tier             string             `input:"tier" form:"tier" lenient:"the report shows no tier" default:"" desc:"Provision's tier output, shown in the report."`
	RejectedAttempts string             `input:"rejected-attempts" default:"" desc:"Provision's rejected-attempts output (a JSON array of its rejected candidates), so the run total covers the whole run. Empty: the report says provision's rejected candidates are not included."`
	RunnerLabel      string             `input:"runner-label" form:"runner-label" lenient:"the paid window is not broken into stages" default:"" desc:"Provision's runner-label output; finds the GPU job whose steps break the paid window into stages."`
	TestStep         string             `input:"test-step-name" form:"name" lenient:"the paid window is not broken into stages" default:"Run GPU tests" desc:"Name of the GPU job's real test step, reported as the tests stage."`
	TestedRef        actionio.CommitSHA `input:"tested-ref" default:"" lenient:"the cost artifact records no tested ref" desc:"The pinned merge SHA (or dispatched SHA) under test, recorded in the cost artifact."`
	PRNumber         int64              `input:"pr-number" default:"0" max:"2147483647" lenient:"the cost artifact records no pull request" desc:"Pull request under test, recorded in the cost artifact; 0 is a manual validation."`
	// JobCheckRunID ties the cost artifact to this job: an artifact records
	// no uploader, so its name says which job uploaded it.
	JobCheckRunID int64 `input:"job-check-run-id" default:"" min:"1" lenient:"the cost artifact's name names no job, so the cost history will not count it" desc:"This job's check run id (the workflow's job.check_run_id). The cost artifact's name carries it (cost-artifact-name), and the cost history counts an artifact only when the job it names is one of the lane's own jobs of that run attempt and was running when the artifact was uploaded. Empty: the artifact names no job and the history ignores it (the cost line in this job's log still counts)."`
	// ArtifactDir is resolved after the deletion: a bad one never stops it,
	// but fails the step after it, with no artifact written.
	ArtifactDir string `input:"artifact-dir" default:"runpod-gpu-cost" desc:"Directory, relative to the workspace and inside it (symbolic links resolved), where the cost artifact file is written."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	rp, policy, err := actionkit.RunPod(io, in.RunPodInputs)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	snapshot, provisioned := reportInputs(io, in)
	// The artifact directory must lie inside the workspace (upload-artifact
	// reads it from there).
	artifactDir, dirErr := io.ResolvePath("artifact-dir", in.ArtifactDir, cleanup.DefaultArtifactDir, actionio.RootWorkspace)
	deps := cleanup.Deps{RunPod: rp, Policy: policy, Logf: io.Infof, Warnf: io.Warningf}
	// Where the runner's registration is removed; a bad scope never stops the deletion.
	scope, org, scopeErr := actionkit.RunnerScope(in.RunnerInputs)
	if scopeErr != nil {
		io.Warningf("%v; the runner's registration is looked up at repository scope only", scopeErr)
	}
	if gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, org); err != nil {
		io.Warningf("GitHub client: %v; the stage breakdown will be unknown", err)
	} else {
		deps.Jobs = gh
	}

	lane, faults := laneInputs(io, in)
	endDeletion := io.Phase("deletion: this run's pods, then their cost")
	res, runErr := cleanup.Run(ctx, deps, cleanup.Request{
		PodID: in.PodID, RetainedPodIDs: cleanup.ParseIDs(in.RetainedPodIDs),
		Run: cost.Run{Repository: current.Repository, ID: current.ID, Attempt: current.Attempt, TestedRef: string(in.TestedRef),
			Trigger: cost.TriggerOf(io.Getenv("GITHUB_EVENT_NAME")), PRNumber: int(in.PRNumber)},
		Snapshot: snapshot, RunnerLabel: in.RunnerLabel, RunnerScope: scope, TestStep: in.TestStep,
		Provision: provisioned, Lane: lane, HostFaults: faults,
	})
	endDeletion()
	for _, r := range res.Reports() {
		io.Infof("%s", cost.CostLine(r).Format())
	}

	outputs := res.Outputs()
	outputs.CostArtifactName = artifactName(io, current, in.JobCheckRunID)
	if dirErr != nil {
		runErr = errors.Join(runErr, dirErr)
	} else {
		outputs.CostArtifactPath = writeArtifact(io, artifactDir, res)
	}
	if err := actionio.WriteOutputs[cleanup.Outputs](io, outputs); err != nil {
		io.Warningf("%v", err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}

// reportInputs reads provision's outputs the report rests on; a bad one
// warns and reads as unknown: it must never stop a deletion.
func reportInputs(io *actionio.IO, in Inputs) (cost.Snapshot, cost.ProvisionAttempts) {
	snapshot, err := cost.ParseSnapshot(in.PricePerHour, in.StartedAt, in.GPUType, in.Tier)
	if err != nil {
		io.Warningf("%v; the cost report treats it as unknown", err)
	}
	provisioned, err := cost.ParseProvisionAttempts(in.RejectedAttempts)
	if err != nil {
		io.Warningf("%v; the cost report leaves provision's rejected candidates out", err)
	}
	return snapshot, provisioned
}

// laneInputs reads the lane's record and host faults; a bad one warns and
// reads as absent: it must never stop a deletion (the pods of the run
// attempt are still found by their tags).
func laneInputs(io *actionio.IO, in Inputs) (*lanetiers.Record, []lanetiers.HostFault) {
	lane, err := lanetiers.ParseRecord(in.Tiers)
	if err != nil {
		io.Warningf("input tiers: %v; the run attempt's pods are found by their tags and reported as one", err)
		lane = nil
	}
	faults, err := lanetiers.ParseHostFaults(in.HostFaults)
	if err != nil {
		io.Warningf("input host-faults: %v; no pod is reported as lost to its host", err)
		faults = nil
	}
	return lane, faults
}

// artifactName names the cost artifact for this job (job-check-run-id), the
// only name the cost history counts; without the job a warning says so.
func artifactName(io *actionio.IO, current actionkit.Run, job int64) string {
	if job > 0 {
		return cost.JobArtifactName(current.ID, current.Attempt, job)
	}
	name := cost.ArtifactName(current.ID, current.Attempt)
	io.Warningf("job-check-run-id is empty: the cost artifact %s names no job, so the cost history will not count it; pass ${{ job.check_run_id }}", name)
	return name
}

// writeArtifact writes the cost artifact into dir and returns its path
// relative to the workspace, which is where upload-artifact resolves it
// outside this container; "" (with a warning) when it could not.
func writeArtifact(io *actionio.IO, dir string, res cleanup.Result) string {
	path, err := cleanup.WriteArtifact(dir, res.Artifact())
	var file []byte
	if err == nil {
		file, err = os.ReadFile(path)
	}
	if err != nil {
		io.Warningf("%v", err)
		return ""
	}
	// The seal in this job's log is what makes the file count: the cost
	// history ignores an artifact no lane job's log vouches for.
	io.Infof("%s", cost.SealLine(file).Format())
	rel, err := io.WorkspaceRelative(dir)
	if err != nil {
		io.Warningf("%v", err)
		return ""
	}
	return filepath.Join(rel, cost.ArtifactFileName)
}
