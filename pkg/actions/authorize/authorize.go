// Package authorize is the job before any spend: it decides whether this
// trigger runs the paid GPU path, reuses an earlier gate for the same tested
// ref, or skips, and refuses (non-zero exit) triggers that must not spend.
package authorize

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/version"
	"github.com/org/runpod-gpu/pkg/wire"
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
	gateApp = gatecheck.TrustedGateApp(gateApp, appID)
	// Each GitHub read gets this long, retries and waits included, so a stalled
	// answer ends the job unauthorized instead of at the step timeout.
	readTimeout, err := io.Int("github-timeout-seconds", int64(gatecheck.DefaultReadTimeout/time.Second), 1, 600)
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
	earlier, err := earlierHeads(io)
	if err != nil {
		return err
	}
	claim, err := claimOptions(io, cfg)
	if err != nil {
		return err
	}
	isGPUPath := cfg.IsGPUPath
	if slices.Equal(cfg.GPUPaths, []string{"**"}) {
		isGPUPath = nil // every path needs the GPU: no need to list the PR's files
	}
	var a gate.Authorization
	var lane *gatecheck.LaneDefinition
	if authErr == nil {
		lane = laneDefinition(ctx, io, cfg)
		a, authErr = gate.Authorize(ctx, gh, gate.AuthorizeRequest{
			Repository: io.Getenv("GITHUB_REPOSITORY"), PRNumber: int(pr),
			ExpectedHeadSHA: io.Input("expected-head-sha"), DispatchSHA: io.InputOr("dispatch-sha", io.Getenv("GITHUB_SHA")),
			Actor:        or(io.Getenv("GITHUB_TRIGGERING_ACTOR"), io.Getenv("GITHUB_ACTOR")),
			IsGPUPath:    isGPUPath,
			Reuse:        gatecheck.ReuseQuery{CheckName: io.Input("check-name"), AppID: gateApp},
			ReadTimeout:  time.Duration(readTimeout) * time.Second,
			ForkApproval: approval,
			Lane:         lane, EarlierHeads: earlier, Claim: claim,
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
	if lane != nil && a.TreeKey != nil {
		outputs.LaneImage = lane.ImageDigest // the gate records the key only if the pod ran this image
	}
	return actionio.WriteOutputs[gate.AuthorizeOutputs](io, outputs)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// laneDefinition gathers what defines the lane for the tree key. A part that
// cannot be had (no test-command, an unresolvable image) stays empty, so the
// key is not made and only the exact tested ref can be reused (fail open).
func laneDefinition(ctx context.Context, io *actionio.IO, cfg *config.Config) *gatecheck.LaneDefinition {
	canonical, err := json.Marshal(cfg)
	if err != nil {
		io.Warningf("tree key: the configuration does not encode (%v): no tree key", err)
		canonical = nil
	}
	lane := &gatecheck.LaneDefinition{Config: canonical, TestCommand: io.Input("test-command"),
		Workflow: io.InputOr("lane-ref", io.Getenv("GITHUB_WORKFLOW_REF")), Version: version.Version}
	if lane.TestCommand == "" {
		return lane // no key anyway: do not resolve the image for nothing
	}
	rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	resolver := &registry.Resolver{APIURL: io.Input("registry-api-url"), Logf: func(s string) { io.Infof("%s", s) }}
	if lane.ImageDigest, err = resolver.Resolve(rctx, cfg.Image); err != nil {
		io.Warningf("tree key: runner image: %v; only this exact tested ref can be reused", err)
	}
	return lane
}

// earlierHeads are the PR's earlier heads whose gates may match by tree: the
// earlier-head-shas input and, on a pull_request synchronize, the event's
// "before" (the head this push replaced). An unreadable payload adds nothing.
func earlierHeads(io *actionio.IO) ([]string, error) {
	var out []string
	for _, sha := range io.Lines("earlier-head-shas") {
		if !wire.IsCommitSHA(sha) {
			return nil, &actionio.InputError{Input: "earlier-head-shas", Value: sha, Expected: "one " + actionio.SHAForm + " a line"}
		}
		out = append(out, sha)
	}
	switch io.Getenv("GITHUB_EVENT_NAME") {
	case "pull_request", "pull_request_target":
		raw, err := os.ReadFile(io.Getenv("GITHUB_EVENT_PATH"))
		if err != nil {
			return out, nil
		}
		var ev struct {
			Action string `json:"action"`
			Before string `json:"before"`
		}
		if json.Unmarshal(raw, &ev) == nil && ev.Action == "synchronize" && wire.IsCommitSHA(ev.Before) {
			out = append(out, ev.Before)
		}
	}
	return out, nil
}

// claimOptions configures the in-progress gate: published before any spend,
// so a second lane for the same key waits for this one instead of paying.
func claimOptions(io *actionio.IO, cfg *config.Config) (*gate.ClaimOptions, error) {
	on, err := io.Bool("in-progress-gate", false) // on only where the gate job completes it (in-progress-check-run-id)
	if err != nil || !on {
		return nil, err
	}
	wait, err := io.Duration("lane-wait-seconds", 240*time.Second, 0, 6*time.Hour)
	if err != nil {
		return nil, err
	}
	poll, err := io.Duration("lane-poll-seconds", 15*time.Second, time.Second, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	runURL := "" // the in-progress gate's link to this run; none is no reason to refuse
	if current, err := actionkit.CurrentRun(io); err == nil {
		runURL = current.URL()
	}
	return &gate.ClaimOptions{LaneBound: LaneBound(cfg), Wait: wait, Poll: poll, RunURL: runURL,
		Logf: func(format string, args ...any) { io.Infof("%s", fmt.Sprintf(format, args...)) }}, nil
}

// LaneBound is the longest a lane can take from authorize to its gate: every
// candidate's startup budget, the accepted pod's lifetime bound, and a margin
// for queued jobs. An in-progress gate older than that belongs to a lane that vanished.
func LaneBound(cfg *config.Config) time.Duration {
	return time.Duration(max(cfg.MaxProvisionAttempts, 1))*cfg.StartupTimeout() + cfg.Lifetime() + 15*time.Minute
}
