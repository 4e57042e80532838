// Package cleanup is the cleanup-runpod action (if: always()): it deletes the
// run attempt's pods — the published one and any provision never published —
// and then reports what the accepted pod cost.
package cleanup

import (
	"context"
	"errors"
	"math"
	"path/filepath"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cleanup"
	"github.com/org/runpod-gpu/pkg/cost"
)

// Run is the cleanup action: it reads its inputs and writes its outputs and job
// summary through io. actions/cleanup/main.go and the image's multi-call binary
// (role cleanup) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	rp, policy, err := actionkit.RunPod(io)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	// Inputs that only feed the report never stop a deletion: they warn and read as unknown.
	pr, err := io.Int("pr-number", 0, 0, math.MaxInt32)
	if err != nil {
		io.Warningf("%v; the cost artifact records no pull request", err)
	}
	tested, err := io.SHA("tested-ref", false)
	if err != nil {
		io.Warningf("%v; the cost artifact records no tested ref", err)
	}
	snapshot, err := cost.ParseSnapshot(io.Input("price-per-hour"), io.Input("started-at"), io.Input("gpu-type"), io.Input("tier"))
	if err != nil {
		io.Warningf("%v; the cost report treats it as unknown", err)
	}
	provisioned, err := cost.ParseProvisionAttempts(io.Input("rejected-attempts"))
	if err != nil {
		io.Warningf("%v; the cost report leaves provision's rejected candidates out", err)
	}
	// The artifact directory must lie inside the workspace (upload-artifact
	// reads it from there); a bad one never stops the deletion, but fails the
	// step after it, with no artifact written.
	artifactDir, dirErr := io.PathInput("artifact-dir", cleanup.DefaultArtifactDir, actionio.RootWorkspace)
	deps := cleanup.Deps{RunPod: rp, Policy: policy, Logf: io.Infof, Warnf: io.Warningf}
	// Where the runner's registration is removed; a bad scope never stops the deletion.
	scope, org, scopeErr := actionkit.RunnerScope(io)
	if scopeErr != nil {
		io.Warningf("%v; the runner's registration is looked up at repository scope only", scopeErr)
	}
	if gh, err := actionkit.GitHub(ctx, io, org); err != nil {
		io.Warningf("GitHub client: %v; the stage breakdown will be unknown", err)
	} else {
		deps.Jobs = gh
	}

	endDeletion := io.Phase("deletion: this run's pods, then their cost")
	res, runErr := cleanup.Run(ctx, deps, cleanup.Request{
		PodID: io.Input("pod-id"), RetainedPodIDs: cleanup.ParseIDs(io.Input("retained-pod-ids")),
		Run: cost.Run{Repository: current.Repository, ID: current.ID, Attempt: current.Attempt, TestedRef: tested,
			Trigger: cleanup.TriggerOf(io.Getenv("GITHUB_EVENT_NAME")), PRNumber: int(pr)},
		Snapshot: snapshot, RunnerLabel: io.Input("runner-label"), RunnerScope: scope, TestStep: io.Input("test-step-name"),
		Provision: provisioned,
	})
	endDeletion()
	io.Infof("%s", cost.CostLine(res.Report).Format())

	outputs := res.Outputs()
	if dirErr != nil {
		runErr = errors.Join(runErr, dirErr)
	} else if _, err := cleanup.WriteArtifact(artifactDir, res.Artifact()); err != nil {
		io.Warningf("%v", err)
	} else if rel, err := io.WorkspaceRelative(artifactDir); err != nil {
		io.Warningf("%v", err)
	} else {
		// Relative to the workspace, which is where upload-artifact resolves it outside this container.
		outputs.CostArtifactPath = filepath.Join(rel, cost.ArtifactFileName)
	}
	if err := actionio.WriteOutputs[cleanup.Outputs](io, outputs); err != nil {
		io.Warningf("%v", err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}
