// Package reap is the scheduled orphan reaper: it reclaims this repository's
// pods whose workflow run is over, superseded or past the lifetime backstop,
// and the Serverless lane's endpoints and templates whose run is over or
// whose 30-minute cleanup deadline (plus a margin) has passed,
// and writes a decision record for upload. A manual dispatch is a dry run
// unless execute is true. With the organization input it sweeps every
// repository of the organization through the App instead (org.go).
package reap

import (
	"context"
	"errors"
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

// Run is the reap action: it reads its inputs and writes its outputs and job
// summary through io. actions/reap/main.go and the image's multi-call binary
// (role reap) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	execute, err := io.Bool("execute", false)
	if err != nil {
		return err
	}
	// Whole hours: a debug pod is kept for inspection at most this long, then reclaimed.
	capHours, err := io.Int("retention-cap-hours", int64(reap.DefaultRetentionCap/time.Hour),
		int64(reap.MinRetentionCap/time.Hour), int64(reap.MaxRetentionCap/time.Hour))
	if err != nil {
		return err
	}
	// The record is written where the input says: only inside the workspace,
	// where the upload step reads it, never over a file elsewhere.
	path, err := io.PathInput("record-path", reap.DefaultRecordPath, actionio.RootWorkspace)
	if err != nil {
		return err
	}
	relPath, err := io.WorkspaceRelative(path)
	if err != nil {
		return err
	}
	if org := io.Input(inputOrganization); org != "" {
		return runOrg(ctx, io, org, execute, time.Duration(capHours)*time.Hour, path, relPath) // org.go
	}
	owner, repo, err := actionkit.Repository(io)
	if err != nil {
		return err
	}
	rp, policy, err := actionkit.RunPod(io)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	event := io.Getenv("GITHUB_EVENT_NAME")
	sweeper := &reap.Sweeper{Pods: rp, GitHub: gh, Deleter: &lifecycle.Deleter{Pods: rp, Policy: policy, Logf: io.Infof}, Logf: io.Infof}
	endSweep := io.Phase("sweep: this repository's pods and Serverless endpoints")
	rec, sweepErr := sweeper.Sweep(ctx, reap.Request{
		Scope:   reap.Scope{Repository: owner + "/" + repo, Workflows: io.Lines("workflows")},
		Execute: reap.ShouldExecute(event, execute), Event: event,
		RetentionCap: time.Duration(capHours) * time.Hour,
	})
	// The Serverless lane's orphans: endpoints and templates of this
	// repository's runs whose run is over or whose cleanup deadline has passed.
	slsSweeper := &reap.ServerlessSweeper{API: rp, GitHub: gh, Logf: io.Infof}
	var slsErr error
	rec.Serverless, slsErr = slsSweeper.Sweep(ctx, owner+"/"+repo, rec.Execute)
	endSweep()

	// The record and summary are written whatever happened: they are the evidence.
	errs := []error{sweepErr, slsErr, rec.WriteFile(path)}
	errs = append(errs, actionio.WriteOutputs[outputs](io, outputs{DecisionRecord: relPath, Execute: rec.Execute,
		ReclaimPodIDs: strings.Join(rec.PodIDs(reap.DecisionReclaim), ","), ErrorPodIDs: strings.Join(rec.PodIDs(reap.DecisionError), ",")}))
	if err := io.AddSummary(rec.Markdown() + reap.ServerlessMarkdown(rec.Serverless, rec.Execute)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return errors.Join(errs...)
}
