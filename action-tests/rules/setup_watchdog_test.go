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
	doc, err := os.ReadFile(filepath.Join(metaRepoRoot, docWorkflows))
	assert.NilError(t, err)
	want := fmt.Sprintf("sum to %d minutes", int(budget.Minutes()))
	assert.Check(t, strings.Contains(string(doc), want), "%s documents the sum: %q", docWorkflows, want)
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

func TestStepMinutesRefusesAnUnboundedStep(t *testing.T) {
	_, err := stepMinutes([]metaStep{{Name: "a", TimeoutMinutes: 2}, {Name: "b"}})
	assert.ErrorContains(t, err, `set-up step "b" has timeout-minutes <nil>`)
	sum, err := stepMinutes([]metaStep{{Name: "a", TimeoutMinutes: 2}, {Name: "b", TimeoutMinutes: 12}, {Name: "c", TimeoutMinutes: 1}})
	assert.NilError(t, err)
	assert.Equal(t, sum, 15*time.Minute)
}
