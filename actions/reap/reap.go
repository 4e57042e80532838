// Package reapaction is the reap action, the scheduled orphan reaper: it reclaims this repository's
// pods whose workflow run is over, superseded or past the lifetime backstop,
// and the Serverless lane's endpoints and templates whose run is over or
// whose 30-minute cleanup deadline (plus a margin) has passed,
// and writes a decision record for upload. A manual dispatch is a dry run
// unless execute is true. With the organization input it sweeps every
// repository of the organization through the App instead (org.go).
package reapaction

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reap"
)

// outputs are the reap action's outputs.
type outputs struct {
	DecisionRecord string `output:"decision-record"`
	Execute        bool   `output:"execute"`
	ReclaimPodIDs  string `output:"reclaim-pod-ids"`
	ErrorPodIDs    string `output:"error-pod-ids"`
}

// Action is the reap action, as the image's program runs it (role reap).
var Action = actionkit.NewAction(run, reflect.TypeFor[outputs]())

// Inputs are the reap action's inputs.
type Inputs struct {
	actionkit.RunPodInputs
	actionkit.GitHubInputs `desc.github-token:"Token that can read workflow runs and artifacts and cancel runs (actions read/write), used when app-id is empty." desc.app-id:"GitHub App id to authenticate with instead of github-token." desc.app-installation-id:"The App's installation id on this repository (required with app-id)."`

	Execute   bool     `input:"execute" default:"false" desc:"Delete the pods decided for reclaim. Scheduled sweeps always execute; for any other event (a manual dispatch above all) the default false is a dry run that decides and records the same but deletes nothing."`
	Workflows []string `input:"workflows" default:"" desc:"Workflow paths whose pods may be reclaimed and whose runs may be cancelled past the backstop, one per line (e.g. .github/workflows/gpu.yml). Empty means the lane's files, .github/workflows/runpod-gpu.yml and .github/workflows/local-gpu-gate.yml; a pod of any other workflow is left alone and its run is never cancelled. The owning run must match the pod's tags either way."`
	// RetentionCapHours: a debug pod is kept for inspection at most this long
	// (reap.MinRetentionCap to reap.MaxRetentionCap), then reclaimed.
	RetentionCapHours int64 `input:"retention-cap-hours" default:"24" min:"1" max:"720" desc:"Debug-retained pods (kept for inspection by keep-failed-pods and recorded in a runpod-debug-retained artifact) are reclaimed once active longer than this many hours, the record notwithstanding. A whole number from 1 to 720."`
	// RecordPath lies only inside the workspace, where the upload step reads
	// it, never over a file elsewhere.
	RecordPath   string `input:"record-path" default:"runpod-gpu-reap-record.json" path:"GITHUB_WORKSPACE" desc:"Where to write the JSON decision record, relative to the workspace and inside it, symbolic links resolved (upload it with actions/upload-artifact)."`
	Organization string `input:"organization" default:"" desc:"Organization mode, for a scheduled workflow in the organization's admin repository: sweep the pods of every repository of this organization (the login) that the ownership tags name, each checked through the App's installation on that repository (app-id and app-private-key required; app-installation-id and github-token are not used). Pods of other organizations, of repositories left out by repositories, and of repositories the App cannot see are never touched. Empty sweeps this repository only. The Serverless part runs only without it."`
	// Repositories and RateLimitReserve belong to the organization mode (org.go).
	Repositories     []string `input:"repositories" default:"" desc:"With organization, the repositories to sweep, one per line (name or org/name); empty sweeps all."`
	RateLimitReserve int64    `input:"rate-limit-reserve" default:"10" max:"90" desc:"With organization, the percentage (0 to 90) of each RunPod and GitHub rate-limit window left to the lanes sharing the key: below it the sweep waits for the window's reset, or defers the remaining repositories to the next sweep when the wait does not fit its 10 minutes."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	relPath, err := io.WorkspaceRelative(in.RecordPath)
	if err != nil {
		return err
	}
	retentionCap := time.Duration(in.RetentionCapHours) * time.Hour
	if in.Organization != "" {
		return runOrg(ctx, io, in, retentionCap, relPath) // org.go
	}
	owner, repo, err := actionkit.Repository(io)
	if err != nil {
		return err
	}
	rp, policy, err := actionkit.RunPod(io, in.RunPodInputs)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, "")
	if err != nil {
		return err
	}
	event := io.Getenv("GITHUB_EVENT_NAME")
	sweeper := &reap.Sweeper{Pods: rp, GitHub: gh, Deleter: &lifecycle.Deleter{Pods: rp, Policy: policy, Logf: io.Infof}, Logf: io.Infof}
	endSweep := io.Phase("sweep: this repository's pods and Serverless endpoints")
	rec, sweepErr := sweeper.Sweep(ctx, reap.Request{
		Scope:   reap.Scope{Repository: owner + "/" + repo, Workflows: in.Workflows},
		Execute: reap.ShouldExecute(event, in.Execute), Event: event,
		RetentionCap: retentionCap,
	})
	// The Serverless lane's orphans: endpoints and templates of this
	// repository's runs whose run is over or whose cleanup deadline has passed.
	slsSweeper := &reap.ServerlessSweeper{API: rp, GitHub: gh, Logf: io.Infof}
	var slsErr error
	rec.Serverless, slsErr = slsSweeper.Sweep(ctx, owner+"/"+repo, rec.Execute)
	endSweep()

	// The record and summary are written whatever happened: they are the evidence.
	errs := []error{sweepErr, slsErr, rec.WriteFile(in.RecordPath)}
	errs = append(errs, actionio.WriteOutputs[outputs](io, outputs{DecisionRecord: relPath, Execute: rec.Execute,
		ReclaimPodIDs: strings.Join(rec.PodIDs(reap.DecisionReclaim), ","), ErrorPodIDs: strings.Join(rec.PodIDs(reap.DecisionError), ",")}))
	if err := io.AddSummary(rec.Markdown() + reap.ServerlessMarkdown(rec.Serverless, rec.Execute)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return errors.Join(errs...)
}
