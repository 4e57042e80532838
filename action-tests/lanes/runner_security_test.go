package lanes

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// registered reports whether a runner named name is still in the registry.
func registered(s *simulated, name string) bool {
	for _, r := range s.GitHub.Runners() {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Two runs of the same run id and attempt never share a runner label: the
// nonce makes it unguessable, so no other job can ask for it in advance.
func TestRunnerLabelsDifferAcrossRuns(t *testing.T) {
	var labels []string
	for i := 0; i < 2; i++ {
		s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
		res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
		assert.Equal(t, res.ExitCode, 0, res.Stdout)
		label := res.Outputs["runner-label"]
		assert.Check(t, is.Regexp(`^runpod-gpu-9100-1-c1-[0-9a-f]{16}$`, label))
		labels = append(labels, label)
	}
	assert.Check(t, labels[0] != labels[1], "both runs minted %s", labels[0])
}

// A job of another run (a fork's pull_request workflow that learned the
// label) takes the runner while the lane's GPU job waits: the watchdog
// deletes the pod at its first poll and fails, naming the job.
func TestRunnerTakenByAForeignJobIsDeletedAtOnce(t *testing.T) {
	w := watchdogAccepted(t, watchdogConfig)
	s, runID, label := w.simulated, w.runID, w.prov.Outputs["runner-label"]

	// The foreign job is queued first and the idle runner takes it; the GPU job then waits for a busy runner.
	foreign, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/fork.yml",
		Event: "pull_request", Jobs: []githubsim.JobSpec{{Name: "grab", Labels: []string{label},
			Steps: []githubsim.StepSpec{{Name: "mine", Duration: time.Hour}}}}})
	assert.NilError(t, err)
	fjobs, err := s.GitHub.Jobs(cloud.Repository, foreign, 0)
	assert.NilError(t, err)
	assert.Equal(t, fjobs[0].RunnerName, label, "the foreign job took the runner")
	jobs, err := s.GitHub.Jobs(cloud.Repository, runID, 1)
	assert.NilError(t, err)
	assert.NilError(t, s.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{Name: "GPU tests", Labels: []string{label}, Status: "queued"}))

	res := harness.RunStep(t, w.step())
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Equal(t, res.Outputs["outcome"], "runner-taken")
	assert.Equal(t, res.Outputs["pod-deleted"], "true")
	assert.Check(t, is.Contains(res.Stdout, "runner taken by job "+harness.Itoa(int(fjobs[0].ID))+" of run "+harness.Itoa(int(foreign))))
	status, started, ended := w.pod(t)
	assert.Equal(t, status, runpodsim.StatusTerminated)
	assert.Check(t, ended.Sub(started) < watchdogSetupBudget, "deleted at once, not at the setup deadline; lived %s", ended.Sub(started))
	assertNoSecrets(t, s, res)
}

// The runner's registration does not survive its pod: not after the
// watchdog deletes the pod, not after cleanup does.
func TestRunnerRegistrationDoesNotSurviveThePod(t *testing.T) {
	t.Run("watchdog deletes the pod at the setup deadline", func(t *testing.T) {
		w := watchdogProvision(t, watchdogConfig)
		label := w.prov.Outputs["runner-label"]
		assert.Assert(t, registered(w.simulated, label))
		res := harness.RunStep(t, w.step())
		assert.Equal(t, res.Outputs["outcome"], "setup-expired", res.Stdout)
		assert.Check(t, !registered(w.simulated, label), "runner %s is still registered:\n%s", label, res.Stdout)
	})
	t.Run("the GPU job ends", func(t *testing.T) {
		w := watchdogProvision(t, fastConfig)
		label := w.prov.Outputs["runner-label"]
		jobs, err := w.GitHub.Jobs(cloud.Repository, w.runID, 1)
		assert.NilError(t, err)
		now := time.Now()
		assert.NilError(t, w.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{
			Name: "GPU tests", Labels: []string{label}, RunnerName: label, Status: "completed", Conclusion: "success", StartedAt: now, CompletedAt: now,
			Steps: []githubsim.StepSpec{{Name: "Run GPU tests", Status: "completed", Conclusion: "success", StartedAt: now, CompletedAt: now}},
		}))
		res := harness.RunStep(t, w.step())
		assert.Equal(t, res.ExitCode, 0, res.Stdout)
		assert.Equal(t, res.Outputs["outcome"], "job-finished")
		assert.Check(t, !registered(w.simulated, label), "runner %s is still registered:\n%s", label, res.Stdout)
	})
	t.Run("cleanup deletes the pod", func(t *testing.T) {
		s := startCloud(t, cleanupMarket(), runpodsim.Faults{}, fastConfig)
		pr := s.openPR(t)
		runID, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
			HeadSHA: harness.HeadSHA, PullRequests: []int{pr}, Jobs: []githubsim.JobSpec{{Name: "GPU tests", Status: "waiting"}}})
		assert.NilError(t, err)
		prov := s.ProvisionStep(pr)
		prov.Env["GITHUB_RUN_ID"] = harness.Itoa(int(runID))
		provisioned := harness.RunStep(t, prov)
		assert.Equal(t, provisioned.ExitCode, 0, provisioned.Stdout)
		label := provisioned.Outputs["runner-label"]
		assert.Assert(t, registered(s, label))
		res := harness.RunStep(t, s.cleanupStep(runID, provisioned.Outputs))
		assert.Check(t, is.Contains(res.Stdout, "runner "+label+": registration removed"))
		assert.Check(t, !registered(s, label), "runner %s is still registered:\n%s", label, res.Stdout)
		assert.Check(t, !strings.Contains(res.Stdout, "::error"), res.Stdout)
	})
}
