// Package watchdogaction is the watchdog action (setup-watchdog): on a hosted
// runner beside the GPU job it bounds the accepted pod's setup and lifetime,
// deletes it when the job ends, a bound expires or the pull request becomes
// obsolete, and cancels an obsolete run only after the deletion is confirmed.
// The work is pkg/watchdog's.
package watchdogaction

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/watchdog"
)

// Action is the watchdog action, as the image's program runs it (role watchdog).
var Action = actionkit.NewAction(run, reflect.TypeFor[watchdog.Outputs](), reflect.TypeFor[faultOutputs]())

// faultOutputs are the pods lost to their hosts, for a re-run and cleanup.
type faultOutputs struct {
	HostFaults string `output:"host-faults"`
}

// Inputs are the watchdog action's inputs.
type Inputs struct {
	actionkit.RunPodInputs
	actionkit.GitHubInputs `desc.github-token:"Token that reads this run's jobs and the pull request and can cancel the run, used when app-id is empty." desc.app-id:"GitHub App id to use instead of github-token."`
	// RunnerInputs: the foreign-job check and the registration's removal look the runner up there.
	actionkit.RunnerInputs `desc.runner-scope:"Where the runner is registered, repo or org (as given to provision)."`
	actionkit.ConfigInput  `desc.config-path:"Path of the runpod-gpu configuration (setup_budget_seconds, lifetime_seconds), inside the workspace."`

	Pods        string `input:"pods" default:"" desc:"Provision's pods output: every pod handed to a GPU job, each watched at once beside its own job (named gpu-job-name, or \"<gpu-job-name> (<tier>)\" per tier of a matrix lane). When set, pod-id, runner-label, price-per-hour, gpu-type and tier are not read."`
	PodID       string `input:"pod-id" form:"pod-id" default:"" desc:"Provision's pod-id output. Empty means no pod was accepted and there is nothing to watch."`
	RunnerLabel string `input:"runner-label" form:"runner-label" default:"" desc:"Provision's runner-label output; finds the GPU job in this run attempt's job list and names the runner."`
	GPUJob      string `input:"gpu-job-name" form:"name" default:"GPU tests" desc:"Name of the GPU job (its name:, or its id without one), the one job that may run on the pod's runner; any other job found on it gets the pod deleted at once. Matches \"<caller job> / <name>\" too, for a job in a called workflow."`
	TestStep    string `input:"test-step-name" form:"name" default:"Run GPU tests" desc:"Name of the GPU job's real test step: the signal that the tests began. Once it runs the setup deadline is disarmed; a GPU job that never starts it is deleted at the setup deadline."`
	PRNumber    int64  `input:"pr-number" default:"0" max:"2147483647" desc:"Pull request under test; 0 (a manual validation) disables the obsolescence check."`
	// ExpectedHeadSHA is the head authorize pinned (provision refused the same value if it was malformed).
	ExpectedHeadSHA actionio.CommitSHA `input:"expected-head-sha" default:"" desc:"The PR head this run was triggered for; a moved head makes the run obsolete."`
	// TreeKey names the tested tree: a head moved to a merge commit of the same tree is not obsolete.
	TreeKey      actionkit.TreeKeyInput `input:"tree-key" default:"" want:"authorize's tree-key output (tree:<sha>:lane:<digest>), or empty" desc:"authorize's tree-key output; a head moved to a merge commit of the same tree (an identical tree re-pushed) is not obsolete: the re-push's lane follows this one."`
	Poll         time.Duration          `input:"poll-seconds" default:"30" min:"1" max:"3600" desc:"Seconds between progress polls (1 to 3600). Deadlines are enforced on time whatever the cadence."`
	PricePerHour string                 `input:"price-per-hour" form:"price" default:"" desc:"Provision's price-per-hour output, the price fallback of an interrupted pod's cost report."`
	GPUType      string                 `input:"gpu-type" form:"gpu-type" default:"" desc:"Provision's gpu-type output, shown in the cost report."`
	Tier         string                 `input:"tier" form:"tier" default:"" desc:"Provision's tier output, shown in the cost report."`
}

// Validate requires the pinned head whenever a pull request is watched, and
// the runner label whenever one pod is: without it the GPU job cannot be
// found, and a foreign job on the pod's runner would go unseen.
func (in *Inputs) Validate() error {
	var errs []error
	if in.PRNumber > 0 {
		errs = append(errs, actionio.RequireSHA("expected-head-sha", in.ExpectedHeadSHA))
	}
	if in.Pods == "" && in.PodID != "" && in.RunnerLabel == "" {
		errs = append(errs, &actionio.InputError{Input: "runner-label",
			Expected: "provision's runner-label output (the input is required with pod-id " + in.PodID + ")"})
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	cfg, err := actionkit.Config(io, in.ConfigPath)
	if err != nil {
		return err
	}
	snapshot, err := cost.ParseSnapshot(in.PricePerHour, "", in.GPUType, in.Tier)
	if err != nil {
		io.Warningf("%v; the cost report treats it as unknown", err)
	}
	clients, err := actionkit.OpenPodClients(ctx, io, in.RunPodInputs, in.GitHubInputs, in.RunnerInputs)
	if err != nil {
		return err
	}

	deps := watchdog.Deps{Pods: clients.RunPod, GitHub: clients.GitHub, Policy: clients.Policy, Logf: io.Infof}
	current := clients.Run
	base := watchdog.Request{
		PodID: in.PodID, RunID: current.ID, Attempt: current.Attempt,
		RunnerLabel: in.RunnerLabel, RunnerScope: clients.Scope, GPUJob: in.GPUJob, TestStep: in.TestStep,
		PRNumber: int(in.PRNumber), ExpectedHeadSHA: string(in.ExpectedHeadSHA), TestedTree: testedTree(in.TreeKey),
		SetupBudget: cfg.SetupBudget(), Lifetime: cfg.Lifetime(), Poll: in.Poll, Snapshot: snapshot,
	}
	if in.Pods == "" {
		res, runErr := watchdog.Run(ctx, deps, base)
		// The watch logged an interrupted pod's cost line itself, before it
		// asked for the run's cancellation (which can end this job).
		var faults []lanetiers.HostFault
		if res.HostFault != nil {
			faults = append(faults, *res.HostFault)
		}
		return finish(io, res.Outputs(), faults, res.Summary(runErr), runErr)
	}
	pods, err := lanetiers.ParsePods(in.Pods)
	if err != nil {
		return fmt.Errorf("input pods: %w", err)
	}
	watches := watchdog.RunPods(ctx, deps, base, pods)
	outputs, faults := watchdog.LaneOutputs(watches)
	summary, runErr := watchdog.LaneSummary(watches)
	return finish(io, outputs, faults, summary, runErr)
}

// finish writes the outputs and the summary; a host fault is a warning (the
// lane re-runs the job), never the watchdog's failure.
func finish(io *actionio.IO, outputs watchdog.Outputs, faults []lanetiers.HostFault, summary string, runErr error) error {
	for _, f := range faults {
		io.Warningf("host fault: pod %s on %s: %s (%s); the lane re-runs the job once on another host", f.PodID, f.Where(), f.Kind, f.Detail)
	}
	if faults == nil {
		faults = []lanetiers.HostFault{}
	}
	if err := actionio.WriteOutputs[watchdog.Outputs](io, outputs); err != nil {
		io.Warningf("%v", err)
	}
	if err := actionio.WriteOutputs[faultOutputs](io, faultOutputs{HostFaults: lanetiers.Format(faults)}); err != nil {
		io.Warningf("%v", err)
	}
	if err := io.AddSummary(summary); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}

// testedTree is the tree a tree-key input names; empty without one.
func testedTree(k actionkit.TreeKeyInput) string {
	if key := k.Key(); key != nil {
		return key.Tree
	}
	return ""
}
