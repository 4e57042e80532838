package lanes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

// TestServerlessSpendReachesTheCostHistory: a run of the Serverless lane
// uploads the cost file its action wrote, and the cost history collecting
// both lanes' workflows reports it — its own rows and chart — in the total.
func TestServerlessSpendReachesTheCostHistory(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	created := time.Now().UTC()
	id, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/runpod-gpu-serverless.yml",
		Event: "workflow_dispatch", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: []githubsim.JobSpec{
			{Name: "gpu / One Serverless job", Status: "completed", Conclusion: "success", StartedAt: created, CompletedAt: created.Add(time.Minute)}}})
	assert.NilError(t, err)
	s.RunID = id
	lane := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, lane.ExitCode, 0, lane.Stdout)

	// The workflow's "Keep the cost for the cost history" step: named for the
	// Serverless job that uploads it, while that job runs.
	body, err := os.ReadFile(filepath.Join(s.Workspace, ".runpod-gpu/serverless/runpod-gpu-cost.json"))
	assert.NilError(t, err)
	jobs, err := s.GitHub.Jobs(cloud.Repository, id, 1)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(jobs, 1))
	_, err = s.GitHub.AddArtifact(cloud.Repository, id, githubsim.ArtifactSpec{Name: cost.JobArtifactName(id, 1, jobs[0].ID), CreatedAt: created.Add(30 * time.Second),
		Files: map[string]string{cost.ArtifactFileName: string(body)}})
	assert.NilError(t, err)
	// The job's log, where the action sealed the file it wrote.
	assert.NilError(t, s.GitHub.SetRunLogs(cloud.Repository, id, 1, map[string]string{historyLogFile(0, history.JobServerless): stamped(created, lane.Stdout)}))

	temp, ws := t.TempDir(), t.TempDir()
	day := created.Format(time.DateOnly)
	res := harness.RunStep(t, harness.Step{Action: "cost-history", Workspace: ws, Inputs: map[string]string{
		"github-token": cloud.GitHubToken, "workflow": "runpod-gpu.yml, runpod-gpu-serverless.yml", "since": day, "until": day,
	}, Env: map[string]string{"GITHUB_API_URL": s.GitHubURL, "GITHUB_REPOSITORY": cloud.Repository, "RUNNER_TEMP": temp, "GITHUB_WORKSPACE": ws,
		"GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule"}})
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	md, err := os.ReadFile(res.Outputs["report-markdown"])
	assert.NilError(t, err)
	for _, want := range []string{"### Serverless lane", "`serverless` lane", "spent on GPU pods and Serverless jobs", "Known Serverless spend per week (USD)"} {
		assert.Check(t, is.Contains(string(md), want))
	}
	data, err := os.ReadFile(res.Outputs["report-json"])
	assert.NilError(t, err)
	var report struct {
		Totals     map[string]any `json:"totals"`
		Serverless struct {
			Attempts int `json:"attempts"`
			Jobs     int `json:"jobs"`
		} `json:"serverless"`
	}
	assert.NilError(t, json.Unmarshal(data, &report))
	assert.Check(t, is.Equal(report.Serverless.Attempts, 1))
	assert.Check(t, is.Equal(report.Serverless.Jobs, 1))
	assert.Check(t, is.Equal(report.Totals["serverlessAttempts"], 1.0))
	spend := report.Totals["spend"].(map[string]any)
	assert.Check(t, spend["knownUsd"].(float64) > 0, "the Serverless job's spend is in the total: %v", spend)
}
