// Package provision is the start-runpod action: it provisions the cheapest
// reviewed GPU pod that proves CUDA works and registers a single-use runner.
package provision

import (
	"context"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
)

// Set by the release build (-ldflags -X): the proof binary shipped with this version.
var defaultProofURL, defaultProofSHA256 string

// Run is the provision action: it reads its inputs and writes its outputs and job
// summary through io. actions/provision/main.go and the image's multi-call binary
// (role provision) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	cfg, err := actionkit.Config(io)
	if err != nil {
		return err
	}
	pr, err1 := io.Int("pr-number", 0, 0, 1<<31)
	group, err2 := io.Int("runner-group-id", 1, 1, 1<<53)
	keep, err3 := io.Bool("keep-failed-pods", false)
	appID, err4 := io.Int(actionkit.InputAppID, 0, 0, 1<<53)
	gateApp, err5 := io.Int("gate-app-id", 0, 1, 1<<53) // 0 never means any app: see gatecheck.TrustedGateApp
	head, err6 := io.SHA("expected-head-sha", pr > 0)   // authorize's pinned head, also for a manual dispatch
	tested, err7 := io.SHA("tested-ref", false)
	key, err8 := gatecheck.ParseTreeKey(io.Input("tree-key")) // authorize's: the lookup also matches the same tree and lane
	if err8 != nil {
		err8 = &actionio.InputError{Input: "tree-key", Value: io.Input("tree-key"), Expected: "authorize's tree-key output (tree:<sha>:lane:<digest>), or empty"}
	}
	if err := firstErr(err1, err2, err3, err4, err5, err6, err7, err8); err != nil {
		return err
	}
	scope, org, err := actionkit.RunnerScope(io)
	if err != nil {
		return err
	}
	rp, policy, err := actionkit.RunPod(io)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, org)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	rep, note, problem := provision.LoadReputation("reputation-file", io.Input("reputation-file"))
	if problem != nil {
		io.Warningf("%v: candidates in the seed's order", problem)
	}
	if note != "" {
		io.Infof("%s", note)
	}
	res, runErr := provision.Run(ctx, provision.Deps{
		RunPod: rp, GitHub: gh, Policy: policy, Observer: newObserver(io),
		Images: &registry.Resolver{APIURL: io.Input("registry-api-url"), Logf: func(s string) { io.Infof("%s", s) }},
	}, provision.Request{
		Config: cfg, LabelPrefix: io.InputOr("runner-label-prefix", "runpod-gpu"), RunnerGroupID: group, Scope: scope,
		Owner:    ownership.Tags{Repository: current.Repository, Workflow: current.Workflow, RunID: current.ID, Attempt: current.Attempt},
		PRNumber: int(pr), ExpectedHeadSHA: head, TestedRef: tested,
		Reuse:          gatecheck.ReuseQuery{CheckName: io.Input("check-name"), AppID: gatecheck.TrustedGateApp(gateApp, appID), Key: key},
		KeepFailedPods: keep,
		ProofURL:       io.InputOr("proof-url", defaultProofURL), ProofSHA256: io.InputOr("proof-sha256", defaultProofSHA256),
		RunnerDir:  io.Input("runner-dir"), // where the pod image keeps run.sh; empty: the official image's
		Reputation: rep,
	})
	if err := actionio.WriteOutputs[provision.Outputs](io, res.Outputs()); err != nil {
		runErr = firstErr(runErr, err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
