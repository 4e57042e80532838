package lanes

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
)

// readmeCallerNaming is the workflows page's first caller block that names marker.
func readmeCallerNaming(t *testing.T, marker string) string {
	t.Helper()
	for _, block := range docYAMLBlocks(t, docWorkflows) {
		if strings.Contains(block, marker) {
			return block
		}
	}
	t.Fatalf("%s has no caller naming %q", docWorkflows, marker)
	return ""
}

// readmePerPodCaller is the README's own-job caller with one GPU job per pod
// and the host-fault re-run.
func readmePerPodCaller(t *testing.T) string {
	return readmeCallerNaming(t, "steps: *gpu-steps")
}

// podLane plays a caller on the simulated cloud as ownJobLane does, with
// the GPU jobs as GitHub runs them: a job per pod (each leg added to the
// run when the player reaches it, on its pod's runner label), and a pod that
// is gone taking its runner with it, so GitHub fails its job.
type podLane struct {
	*ownJobLane
	// stepsFor gives a GPU job's step by the job's name (one leg) and the step's name.
	stepsFor func(job, step string) githubsim.StepSpec

	legMu sync.Mutex
	legs  []githubsim.Job // the GPU jobs once ended, in order
}

// newPodLane is a lane of caller on s, a run of its own.
func newPodLane(t *testing.T, s *simulated, pr int, caller string) *podLane {
	t.Helper()
	wf, err := harness.ParseWorkflow(caller)
	assert.NilError(t, err)
	l := &podLane{ownJobLane: &ownJobLane{simulated: s, pr: pr, caller: wf, results: map[string]harness.StepResult{}}}
	// A job of the run that waits: the legs join it, and the run stays in progress.
	l.runID, err = s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "workflow_dispatch", HeadSHA: harness.HeadSHA, PullRequests: []int{pr},
		Jobs: []githubsim.JobSpec{{Name: "finish", Status: "waiting"}}})
	assert.NilError(t, err)
	l.stepsFor = func(_, step string) githubsim.StepSpec {
		if strings.HasSuffix(step, "again") {
			return githubsim.StepSpec{Name: step, Conclusion: "skipped"}
		}
		return githubsim.StepSpec{Name: step, Duration: 300 * time.Millisecond}
	}
	return l
}

// job runs the caller's own jobs: the hosted build stands done; a GPU job
// (one leg of a matrix) is added to the run on its runner label with its
// steps and watched until it ends.
func (l *podLane) job(_ string, job *harness.WorkflowJob, ctx harness.Contexts) (string, map[string]string) {
	runsOn, _ := job.RunsOn.(string)
	if !strings.Contains(runsOn, "runner-label") {
		return "success", nil
	}
	label, err := harness.Interpolate(runsOn, ctx)
	if err != nil || label == "" {
		return "failure", nil
	}
	var steps []githubsim.StepSpec
	for _, st := range job.Steps {
		steps = append(steps, l.stepsFor(job.Name, cmpOr(st.Name, st.Uses+st.Run)))
	}
	id, err := l.GitHub.AddJob(cloud.Repository, l.runID, githubsim.JobSpec{Name: job.Name, Labels: []string{label}, Steps: steps})
	if err != nil {
		return "failure", nil
	}
	podID := ""
	if m, ok := ctx.Values["matrix"].(map[string]any); ok {
		if pod, ok := m["pod"].(map[string]any); ok {
			podID, _ = pod["pod-id"].(string)
		}
	}
	lost := false
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		j, ok := l.ghJob(id)
		switch {
		case !ok:
			return "failure", nil
		case j.Status == "completed":
			l.legMu.Lock()
			l.legs = append(l.legs, j)
			l.legMu.Unlock()
			return j.Conclusion, nil
		case j.Status == "in_progress" && !lost:
			lost = l.loseRunnerOfGonePod(podID)
		}
	}
	return "failure", nil
}

func (l *podLane) ghJob(id int64) (githubsim.Job, bool) {
	jobs, err := l.GitHub.Jobs(cloud.Repository, l.runID, 1)
	if err != nil {
		return githubsim.Job{}, false
	}
	for _, j := range jobs {
		if j.ID == id {
			return j, true
		}
	}
	return githubsim.Job{}, false
}

// loseRunnerOfGonePod disconnects the runner of pod podID once the pod is
// gone, as its runner goes with it: GitHub then fails the job it ran.
func (l *podLane) loseRunnerOfGonePod(podID string) bool {
	p, err := l.RunPod.Pod(podID)
	if err != nil || p.Status != runpodsim.StatusTerminated || p.Env["RUNNER_JIT_CONFIG"] == "" {
		return false
	}
	return l.GitHub.RunnerDisconnect(p.Env["RUNNER_JIT_CONFIG"]) == nil
}

// play runs the caller from a dispatch for the PR to the end.
func (l *podLane) play(t *testing.T) map[string]harness.JobRun {
	t.Helper()
	p := &harness.Play{
		Github: map[string]any{
			"event_name": "workflow_dispatch", "token": cloud.GitHubToken, "repository": cloud.Repository,
			"run_id": float64(l.runID), "run_attempt": "1", "job": "gpu",
			"event": map[string]any{"repository": map[string]any{"default_branch": "main"}},
		},
		Vars:   map[string]any{},
		Action: l.action(t),
		Job:    l.job,
		Load:   harness.LoadWorkflow,
	}
	_, runs, err := p.Run(l.caller, map[string]any{"pr-number": harness.Itoa(l.pr), "sha": ""}, map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey})
	assert.NilError(t, err)
	return runs
}

// gate is the lane's published gate on the PR's head.
func (l *podLane) gate(t *testing.T) *github.CheckRun {
	t.Helper()
	checks := l.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, len(checks) > 0, "no gate")
	latest := checks[0]
	for _, c := range checks {
		if c.GetID() > latest.GetID() {
			latest = c
		}
	}
	return latest
}

// tierCheck is the lane's latest check of one tier.
func (l *podLane) tierCheck(t *testing.T, tier string) *github.CheckRun {
	t.Helper()
	var latest *github.CheckRun
	for _, c := range l.GitHub.CheckRuns(cloud.Repository, harness.HeadSHA) {
		if c.Name == gatecheck.TierCheckName("", tier) && (latest == nil || c.ID > latest.GetID()) {
			latest = &github.CheckRun{ID: github.Int64(c.ID), Conclusion: github.String(c.Conclusion), ExternalID: github.String(c.ExternalID)}
		}
	}
	assert.Assert(t, latest != nil, "no check of tier %s", tier)
	return latest
}

// matrixConfig reviews two tiers of one GPU type each and tests both.
const matrixConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000"]
  - name: ada
    gpu_ids: ["NVIDIA L4"]
matrix_tiers: [ampere, ada]
max_price_candidates: 1
max_provision_attempts: 3
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

func startMatrixCloud(t *testing.T) *simulated {
	t.Helper()
	return startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.L4, true)), runpodsim.Faults{}, matrixConfig)
}

var laneWorstRE = regexp.MustCompile(`lane plan: worst-case spend \$([0-9.]+)(?: \+ \d+ unpriced candidate\(s\))? across 2 tier\(s\) \(ampere \$([0-9.]+)[^,]*, ada \$([0-9.]+)`)

// Two tiers tested together (the README's caller of one GPU job per pod):
// exactly two pods, one per tier, each job on its own pod beside the
// watchdog; one gate with a row per tier; both pods deleted; the worst case
// printed before the first create covers both tiers.
func TestMatrixTwoTiersTwoPodsOneGateWithARowEach(t *testing.T) {
	s := startMatrixCloud(t)
	l := newPodLane(t, s, s.openPR(t), readmePerPodCaller(t))
	runs := l.play(t)

	for _, id := range []string{"authorize", "provision", "watchdog", "gpu", "finish"} {
		assert.Check(t, is.Equal(runs[id].Result, "success"), "job %s", id)
	}
	for _, id := range []string{"provision-again", "watchdog-again", "gpu-again"} {
		assert.Check(t, is.Equal(runs[id].Result, "skipped"), "no host fault, no re-run: job %s", id)
	}
	pods := l.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "exactly two pods")
	gpus := map[string]bool{}
	for _, p := range pods {
		gpus[p.GPUTypeID] = true
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "pod %s deleted", p.ID)
	}
	assert.Check(t, is.DeepEqual(gpus, map[string]bool{harness.A4000: true, harness.L4: true}), "one pod per tier")
	var legs []string
	for _, j := range l.legs {
		legs = append(legs, j.Name+" "+j.Conclusion)
		assert.Check(t, is.Contains(j.RunnerName, "runpod-gpu-"), "job %s ran on a pod's runner", j.Name)
	}
	assert.Check(t, is.Len(legs, 2))
	assert.Check(t, is.Contains(legs, "GPU tests (ampere) success"))
	assert.Check(t, is.Contains(legs, "GPU tests (ada) success"))
	watch := l.result(t, "watchdog")
	assert.Check(t, is.Contains(watch.Outputs["outcome"], "ampere=job-finished"), watch.Stdout)
	assert.Check(t, is.Contains(watch.Outputs["outcome"], "ada=job-finished"))

	gate := l.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "success"))
	assert.Check(t, is.Len(l.gateChecks(t, harness.HeadSHA), 1), "one gate")
	summary := gate.GetOutput().GetSummary()
	for _, row := range []string{"| ampere | NVIDIA RTX A4000 | US-TX-3 | 0.25 |", "| ada | NVIDIA L4 | US-TX-3 | 0.43 |"} {
		assert.Check(t, is.Contains(summary, row), summary)
	}
	assert.Check(t, is.Equal(strings.Count(summary, "| passed: the GPU job succeeded |"), 2), summary)
	assert.Check(t, is.Contains(gate.GetOutput().GetTitle(), "GPU tests passed on ampere (NVIDIA RTX A4000), ada (NVIDIA L4)"))
	for _, tier := range []string{"ampere", "ada"} {
		assert.Check(t, is.Equal(l.tierCheck(t, tier).GetConclusion(), "success"), "tier %s has its own passing check", tier)
	}

	prov := l.result(t, "provision")
	m := laneWorstRE.FindStringSubmatch(prov.Stdout)
	assert.Assert(t, m != nil, prov.Stdout)
	total, ampere, ada := usd(t, m[1]), usd(t, m[2]), usd(t, m[3])
	assert.Check(t, is.Equal(fmt.Sprintf("%.2f", ampere+ada), fmt.Sprintf("%.2f", total)), "the printed worst case is both tiers'")
	// Each tier at least one pod kept startup_timeout_seconds (20) + lifetime_seconds (3600, the default).
	assert.Check(t, ampere >= spend.Candidate(money.PerHour(0.25), 20*time.Second, 3600*time.Second).Dollars()-0.005, "ampere $%.2f", ampere)
	assert.Check(t, ada >= spend.Candidate(money.PerHour(0.43), 20*time.Second, 3600*time.Second).Dollars()-0.005, "ada $%.2f", ada)
	assert.Check(t, strings.Index(prov.Stdout, "lane plan:") < strings.Index(prov.Stdout, "created pod"), "printed before the first create")

	cleanup := l.result(t, "cleanup")
	assert.Check(t, is.Equal(cleanup.ExitCode, 0), cleanup.Stdout)
	for _, role := range []string{"authorize", "provision", "watchdog", "gate", "cleanup"} {
		assertNoSecrets(t, l.simulated, l.result(t, role))
	}
}

func usd(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	assert.NilError(t, err)
	return f
}

// One tier failing fails the one gate, naming that tier; the other tier's
// own check passes (it is not paid again for this tree, see below), both pods
// are deleted, and a test failure is no host fault: nothing is re-run.
func TestMatrixOneTierFailingFailsTheGateNamingIt(t *testing.T) {
	s := startMatrixCloud(t)
	l := newPodLane(t, s, s.openPR(t), readmePerPodCaller(t))
	l.stepsFor = failingTests("GPU tests (ada)")
	runs := l.play(t)

	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))
	assert.Check(t, is.Equal(runs["provision-again"].Result, "skipped"), "a failing test is never re-run")
	assert.Check(t, is.Len(l.RunPod.Pods(), 2))
	for _, p := range l.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated))
	}
	gate := l.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "failure"))
	summary := gate.GetOutput().GetSummary()
	assert.Check(t, is.Contains(summary, "Reason: tier ada failed: the GPU job failed"), summary)
	assert.Check(t, is.Contains(summary, "| ampere | NVIDIA RTX A4000 | US-TX-3 | 0.25 |"))
	assert.Check(t, is.Contains(summary, "| failed: the GPU job failed |"))
	assert.Check(t, is.Equal(l.result(t, "gate").Outputs["kind"], "failed"))
	assert.Check(t, is.Equal(l.tierCheck(t, "ampere").GetConclusion(), "success"))
	assert.Check(t, is.Equal(l.tierCheck(t, "ada").GetConclusion(), "failure"))
}

// failingTests fails the test step of the named GPU job.
func failingTests(job string) func(string, string) githubsim.StepSpec {
	return func(name, step string) githubsim.StepSpec {
		switch {
		case strings.HasSuffix(step, "again"):
			return githubsim.StepSpec{Name: step, Conclusion: "skipped"}
		case name == job && step == "Run GPU tests":
			return githubsim.StepSpec{Name: step, Duration: 300 * time.Millisecond, Conclusion: "failure"}
		}
		return githubsim.StepSpec{Name: step, Duration: 300 * time.Millisecond}
	}
}

// Reuse per tier by the tree key: after a lane where ampere passed and ada
// failed, the next lane for the same tree (another merge commit of it) pays
// for ada alone, shows ampere reused, and passes.
func TestMatrixATierThatPassedIsNotPaidAgain(t *testing.T) {
	s := startMatrixCloud(t)
	pr := s.openPR(t)
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, harness.MergeSHA, treeSHA))
	first := newPodLane(t, s, pr, readmePerPodCaller(t))
	first.stepsFor = failingTests("GPU tests (ada)")
	first.play(t)
	assert.Assert(t, is.Equal(first.gate(t).GetConclusion(), "failure"))
	assert.Assert(t, is.Len(s.RunPod.Pods(), 2))

	// The base moved without changing the merged files: a new merge commit
	// of the same tree, so only the tree key can match the tier's check.
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.MergeCommitSHA = gateMovedMergeSHA }))
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, gateMovedMergeSHA, treeSHA))
	again := newPodLane(t, s, pr, readmePerPodCaller(t))
	runs := again.play(t)
	assert.Check(t, is.Equal(runs["finish"].Result, "success"))
	assert.Assert(t, is.Len(s.RunPod.Pods(), 3), "one pod more: ada's")
	assert.Check(t, is.Equal(s.RunPod.Pods()[2].GPUTypeID, harness.L4))
	tiers := again.result(t, "provision").Stdout
	assert.Check(t, is.Contains(tiers, "with the identical tree and lane"), tiers)
	gate := again.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "success"))
	summary := gate.GetOutput().GetSummary()
	assert.Check(t, is.Contains(summary, "| ampere | — | — | — | — | reused: passed earlier for the tested tree"), summary)
	assert.Check(t, is.Contains(summary, "1 tested now, 1 reused"))
}

// hostFaultConfig reviews one tier of two GPU types: the cheaper one's host
// loses its pods' runtime a few seconds after they start.
const hostFaultConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000"]
max_price_candidates: 2
max_provision_attempts: 3
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

func startHostFaultCloud(t *testing.T) *simulated {
	t.Helper()
	flaky := testHost("h1", harness.A4000, true)
	flaky.LosesRuntimeAfter = 5 * time.Second
	return startCloud(t, testMarket(flaky, testHost("h2", harness.A5000, true)), runpodsim.Faults{}, hostFaultConfig)
}

// longTests makes the test step outlast the host's failure.
func longTests(_, step string) githubsim.StepSpec {
	switch {
	case strings.HasSuffix(step, "again"):
		return githubsim.StepSpec{Name: step, Conclusion: "skipped"}
	case step == "Run GPU tests":
		return githubsim.StepSpec{Name: step, Duration: 12 * time.Second}
	}
	return githubsim.StepSpec{Name: step, Duration: 200 * time.Millisecond}
}

// Host or code: the pod loses its runtime in the middle of the tests. The
// watchdog calls it a host fault, the lane re-runs the job once on another
// host, the re-run passes, and the gate says "host fault, re-run on <GPU> in
// <data center>"; the lost pod is reported against its host.
func TestHostFaultPodLostMidTestsIsReRunOnceOnAnotherHost(t *testing.T) {
	s := startHostFaultCloud(t)
	l := newPodLane(t, s, s.openPR(t), readmePerPodCaller(t))
	l.stepsFor = longTests
	runs := l.play(t)

	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"), "the first job lost its runner")
	for _, id := range []string{"provision-again", "watchdog-again", "gpu-again", "finish"} {
		assert.Check(t, is.Equal(runs[id].Result, "success"), "job %s", id)
	}
	pods := l.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "one re-run: exactly one pod more")
	assert.Check(t, is.Len(l.history["provision"], 2))
	assert.Check(t, is.Contains(l.history["provision"][1].Stdout, "host-fault re-run"), l.history["provision"][1].Stdout)
	assert.Check(t, is.Equal(pods[0].HostID, "h1"))
	assert.Check(t, is.Equal(pods[1].HostID, "h2"), "the re-run is on another host")
	for _, p := range pods {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated))
	}
	assert.Assert(t, is.Len(l.history["watchdog"], 2), "the first pod's watchdog, then the re-run's")
	watch := l.history["watchdog"][0]
	assert.Check(t, is.Contains(watch.Stdout, "runtime-lost while its GPU job runs"), watch.Stdout)
	assert.Check(t, is.Contains(watch.Outputs["host-faults"], pods[0].ID))

	gate := l.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "success"))
	summary := gate.GetOutput().GetSummary()
	assert.Check(t, is.Contains(summary, "host fault, re-run on NVIDIA RTX A5000 in US-TX-3: passed"), summary)
	assert.Check(t, is.Contains(summary, "lost: pod "+pods[0].ID+" on NVIDIA RTX A4000 in US-TX-3"))
	assert.Check(t, is.Contains(summary, "| any | NVIDIA RTX A4000 | US-TX-3 | 0.25 |"))
	assert.Check(t, is.Contains(summary, "| host-fault: host fault: the pod lost its runtime"))

	artifact := l.costArtifact(t)
	var hosts []cost.HostVerdict
	for _, r := range artifact.Reports() {
		hosts = append(hosts, r.Host)
	}
	assert.Check(t, is.Contains(hosts, cost.HostFailed), "the lost pod counts against its host: %v", hosts)
}

// costArtifact reads the cost artifact cleanup wrote into the workspace.
func (l *podLane) costArtifact(t *testing.T) cost.Artifact {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(l.Workspace, "runpod-gpu-cost", cost.ArtifactFileName))
	assert.NilError(t, err)
	a, err := cost.ParseArtifact(data)
	assert.NilError(t, err)
	return a
}

// A failing test is never re-run, whatever the host does after: the test
// step fails before the host would lose the pod, the job ends, and the lane
// pays for one pod and fails its gate.
func TestHostFaultFailingTestIsNeverReRun(t *testing.T) {
	s := startHostFaultCloud(t)
	l := newPodLane(t, s, s.openPR(t), readmePerPodCaller(t))
	l.stepsFor = failingTests("GPU tests")
	runs := l.play(t)

	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))
	for _, id := range []string{"provision-again", "watchdog-again", "gpu-again"} {
		assert.Check(t, is.Equal(runs[id].Result, "skipped"), "job %s", id)
	}
	assert.Check(t, is.Len(l.RunPod.Pods(), 1), "no second pod")
	watch := l.result(t, "watchdog")
	assert.Check(t, is.Equal(watch.Outputs["host-faults"], "[]"), watch.Stdout)
	gate := l.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "failure"))
	assert.Check(t, !strings.Contains(gate.GetOutput().GetSummary(), "host fault"))
}

// The single-workflow lane (gpu-lane.yml with test-command, the README's
// first caller) re-runs a host fault by itself: the same pod lost mid-tests,
// one re-run on another host, a passing gate that says so.
func TestHostFaultReRunsInTheSingleWorkflowLane(t *testing.T) {
	s := startHostFaultCloud(t)
	l := newPodLane(t, s, s.openPR(t), readmeCallerNaming(t, "/.github/workflows/gpu-lane.yml@"))
	l.stepsFor = longTests
	runs := l.play(t)

	// The lost job failed, so the call does too, as on GitHub: the gate is what counts.
	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))
	pods := l.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2))
	assert.Check(t, is.Equal(pods[1].HostID, "h2"))
	for _, p := range pods {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated))
	}
	var legs []string
	for _, j := range l.legs {
		legs = append(legs, j.Name+" "+j.Conclusion)
	}
	assert.Check(t, is.DeepEqual(legs, []string{"GPU tests failure", "GPU tests success"}))
	gate := l.gate(t)
	assert.Check(t, is.Equal(gate.GetConclusion(), "success"))
	assert.Check(t, is.Contains(gate.GetOutput().GetSummary(), "host fault, re-run on NVIDIA RTX A5000 in US-TX-3: passed"), gate.GetOutput().GetSummary())
}
