// Package authorize is the job before any spend: it decides whether this
// trigger runs the paid GPU path, reuses an earlier gate for the same tested
// ref, or skips, and refuses (non-zero exit) triggers that must not spend.
package authorize

import (
	"context"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/gate"
)

// Run is the authorize action: it reads its inputs and writes its outputs and job
// summary through io. actions/authorize/main.go and the image's multi-call binary
// (role authorize) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	cfg, err := actionkit.Config(io)
	if err != nil {
		return err
	}
	pr, err := io.Int("pr-number", 0, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	appID, err := io.Int(actionkit.InputAppID, 0, 0, 1<<53)
	if err != nil {
		return err
	}
	// Gates count only from the app named, else our App, else GitHub Actions
	// (token mode); never from any app, so 0 is refused rather than widened.
	gateApp, err := io.Int("gate-app-id", 0, 1, 1<<53)
	if err != nil {
		return err
	}
	gateApp = gate.TrustedGateApp(gateApp, appID)
	// Each GitHub read gets this long, retries and waits included, so a stalled
	// answer ends the job unauthorized instead of at the step timeout.
	readTimeout, err := io.Int("github-timeout-seconds", int64(gate.DefaultReadTimeout/time.Second), 1, 600)
	if err != nil {
		return err
	}
	approvedSHA, err := io.SHA("approved-fork-sha", false)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	// The approval a fork PR needs: a dispatch naming the reviewed head, or the
	// approval label's own labeled event. Anything unreadable is no approval.
	approval, authErr := gate.ForkApprovalFromTrigger(gate.ApprovalTrigger{
		EventName: io.Getenv("GITHUB_EVENT_NAME"), Actor: io.Getenv("GITHUB_ACTOR"),
		ApprovedSHA: approvedSHA, Label: io.InputOr("fork-approval-label", gate.ApprovalLabel), PRNumber: int(pr),
		Payload: func() ([]byte, error) { return os.ReadFile(io.Getenv("GITHUB_EVENT_PATH")) },
	})
	isGPUPath := cfg.IsGPUPath
	if slices.Equal(cfg.GPUPaths, []string{"**"}) {
		isGPUPath = nil // every path needs the GPU: no need to list the PR's files
	}
	var a gate.Authorization
	if authErr == nil {
		a, authErr = gate.Authorize(ctx, gh, gate.AuthorizeRequest{
			Repository: io.Getenv("GITHUB_REPOSITORY"), PRNumber: int(pr),
			ExpectedHeadSHA: io.Input("expected-head-sha"), DispatchSHA: io.InputOr("dispatch-sha", io.Getenv("GITHUB_SHA")),
			Actor:        or(io.Getenv("GITHUB_TRIGGERING_ACTOR"), io.Getenv("GITHUB_ACTOR")),
			IsGPUPath:    isGPUPath,
			Reuse:        gate.ReuseQuery{CheckName: io.Input("check-name"), AppID: gateApp},
			ReadTimeout:  time.Duration(readTimeout) * time.Second,
			ForkApproval: approval,
		})
	}
	if err := io.AddSummary(a.Summary(authErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	if authErr != nil {
		return authErr // nothing may be spent: no outputs, so no later job can mistake this for a decision
	}
	io.Infof("decision: %s (%s)", a.Outcome, a.Reason)
	outputs := a.Outputs()
	//runpod-gpu:outputs decision,reason,tested-ref,head-sha,gate-kind,reused-check-url
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		if err := io.SetOutput(name, outputs[name]); err != nil {
			return err
		}
	}
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
