package lanes

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// cleanupMarket has room for several pods at once.
func cleanupMarket() *runpodsim.Market {
	m := testMarket(testHost("h1", harness.A4000, true))
	m.Hosts[0].GPUCount = 8
	return m
}

// cleanupStep is the cleanup action for the pods of run runID, with the provision outputs given.
func (s *simulated) cleanupStep(runID int64, provision map[string]string) harness.Step {
	env := s.RunnerEnv()
	env["GITHUB_RUN_ID"] = harness.Itoa(int(runID))
	env["GITHUB_EVENT_NAME"] = "pull_request"
	inputs := map[string]string{
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": s.RunPodURL, "github-token": cloud.GitHubToken,
		"tested-ref": harness.MergeSHA, "pr-number": "7",
	}
	for _, k := range []string{"pod-id", "retained-pod-ids", "rejected-attempts", "price-per-hour", "started-at", "gpu-type", "tier", "runner-label"} {
		inputs[k] = provision[k]
	}
	return harness.Step{Action: "cleanup", Workspace: s.Workspace, Env: env, Inputs: inputs}
}

// cleanupLaunch creates a pod the way provision tags it, without a runner (its proof fails and it exits).
func (s *simulated) cleanupLaunch(t *testing.T, runID int64, attempt, candidate int) string {
	t.Helper()
	tags := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: attempt, Candidate: candidate}
	pod, err := runpod.New(s.RunPodURL, cloud.RunPodKey).CreatePod(context.Background(), runpod.CreatePodRequest{
		Name: tags.PodName(), Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: harness.A4000, Count: 1}, Env: tags.Env(),
	})
	assert.NilError(t, err)
	return pod.ID
}

func (s *simulated) cleanupStatus(t *testing.T, id string) string {
	t.Helper()
	for _, p := range s.RunPod.Pods() {
		if p.ID == id {
			return p.Status
		}
	}
	t.Fatalf("no pod %s", id)
	return ""
}

// cleanupSecondsRE and friends hide the real-time second counts of a cost report.
var (
	cleanupSecondsRE = regexp.MustCompile(`\b\d+ s\b`)
	cleanupBoldRE    = regexp.MustCompile(`\*\*\d+\*\*`)
	cleanupPaidRE    = regexp.MustCompile(`\| Paid seconds \(start to deletion\) \| \d+ \|`)
	// cleanupGanttRE hides the chart's bars, whose seconds (and so which stages draw) vary in real time.
	cleanupGanttRE = regexp.MustCompile("(?s)```mermaid\ngantt\n.*?```\n")
)

func cleanupNormalize(s string, sim *simulated) string {
	s = normalize(s, sim)
	s = cleanupPaidRE.ReplaceAllLiteralString(s, "| Paid seconds (start to deletion) | N |")
	s = cleanupGanttRE.ReplaceAllLiteralString(s, "```mermaid\ngantt\n(bars by stage)\n```\n")
	s = cleanupBoldRE.ReplaceAllLiteralString(s, "**N**")
	return cleanupSecondsRE.ReplaceAllLiteralString(s, "N s")
}

// The whole path: provision accepts a pod, the GPU job runs on it, cleanup
// deletes it and reports its paid window by stage from the job's steps.
func TestCleanupDeletesTheAcceptedPodAndReportsStages(t *testing.T) {
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	// The GPU job waits (status "waiting") so no runner takes it before it is shown finished below.
	runID, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: harness.HeadSHA, PullRequests: []int{pr}, Jobs: []githubsim.JobSpec{{Name: "gpu-tests", Status: "waiting"}}})
	assert.NilError(t, err)
	prov := s.ProvisionStep(pr)
	prov.Env["GITHUB_RUN_ID"] = harness.Itoa(int(runID))
	provisioned := harness.RunStep(t, prov)
	assert.Equal(t, provisioned.ExitCode, 0, provisioned.Stdout)
	podID, label := provisioned.Outputs["pod-id"], provisioned.Outputs["runner-label"]

	// The GPU job ran on the pod's runner between the pod's start and now: set up, tested, finished.
	var started time.Time
	for _, p := range s.RunPod.Pods() {
		if p.ID == podID {
			started = p.StartedAt
		}
	}
	span := time.Since(started)
	at := func(fifths int) time.Time { return started.Add(span * time.Duration(fifths) / 5) }
	jobs, err := s.GitHub.Jobs(cloud.Repository, runID, 1)
	assert.NilError(t, err)
	assert.NilError(t, s.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{
		Name: "gpu-tests", Labels: []string{label}, RunnerName: label, Status: "completed", Conclusion: "success",
		StartedAt: at(1), CompletedAt: at(4),
		Steps: []githubsim.StepSpec{
			{Name: "Set up job", Status: "completed", Conclusion: "success", StartedAt: at(1), CompletedAt: at(2)},
			{Name: "Run GPU tests", Status: "completed", Conclusion: "success", StartedAt: at(2), CompletedAt: at(3)},
			{Name: "Complete job", Status: "completed", Conclusion: "success", StartedAt: at(3), CompletedAt: at(4)},
		},
	}))

	step := s.cleanupStep(runID, provisioned.Outputs)
	step.Inputs["job-check-run-id"] = "51725241954" // ${{ job.check_run_id }}
	res := harness.RunStep(t, step)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, s.cleanupStatus(t, podID), runpodsim.StatusTerminated)
	assert.Equal(t, res.Outputs["deleted-pod-ids"], podID)
	assert.Equal(t, res.Outputs["remaining-pod-ids"], "")
	assert.Equal(t, res.Outputs["cost-artifact-name"], cost.JobArtifactName(runID, 1, 51725241954), "the name claims the job, which the history checks")
	assert.Check(t, !strings.Contains(res.Stdout, "job-check-run-id is empty"))
	assert.Check(t, res.Outputs["cost-usd"] != "unknown", "start and price are known: %s", res.Outputs["cost-usd"])
	assert.Check(t, is.Contains(res.Summary, "| tests | Run GPU tests |"), "the stage breakdown comes from the job's steps")
	assert.Check(t, is.Contains(res.Stdout, cost.LinePrefix+"cost {"), "a structured cost line for the history")

	data, err := os.ReadFile(filepath.Join(s.Workspace, res.Outputs["cost-artifact-path"]))
	assert.NilError(t, err)
	artifact, err := cost.ParseArtifact(data)
	assert.NilError(t, err)
	assert.Equal(t, artifact.Run, cost.Run{Repository: cloud.Repository, ID: runID, Attempt: 1, TestedRef: harness.MergeSHA, Trigger: cost.TriggerAutomatic, PRNumber: 7})
	assert.Equal(t, artifact.Report.PodID, podID)
	assert.Equal(t, artifact.Report.JobConclusion, cost.ConclusionSuccess, "the history can tell a paid success from a paid failure")
	assertNoSecrets(t, s, res)
	golden.Assert(t, cleanupNormalize(res.Summary, s), "cleanup-accepted-summary.golden")
}

func TestCleanupPodAlreadyGone(t *testing.T) {
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)
	assert.NilError(t, runpod.New(s.RunPodURL, cloud.RunPodKey).DeletePod(context.Background(), id))

	started := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id, "price-per-hour": "0.25", "started-at": started}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["deleted-pod-ids"], id)
	assert.Check(t, is.Contains(res.Summary, "| already gone |"))
	assert.Check(t, is.Contains(res.Summary, "$0.25/h (provision snapshot)"), "the snapshot prices the pod")
	assert.Check(t, res.Outputs["cost-usd"] != "unknown")
}

func TestCleanupDeletesUntrackedPodsOfThisAttemptOnly(t *testing.T) {
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{}, fastConfig)
	tracked := s.cleanupLaunch(t, s.RunID, 1, 2)
	untracked := s.cleanupLaunch(t, s.RunID, 1, 1) // provision was killed before publishing it
	otherRun := s.cleanupLaunch(t, s.RunID+1, 1, 1)
	otherAttempt := s.cleanupLaunch(t, s.RunID, 2, 1)

	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": tracked}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["deleted-pod-ids"], tracked+","+untracked)
	for _, id := range []string{tracked, untracked} {
		assert.Check(t, is.Equal(s.cleanupStatus(t, id), runpodsim.StatusTerminated))
	}
	for _, id := range []string{otherRun, otherAttempt} {
		assert.Check(t, s.cleanupStatus(t, id) != runpodsim.StatusTerminated, "pod %s belongs to another run attempt", id)
	}
	assert.Check(t, is.Contains(res.Summary, "run attempt tags (never published)"))
	assert.Check(t, is.Contains(res.Summary, "untracked: provision never published this pod"))
}

// The pre-delete read fails (the 5 s bound itself is tested on virtual time in
// pkg/cleanup): the pod is still deleted and the report uses the snapshot.
func TestCleanupPreDeleteReadFailureFallsBackToTheSnapshot(t *testing.T) {
	getFails := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Status: 503}
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{getFails}}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)

	started := time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339)
	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id, "price-per-hour": "0.25", "started-at": started, "gpu-type": harness.A4000}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, s.cleanupStatus(t, id), runpodsim.StatusTerminated)
	assert.Check(t, is.Contains(res.Summary, "Pod record before deletion unavailable"))
	assert.Check(t, is.Contains(res.Summary, "| Price | $0.25/h (provision snapshot) |"))
	assert.Check(t, is.Contains(res.Summary, "| Paid window | "+started+" → "))
}

func TestCleanupWithoutSnapshotSaysUnknown(t *testing.T) {
	getFails := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Status: 503}
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{getFails}}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)
	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id, "price-per-hour": "cheap"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, s.cleanupStatus(t, id), runpodsim.StatusTerminated)
	assert.Check(t, is.Contains(res.Stdout, `input price-per-hour = "cheap": want a positive number`), "a bad report input warns")
	assert.Equal(t, res.Outputs["cost-usd"], "unknown")
	assert.Equal(t, res.Outputs["paid-seconds"], "unknown")
}

func TestCleanupUnconfirmedDeletionFailsAndNamesThePod(t *testing.T) {
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 403}}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)
	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id}))
	assert.Equal(t, res.ExitCode, 1)
	assert.Equal(t, res.Outputs["remaining-pod-ids"], id)
	assert.Check(t, is.Contains(res.Summary, "may still be billing:** `"+id+"`"))
	assert.Check(t, is.Contains(res.Stdout, "::error::pods of this run attempt may still be billing: "+id))
	assert.Check(t, strings.Contains(res.Stdout, cost.LinePrefix+"cost {"), "the report still runs after a failed deletion")
}
