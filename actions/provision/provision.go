// Package provisionaction is the provision action (start-runpod): it
// provisions the cheapest reviewed GPU pod that proves CUDA works and
// registers a single-use runner on it. The work is pkg/provision's.
package provisionaction

import (
	"cmp"
	"context"
	"reflect"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
)

// Set by the release build (-ldflags -X): the proof binary shipped with this version.
var defaultProofURL, defaultProofSHA256 string

// Action is the provision action, as the image's program runs it (role provision).
var Action = actionkit.NewAction(run, reflect.TypeFor[provision.Outputs](), reflect.TypeFor[podOutputs]())

// Inputs are the provision action's inputs.
type Inputs struct {
	actionkit.RunPodInputs
	actionkit.GitHubInputs `desc.github-token:"Token able to mint JIT runner configs and read runners, used when app-id is empty. The workflow token cannot mint them: pass one with repository Administration read & write." desc.app-id:"GitHub App id used to mint JIT runner configs and read runners (preferred over github-token)." desc.app-installation-id:"The App's installation id on this repository or organization (required with app-id)."`
	actionkit.RunnerInputs `desc.runner-scope:"Where runners register, repo or org."`
	actionkit.ConfigInput
	actionkit.RunnerImageInput

	LabelPrefix     string                 `input:"runner-label-prefix" default:"runpod-gpu" desc:"Prefix of the per-attempt runner label <prefix>-<run id>-<run attempt>-c<N>-<16 random hex digits>; the label must fit 64 characters."`
	RunnerGroupID   int64                  `input:"runner-group-id" default:"1" min:"1" desc:"Runner group the JIT runners join (1 is the Default group)."`
	PRNumber        int64                  `input:"pr-number" default:"0" max:"2147483648" desc:"Pull request under test, for obsolescence checks; 0 is a manual validation."`
	ExpectedHeadSHA actionio.CommitSHA     `input:"expected-head-sha" default:"" desc:"The PR head authorize pinned (its head-sha output, also for a manual dispatch), a full commit SHA; required when pr-number is set. A moved head stops provisioning."`
	TestedRef       actionio.CommitSHA     `input:"tested-ref" default:"" desc:"The pinned merge SHA (or dispatched SHA) under test, a full commit SHA; enables the gate reuse lookup."`
	TreeKey         actionkit.TreeKeyInput `input:"tree-key" default:"" want:"authorize's tree-key output (tree:<sha>:lane:<digest>), or empty" desc:"authorize's tree-key output; the reuse lookup then also matches a gate for the identical tree and lane."`
	CheckName       string                 `input:"check-name" default:"CI GPU gate" desc:"Name of the gate check whose earlier success can be reused."`
	// GateAppID 0 never means any app: see gatecheck.TrustedGateApp.
	GateAppID      int64  `input:"gate-app-id" default:"" min:"1" desc:"Only gates published by this app count for reuse. Empty means app-id, or without an App GitHub Actions (15368), which is who github.token publishes as. Gates from any other app never count; 0 is refused."`
	KeepFailedPods bool   `input:"keep-failed-pods" default:"false" desc:"Debug only. Keep rejected pods (still billing) and record their ids for inspection."`
	RegistryAPIURL string `input:"registry-api-url" default:"" desc:"Registry API base URL used to resolve the runner image digest; empty means the image's own host."`
	ProofURL       string `input:"proof-url" default:"" desc:"URL of the CUDA smoke proof binary; empty means the one released with this action."`
	ProofSHA256    string `input:"proof-sha256" default:"" desc:"SHA-256 of the proof binary; empty means the one released with this action."`
	RunnerDir      string `input:"runner-dir" default:"" desc:"Directory of the preinstalled runner (its run.sh) in the pod image; empty means /home/runner, where the official runner image has it. Set it for a custom image or the simulated cloud's hosts."`
	ReputationFile string `input:"reputation-file" default:"" desc:"Path of a reputation record (JSON: earlier attempts' GPU, data center, machine and outcome), e.g. the cost history's runpod-gpu-reputation artifact. With one, candidates are ranked by expected cost to a working runner, pinned to good data centers, pairs that failed twice in a row are avoided for 12 hours, and a pod RunPod places on a machine the record holds bad is deleted before its proof, inside the reviewed allowlist and zones. Set (even to a missing file), each pod's machine is read (one GraphQL call) for the next record. Empty: no reputation; a missing file: the seed's plan; an unreadable or invalid record: a warning, and the seed's plan."`
}

// Validate requires the head authorize pinned whenever a pull request is
// under test (also for a manual dispatch of one).
func (in *Inputs) Validate() error {
	if in.PRNumber > 0 {
		return actionio.RequireSHA("expected-head-sha", in.ExpectedHeadSHA)
	}
	return nil
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	cfg, err := actionkit.Config(io, in.ConfigPath)
	if err != nil {
		return err
	}
	if err := in.RunnerImageInput.Apply(cfg); err != nil {
		return err
	}
	scope, org, err := actionkit.RunnerScope(in.RunnerInputs)
	if err != nil {
		return err
	}
	rp, policy, err := actionkit.RunPod(io, in.RunPodInputs)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, org)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	rep, note, problem := provision.LoadReputation("reputation-file", in.ReputationFile)
	if problem != nil {
		io.Warningf("%v: candidates in the seed's order", problem)
	}
	if note != "" {
		io.Infof("%s", note)
	}
	res, runErr := provision.Run(ctx, provision.Deps{
		RunPod: rp, GitHub: gh, Policy: policy, Observer: newObserver(io),
		Images: &registry.Resolver{APIURL: in.RegistryAPIURL, Logf: func(s string) { io.Infof("%s", s) }},
	}, provision.Request{
		Config: cfg, LabelPrefix: in.LabelPrefix, RunnerGroupID: in.RunnerGroupID, Scope: scope,
		Owner:    ownership.Tags{Repository: current.Repository, Workflow: current.Workflow, RunID: current.ID, Attempt: current.Attempt},
		PRNumber: int(in.PRNumber), ExpectedHeadSHA: string(in.ExpectedHeadSHA), TestedRef: string(in.TestedRef),
		Reuse:          gatecheck.ReuseQuery{CheckName: in.CheckName, AppID: gatecheck.TrustedGateApp(in.GateAppID, in.AppID), Key: in.TreeKey.Key()},
		KeepFailedPods: in.KeepFailedPods,
		ProofURL:       cmp.Or(in.ProofURL, defaultProofURL), ProofSHA256: cmp.Or(in.ProofSHA256, defaultProofSHA256),
		RunnerDir:  in.RunnerDir, // where the pod image keeps run.sh; empty: the official image's
		Reputation: rep,
	})
	if err := actionio.WriteOutputs[provision.Outputs](io, res.Outputs()); err != nil {
		runErr = cmp.Or(runErr, err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}
