package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/watchdog"
)

// TestSetupWatchdogIsTheStricterBound keeps the seed's order: the watchdog's
// setup deadline (setup_budget_seconds, from the pod's start) fires no later
// than the set-up steps' own limits would. In the shipped lane's GPU job the
// steps before the test step are bounded by numbers whose sum is at least
// the default setup budget, so a stuck set-up is ended by the watchdog, which
// deletes the pod and names the step, not by a step timeout that leaves the
// pod to the lifetime bound. workflows.md documents the same sum.
func TestSetupWatchdogIsTheStricterBound(t *testing.T) {
	budget := time.Duration(config.Default().SetupBudgetSeconds) * time.Second
	assert.Equal(t, budget, watchdog.DefaultSetupBudget, "the configuration's default is the watchdog's")
	wf := metaParseWorkflow(t, "gpu-lane.yml", metaWorkflowFiles(t)["gpu-lane.yml"])
	checked := 0
	for id, job := range wf.Jobs {
		steps, found := setupSteps(job)
		if !found {
			continue
		}
		checked++
		sum, err := stepMinutes(steps)
		assert.NilError(t, err, "job %s", id)
		assert.Check(t, budget <= sum, "job %s: the setup watchdog (%s) is looser than its set-up steps' limits (%s in all): raise the steps' timeout-minutes or lower setup_budget_seconds", id, budget, sum)
	}
	assert.Check(t, checked > 0, "gpu-lane.yml has a job with the test step %q", "Run GPU tests")
	callers := map[string]string{}
	for i, block := range metaReadmeOwnJobCallers(t) {
		callers[fmt.Sprintf("%s's own-job caller %d", docWorkflows, i+1)] = block
	}
	example, err := os.ReadFile(filepath.Join(metaRepoRoot, "examples/cuda-vector-add/.github/workflows/runpod-gpu.yml"))
	assert.NilError(t, err)
	callers["the CUDA example's runpod-gpu.yml"] = string(example)
	for name, text := range callers {
		for _, problem := range setupBudgetProblems(t, name, text, budget) {
			t.Error(problem)
		}
	}
	doc, err := os.ReadFile(filepath.Join(metaRepoRoot, docWorkflows))
	assert.NilError(t, err)
	want := fmt.Sprintf("sum to %d minutes", int(budget.Minutes()))
	assert.Check(t, strings.Contains(string(doc), want), "%s documents the sum: %q", docWorkflows, want)
}

// setupBudgetProblems names each GPU job of a documented caller whose set-up
// steps' limits sum to less than budget: a caller copied from the docs must
// keep the watchdog the stricter bound too.
func setupBudgetProblems(t *testing.T, name, text string, budget time.Duration) []string {
	t.Helper()
	wf := metaParseWorkflow(t, name, text)
	var problems []string
	checked := 0
	for id, job := range wf.Jobs {
		steps, found := setupSteps(job)
		if !found {
			continue
		}
		checked++
		sum, err := stepMinutes(steps)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s, job %s: %v", name, id, err))
		} else if sum < budget {
			problems = append(problems, fmt.Sprintf("%s, job %s: set-up steps' limits sum to %s, below the setup watchdog's %s", name, id, sum, budget))
		}
	}
	if checked == 0 {
		problems = append(problems, fmt.Sprintf("%s: no job has the test step %q", name, "Run GPU tests"))
	}
	return problems
}

// setupSteps are the steps of job before its Run GPU tests step.
func setupSteps(job metaJob) ([]metaStep, bool) {
	for i, st := range job.Steps {
		if st.Name == "Run GPU tests" {
			return job.Steps[:i], true
		}
	}
	return nil, false
}

// stepMinutes sums the steps' timeout-minutes; each must be a number.
func stepMinutes(steps []metaStep) (time.Duration, error) {
	var sum time.Duration
	for _, st := range steps {
		m, err := strconv.Atoi(fmt.Sprint(st.TimeoutMinutes))
		if err != nil || m < 1 {
			return 0, fmt.Errorf("set-up step %q has timeout-minutes %v: want a whole number of minutes", st.Name, st.TimeoutMinutes)
		}
		sum += time.Duration(m) * time.Minute
	}
	return sum, nil
}

func TestSetupBudgetProblemsFindsALooseCaller(t *testing.T) {
	loose := "jobs:\n  gpu:\n    steps:\n      - {name: Download, timeout-minutes: 3}\n      - {name: Unpack, timeout-minutes: 2}\n      - {name: Run GPU tests, run: ./t}\n"
	assert.DeepEqual(t, setupBudgetProblems(t, "loose", loose, 15*time.Minute), []string{"loose, job gpu: set-up steps' limits sum to 5m0s, below the setup watchdog's 15m0s"})
	assert.Equal(t, len(setupBudgetProblems(t, "fine", strings.ReplaceAll(loose, "timeout-minutes: 3", "timeout-minutes: 13"), 15*time.Minute)), 0)
	assert.DeepEqual(t, setupBudgetProblems(t, "none", "jobs:\n  a:\n    steps: [{run: x}]\n", time.Minute), []string{`none: no job has the test step "Run GPU tests"`})
}

func TestStepMinutesRefusesAnUnboundedStep(t *testing.T) {
	_, err := stepMinutes([]metaStep{{Name: "a", TimeoutMinutes: 2}, {Name: "b"}})
	assert.ErrorContains(t, err, `set-up step "b" has timeout-minutes <nil>`)
	sum, err := stepMinutes([]metaStep{{Name: "a", TimeoutMinutes: 2}, {Name: "b", TimeoutMinutes: 12}, {Name: "c", TimeoutMinutes: 1}})
	assert.NilError(t, err)
	assert.Equal(t, sum, 15*time.Minute)
}
