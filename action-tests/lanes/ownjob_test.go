package lanes

import (
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// readmeOwnJobCaller is the workflows page's caller of the lane's four parts
// around a GPU job of the caller's own: what a user copies.
func readmeOwnJobCaller(t *testing.T) string {
	t.Helper()
	for _, block := range docYAMLBlocks(t, docWorkflows) {
		if strings.Contains(block, "/.github/workflows/gpu-lane-authorize.yml@") {
			return block
		}
	}
	t.Fatalf("%s has no caller of gpu-lane-authorize.yml", docWorkflows)
	return ""
}

// ownJobLane plays a caller of the lane's parts on the simulated cloud: the
// lane's jobs run the real binaries with the inputs the workflows and the
// caller give them, and the caller's GPU job runs its steps on the pod's
// runner in the simulated GitHub, each for its duration.
type ownJobLane struct {
	*simulated
	pr     int
	runID  int64
	caller *harness.Workflow
	// steps stand for the GPU job's steps, by name: duration and conclusion.
	steps func(name string) githubsim.StepSpec

	// real, when set, runs the caller's hosted jobs and the GPU job's steps for real
	// (ownjob_realsteps_test.go); steps is then unused.
	real *realSteps

	mu      sync.Mutex
	results map[string]harness.StepResult   // by action role, the last run
	history map[string][]harness.StepResult // by action role, every run in order
	gpuJob  githubsim.Job                   // the GPU job once it ended
}

func newOwnJobLane(t *testing.T, configYAML, caller string) *ownJobLane {
	t.Helper()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, configYAML)
	wf, err := harness.ParseWorkflow(caller)
	assert.NilError(t, err)
	l := &ownJobLane{simulated: s, pr: s.openPR(t), caller: wf, results: map[string]harness.StepResult{}}
	gpu := l.gpuJobID()
	l.runID, err = s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "workflow_dispatch", HeadSHA: harness.HeadSHA, PullRequests: []int{l.pr},
		Jobs: []githubsim.JobSpec{{Name: cmpOr(wf.Jobs[gpu].Name, gpu), Status: "waiting"}}})
	assert.NilError(t, err)
	return l
}

// gpuJobID is the caller's job that runs on the pod's runner.
func (l *ownJobLane) gpuJobID() string {
	for id, job := range l.caller.Jobs {
		if s, _ := job.RunsOn.(string); strings.Contains(s, "outputs.runner-label") {
			return id
		}
	}
	return ""
}

// action runs one of the suite's actions as the lane's step would, with what
// only the simulation needs on top (its API URLs, the proof it serves, fast
// polls).
func (l *ownJobLane) action(t *testing.T) func(role string, inputs map[string]string) (string, map[string]string) {
	return func(role string, inputs map[string]string) (string, map[string]string) {
		env := l.laneEnv(l.runID)
		env["GITHUB_ACTOR"], env["GITHUB_TRIGGERING_ACTOR"] = "bob", "bob"
		switch role {
		case "authorize":
			inputs["registry-api-url"], inputs["gate-app-id"] = l.RegistryURL, harness.Itoa(int(cloud.AppID))
			inputs["lane-wait-seconds"], inputs["lane-poll-seconds"] = "60", "1"
		case "provision":
			inputs["runpod-api-url"], inputs["registry-api-url"] = l.RunPodURL, l.RegistryURL
			inputs["proof-url"], inputs["proof-sha256"], inputs["gate-app-id"] = l.ProofURL, l.ProofSHA256, harness.Itoa(int(cloud.AppID))
		case "watchdog":
			inputs["runpod-api-url"], inputs["poll-seconds"] = l.RunPodURL, "1"
		case "cleanup":
			inputs["runpod-api-url"] = l.RunPodURL
		}
		res := harness.RunStep(t, harness.Step{Action: role, Workspace: l.Workspace, Env: env, Inputs: inputs})
		l.mu.Lock()
		l.results[role] = res
		if l.history == nil {
			l.history = map[string][]harness.StepResult{}
		}
		l.history[role] = append(l.history[role], res)
		l.mu.Unlock()
		if res.ExitCode != 0 {
			return "failure", res.Outputs
		}
		return "success", res.Outputs
	}
}

// job runs the caller's own jobs: the hosted build stands done, and the GPU
// job is handed to the runner its runs-on names, with its steps, and watched
// until it ends, as GitHub would run it.
func (l *ownJobLane) job(id string, job *harness.WorkflowJob, ctx harness.Contexts) (string, map[string]string) {
	if id != l.gpuJobID() {
		return "success", nil // the hosted build; the reputation fetch finds no record
	}
	label, err := harness.Interpolate(job.RunsOn.(string), ctx)
	if err != nil || label == "" {
		return "failure", nil
	}
	if l.real != nil {
		return l.real.gpuJob(l, job, ctx, label), nil
	}
	var steps []githubsim.StepSpec
	for _, st := range job.Steps {
		steps = append(steps, l.steps(cmpOr(st.Name, st.Uses+st.Run)))
	}
	jobs, err := l.GitHub.Jobs(cloud.Repository, l.runID, 1)
	if err != nil || len(jobs) != 1 {
		return "failure", nil
	}
	if err := l.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{Name: jobs[0].Name, Labels: []string{label}, Status: "queued", Steps: steps}); err != nil {
		return "failure", nil
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		jobs, err := l.GitHub.Jobs(cloud.Repository, l.runID, 1)
		if err == nil && jobs[0].Status == "completed" {
			l.mu.Lock()
			l.gpuJob = jobs[0]
			l.mu.Unlock()
			return jobs[0].Conclusion, nil
		}
	}
	return "failure", nil
}

// play runs the caller from its trigger (a dispatch for the PR) to the end.
func (l *ownJobLane) play(t *testing.T) map[string]harness.JobRun {
	t.Helper()
	p := &harness.Play{
		Github: map[string]any{
			"event_name": "workflow_dispatch", "token": cloud.GitHubToken, "repository": cloud.Repository,
			"run_id": float64(l.runID), "run_attempt": "1",
			"event": map[string]any{"repository": map[string]any{"default_branch": "main"}},
		},
		Vars:   map[string]any{},
		Action: l.action(t),
		Job:    l.job,
		Load:   harness.LoadWorkflow,
	}
	if l.real != nil {
		p.Machine = l.real.hostedMachine(t, l)
	}
	_, runs, err := p.Run(l.caller, map[string]any{"pr-number": harness.Itoa(l.pr), "sha": ""}, map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey})
	assert.NilError(t, err)
	return runs
}

func (l *ownJobLane) result(t *testing.T, role string) harness.StepResult {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	res, ok := l.results[role]
	assert.Assert(t, ok, "the lane never ran %s", role)
	return res
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// The README's caller, as written: a hosted job builds the test archive, the
// caller's own GPU job (download with a retry that is not needed, unpack,
// run, upload the results) runs on the accepted pod's runner with the
// watchdog beside it, and the gate is green.
func TestOwnJobRunsItsOwnStepsAndTheGatePasses(t *testing.T) {
	l := newOwnJobLane(t, fastConfig, readmeOwnJobCaller(t))
	l.steps = func(name string) githubsim.StepSpec {
		if strings.HasSuffix(name, "again") { // the retry: the first download worked
			return githubsim.StepSpec{Name: name, Conclusion: "skipped"}
		}
		return githubsim.StepSpec{Name: name, Duration: 300 * time.Millisecond}
	}
	runs := l.play(t)

	for _, id := range []string{"authorize", "build", "provision", "watchdog", "gpu", "finish"} {
		assert.Check(t, is.Equal(runs[id].Result, "success"), "job %s", id)
	}
	assert.Check(t, is.Len(l.RunPod.Pods(), 1), "one pod")
	for _, p := range l.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "the pod is deleted")
	}
	var names []string
	for _, st := range l.gpuJob.Steps {
		names = append(names, st.Name)
	}
	assert.Check(t, len(names) >= 3, "the GPU job has its own steps: %v", names)
	for _, want := range []string{"Download the test archive", "Run GPU tests"} {
		assert.Check(t, is.Contains(names, want))
	}
	assert.Check(t, is.Equal(names[len(names)-1], "Run GPU tests"), "the tests are the GPU job's last step: %v", names)
	assert.Check(t, is.Equal(l.gpuJob.Conclusion, "success"))
	watch := l.result(t, "watchdog")
	assert.Check(t, is.Equal(watch.Outputs["outcome"], "job-finished"), watch.Stdout)
	assert.Check(t, is.Equal(watch.Outputs["tests-started"], "true"))
	assert.Check(t, is.Contains(watch.Stdout, `test step "Run GPU tests" started: setup deadline disarmed`))
	gate := l.result(t, "gate")
	assert.Check(t, is.Equal(gate.Outputs["kind"], "paid"), gate.Stdout)
	assert.Check(t, is.Equal(runs["finish"].Outputs["gate-kind"], "paid"), "the caller sees the gate through finish's outputs")
	checks := l.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	assert.Check(t, is.Equal(checks[0].GetConclusion(), "success"))
	assert.Check(t, is.Equal(checks[0].GetStatus(), "completed"))
	cleanup := l.result(t, "cleanup")
	assert.Check(t, is.Equal(cleanup.ExitCode, 0), cleanup.Stdout)
	assert.Check(t, is.Contains(cleanup.Summary, "Run GPU tests"), "the cost by stage knows the test step")
	for _, role := range []string{"authorize", "provision", "watchdog", "gate", "cleanup"} {
		assertNoSecrets(t, l.simulated, l.result(t, role))
	}
}

// A GPU job that never starts the step the watchdog waits for (its test step
// is named otherwise) keeps the setup deadline: its pod is deleted there, the
// watchdog fails naming the job and the step, the run is cancelled, and the
// gate fails.
func TestOwnJobThatNeverSignalsItsTestsIsDeletedAtTheSetupDeadline(t *testing.T) {
	caller := strings.Replace(readmeOwnJobCaller(t), "      - name: Run GPU tests\n", "      - name: Run the tests\n", 1)
	l := newOwnJobLane(t, watchdogConfig, caller)
	l.steps = func(name string) githubsim.StepSpec {
		if name == "Run the tests" {
			return githubsim.StepSpec{Name: name, Duration: 40 * time.Second} // runs, but is not the signal
		}
		return githubsim.StepSpec{Name: name, Duration: 200 * time.Millisecond}
	}
	runs := l.play(t)

	watch := l.result(t, "watchdog")
	assert.Check(t, is.Equal(watch.ExitCode, 1), watch.Stdout)
	assert.Check(t, is.Equal(watch.Outputs["outcome"], "setup-expired"))
	assert.Check(t, is.Equal(watch.Outputs["tests-started"], "false"))
	assert.Check(t, is.Contains(watch.Stdout, `setup budget of 4s expired before the GPU job "GPU tests" started its test step "Run GPU tests"`))
	assert.Assert(t, is.Len(l.RunPod.Pods(), 1))
	pod := l.RunPod.Pods()[0]
	assert.Check(t, is.Equal(pod.Status, runpodsim.StatusTerminated))
	lived := pod.TerminatedAt.Sub(pod.StartedAt)
	assert.Check(t, lived >= watchdogSetupBudget && lived < watchdogSetupBudget+3*time.Second, "deleted at the setup deadline, lived %s", lived)
	assert.Check(t, is.Len(l.GitHub.Cancellations(), 1), "the run is cancelled after the deletion")
	assert.Check(t, is.Equal(l.gpuJob.Conclusion, "cancelled"))
	assert.Check(t, is.Equal(runs["gpu"].Result, "cancelled"))
	gate := l.result(t, "gate")
	assert.Check(t, is.Equal(gate.Outputs["kind"], "failed"), gate.Stdout)
	checks := l.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	assert.Check(t, is.Equal(checks[0].GetConclusion(), "failure"))
}

// The runner is the GPU job's and only its (issue 28 point 6): another job
// of the same run whose runs-on names the runner's label takes the paid
// runner first; the watchdog deletes the pod at once, naming that job,
// instead of taking it for the GPU job and billing to the setup deadline.
func TestWatchdogAnotherJobOfTheRunOnTheRunnerDeletesThePodAtOnce(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, watchdogConfig)
	pr := s.openPR(t)
	runID, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: harness.HeadSHA, PullRequests: []int{pr}, Jobs: []githubsim.JobSpec{{Name: "Lint", Status: "waiting"}, {Name: "GPU tests", Status: "waiting"}}})
	assert.NilError(t, err)
	st := s.ProvisionStep(pr)
	st.Env["GITHUB_RUN_ID"] = harness.Itoa(int(runID))
	prov := harness.RunStep(t, st)
	assert.Assert(t, prov.ExitCode == 0, prov.Stdout)
	w := &watchdogRun{simulated: s, runID: runID, pr: pr, podID: prov.Outputs["pod-id"], prov: prov}
	label := prov.Outputs["runner-label"]
	jobs, err := s.GitHub.Jobs(cloud.Repository, runID, 1)
	assert.NilError(t, err)
	// The Lint job is queued first and takes the runner; the GPU job waits.
	assert.NilError(t, s.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{Name: "Lint", Labels: []string{label}, Status: "queued",
		Steps: []githubsim.StepSpec{{Name: "Lint", Duration: time.Minute}}}))
	assert.NilError(t, s.GitHub.SetJob(cloud.Repository, jobs[1].ID, githubsim.JobSpec{Name: "GPU tests", Labels: []string{label}, Status: "queued",
		Steps: []githubsim.StepSpec{{Name: "Run GPU tests", Duration: time.Minute}}}))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		j, _ := s.GitHub.Jobs(cloud.Repository, runID, 1)
		if j[0].RunnerName == label {
			return poll.Success()
		}
		return poll.Continue("the Lint job has not taken the runner")
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(50*time.Millisecond))

	res := harness.RunStep(t, w.step())
	assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["outcome"], "runner-taken"))
	assert.Check(t, is.Equal(res.Outputs["pod-deleted"], "true"))
	assert.Check(t, is.Contains(res.Stdout, `runner taken by job `+harness.Itoa(int(jobs[0].ID))+` "Lint" of this run attempt`))
	status, started, ended := w.pod(t)
	assert.Check(t, is.Equal(status, runpodsim.StatusTerminated))
	assert.Check(t, ended.Sub(started) < watchdogSetupBudget, "deleted at once, not at the setup deadline (lived %s)", ended.Sub(started))
}

// A pull request whose changes need no GPU: authorize decides skip, nothing
// is built or provisioned, and finish still publishes the gate (from
// authorize's lane record, as provision's is empty) and runs no cleanup.
func TestOwnJobNotRequiredPublishesTheGateWithoutAPod(t *testing.T) {
	l := newOwnJobLane(t, fastConfig+"gpu_paths: [\"kernels/**\"]\n", readmeOwnJobCaller(t))
	l.steps = func(name string) githubsim.StepSpec { return githubsim.StepSpec{Name: name, Duration: time.Second} }
	runs := l.play(t)

	auth := l.result(t, "authorize")
	assert.Check(t, is.Equal(auth.Outputs["decision"], "skip"), auth.Stdout)
	for _, id := range []string{"build", "provision", "watchdog", "gpu"} {
		assert.Check(t, is.Equal(runs[id].Result, "skipped"), "job %s", id)
	}
	assert.Check(t, is.Equal(runs["finish"].Result, "success"))
	gate := l.result(t, "gate")
	assert.Check(t, is.Equal(gate.Outputs["kind"], "not-required"), gate.Stdout)
	checks := l.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	assert.Check(t, is.Equal(checks[0].GetConclusion(), "success"))
	l.mu.Lock()
	_, cleaned := l.results["cleanup"]
	l.mu.Unlock()
	assert.Check(t, !cleaned, "no pod can exist: cleanup does not run")
	assert.Check(t, is.Len(l.RunPod.Pods(), 0))
}
