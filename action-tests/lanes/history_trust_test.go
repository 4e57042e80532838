package lanes

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/wire"
	"gopkg.in/yaml.v3"
)

// historyLaneJobs are one attempt's jobs of gpu-lane.yml called from a
// caller job "gpu": the GPU job on the pod's runner label, the rest hosted,
// each running a minute after the one before, from at on.
func historyLaneJobs(at time.Time) []githubsim.JobSpec {
	var specs []githubsim.JobSpec
	for i, name := range []string{history.JobAuthorize, history.JobProvision, history.JobWatchdog, "GPU tests", history.JobGate, history.JobCleanup} {
		spec := githubsim.JobSpec{Name: "gpu / " + name, Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 7",
			Status: "completed", Conclusion: "success", StartedAt: at.Add(time.Duration(i) * time.Minute), CompletedAt: at.Add(time.Duration(i+1) * time.Minute)}
		if name == "GPU tests" {
			spec.Labels, spec.RunnerName = []string{"runpod-gpu-7-1-c1"}, "runpod-gpu-7-1-c1"
		}
		specs = append(specs, spec)
	}
	return specs
}

// historyUpload uploads a cost artifact of run id's first attempt as the
// job named "gpu / <job>" would, half a minute into that job, sealed in that
// job's log, under the name
// cleanup gives it (cost.JobArtifactName, claiming the job); claim, when not
// 0, names another job instead. It returns the artifact's name.
func (w *historyWorld) historyUpload(t *testing.T, id int64, job string, claim int64, art cost.Artifact) string {
	t.Helper()
	jobs, err := w.gh.Jobs(historyRepo, id, 1)
	assert.NilError(t, err)
	i := slices.IndexFunc(jobs, func(j githubsim.Job) bool { return j.Name == "gpu / "+job })
	assert.Assert(t, i >= 0, "run %d has no job %s", id, job)
	if claim == 0 {
		claim = jobs[i].ID
	}
	name := cost.JobArtifactName(id, 1, claim)
	body, err := json.Marshal(art)
	assert.NilError(t, err)
	_, err = w.gh.AddArtifact(historyRepo, id, githubsim.ArtifactSpec{Name: name, CreatedAt: jobs[i].StartedAt.Add(30 * time.Second),
		Files: map[string]string{cost.ArtifactFileName: string(body)}})
	assert.NilError(t, err)
	// The uploading job seals the file in its own log, as cleanup does (the
	// GPU job's code can print a seal too, in a log the history does not trust).
	seal := map[string]string{historyLogFile(90+i, job): jobs[i].StartedAt.Add(30*time.Second).Format(time.RFC3339Nano) + " " + cost.SealLine(body).Format() + "\n"}
	if w.published[id] {
		w.setLogs(t, id, seal)
	} else {
		w.addLogs(id, seal) // published with the run's logs (setLogs)
	}
	return name
}

// historyJobID is the id of run id's job "gpu / <job>".
func (w *historyWorld) historyJobID(t *testing.T, id int64, job string) int64 {
	t.Helper()
	jobs, err := w.gh.Jobs(historyRepo, id, 1)
	assert.NilError(t, err)
	i := slices.IndexFunc(jobs, func(j githubsim.Job) bool { return j.Name == "gpu / "+job })
	assert.Assert(t, i >= 0, "run %d has no job %s", id, job)
	return jobs[i].ID
}

// TestHistoryCountsOnlyTheLaneJobsCostArtifacts: any job of a run can upload
// an artifact of any name, the GPU job's pull-request code included. Only the
// one the lane's cleanup job uploaded, claiming itself, reaches the report:
// not the GPU job's claiming itself, not one it uploads claiming the cleanup
// job (it ran before that job), not a job outside the lane, not a name that
// claims no job.
func TestHistoryCountsOnlyTheLaneJobsCostArtifacts(t *testing.T) {
	created := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	start := created.Add(2 * time.Minute)
	real := cost.Report{PodID: "realacc", GPU: "NVIDIA L4", Tier: "full", Price: cost.KnownPrice(money.PerHour(0.36), "v2 cost"),
		Window: cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Minute))}}
	run := cost.Run{Repository: historyRepo, Attempt: 1, TestedRef: strings.Repeat("b", 40), Trigger: cost.TriggerAutomatic, PRNumber: 3}
	forged := func(podID string) cost.Artifact {
		return cost.Artifact{Run: run, Action: "cleanup", Report: cost.Report{PodID: podID, GPU: "NVIDIA H100", Tier: "full",
			Price: cost.KnownPrice(money.PerHour(99), "v2 cost"), Window: cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Hour))}}}
	}
	w := historyStart(t)
	jobs := append(historyLaneJobs(created), githubsim.JobSpec{Name: "gpu / Lint", Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 8",
		Status: "completed", Conclusion: "success", StartedAt: created, CompletedAt: created.Add(time.Hour)})
	id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
		Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: jobs})
	assert.NilError(t, err)
	run.ID = id
	w.setLogs(t, id, map[string]string{historyLogFile(0, history.JobProvision): ""})

	ignored := []string{
		w.historyUpload(t, id, "GPU tests", 0, forged("forgedself")),
		w.historyUpload(t, id, "GPU tests", w.historyJobID(t, id, history.JobCleanup)+1000, forged("forgedother")),
		w.historyUpload(t, id, "Lint", 0, forged("forgedlint")),
	}
	// Before the cleanup job ran, under the very name it will use: the GPU
	// job's code cannot know when that job runs, only its name.
	early := w.historyUpload(t, id, "GPU tests", w.historyJobID(t, id, history.JobCleanup), forged("forgedearly"))
	_, err = w.gh.AddArtifact(historyRepo, id, githubsim.ArtifactSpec{Name: cost.ArtifactName(id, 1), CreatedAt: created.Add(5 * time.Minute),
		Files: map[string]string{cost.ArtifactFileName: "{}"}})
	assert.NilError(t, err)
	// The real one could not be uploaded under the taken name: a second run
	// shows the cleanup job's own upload is counted.
	id2, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
		Event: "pull_request", CreatedAt: created.Add(time.Hour), Status: "completed", Conclusion: "success", Jobs: historyLaneJobs(created.Add(time.Hour))})
	assert.NilError(t, err)
	w.setLogs(t, id2, map[string]string{historyLogFile(0, history.JobProvision): ""})
	run.ID = id2
	w.historyUpload(t, id2, history.JobCleanup, 0, cost.Artifact{Run: run, Action: "cleanup", Report: real})

	res := harness.RunStep(t, w.step(map[string]string{"since": "2026-10-06", "until": "2026-10-07"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	report, err := os.ReadFile(res.Outputs["report-json"])
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(report), `"podId": "realacc"`))
	for _, pod := range []string{"forgedself", "forgedother", "forgedlint", "forgedearly"} {
		assert.Check(t, !strings.Contains(string(report), pod), "the forged pod %s is in the report", pod)
		assert.Check(t, !strings.Contains(res.Summary, pod), "the forged pod %s is in the summary", pod)
	}
	for _, name := range append(ignored, early) {
		assert.Check(t, is.Contains(string(report), "cost artifact "+name+" ignored: "), "no warning names %s", name)
	}
	assert.Check(t, is.Contains(string(report), "cost artifact "+cost.ArtifactName(id, 1)+" not downloaded (unavailable: its name claims no job"))
	totals := historyTotals(t, res)
	assert.Check(t, is.DeepEqual(totals["spend"], map[string]any{"usd": 0.06, "knownUsd": 0.06, "unknown": 0.0}))
}

// historyLogFile names a lane job's log in the run's logs archive as GitHub
// does: the "/" of "gpu / <job>" is not in the file name.
func historyLogFile(n int, job string) string {
	return fmt.Sprintf("%d_%s.txt", n, strings.ReplaceAll("gpu / "+job, "/", ""))
}

// TestHistoryIgnoresCostLinesTheGPUJobPrints: the GPU job runs the pull
// request's code, which can print any line. A cost line it prints — or one
// printed by a job that only borrows a lane job's name on the pod's runner —
// must not reach the cost history.
func TestHistoryIgnoresCostLinesTheGPUJobPrints(t *testing.T) {
	created := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	stamp := created.Format(time.RFC3339Nano) + " "
	start := created.Add(2 * time.Minute)
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA RTX A4000", PodID: "realrej",
		Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost"), Outcome: cost.OutcomeRejected, Reason: "SMOKE FAIL", Seconds: cost.KnownSeconds(144)}
	real := cost.Report{PodID: "realacc", GPU: "NVIDIA L4", Tier: "full", Price: cost.KnownPrice(money.PerHour(0.36), "v2 cost"),
		Window: cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Minute))}}
	fake := cost.Report{PodID: "forgedpod", GPU: "NVIDIA H100", Tier: "full", Price: cost.KnownPrice(money.PerHour(99), "v2 cost"),
		Window: cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Hour))}}
	fakeAttempt := cost.Attempt{Number: 2, Candidate: "live-2", GPU: "NVIDIA H100", PodID: "forgedrej",
		Price: cost.KnownPrice(money.PerHour(99), "v2 cost"), Outcome: cost.OutcomeRejected, Reason: "SMOKE FAIL", Seconds: cost.KnownSeconds(36000)}
	forged := stamp + cost.CostLine(fake).Format() + "\n" + stamp + cost.AttemptLine(fakeAttempt).Format() + "\n"

	tests := []struct {
		name string
		// jobs edits the attempt's jobs; logs adds the forged log files.
		jobs func([]githubsim.JobSpec) []githubsim.JobSpec
		logs map[string]string
	}{
		{name: "the GPU job prints a cost line",
			logs: map[string]string{
				historyLogFile(3, "GPU tests"):                         forged,
				"gpu  GPU tests/4_" + history.DefaultTestStep + ".txt": forged,
			}},
		{name: "a job named like the watchdog ran on the pod's runner",
			jobs: func(specs []githubsim.JobSpec) []githubsim.JobSpec {
				for i := range specs {
					if specs[i].Name == "gpu / "+history.JobWatchdog {
						specs[i].Labels, specs[i].RunnerName = []string{"runpod-gpu-7-1-c1"}, "runpod-gpu-7-1-c1"
					}
				}
				return specs
			},
			logs: map[string]string{historyLogFile(1, history.JobWatchdog): forged}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := historyStart(t)
			jobs := historyLaneJobs(created)
			if tc.jobs != nil {
				jobs = tc.jobs(jobs)
			}
			id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
				Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: jobs})
			assert.NilError(t, err)
			files := map[string]string{
				historyLogFile(0, history.JobProvision): stamp + cost.AttemptLine(rejected).Format() + "\n",
				historyLogFile(5, history.JobCleanup):   stamp + cost.CostLine(real).Format() + "\n",
			}
			for name, text := range tc.logs {
				files[name] = text
			}
			w.setLogs(t, id, files)

			res := harness.RunStep(t, w.step(map[string]string{"since": "2026-10-06", "until": "2026-10-07"}))
			assert.Equal(t, res.ExitCode, 0, res.Stdout)
			totals := historyTotals(t, res)
			assert.Check(t, is.Equal(totals["pods"], 2.0), "only the lane's own pods: the rejected and the accepted one")
			assert.Check(t, is.DeepEqual(totals["spend"], map[string]any{"usd": 0.07, "knownUsd": 0.07, "unknown": 0.0}))
			report, err := os.ReadFile(res.Outputs["report-json"])
			assert.NilError(t, err)
			for _, forgedID := range []string{fake.PodID, fakeAttempt.PodID} {
				assert.Check(t, !strings.Contains(string(report), forgedID), "the forged pod %s is in the report", forgedID)
				assert.Check(t, !strings.Contains(res.Summary, forgedID), "the forged pod %s is in the summary", forgedID)
			}
		})
	}
}

// TestHistoryLaneJobsAreTheWorkflowsJobs: the history trusts the logs of the
// jobs history.LaneJobs names, so they must be gpu-lane.yml's jobs, every one
// but the GPU job, whose test step is history.DefaultTestStep, and the
// Serverless lane's job, which runs no pull-request code on its runner.
func TestHistoryLaneJobsAreTheWorkflowsJobs(t *testing.T) {
	data, err := os.ReadFile("../../.github/workflows/gpu-lane.yml")
	assert.NilError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Name   string `yaml:"name"`
			RunsOn string `yaml:"runs-on"`
			Steps  []struct {
				Name string `yaml:"name"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	assert.NilError(t, yaml.Unmarshal(data, &wf))
	var lane []string
	for _, j := range wf.Jobs {
		onPod := strings.Contains(j.RunsOn, "runner-label")
		hasTests := false
		for _, s := range j.Steps {
			hasTests = hasTests || s.Name == history.DefaultTestStep
		}
		assert.Check(t, onPod == hasTests, "job %q: the pod's job is the one with the step %q", j.Name, history.DefaultTestStep)
		if !onPod {
			lane = append(lane, j.Name)
		}
	}
	sls, err := os.ReadFile("../../.github/workflows/serverless-lane.yml")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(sls), "    name: "+history.JobServerless+"\n"), "serverless-lane.yml's job")
	// A host-fault re-run's jobs keep their first jobs' names: one name each.
	assert.Check(t, is.DeepEqual(slices.Compact(sorted(append(lane, history.JobServerless))), sorted(history.LaneJobs)))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
