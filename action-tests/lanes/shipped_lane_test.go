package lanes

import (
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// startShippedCloud is a simulated cloud whose GitHub also knows the
// workflow's own token (actionsToken, GitHub Actions: what token mode's reuse trusts).
func startShippedCloud(t *testing.T, hosts ...runpodsim.HostProfile) *simulated {
	t.Helper()
	return startCloudWith(t, cloud.Options{Market: testMarket(hosts...),
		GitHubOptions: []githubsim.Option{githubsim.WithToken(actionsToken, githubsim.ActionsIdentity())}}, fastConfig)
}

// delivery is one event a README caller receives.
type delivery struct {
	caller    string // the README block's file, e.g. .github/workflows/runpod-gpu.yml
	eventName string
	event     map[string]any
	sha       string // GITHUB_SHA of the run
	actor     string
	runID     int64
	// workflowRef is GITHUB_WORKFLOW_REF; empty means the caller on the default branch.
	workflowRef string
	// whileTheGPUJobRuns, when set, runs after provision and before the gate:
	// what happens while this lane's GPU job runs.
	whileTheGPUJobRuns func()
}

// shippedRun is what one delivery ran through gpu-lane.yml.
type shippedRun struct {
	called              bool // the caller's job if: let it call the lane
	authorize, gate     harness.StepResult
	provision           *harness.StepResult
	authorizeInputs     map[string]string
	decision, gateKind  string
	provisionPaidOrNone string
}

// workflowRunEvent is the workflow_run event of the PR's CI starting at head.
func workflowRunEvent(pr int, head string) map[string]any {
	return map[string]any{
		"action": "in_progress",
		"workflow_run": map[string]any{
			"id": 7000 + pr, "name": "CI", "event": "pull_request", "status": "in_progress", "head_sha": head, "head_branch": "feature",
			"pull_requests": []any{map[string]any{"number": float64(pr), "head": map[string]any{"sha": head, "ref": "feature"}}},
		},
		"repository": map[string]any{"full_name": cloud.Repository, "default_branch": "main"},
	}
}

// laneSecrets are the secrets the caller hands gpu-lane.yml: the RunPod key
// and, without an App (token mode), the token that can mint runners.
func laneSecrets() map[string]any {
	return map[string]any{"RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_GPU_TOKEN": cloud.GitHubToken}
}

// runShipped runs one delivery as GitHub would: the README caller's job (its
// if: and with:), then gpu-lane.yml's authorize, provision when it says run,
// and the gate, each step with the inputs the workflow gives it; the GPU job
// passes on the accepted pod's runner. Only the simulated endpoints are added.
func (s *simulated) runShipped(t *testing.T, d delivery) shippedRun {
	t.Helper()
	caller := readmeCaller(t, d.caller).Jobs["gpu"]
	lane := gpuLane(t)
	github := map[string]any{"event": d.event, "event_name": d.eventName, "sha": d.sha, "token": actionsToken,
		"repository": cloud.Repository, "run_id": float64(d.runID)}
	callerCtx := map[string]any{"github": github, "inputs": map[string]any{}, "vars": map[string]any{}, "secrets": laneSecrets()}
	var out shippedRun
	if out.called = caller.If == "" || evalCondition(t, caller.If, callerCtx); !out.called {
		return out
	}
	ctx := map[string]any{"github": github, "inputs": callInputs(t, caller, lane, callerCtx), "secrets": laneSecrets(), "needs": map[string]any{}}
	env := s.laneEnv(d.runID)
	env["GITHUB_EVENT_NAME"], env["GITHUB_SHA"] = d.eventName, d.sha
	env["GITHUB_ACTOR"], env["GITHUB_TRIGGERING_ACTOR"] = d.actor, d.actor
	if d.workflowRef != "" {
		env["GITHUB_WORKFLOW_REF"] = d.workflowRef
	}

	out.authorizeInputs = stepInputs(t, lane.step(t, "authorize", "Authorize"), ctx)
	in := copyInputs(out.authorizeInputs)
	in["registry-api-url"] = s.RegistryURL
	out.authorize = harness.RunStep(t, harness.Step{Action: "authorize", Workspace: s.Workspace, Env: env, Inputs: in, Event: d.event})
	needs := ctx["needs"].(map[string]any)
	needs["authorize"] = jobResult(out.authorize)
	needs["provision"] = map[string]any{"result": "skipped", "outputs": map[string]any{}}
	needs["gpu-tests"] = map[string]any{"result": "skipped"}
	out.decision = out.authorize.Outputs["decision"]

	if evalCondition(t, lane.Jobs["provision"].If, ctx) {
		in := stepInputs(t, lane.step(t, "provision", "Provision"), ctx)
		in["runpod-api-url"], in["registry-api-url"], in["proof-url"], in["proof-sha256"] = s.RunPodURL, s.RegistryURL, s.ProofURL, s.ProofSHA256
		res := harness.RunStep(t, harness.Step{Action: "provision", Workspace: s.Workspace, Env: env, Inputs: in, Event: d.event})
		out.provision = &res
		needs["provision"] = jobResult(res)
		out.provisionPaidOrNone = res.Outputs["paid-path"]
		if res.ExitCode == 0 && res.Outputs["runner-label"] != "" {
			needs["gpu-tests"] = map[string]any{"result": "success"} // the GPU job passes on the accepted pod
		}
	}
	if d.whileTheGPUJobRuns != nil {
		d.whileTheGPUJobRuns()
	}
	if evalCondition(t, lane.Jobs["gate"].If, ctx) {
		in := stepInputs(t, lane.step(t, "gate", "Publish"), ctx)
		out.gate = harness.RunStep(t, harness.Step{Action: "gate", Workspace: s.Workspace, Env: env, Inputs: in, Event: d.event})
		out.gateKind = out.gate.Outputs["kind"]
	}
	return out
}

// jobResult is needs.<job> for a job of one step.
func jobResult(r harness.StepResult) map[string]any {
	outputs := map[string]any{}
	for k, v := range r.Outputs {
		outputs[k] = v
	}
	result := "success"
	if r.ExitCode != 0 {
		result = "failure"
	}
	return map[string]any{"result": result, "outputs": outputs}
}

func copyInputs(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// shippedOK checks every step that ran exited 0.
func shippedOK(t *testing.T, r shippedRun) {
	t.Helper()
	assert.Assert(t, r.called, "the README caller's if: kept the lane from running")
	assert.Assert(t, r.authorize.ExitCode == 0, "authorize exited %d:\n%s", r.authorize.ExitCode, r.authorize.Stdout)
	if r.provision != nil {
		assert.Assert(t, r.provision.ExitCode == 0, "provision exited %d:\n%s", r.provision.ExitCode, r.provision.Stdout)
	}
	assert.Assert(t, r.gate.ExitCode == 0, "gate exited %d:\n%s", r.gate.ExitCode, r.gate.Stdout)
}

func (r shippedRun) String() string {
	return fmt.Sprintf("decision %s, gate %s\nauthorize:\n%s\ngate:\n%s", r.decision, r.gateKind, r.authorize.Stdout, r.gate.Stdout)
}
