// Package provisionaction is the provision action (start-runpod): it
// provisions the cheapest reviewed GPU pod that proves CUDA works and
// registers a single-use runner on it. The work is pkg/provision's.
package provisionaction

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanerecord"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// Set by the release build (-ldflags -X): the proof binary shipped with this version.
var defaultProofURL, defaultProofSHA256 string

// Action is the provision action, as the image's program runs it (role provision).
var Action = actionkit.NewAction(run, reflect.TypeFor[provision.Outputs](), reflect.TypeFor[podOutputs](), reflect.TypeFor[laneOutputs](), reflect.TypeFor[recordOutputs]())

// laneOutputs are the lane's record and the pods handed to GPU jobs
// (pkg/lanetiers): the GPU jobs' matrix and what a re-run and cleanup read.
type laneOutputs struct {
	Tiers string `output:"tiers"`
	Pods  string `output:"pods"`
}

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
	TestedRef       actionio.CommitSHA     `input:"tested-ref" default:"" desc:"The pinned merge SHA (or dispatched SHA) under test, a full commit SHA; required when pr-number is set. Enables the gate reuse lookup."`
	TreeKey         actionkit.TreeKeyInput `input:"tree-key" default:"" want:"authorize's tree-key output (tree:<sha>:lane:<digest>), or empty" desc:"authorize's tree-key output; the reuse lookup then also matches a gate for the identical tree and lane."`
	CheckName       string                 `input:"check-name" form:"name" default:"CI GPU gate" desc:"Name of the gate check whose earlier success can be reused."`
	// GateAppID 0 never means any app: see gatecheck.TrustedGateApp.
	GateAppID           int64               `input:"gate-app-id" default:"" min:"1" desc:"Only gates published by this app count for reuse. Empty means app-id, or without an App GitHub Actions (15368), which is who github.token publishes as. Gates from any other app never count; 0 is refused."`
	KeepFailedPods      bool                `input:"keep-failed-pods" default:"false" desc:"Debug only. Keep rejected pods (still billing) and record their ids for inspection."`
	DebugSSHKey         string              `input:"debug-ssh-public-key" default:"" desc:"Debug only, with keep-failed-pods: a maintainer's OpenSSH public key, passed from a repository variable or secret (vars.* or secrets.*), never from the event (a key found in the event payload is refused). Each pod then publishes 22/tcp; its startup script lets this key in as root only after the script and the GPU job's tests have ended, so a kept pod (a rejected one, or the tested pod when its GPU tests failed, which cleanup then leaves) can be entered with runpod-gpu ssh <pod>. Empty: no port, no key."`
	RegistryAPIURL      actionio.ServiceURL `input:"registry-api-url" default:"" desc:"Registry API base URL used to resolve the runner image digest: https, without user info (http only on a loopback host); empty means the image's own host."`
	ProofURL            string              `input:"proof-url" default:"" desc:"URL of the CUDA smoke proof binary; empty means the one released with this action."`
	ProofSHA256         string              `input:"proof-sha256" default:"" desc:"SHA-256 of the proof binary; empty means the one released with this action."`
	RunnerDir           string              `input:"runner-dir" default:"" desc:"Directory of the preinstalled runner (its run.sh) in the pod image; empty means /home/runner, where the official runner image has it. Set it for a custom image or the simulated cloud's hosts."`
	Tiers               string              `input:"tiers" default:"" desc:"A host-fault re-run's: the lane's record so far (provision's tiers output). Empty for the lane's first provisioning."`
	HostFaults          string              `input:"host-faults" default:"" desc:"A host-fault re-run's: the pods the watchdog lost to their hosts (its host-faults output). Each such tier is provisioned once more, away from the data center its pod was lost in, inside max_run_spend_usd with every earlier pod of the lane. Empty or [] provisions the lane's tiers."`
	ReputationFile      string              `input:"reputation-file" default:"" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"Path of a reputation record (JSON: earlier attempts' GPU, data center, machine and outcome) inside the workspace or RUNNER_TEMP (symbolic links resolved; a path outside fails the step), at most 2 MiB and 2,000 observations, e.g. the cost history's runpod-gpu-reputation artifact. With one, candidates are ranked by expected cost to a working runner, pinned to good data centers, pairs that failed twice in a row are avoided for 12 hours, and a pod RunPod places on a machine the record holds bad is deleted before its proof, inside the reviewed allowlist and zones. Set (even to a missing file), each pod's machine (its first GPU's UUID, from the pod's own log: no extra call) is recorded for the next record. Empty: no reputation (the plan's own order); a missing file or a record with no evidence yet (a new lane, before the cost history's first record): the seed's plan, the secure cloud alone (when configured) with one candidate per GPU type, RunPod placing it, cheapest first, then the static tier slots; an unreadable or invalid record: a warning, and the seed's order."`
	TestCommand         string              `input:"test-command" default:"" desc:"What the GPU job runs at the tested ref, written to the lane record (artifact runpod-gpu-lane-record-<run id>-<attempt>) so runpod-gpu repro can run it again on a developer pod. Empty: repro opens a shell only."`
	TestArchiveArtifact string              `input:"test-archive-artifact" default:"" desc:"Name of an artifact of this run holding the test archive (your own GPU job's hosted build uploads it), written to the lane record for runpod-gpu repro. Empty: the GPU job fetches the tested ref itself, and repro archives the tested ref from your local checkout."`
	// The budget's fallback record (with a budget in the configuration).
	actionkit.SpendRecordInput
}

// Validate requires the head and the tested ref authorize pinned whenever a
// pull request is under test (also for a manual dispatch of one): no pod is
// paid for an unnamed commit.
func (in *Inputs) Validate() error {
	if in.TestArchiveArtifact != "" && !lanerecord.ValidArtifactName(in.TestArchiveArtifact) {
		return fmt.Errorf("input test-archive-artifact %q: want empty or an artifact name of letters, digits, '.', '_' or '-' (at most 128)", in.TestArchiveArtifact)
	}
	if len(in.TestCommand) > lanerecord.MaxCommandBytes || strings.ContainsRune(in.TestCommand, 0) {
		return fmt.Errorf("input test-command: %d bytes: want at most %d, without NUL", len(in.TestCommand), lanerecord.MaxCommandBytes)
	}
	if in.PRNumber > 0 {
		if err := actionio.RequireSHA("expected-head-sha", in.ExpectedHeadSHA); err != nil {
			return err
		}
		return actionio.RequireSHA("tested-ref", in.TestedRef)
	}
	return nil
}

// laneInputs reads a re-run's record and host faults. A re-run needs both.
func laneInputs(in Inputs) (*lanetiers.Record, []lanetiers.HostFault, error) {
	previous, err := lanetiers.ParseRecord(in.Tiers)
	if err != nil {
		return nil, nil, fmt.Errorf("input tiers: %w", err)
	}
	faults, err := lanetiers.ParseHostFaults(in.HostFaults)
	if err != nil {
		return nil, nil, fmt.Errorf("input host-faults: %w", err)
	}
	if len(faults) > 0 && previous == nil {
		return nil, nil, fmt.Errorf("input host-faults names %d lost pod(s) but input tiers is empty: want provision's tiers output, the lane's record the re-run adds to", len(faults))
	}
	if len(faults) == 0 {
		previous = nil // not a re-run: the lane starts here
	}
	return previous, faults, nil
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	cfg, err := actionkit.LaneConfig(io, in.ConfigPath, in.RunnerImageInput)
	if err != nil {
		return err
	}
	// Lanes create at the same time on one key: each keeps a reserve of every
	// RateLimit window for the others and backs off on its own (no lock).
	clients, err := actionkit.OpenPodClients(ctx, io, in.RunPodInputs, in.GitHubInputs, in.RunnerInputs,
		reqpolicy.WithReserve(reqpolicy.IETFQuota, provision.RateLimitReserve))
	if err != nil {
		return err
	}
	rp, policy, gh, scope, current := clients.RunPod, clients.Policy, clients.GitHub, clients.Scope, clients.Run
	debugKey, err := debugKeyInput(io, in)
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
	guard, err := actionkit.Budget(io, cfg, rp, in.SpendRecordInput, cfg.StartupTimeout()+cfg.Lifetime())
	if err != nil {
		return err
	}
	previous, faults, err := laneInputs(in)
	if err != nil {
		return err
	}
	res, runErr := provision.RunLane(ctx, provision.Deps{
		RunPod: rp, GitHub: gh, Policy: policy, Observer: newObserver(io), Budget: guard,
		Images: &registry.Resolver{APIURL: in.RegistryAPIURL.String(), Logf: func(s string) { io.Infof("%s", s) }},
	}, provision.LaneRequest{Previous: previous, HostFaults: faults, Request: provision.Request{
		Config: cfg, LabelPrefix: in.LabelPrefix, RunnerGroupID: in.RunnerGroupID, Scope: scope,
		Owner:    ownership.Tags{Repository: current.Repository, Workflow: current.Workflow, RunID: current.ID, Attempt: current.Attempt},
		PRNumber: int(in.PRNumber), ExpectedHeadSHA: string(in.ExpectedHeadSHA), TestedRef: string(in.TestedRef),
		Reuse:          gatecheck.ReuseQuery{CheckName: in.CheckName, AppID: gatecheck.TrustedGateApp(in.GateAppID, in.AppID), Key: in.TreeKey.Key()},
		KeepFailedPods: in.KeepFailedPods, DebugSSHKey: debugKey,
		ProofURL: cmp.Or(in.ProofURL, defaultProofURL), ProofSHA256: cmp.Or(in.ProofSHA256, defaultProofSHA256),
		RunnerDir:  in.RunnerDir, // where the pod image keeps run.sh; empty: the official image's
		Reputation: rep,
	}})
	return report(io, res, cmp.Or(runErr, recordLane(io, res, cfg, current, in)))
}

// report writes the outputs (the plain ones, the lane's record and pods)
// and the job summary; the run's error wins over an output's.
func report(io *actionio.IO, res provision.LaneResult, runErr error) error {
	if err := actionio.WriteOutputs[provision.Outputs](io, res.Outputs()); err != nil {
		runErr = cmp.Or(runErr, err)
	}
	if res.Record.Matrix() && len(res.Pods) > 0 {
		io.Infof("matrix_tiers: %d pod(s), one per tier; runner-label is empty: run the GPU job once per pod of the pods output (strategy.matrix.pod: fromJSON(pods), runs-on: matrix.pod.runner-label, named \"<gpu-job-name> (<tier>)\")", len(res.Pods))
	}
	lane := laneOutputs{Tiers: lanetiers.Format(res.Record), Pods: res.PodsOutput()}
	if err := actionio.WriteOutputs[laneOutputs](io, lane); err != nil {
		runErr = cmp.Or(runErr, err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}
