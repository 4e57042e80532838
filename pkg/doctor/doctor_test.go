package doctor

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The text report has a row per check: ok with what was found, FIX with
// what is wrong and "fix:" with what to do on the line below, ? with how to
// let doctor check it; and a closing count, where only fixes count.
func TestReportText(t *testing.T) {
	rep := Report{Repository: "o/r", DefaultBranch: "main", Checks: []Check{
		ok(CheckApp, "the App", "App %d", 9),
		fix(CheckBranchProtection, "protected", "nothing requires the gate", "add a ruleset"),
		unknown(CheckBalance, "balance", "GraphQL did not answer", "see the console"),
	}}
	text := rep.Text()
	assert.Check(t, is.Contains(text, "runpod-gpu doctor: o/r (default branch main)\n"))
	assert.Check(t, is.Contains(text, "ok    app                the App: App 9\n"))
	assert.Check(t, is.Contains(text, "FIX   branch-protection  protected: nothing requires the gate\n                         fix: add a ruleset\n"))
	assert.Check(t, is.Contains(text, "?     balance            balance: GraphQL did not answer\n                         to check it: see the console\n"))
	assert.Check(t, strings.HasSuffix(text, "1 of 3 checks need a fix.\n"))
	assert.Check(t, is.Equal(rep.Failed(), 1))
	rep.Checks = []Check{rep.Checks[0], rep.Checks[2]}
	assert.Check(t, strings.HasSuffix(rep.Text(), "No check needs a fix (1 could not be made, see ?): open a pull request and the lane runs.\n"))
	rep.Checks = rep.Checks[:1]
	assert.Check(t, strings.HasSuffix(rep.Text(), "Every check passed: open a pull request and the lane runs.\n"))
}

// The lane caller's inputs steer the checks: the environment, the second
// App, the runner scope; a workflow that calls no suite workflow is no caller.
func TestParseCaller(t *testing.T) {
	c := parseCaller("x.yml", "on:\n  workflow_run:\n    workflows: [CI, Lint]\njobs:\n  gpu:\n    uses: me/runpod-gpu/.github/workflows/gpu-lane.yml@v2\n"+
		"    with: {environment: gpu, runner-app-id: \"${{ vars.RUNPOD_GPU_RUNNER_APP_ID }}\", runner-group-id: 3}\n")
	assert.Assert(t, c != nil)
	assert.Check(t, is.Equal(c.suite, "me/runpod-gpu"))
	assert.Check(t, is.Equal(c.ref, "v2"))
	assert.Check(t, is.DeepEqual(c.triggers, []string{"CI", "Lint"}))
	assert.Check(t, is.Equal(c.input("runner-group-id", "1"), "3"))
	f := &facts{lane: c}
	assert.Check(t, is.Equal(f.environment(), "gpu"))
	assert.Check(t, f.runnerApp())
	assert.Check(t, is.Len(f.appNeeds(), 2))

	dispatched := parseCaller("y.yml", "on: workflow_dispatch\njobs:\n  gpu:\n    uses: me/runpod-gpu/.github/workflows/serverless-lane.yml@v1\n")
	assert.Assert(t, dispatched != nil)
	assert.Check(t, dispatched.triggers == nil, "no workflow_run trigger")
	assert.Check(t, parseCaller("z.yml", "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n") == nil)
	assert.Check(t, is.Equal((&facts{}).environment(), "runpod-gpu"))
}
