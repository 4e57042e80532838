// Package authorizeaction is the authorize action, the job before any spend: it decides whether this
// trigger runs the paid GPU path, reuses an earlier gate for the same tested
// ref, or skips, and refuses (non-zero exit) triggers that must not spend.
package authorizeaction

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
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

// Action is the authorize action, as the image's program runs it (role authorize).
var Action = actionkit.NewAction(run, reflect.TypeFor[gate.AuthorizeOutputs](), reflect.TypeFor[provisionTimeouts]())

// provisionTimeouts are the provision job's timeouts from the configuration
// (config.ProvisionMinutes): gpu-lane.yml's provision jobs take their
// timeout-minutes from them, so a matrix lane's tiers fit.
type provisionTimeouts struct {
	StepMinutes string `output:"provision-minutes"`
	JobMinutes  string `output:"provision-job-minutes"`
}

// Inputs are the authorize action's inputs.
type Inputs struct {
	actionkit.GitHubInputs `desc.github-token:"Token that reads the PR, its files, collaborator roles and check runs, used when app-id is empty." desc.app-id:"GitHub App id to read GitHub with (preferred over github-token); also the default gate-app-id." desc.app-installation-id:"The App's installation id on this repository (required with app-id)."`
	actionkit.ConfigInput  `desc.config-path:"Path of the runpod-gpu configuration, inside the workspace; its gpu_paths decide whether a PR needs the GPU."`
	actionkit.RunnerImageInput

	PRNumber          int64              `input:"pr-number" default:"0" max:"2147483647" desc:"Pull request that triggered the run; 0 is a manual validation of dispatch-sha."`
	ExpectedHeadSHA   string             `input:"expected-head-sha" form:"sha" default:"" desc:"The PR head the trigger was for (github.event.pull_request.head.sha); a moved head is a skip."`
	DispatchSHA       string             `input:"dispatch-sha" default:"" desc:"Resolved commit SHA a manual validation (pr-number 0) tests; empty means GITHUB_SHA."`
	ApprovedForkSHA   actionio.CommitSHA `input:"approved-fork-sha" default:"" desc:"Fork PRs, and PRs whose author is below admin/maintain: the head SHA an admin or maintainer reviewed and approves for one paid run. Honoured only on workflow_dispatch, from the dispatcher (GITHUB_ACTOR) with role admin or maintain; any other head is refused, so a push after the approval voids it, and the PR's merge commit must merge exactly this head (parents base and head, mergeable)."`
	ForkApprovalLabel string             `input:"fork-approval-label" form:"label" default:"gpu-approved" desc:"Fork PRs, and PRs whose author is below admin/maintain: on a pull_request_target labeled event adding this label, the head in the event is approved if the sender is admin or maintain, their latest review verdict on the PR is an approval at exactly that head, and the label is still on the PR."`
	CheckName         string             `input:"check-name" form:"name" default:"CI GPU gate" desc:"Name of the gate check whose earlier success can be reused."`
	// GateAppID: gates count only from the app named, else our App, else
	// GitHub Actions (token mode); never from any app, so 0 is refused rather than widened.
	GateAppID int64 `input:"gate-app-id" default:"" min:"1" desc:"Only gates published by this app count for reuse. Empty means app-id, or without an App GitHub Actions (15368), which is who github.token publishes as. Gates from any other app never count; 0 is refused."`
	// ReadTimeout: each GitHub read gets this long, retries and waits included,
	// so a stalled answer ends the job unauthorized instead of at the step timeout.
	ReadTimeout     time.Duration       `input:"github-timeout-seconds" default:"60" min:"1" max:"600" desc:"Deadline of each GitHub read (roles, PR, files, reuse lookup), retries and rate-limit waits included, 1 to 600. A read that does not finish in time fails the step unauthorized, with nothing spent; a stalled reuse lookup answers run."`
	TestCommand     string              `input:"test-command" default:"" desc:"The command the GPU job runs. With it the tree key is made: the merge commit's tree plus a digest of the configuration, this command, the runner image digest, lane-ref and the suite's version. A later trigger whose merge tree and lane are identical (an amended message, a rebase with no change, an unrelated base commit) then reuses this lane's gate. Empty: no tree key, and only the exact tested ref is reused."`
	LaneRef         string              `input:"lane-ref" form:"ref" default:"" desc:"The lane's workflow file and ref, part of the lane digest; empty means GITHUB_WORKFLOW_REF."`
	RegistryAPIURL  actionio.ServiceURL `input:"registry-api-url" default:"" desc:"Registry API base URL used to resolve the runner image digest for the lane digest: https, without user info (http only on a loopback host); empty means the image's own host."`
	EarlierHeadSHAs []string            `input:"earlier-head-shas" default:"" desc:"Earlier heads of the PR (one SHA a line) whose gates may match by tree key, looked at before those authorize finds itself in the PR's head history (its force-pushes and pushed commits: one read of 30 items; at most 3 earlier heads are listed). On a pull_request synchronize event the event's before SHA is added by itself."`
	// InProgressGate is on only where the gate job completes it (in-progress-check-run-id).
	InProgressGate bool          `input:"in-progress-gate" default:"false" desc:"Publish the gate as in progress before any spend (needs checks: write), so a second lane for the same tested ref or tree never pays: on the same head it follows this one (a queued follow gate this lane's gate completes, however long the GPU job runs), on another head it waits up to lane-wait-seconds. If it cannot be published, the lane pays without it. Turn it on only where the gate action completes it (pass gate-check-run-id as its in-progress-check-run-id), or it stays in progress."`
	LaneWait       time.Duration `input:"lane-wait-seconds" default:"240" max:"21600" desc:"The most this lane waits for another lane's in-progress gate for the same key on another head (0 to 21600); keep it inside the step's timeout. A lane for the same head never waits: it follows. A gate still in progress after that, one that failed, or one whose workflow run completed without completing it (read with github-token; unreadable, older than the lane's generous bound) is paid for."`
	LanePoll       time.Duration `input:"lane-poll-seconds" default:"15" min:"1" max:"600" desc:"Pause between looks at the other lane's gate while waiting (1 to 600)."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	cfg, err := actionkit.LaneConfig(io, in.ConfigPath, in.RunnerImageInput)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, "")
	if err != nil {
		return err
	}
	// The approval a fork PR needs: a dispatch naming the reviewed head, or the
	// approval label's own labeled event. Anything unreadable is no approval.
	approval, authErr := gate.ForkApprovalFromTrigger(gate.ApprovalTrigger{
		EventName: io.Getenv("GITHUB_EVENT_NAME"), Actor: io.Getenv("GITHUB_ACTOR"),
		ApprovedSHA: string(in.ApprovedForkSHA), Label: cmp.Or(in.ForkApprovalLabel, gate.ApprovalLabel), PRNumber: int(in.PRNumber),
		Payload: func() ([]byte, error) { return os.ReadFile(io.Getenv("GITHUB_EVENT_PATH")) },
	})
	earlier, err := earlierHeads(io, in.EarlierHeadSHAs)
	if err != nil {
		return err
	}
	group, groupErr := mergeGroup(io, in)
	if authErr == nil {
		authErr = groupErr
	}
	claim := claimOptions(ctx, io, in, cfg)
	isGPUPath := cfg.IsGPUPath
	if slices.Equal(cfg.GPUPaths, []string{"**"}) {
		isGPUPath = nil // every path needs the GPU: no need to list the PR's files
	}
	var a gate.Authorization
	var lane *gatecheck.LaneDefinition
	if authErr == nil {
		lane = laneDefinition(ctx, io, in, cfg, group)
		a, authErr = gate.Authorize(ctx, gh, gate.AuthorizeRequest{
			Repository: io.Getenv("GITHUB_REPOSITORY"), PRNumber: int(in.PRNumber),
			ExpectedHeadSHA: in.ExpectedHeadSHA, DispatchSHA: cmp.Or(in.DispatchSHA, io.Getenv("GITHUB_SHA")),
			Actor:        cmp.Or(io.Getenv("GITHUB_TRIGGERING_ACTOR"), io.Getenv("GITHUB_ACTOR")),
			IsGPUPath:    isGPUPath,
			Reuse:        gatecheck.ReuseQuery{CheckName: in.CheckName, AppID: gatecheck.TrustedGateApp(in.GateAppID, in.AppID)},
			ReadTimeout:  in.ReadTimeout,
			ForkApproval: approval,
			Lane:         lane, EarlierHeads: earlier, Claim: claim, MergeGroup: group,
		})
	}
	if err := io.AddSummary(a.Summary(authErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	if authErr != nil {
		return authErr // nothing may be spent: no outputs, so no later job can mistake this for a decision
	}
	io.Infof("decision: %s (%s)", a.Outcome, a.Reason)
	return writeOutputs(io, a, lane, cfg)
}

// writeOutputs writes the decision's outputs and the provision job's timeouts.
func writeOutputs(io *actionio.IO, a gate.Authorization, lane *gatecheck.LaneDefinition, cfg *config.Config) error {
	step, job := cfg.ProvisionMinutes()
	if err := actionio.WriteOutputs[provisionTimeouts](io, provisionTimeouts{StepMinutes: strconv.Itoa(step), JobMinutes: strconv.Itoa(job)}); err != nil {
		return err
	}
	outputs := a.Outputs()
	if lane != nil && a.TreeKey != nil {
		outputs.LaneImage = lane.ImageDigest // the gate records the key only if the pod ran this image
	}
	return actionio.WriteOutputs[gate.AuthorizeOutputs](io, outputs)
}

// laneDefinition gathers what defines the lane for the tree key. A part that
// cannot be had (no test-command, an unresolvable image) stays empty, so the
// key is not made and only the exact tested ref can be reused (fail open).
func laneDefinition(ctx context.Context, io *actionio.IO, in Inputs, cfg *config.Config, group *gate.MergeGroup) *gatecheck.LaneDefinition {
	canonical, err := json.Marshal(cfg)
	if err != nil {
		io.Warningf("tree key: the configuration does not encode (%v): no tree key", err)
		canonical = nil
	}
	workflow := io.Getenv("GITHUB_WORKFLOW_REF")
	if group != nil {
		workflow = group.LaneWorkflow(workflow) // the PR lanes' caller ref, not the queue's branch
	}
	lane := &gatecheck.LaneDefinition{Config: canonical, TestCommand: in.TestCommand,
		Workflow: cmp.Or(in.LaneRef, workflow), Version: version.Version}
	if lane.TestCommand == "" {
		return lane // no key anyway: do not resolve the image for nothing
	}
	rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	resolver := &registry.Resolver{APIURL: in.RegistryAPIURL.String(), Logf: func(s string) { io.Infof("%s", s) }}
	if lane.ImageDigest, err = resolver.Resolve(rctx, cfg.Image); err != nil {
		io.Warningf("tree key: runner image: %v; only this exact tested ref can be reused", err)
	}
	return lane
}

// earlierHeads are the PR's earlier heads whose gates may match by tree: the
// earlier-head-shas input and, on a pull_request synchronize, the event's
// "before" (the head this push replaced). An unreadable payload adds nothing.
func earlierHeads(io *actionio.IO, given []string) ([]string, error) {
	var out []string
	for _, sha := range given {
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

// mergeGroup is the merge queue's group on a merge_group event that names no
// PR (the merge queue caller passes none): its payload, read strictly.
func mergeGroup(io *actionio.IO, in Inputs) (*gate.MergeGroup, error) {
	if io.Getenv("GITHUB_EVENT_NAME") != "merge_group" || in.PRNumber != 0 {
		return nil, nil
	}
	raw, err := os.ReadFile(io.Getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return nil, &gate.RefusedError{Reason: fmt.Sprintf("read the merge_group event payload: %v", err)}
	}
	return gate.MergeGroupFromEvent(raw)
}

// claimOptions configures the in-progress gate: published before any spend,
// so a second lane for the same key waits for this one instead of paying.
// Another lane's stake is alive while the workflow run it names is: runs are
// read with the workflow token (the job's actions: read), which an App
// without Actions permission does not replace; without one, the client's.
func claimOptions(ctx context.Context, io *actionio.IO, in Inputs, cfg *config.Config) *gate.ClaimOptions {
	if !in.InProgressGate {
		return nil
	}
	runURL := "" // the in-progress gate's link to this run; none is no reason to refuse
	if current, err := actionkit.CurrentRun(io); err == nil {
		runURL = current.URL()
	}
	opts := &gate.ClaimOptions{LaneBound: LaneBound(cfg), Wait: in.LaneWait, Poll: in.LanePoll, RunURL: runURL,
		Logf: func(format string, args ...any) { io.Infof("%s", fmt.Sprintf(format, args...)) }}
	if in.AppID > 0 && in.Token != "" {
		if runs, err := actionkit.GitHub(ctx, io, actionkit.GitHubInputs{Token: in.Token}, ""); err == nil {
			opts.Runs = runs
		}
	}
	return opts
}

// LaneBound is the lane bound of cfg (gatecheck.LaneBound): when another
// lane's workflow run cannot be read, its stake is alive that long.
func LaneBound(cfg *config.Config) time.Duration {
	return gatecheck.LaneBound(len(laneTierNames(cfg)), cfg.MaxProvisionAttempts, cfg.StartupTimeout(), cfg.Lifetime())
}

// laneTierNames are the tiers one lane provisions in turn: matrix_tiers, or one.
func laneTierNames(cfg *config.Config) []string {
	if cfg.Matrix() {
		return cfg.MatrixTiers
	}
	return []string{""}
}
