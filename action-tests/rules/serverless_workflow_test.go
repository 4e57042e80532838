package rules

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/serverless"
)

// metaServerlessLaneProblems lists how serverless-lane.yml departs from the
// lane's shape: authorize → prepare (no secrets) → serverless (environment,
// approval = prepare's checksum of the same ref, if: always() cleanup) → gate.
func metaServerlessLaneProblems(wf metaWorkflow, text string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	on, _ := wf.On.(map[string]any)
	if _, ok := on["workflow_call"]; !ok {
		add("serverless-lane.yml must be a reusable workflow (on: workflow_call)")
	}
	if group, cancel := metaGroup(wf.Concurrency); !strings.HasPrefix(group, "runpod-gpu-serverless-${{") || cancel != false {
		add("workflow concurrency %q %v: want runpod-gpu-serverless-<head sha>, never cancelling a lane in progress", group, cancel)
	}
	for _, id := range []string{"authorize", "prepare", "serverless", "gate"} {
		if _, ok := wf.Jobs[id]; !ok {
			add("no job %q", id)
			return problems
		}
	}
	const testedRef = "${{ needs.authorize.outputs.tested-ref }}"
	step := func(job, uses string, with map[string]string) (int, metaStep) {
		for i, st := range wf.Jobs[job].Steps {
			if !strings.HasPrefix(st.Uses, uses) {
				continue
			}
			match := true
			for k, v := range with {
				match = match && st.With[k] == v
			}
			if match {
				return i, st
			}
		}
		add("job %s has no step using %s with %v", job, uses, with)
		return -1, metaStep{}
	}

	// prepare: no secret, no environment, the pinned ref, the payload's checksum.
	prep := wf.Jobs["prepare"]
	var prepRaw strings.Builder
	for _, st := range prep.Steps {
		for k, v := range st.With {
			prepRaw.WriteString(k + ": " + v + "\n")
		}
	}
	if metaReferencesSecret(prepRaw.String()) || strings.Contains(metaJobText(text, "prepare"), "environment:") {
		add("job prepare reads the pull request's tree: it must hold no secret and no environment")
	}
	if p, _ := prep.Permissions.(map[string]any); len(p) != 1 || p["contents"] != "read" {
		add("job prepare permissions %v: want only contents: read", prep.Permissions)
	}
	if !slices.Contains(metaNeeds(prep), "authorize") || !strings.Contains(prep.If, "needs.authorize.outputs.decision == 'run'") {
		add("job prepare must need authorize and run only on decision run, got needs %v if %q", metaNeeds(prep), prep.If)
	}
	_, prepCheckout := step("prepare", "actions/checkout@", map[string]string{"ref": testedRef, "persist-credentials": "false"})
	_, prepared := step("prepare", "org/runpod-gpu/actions/serverless@", map[string]string{"mode": "prepare"})
	if prepCheckout.With["path"] == "" || prepared.With["source-dir"] != prepCheckout.With["path"] {
		add("prepare must archive the checked-out tested ref (source-dir %q, checkout path %q): a non-empty path keeps the receipt out of the payload",
			prepared.With["source-dir"], prepCheckout.With["path"])
	}

	// serverless: the environment, the same tree, prepare's checksum as the approval, cleanup always.
	sls := wf.Jobs["serverless"]
	if !strings.Contains(metaJobText(text, "serverless"), "environment: "+metaEnvironmentExpr) {
		add("job serverless holds the RunPod key: want environment: %s", metaEnvironmentExpr)
	}
	if !slices.Contains(metaNeeds(sls), "prepare") || !strings.Contains(sls.If, "needs.prepare.result == 'success'") {
		add("job serverless must need prepare and run only when it succeeded, got needs %v if %q", metaNeeds(sls), sls.If)
	}
	_, slsCheckout := step("serverless", "actions/checkout@", map[string]string{"ref": testedRef, "persist-credentials": "false"})
	if slsCheckout.With["path"] != prepCheckout.With["path"] {
		add("serverless checks out into %q, prepare into %q: the approved payload must be rebuilt from the same tree", slsCheckout.With["path"], prepCheckout.With["path"])
	}
	laneAt, lane := step("serverless", "org/runpod-gpu/actions/serverless@", map[string]string{
		"execute": "true", "approved-payload-sha256": "${{ needs.prepare.outputs.payload-sha256 }}", "runpod-api-key": "${{ secrets.RUNPOD_API_KEY }}"})
	if lane.With["source-dir"] != prepared.With["source-dir"] {
		add("the lane step archives %q, prepare %q", lane.With["source-dir"], prepared.With["source-dir"])
	}
	cleanAt, clean := step("serverless", "org/runpod-gpu/actions/serverless@", map[string]string{"mode": "cleanup", "runpod-api-key": "${{ secrets.RUNPOD_API_KEY }}"})
	if !strings.Contains(clean.If, "always()") || cleanAt < laneAt {
		add("the cleanup step must follow the lane step with if: always(), got if %q at %d (lane at %d)", clean.If, cleanAt, laneAt)
	}
	total := 0
	for _, st := range sls.Steps {
		n, ok := st.TimeoutMinutes.(int)
		if !ok {
			add("serverless step %q has no timeout-minutes", st.Name)
		}
		total += n
	}
	jobTimeout, _ := sls.TimeoutMinutes.(int)
	if jobTimeout < total {
		add("job serverless timeout-minutes %d is below its steps' %d: the cleanup step could be cut short", jobTimeout, total)
	}
	// One attempt at a time, and the ledger and the cost kept whatever happened.
	if group, cancel := metaGroup(sls.Concurrency); group != "runpod-gpu-serverless-budget" || cancel != false {
		add("job serverless concurrency %q %v: want runpod-gpu-serverless-budget, never cancelling an attempt in progress (one ledger, one attempt at a time)", group, cancel)
	}
	if p, _ := sls.Permissions.(map[string]any); p["actions"] != "read" {
		add("job serverless permissions %v: want actions: read for the ledger artifact", sls.Permissions)
	}
	if lane.With["ledger-artifact"] != serverless.LedgerArtifact {
		add("the lane step's ledger-artifact is %q, want %s", lane.With["ledger-artifact"], serverless.LedgerArtifact)
	}
	// A run whose ledger upload was lost stops the lane until reconciled:
	// the caller must be able to pass the reconciliation through.
	if calls, _ := on["workflow_call"].(map[string]any); lane.With["reconcile-lost-runs"] != "${{ inputs.reconcile-lost-runs }}" || !metaHasInput(calls, "reconcile-lost-runs") {
		add("the lane step's reconcile-lost-runs is %q: want ${{ inputs.reconcile-lost-runs }}, a workflow_call input, so a caller can reconcile a run whose ledger upload was lost", lane.With["reconcile-lost-runs"])
	}
	keptAt, kept := step("serverless", "actions/upload-artifact@", map[string]string{"name": serverless.LedgerArtifact})
	if !strings.Contains(kept.If, "always()") || keptAt < cleanAt || kept.With["path"] != ".runpod-gpu/serverless/budget.json" {
		add("the ledger upload must follow the cleanup step with if: always() and upload the ledger, got if %q path %q at %d", kept.If, kept.With["path"], keptAt)
	}
	costAt, costKept := step("serverless", "actions/upload-artifact@", map[string]string{"name": "runpod-gpu-cost-${{ github.run_id }}-${{ github.run_attempt }}-job-${{ job.check_run_id }}"})
	if !strings.Contains(costKept.If, "always()") || costAt < cleanAt {
		add("the cost artifact upload must follow the cleanup step with if: always(), got if %q at %d", costKept.If, costAt)
	}
	settings := serverless.DefaultSettings()
	if n, _ := lane.TimeoutMinutes.(int); n < int((settings.CleanupDeadline - settings.JobTTL - settings.CleanupMargin + settings.JobTTL + serverless.CleanupTimeout).Minutes()) {
		add("the lane step's timeout-minutes %d cannot hold the latest submission, the job TTL and the deferred cleanup", n)
	}

	// gate: always, lane serverless, the job's result and the payload's checksum.
	g := wf.Jobs["gate"]
	if !strings.Contains(g.If, "always()") || !slices.Contains(metaNeeds(g), "serverless") {
		add("the gate must wait for serverless and run whatever happened (if: always() …), got needs %v if %q", metaNeeds(g), g.If)
	}
	_, pub := step("gate", "org/runpod-gpu/actions/gate@", map[string]string{"lane": "serverless", "gpu-job-result": "${{ needs.serverless.result }}"})
	for _, in := range []string{"payload-sha256", "cuda-executed", "job-id", "tested-ref", "head-sha"} {
		if pub.With[in] == "" {
			add("the gate step passes no %s", in)
		}
	}
	if !strings.Contains(pub.With["payload-sha256"], "outputs.payload-sha256") {
		add("the gate step's payload-sha256 %q is not the lane's payload-sha256 output", pub.With["payload-sha256"])
	}
	return problems
}

// metaHasInput reports whether a workflow_call trigger declares input name.
func metaHasInput(call map[string]any, name string) bool {
	inputs, _ := call["inputs"].(map[string]any)
	_, ok := inputs[name]
	return ok
}

// metaJobText is the raw text of jobs.<id> in a workflow (to the next job).
func metaJobText(text, id string) string {
	start := strings.Index(text, "\n  "+id+":\n")
	if start < 0 {
		return ""
	}
	rest := text[start+1:]
	lines := strings.Split(rest, "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		if len(l) > 2 && l[:2] == "  " && l[2] != ' ' && l[2] != '#' {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func TestMetaServerlessLaneShape(t *testing.T) {
	text := metaWorkflowFiles(t)["serverless-lane.yml"]
	wf := metaParseWorkflow(t, "serverless-lane.yml", text)
	problems := metaServerlessLaneProblems(wf, text)
	assert.Check(t, len(problems) == 0, "serverless-lane.yml:\n  %s", strings.Join(problems, "\n  "))
}

// TestMetaServerlessLaneShapeDetectsMistakes plants each mistake the shape check exists for.
func TestMetaServerlessLaneShapeDetectsMistakes(t *testing.T) {
	real := metaWorkflowFiles(t)["serverless-lane.yml"]
	tests := []struct{ name, old, new, want string }{
		{name: "prepare holds the key", old: "          mode: prepare\n", new: "          mode: prepare\n          runpod-api-key: ${{ secrets.RUNPOD_API_KEY }}\n",
			want: "job prepare reads the pull request's tree: it must hold no secret"},
		{name: "approval typed in", old: "approved-payload-sha256: ${{ needs.prepare.outputs.payload-sha256 }}", new: "approved-payload-sha256: ${{ inputs.approved }}",
			want: "job serverless has no step using org/runpod-gpu/actions/serverless@ with"},
		{name: "cleanup only on success", old: "      - name: Delete what the receipt records\n        if: always()\n", new: "      - name: Delete what the receipt records\n        if: success()\n",
			want: "the cleanup step must follow the lane step with if: always()"},
		{name: "another tree", old: "          path: src\n          persist-credentials: false\n      - name: Run one approved job", new: "          path: other\n          persist-credentials: false\n      - name: Run one approved job",
			want: "serverless checks out into \"other\""},
		{name: "job shorter than its steps", old: "    timeout-minutes: 65\n", new: "    timeout-minutes: 40\n", want: "below its steps' 65"},
		{name: "attempts side by side", old: "      group: runpod-gpu-serverless-budget\n", new: "      group: runpod-gpu-serverless-${{ github.run_id }}\n",
			want: "job serverless concurrency"},
		{name: "a ledger per run", old: "          ledger-artifact: runpod-gpu-serverless-ledger\n", new: "", want: "ledger-artifact is \"\""},
		{name: "the ledger dropped on failure", old: "      - name: Keep the ledger for the next run\n        if: always()\n", new: "      - name: Keep the ledger for the next run\n",
			want: "the ledger upload must follow the cleanup step with if: always()"},
		{name: "lost runs cannot be reconciled", old: "          reconcile-lost-runs: ${{ inputs.reconcile-lost-runs }}\n", new: "",
			want: "the lane step's reconcile-lost-runs is \"\""},
		{name: "gate reports the pod lane", old: "          lane: serverless\n", new: "", want: "job gate has no step using org/runpod-gpu/actions/gate@"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(real, tc.old), "serverless-lane.yml no longer contains %q; update this case", tc.old)
			text := strings.Replace(real, tc.old, tc.new, 1)
			problems := metaServerlessLaneProblems(metaParseWorkflow(t, "serverless-lane.yml", text), text)
			assert.Check(t, slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }), "want %q in:\n  %s", tc.want, strings.Join(problems, "\n  "))
		})
	}
}
