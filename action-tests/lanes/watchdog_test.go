package lanes

import (
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// watchdogSetupBudget is short enough to expire within a real-time test.
const watchdogSetupBudget = 4 * time.Second

const watchdogConfig = fastConfig + "setup_budget_seconds: 4\nlifetime_seconds: 120\n"

// watchdogRun is a provisioned pod whose GPU job has been taken by its runner
// and is stuck in setup.
type watchdogRun struct {
	*simulated
	runID int64
	pr    int
	podID string
	prov  harness.StepResult
}

func watchdogProvision(t *testing.T, configYAML string) *watchdogRun {
	t.Helper()
	w := watchdogAccepted(t, configYAML)
	s, runID, label := w.simulated, w.runID, w.prov.Outputs["runner-label"]
	jobs, err := s.GitHub.Jobs(cloud.Repository, runID, 1)
	assert.NilError(t, err)
	now := time.Now()
	assert.NilError(t, s.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{
		Name: "GPU tests", Labels: []string{label}, RunnerName: label, Status: "in_progress", StartedAt: now,
		Steps: []githubsim.StepSpec{
			{Name: "Set up job", Status: "in_progress", StartedAt: now},
			{Name: "Run GPU tests", Status: "queued"},
		},
	}))
	return w
}

// watchdogAccepted provisions a pod for a lane run whose GPU job still waits
// for the runner.
func watchdogAccepted(t *testing.T, configYAML string) *watchdogRun {
	t.Helper()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, configYAML)
	pr := s.openPR(t)
	runID, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: harness.HeadSHA, PullRequests: []int{pr}, Jobs: []githubsim.JobSpec{{Name: "GPU tests", Status: "waiting"}}})
	assert.NilError(t, err)
	st := s.ProvisionStep(pr)
	st.Env["GITHUB_RUN_ID"] = harness.Itoa(int(runID))
	prov := harness.RunStep(t, st)
	assert.Equal(t, prov.ExitCode, 0, prov.Stdout)
	return &watchdogRun{simulated: s, runID: runID, pr: pr, podID: prov.Outputs["pod-id"], prov: prov}
}

func (w *watchdogRun) step() harness.Step {
	env := w.RunnerEnv()
	env["GITHUB_RUN_ID"] = harness.Itoa(int(w.runID))
	inputs := map[string]string{
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": w.RunPodURL, "github-token": cloud.GitHubToken,
		"pr-number": harness.Itoa(w.pr), "expected-head-sha": harness.HeadSHA, "poll-seconds": "1",
	}
	for _, k := range []string{"pod-id", "runner-label", "price-per-hour", "gpu-type", "tier"} {
		inputs[k] = w.prov.Outputs[k]
	}
	return harness.Step{Action: "watchdog", Workspace: w.Workspace, Env: env, Inputs: inputs}
}

func (w *watchdogRun) pod(t *testing.T) (status string, started, ended time.Time) {
	t.Helper()
	for _, p := range w.RunPod.Pods() {
		if p.ID == w.podID {
			return p.Status, p.StartedAt, p.TerminatedAt
		}
	}
	t.Fatalf("no pod %s", w.podID)
	return "", time.Time{}, time.Time{}
}

func TestWatchdogSetupDeadlineDeletesThePodThenCancelsTheRun(t *testing.T) {
	w := watchdogProvision(t, watchdogConfig)
	res := harness.RunStep(t, w.step())
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Equal(t, res.Outputs["outcome"], "setup-expired")
	assert.Equal(t, res.Outputs["pod-deleted"], "true")
	assert.Equal(t, res.Outputs["run-cancelled"], "true")

	status, started, ended := w.pod(t)
	assert.Equal(t, status, runpodsim.StatusTerminated)
	lived := ended.Sub(started)
	assert.Check(t, lived >= watchdogSetupBudget && lived < watchdogSetupBudget+3*time.Second, "deleted at the setup deadline, lived %s", lived)
	cancels := w.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Equal(t, cancels[0].RunID, w.runID)
	assert.Check(t, !cancels[0].At.Before(ended), "the run is cancelled after the deletion is confirmed")
	assert.Check(t, is.Contains(res.Stdout, "setup budget of 4s expired"))
	costAt, cancelAt := strings.Index(res.Stdout, cost.LinePrefix+"cost {"), strings.Index(res.Stdout, "requesting cancellation of workflow run")
	assert.Check(t, costAt >= 0, "the interrupted pod's cost is logged")
	assert.Check(t, cancelAt > costAt, "the cost is logged before the cancel is requested (the cancel can end this job):\n%s", res.Stdout)
	assert.Check(t, is.Equal(strings.Count(res.Stdout, cost.LinePrefix+"cost {"), 1), "one cost line")
	assert.Check(t, is.Contains(res.Summary, "### RunPod GPU cost (estimate)"))
	assertNoSecrets(t, w.simulated, res)
}

func TestWatchdogHeadMovedDeletesThePodThenCancelsTheRun(t *testing.T) {
	w := watchdogProvision(t, fastConfig)
	st := w.step()
	const prPath = "/repos/*/*/pulls/*"
	readBefore := w.GitHub.CountRequests("GET", prPath) // provision reads it too
	st.Started = func(*os.Process) {
		go func() {
			// Let the watch begin on an open PR, then move its head.
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if w.GitHub.CountRequests("GET", prPath) > readBefore {
					return poll.Success()
				}
				return poll.Continue("the watchdog has not read the PR yet")
			}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
			_ = w.GitHub.UpdatePullRequest(cloud.Repository, w.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = strings.Repeat("d", 40) })
		}()
	}
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["outcome"], "obsolete")
	assert.Equal(t, res.Outputs["run-cancelled"], "true")
	status, _, ended := w.pod(t)
	assert.Equal(t, status, runpodsim.StatusTerminated)
	cancels := w.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Check(t, !cancels[0].At.Before(ended))
	assert.Check(t, is.Contains(res.Stdout, "head moved from "+harness.HeadSHA))
}

func TestWatchdogWithoutPodHasNothingToWatch(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	st := (&watchdogRun{simulated: s, runID: s.RunID}).step()
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["outcome"], "no-pod")
	assert.Check(t, is.Len(s.RunPod.Requests(), 0), "no RunPod call without a pod")
}

func TestWatchdogBadConfigNamesTheKey(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig+"setup_budget_seconds: 0\n")
	res := harness.RunStep(t, (&watchdogRun{simulated: s, runID: s.RunID}).step())
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "setup_budget_seconds"))
}
