package lanes

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
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
)

const (
	historyToken    = "ghs_HistoryActionToken0123456789abcdef"
	historyRepo     = "org/app"
	historyWorkflow = ".github/workflows/runpod-gpu.yml"
)

// historyWorld is a simulated GitHub holding GPU workflow runs, and the
// runner's temp directory the evidence goes to.
type historyWorld struct {
	gh        *githubsim.Server
	url       string
	temp      string
	workspace string
	// conclusion is the GPU job conclusion the next runs' cost reports carry;
	// "" writes none, as cleanup did before reports carried it.
	conclusion cost.Conclusion
	// logs are each run's job log files, published together by setLogs.
	logs      map[int64]map[string]string
	published map[int64]bool // runs whose logs setLogs published
}

// setLogs adds files to run id's logs archive and publishes the whole
// archive: the seals historyUpload logs for its uploads stay beside them.
func (w *historyWorld) setLogs(t *testing.T, id int64, files map[string]string) {
	t.Helper()
	w.addLogs(id, files)
	if w.published == nil {
		w.published = map[int64]bool{}
	}
	w.published[id] = true
	assert.NilError(t, w.gh.SetRunLogs(historyRepo, id, 1, w.logs[id]))
}

// addLogs adds files to run id's logs archive; setLogs publishes it.
func (w *historyWorld) addLogs(id int64, files map[string]string) {
	if w.logs == nil {
		w.logs = map[int64]map[string]string{}
	}
	if w.logs[id] == nil {
		w.logs[id] = map[string]string{}
	}
	for name, text := range files {
		w.logs[id][name] += text
	}
}

func historyStart(t *testing.T) *historyWorld {
	t.Helper()
	gh := githubsim.New(githubsim.WithToken(historyToken, githubsim.Identity{Login: "github-actions[bot]"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "org", Name: "app"}))
	_, err := gh.AddWorkflow(historyRepo, historyWorkflow, "RunPod GPU")
	assert.NilError(t, err)
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	return &historyWorld{gh: gh, url: srv.URL, temp: t.TempDir(), workspace: t.TempDir()}
}

// run adds a completed run whose provision log shows a rejected and an
// accepted candidate and whose cleanup uploaded the cost artifact. The logs
// are served once publish is called; until then their download fails.
func (w *historyWorld) run(t *testing.T, created time.Time, podPrefix string) (id int64, publish func()) {
	t.Helper()
	id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
		Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: historyLaneJobs(created)})
	assert.NilError(t, err)
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA RTX A4000", PodID: podPrefix + "rej",
		Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost"), Outcome: cost.OutcomeRejected, Reason: "SMOKE FAIL", Seconds: cost.KnownSeconds(144)}
	start := created.Add(2 * time.Minute)
	report := cost.Report{PodID: podPrefix + "acc", GPU: "NVIDIA L4", Tier: "full", Price: cost.KnownPrice(money.PerHour(0.36), "v2 cost"),
		Window:   cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Minute))},
		Rejected: []cost.Attempt{rejected}, JobConclusion: w.conclusion}
	stamp := created.Format(time.RFC3339Nano)
	publish = func() {
		w.setLogs(t, id, map[string]string{
			historyLogFile(0, history.JobProvision): stamp + " " + cost.AttemptLine(rejected).Format() + "\n",
			historyLogFile(2, history.JobCleanup):   stamp + " " + cost.CostLine(report).Format() + "\n",
		})
	}
	w.historyUpload(t, id, history.JobCleanup, 0, cost.Artifact{Run: cost.Run{Repository: historyRepo, ID: id, Attempt: 1,
		TestedRef: strings.Repeat("b", 40), Trigger: cost.TriggerAutomatic, PRNumber: 3}, Action: "cleanup", Report: report})
	return id, publish
}

func (w *historyWorld) step(inputs map[string]string) harness.Step {
	in := map[string]string{"github-token": historyToken, "workflow": "runpod-gpu.yml"}
	for k, v := range inputs {
		in[k] = v
	}
	return harness.Step{Action: "cost-history", Inputs: in, Workspace: w.workspace, Env: map[string]string{
		"GITHUB_API_URL": w.url, "GITHUB_REPOSITORY": historyRepo, "RUNNER_TEMP": w.temp, "GITHUB_WORKSPACE": w.workspace,
		"GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule",
	}}
}

// historyTotals reads the totals of the JSON report an output names.
func historyTotals(t *testing.T, res harness.StepResult) map[string]any {
	t.Helper()
	data, err := os.ReadFile(res.Outputs["report-json"])
	assert.NilError(t, err)
	var report struct {
		Totals map[string]any `json:"totals"`
	}
	assert.NilError(t, json.Unmarshal(data, &report))
	return report.Totals
}

func historyAssertNoToken(t *testing.T, res harness.StepResult) {
	t.Helper()
	for what, text := range map[string]string{"log": harness.WithoutMasks(res.Stdout), "summary": res.Summary, "outputs": fmt.Sprint(res.Outputs)} {
		assert.Check(t, !strings.Contains(text, historyToken), "the token leaked into the %s", what)
	}
}

func TestHistoryActionCollectsThenRetriesAFailedDownload(t *testing.T) {
	w := historyStart(t)
	_, publish := w.run(t, time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), "a")
	publish()
	// The second run's logs are not served yet: 404. (A 5xx is retried with
	// real backoff here; pkg/history's tests cover it on a virtual clock.)
	failing, publishLater := w.run(t, time.Date(2026, 10, 7, 15, 0, 0, 0, time.UTC), "b")
	inputs := map[string]string{"since": "2026-10-06", "until": "2026-10-08"}

	first := harness.RunStep(t, w.step(inputs))
	assert.Equal(t, first.ExitCode, 0, first.Stdout)
	dir := filepath.Join(w.temp, "runpod-gpu-history")
	assert.DeepEqual(t, first.Outputs, map[string]string{
		"report-json": filepath.Join(dir, "report.json"), "report-markdown": filepath.Join(dir, "report.md"),
		"reputation-file": filepath.Join(dir, "reputation.json"), "spend-file": filepath.Join(dir, "spend.json")})
	assert.Check(t, is.Contains(first.Stdout, "collected 2026-10-06..2026-10-08: 2 runs, 2 attempts (0 already saved, 1 now complete, 1 to retry next time)"))
	assert.Check(t, is.Contains(first.Summary, "## RunPod GPU cost history"))
	assert.Check(t, is.Contains(first.Summary, fmt.Sprintf("run %d attempt 1: logs not downloaded (failed: HTTP 404 Not Found)", failing)))
	totals := historyTotals(t, first)
	assert.Equal(t, totals["attempts"], 2.0)
	// Without its logs the failing run says its evidence is incomplete, and
	// its cost artifact counts for nothing yet: its seal is in those logs.
	assert.Equal(t, totals["incompleteEvidence"], 1.0)
	assert.Equal(t, totals["pods"], 2.0)
	historyAssertNoToken(t, first)

	publishLater()
	second := harness.RunStep(t, w.step(inputs))
	assert.Equal(t, second.ExitCode, 0, second.Stdout)
	assert.Check(t, is.Contains(second.Stdout, "2 attempts (1 already saved, 1 now complete, 0 to retry next time)"))
	totals = historyTotals(t, second)
	assert.Equal(t, totals["incompleteEvidence"], 0.0)
	assert.Equal(t, totals["pods"], 4.0)
	assert.DeepEqual(t, totals["spend"], map[string]any{"usd": 0.14, "knownUsd": 0.14, "unknown": 0.0})
	assert.Check(t, is.Contains(second.Summary, "```mermaid\nxychart-beta"))
	assert.Check(t, is.Contains(second.Summary, "| NVIDIA L4 | 2 | 2 | 0 | 0 | $0.1200 |"))
	historyAssertNoToken(t, second)
}

func TestHistoryActionDefaultsToTheLastSevenFullDays(t *testing.T) {
	w := historyStart(t)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	w.run(t, today.AddDate(0, 0, -1).Add(6*time.Hour), "in")  // yesterday: in
	w.run(t, today.AddDate(0, 0, -8).Add(6*time.Hour), "old") // eight days ago: out
	w.run(t, today.Add(time.Minute), "today")                 // today is not a full day: out
	res := harness.RunStep(t, w.step(nil))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	wantRange := today.AddDate(0, 0, -7).Format(time.DateOnly) + ".." + today.AddDate(0, 0, -1).Format(time.DateOnly)
	assert.Check(t, is.Contains(res.Stdout, "collected "+wantRange+": 1 runs"))
	assert.Equal(t, historyTotals(t, res)["attempts"], 1.0)
}

func TestHistoryActionRefuses(t *testing.T) {
	w := historyStart(t)
	assert.NilError(t, os.Mkdir(filepath.Join(w.workspace, ".git"), 0o755))
	tests := []struct {
		name    string
		inputs  map[string]string
		wantLog string
	}{
		{name: "one date without the other", inputs: map[string]string{"since": "2026-10-06"},
			wantLog: `::error::invalid date range: since "2026-10-06", until "": give both dates, or neither for the last 7 full days`},
		{name: "a date that is not one", inputs: map[string]string{"since": "2026-10-06", "until": "next week"},
			wantLog: `::error::invalid date range: until "next week": want a UTC date YYYY-MM-DD`},
		{name: "evidence inside the repository", inputs: map[string]string{"directory": filepath.Join(w.workspace, "history")},
			wantLog: "::error::evidence directory is inside a git repository"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := harness.RunStep(t, w.step(tc.inputs))
			assert.Equal(t, res.ExitCode, 1)
			assert.Check(t, is.Contains(res.Stdout, tc.wantLog))
			assert.Check(t, is.Len(res.Outputs, 0))
			historyAssertNoToken(t, res)
		})
	}
}
