package history

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	simToken    = "ghs_HistoryTestToken0123456789abcdef"
	simRepo     = "org/app"
	simWorkflow = ".github/workflows/" + DefaultWorkflow
)

// simGitHub is the simulated GitHub the collection tests read.
type simGitHub struct {
	srv    *githubsim.Server
	client *ghapi.Client
	clock  *simclock.Virtual
	// lines and seals are each attempt's provision log lines and the
	// cleanup job's seals of its cost artifacts, published together.
	lines, seals map[AttemptKey][]string
}

func newSimGitHub(t *testing.T) *simGitHub {
	t.Helper()
	clock := simclock.NewVirtual(date(2026, 10, 12).Add(9 * time.Hour))
	srv := githubsim.New(githubsim.WithClock(clock), githubsim.WithToken(simToken, githubsim.Identity{Login: "history-bot"}))
	assert.NilError(t, srv.AddRepo(githubsim.Repo{Owner: "org", Name: "app"}))
	_, err := srv.AddWorkflow(simRepo, simWorkflow, "RunPod GPU")
	assert.NilError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	// Retries happen at once: the tests wait on nothing.
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(func(context.Context, time.Duration) error { return nil }),
		reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	client, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: ts.URL, Token: simToken, Owner: "org", Repo: "app", Policy: policy})
	assert.NilError(t, err)
	return &simGitHub{srv: srv, client: client, clock: clock}
}

// addRun adds a run created at created; status "" means completed.
func (g *simGitHub) addRun(t *testing.T, created time.Time, event, status string) int64 {
	t.Helper()
	spec := githubsim.WorkflowRunSpec{Repo: simRepo, WorkflowPath: simWorkflow, Event: event, CreatedAt: created,
		Status: "completed", Conclusion: "success", Jobs: simLaneJobs()}
	if status != "" {
		spec.Status, spec.Conclusion = status, ""
	}
	id, err := g.srv.AddWorkflowRun(spec)
	assert.NilError(t, err)
	return id
}

// simLaneJobs are the lane's jobs as the simulated GitHub lists them.
func simLaneJobs() []githubsim.JobSpec {
	var specs []githubsim.JobSpec
	for _, j := range laneJobs() {
		specs = append(specs, githubsim.JobSpec{Name: j.Name, Labels: j.Labels, RunnerName: j.RunnerName,
			Status: "completed", Conclusion: "success", StartedAt: t0, CompletedAt: t0})
	}
	return specs
}

func (g *simGitHub) setLogs(t *testing.T, runID int64, attempt int, lines ...string) {
	t.Helper()
	k := AttemptKey{RunID: runID, Attempt: attempt}
	if g.lines == nil {
		g.lines = map[AttemptKey][]string{}
	}
	g.lines[k] = lines
	g.publishLogs(t, k)
}

// publishLogs sets an attempt's logs archive: the provision log setLogs
// gave and the cleanup job's seals.
func (g *simGitHub) publishLogs(t *testing.T, k AttemptKey) {
	t.Helper()
	logs := map[string]string{provisionLog: logText(t0, g.lines[k]...)}
	if seals := g.seals[k]; len(seals) > 0 {
		logs[cleanupLog] = logText(t0, seals...)
	}
	assert.NilError(t, g.srv.SetRunLogs(simRepo, k.RunID, k.Attempt, logs))
}

func (g *simGitHub) addCostArtifact(t *testing.T, runID int64, attempt int, r cost.Report, expires time.Time) {
	t.Helper()
	body, err := json.Marshal(artifactOf(runID, attempt, cost.TriggerAutomatic, refA, r))
	assert.NilError(t, err)
	// The cleanup job seals what it uploads in its log (setLogs writes it).
	k := AttemptKey{RunID: runID, Attempt: attempt}
	if g.seals == nil {
		g.seals = map[AttemptKey][]string{}
	}
	g.seals[k] = append(g.seals[k], cost.SealLine(body).Format())
	if _, logged := g.lines[k]; logged {
		g.publishLogs(t, k)
	}
	_, err = g.srv.AddArtifact(simRepo, runID, githubsim.ArtifactSpec{Name: g.costArtifactName(t, runID, attempt),
		Files: map[string]string{cost.ArtifactFileName: string(body)}, CreatedAt: t0, ExpiresAt: expires})
	assert.NilError(t, err)
}

// costArtifactName is the name the attempt's cleanup job uploads its cost
// artifact under: it claims that job.
func (g *simGitHub) costArtifactName(t *testing.T, runID int64, attempt int) string {
	t.Helper()
	jobs, err := g.srv.Jobs(simRepo, runID, attempt)
	assert.NilError(t, err)
	for _, j := range jobs {
		if j.Name == JobCleanup {
			return cost.JobArtifactName(runID, attempt, j.ID)
		}
	}
	t.Fatalf("run %d attempt %d has no cleanup job", runID, attempt)
	return ""
}

func TestCollectRetriesFailedDownloadsAndRegeneratesOffline(t *testing.T) {
	g := newSimGitHub(t)
	ctx := context.Background()
	rejected := rejectedAttempt(1, "podR", "NVIDIA RTX A4000", 0.25, 144)
	accepted := acceptedReport("podA", "NVIDIA L4", 0.36, t0, 600, rejected)

	// Run A passed on its second attempt; its cost artifact, and an expired
	// one of the first attempt, are attached to the run.
	runA := g.addRun(t, date(2026, 10, 6).Add(10*time.Hour), "pull_request", "")
	g.setLogs(t, runA, 1, cost.AttemptLine(rejected).Format())
	g.addCostArtifact(t, runA, 1, cost.Report{Rejected: []cost.Attempt{rejected}}, g.clock.Now().Add(-time.Hour))
	_, err := g.srv.RerunWorkflowRun(simRepo, runA, simLaneJobs())
	assert.NilError(t, err)
	assert.NilError(t, g.srv.SetRunStatus(simRepo, runA, "completed", "success"))
	g.setLogs(t, runA, 2, cost.CostLine(accepted).Format())
	g.addCostArtifact(t, runA, 2, accepted, time.Time{})
	// Run B's logs fail to download; run C is still running.
	runB := g.addRun(t, date(2026, 10, 7).Add(8*time.Hour), "workflow_dispatch", "")
	g.setLogs(t, runB, 1, cost.CostLine(acceptedReport("podB", "NVIDIA L4", 0.36, t0, 300)).Format())
	logsOfB := fmt.Sprintf("/repos/%s/actions/runs/%d/attempts/1/logs", simRepo, runB)
	g.srv.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Method: "GET", Path: logsOfB, Status: 502})
	runC := g.addRun(t, date(2026, 10, 7).Add(20*time.Hour), "pull_request", "in_progress")
	// Outside the range: never listed.
	g.addRun(t, date(2026, 10, 9), "pull_request", "")

	dir := filepath.Join(t.TempDir(), "history")
	rng, err := ParseRange("2026-10-06", "2026-10-08")
	assert.NilError(t, err)
	opts := Options{Dir: dir, Range: &rng, GitHub: g.client}

	first, err := Run(ctx, opts)
	assert.NilError(t, err)
	assert.DeepEqual(t, *first.Collected, CollectStats{Searches: 1, Runs: 3, Attempts: 4, Complete: 2, Incomplete: 2})
	assert.Equal(t, decisions(first.Report), "A1 paid, A2 paid, B1 unknown, C1 unknown")
	unknowns := strings.Join(first.Report.Unknowns, "\n")
	assert.Check(t, is.Contains(unknowns, fmt.Sprintf("run %d attempt 1: logs not downloaded (failed: HTTP 502 Bad Gateway)", runB)))
	assert.Check(t, is.Contains(unknowns, fmt.Sprintf("run %d attempt 1: logs not downloaded (pending: the attempt is in_progress)", runC)))
	assert.Check(t, is.Contains(unknowns, fmt.Sprintf("cost artifact %s not downloaded (unavailable: the artifact expired)", g.costArtifactName(t, runA, 1))))

	// The next collection retries only what is not final.
	g.srv.ClearFaults()
	assert.NilError(t, g.srv.SetRunStatus(simRepo, runC, "completed", "success"))
	g.setLogs(t, runC, 1, "no GPU path changed")
	second, err := Run(ctx, opts)
	assert.NilError(t, err)
	assert.DeepEqual(t, *second.Collected, CollectStats{Searches: 1, Runs: 3, Attempts: 4, Cached: 2, Complete: 2})
	assert.Equal(t, decisions(second.Report), "A1 paid, A2 paid, B1 paid, C1 none")
	assert.Equal(t, g.srv.CountRequests("GET", fmt.Sprintf("/repos/%s/actions/runs/%d/attempts/*/logs", simRepo, runA)), 2,
		"run A's logs were final after the first collection")
	assert.Equal(t, second.Report.Totals.Spend.String(), "$0.1000", "podA $0.06, podR $0.01, podB $0.03")
	assert.Equal(t, second.Report.Triggers.Manual.Attempts, 1)

	// Without dates the same report comes from the saved evidence alone.
	jsonReport, markdown := readFile(t, second.JSONPath), readFile(t, second.MarkdownPath)
	requests := len(g.srv.Requests())
	offline, err := Run(ctx, Options{Dir: dir})
	assert.NilError(t, err)
	assert.Check(t, offline.Collected == nil)
	assert.Equal(t, len(g.srv.Requests()), requests, "no request offline")
	assert.Equal(t, readFile(t, offline.JSONPath), jsonReport)
	assert.Equal(t, readFile(t, offline.MarkdownPath), markdown)
}

// decisions lists the attempts as "A1 paid", naming runs by their order.
func decisions(r *Report) string {
	names := map[int64]string{}
	var out []string
	for _, a := range r.Attempts {
		if names[a.RunID] == "" {
			names[a.RunID] = string(rune('A' + len(names)))
		}
		out = append(out, fmt.Sprintf("%s%d %s", names[a.RunID], a.Attempt, a.Decision))
	}
	return strings.Join(out, ", ")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	return string(data)
}

func TestCollectSplitsCappedSearches(t *testing.T) {
	g := newSimGitHub(t)
	// 1,050 runs on one day is more than one search returns; the days
	// around it hold a few more. They are still running, so the test spends
	// its time listing, not downloading.
	busy := date(2026, 10, 7)
	want := 0
	for i := range 1050 {
		g.addRun(t, busy.Add(time.Duration(i)*82*time.Second), "pull_request", "in_progress")
		want++
	}
	for i := range 30 {
		g.addRun(t, busy.Add(-time.Duration(i+1)*40*time.Minute), "pull_request", "")
		g.addRun(t, busy.Add(24*time.Hour+time.Duration(i)*40*time.Minute), "pull_request", "")
		want += 2
	}
	dir := t.TempDir()
	var logged []string
	c := &Collector{GitHub: g.client, Dir: dir, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	stats, err := c.Collect(context.Background(), Range{Since: date(2026, 10, 6), Until: date(2026, 10, 8)})
	assert.NilError(t, err)
	assert.Equal(t, stats.Runs, want)
	assert.Equal(t, stats.Attempts, want)
	keys, err := store{dir: dir}.keys()
	assert.NilError(t, err)
	assert.Equal(t, len(keys), want, "every attempt is saved")

	var searches []string
	for _, r := range g.srv.Requests() {
		if strings.HasSuffix(r.Path, "/runs") && strings.Contains(r.Query, "page=1&") || strings.HasSuffix(r.Query, "page=1") {
			if created := createdOf(r.Query); created != "" {
				searches = append(searches, created)
			}
		}
	}
	assert.DeepEqual(t, searches, []string{
		"2026-10-06..2026-10-08", // capped
		"2026-10-06..2026-10-06",
		"2026-10-07..2026-10-08", // capped
		"2026-10-07..2026-10-07", // capped: split into hours
		"2026-10-07T00:00:00Z..2026-10-07T11:59:59Z",
		"2026-10-07T12:00:00Z..2026-10-07T23:59:59Z",
		"2026-10-08..2026-10-08",
	})
	assert.Equal(t, stats.Searches, len(searches))
	assert.Check(t, is.Contains(strings.Join(logged, "\n"), "more than 1000 runs created 2026-10-07..2026-10-07: splitting the search at 2026-10-07T12:00:00Z"))
}

// createdOf reads the created filter of a recorded query.
func createdOf(query string) string {
	for _, kv := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(kv, "created="); ok {
			return strings.NewReplacer("%3A", ":", "%2A", "*").Replace(v)
		}
	}
	return ""
}

// cappingGitHub answers like GitHub: a search matching more runs than the
// cap fails with ghapi.ErrSearchCapped. It holds no runs; only searches count.
type cappingGitHub struct {
	GitHub
	matches  func(created string) int
	searches []string
}

func (g *cappingGitHub) ListWorkflowRuns(_ context.Context, _ string, f ghapi.ListRunsFilter, _ int) ([]*github.WorkflowRun, error) {
	g.searches = append(g.searches, f.Created)
	if n := g.matches(f.Created); n > searchCap {
		return nil, fmt.Errorf("list workflow runs: %d runs match: %w", n, ghapi.ErrSearchCapped)
	}
	return nil, nil
}

func TestCollectSplitsOnSearchCappedErrors(t *testing.T) {
	tests := []struct {
		name         string
		matches      func(created string) int
		wantSearches []string
		wantErr      string
	}{
		{
			name: "a busy week splits into days",
			matches: func(c string) int {
				return map[bool]int{true: 5000, false: 900}[strings.Count(c, "2026-10-0") == 2 && c[8:10] != c[20:22]]
			},
			wantSearches: []string{"2026-10-05..2026-10-06", "2026-10-05..2026-10-05", "2026-10-06..2026-10-06"},
		},
		{
			name:    "a second with more than the cap cannot be listed",
			matches: func(string) int { return 1001 },
			wantErr: "more than 1000 runs created in the second 2026-10-05T00:00:00Z..2026-10-05T00:00:00Z: GitHub cannot list them all",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &cappingGitHub{matches: tc.matches}
			c := &Collector{GitHub: g, Dir: t.TempDir()}
			_, err := c.Collect(context.Background(), Range{Since: date(2026, 10, 5), Until: date(2026, 10, 6)})
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, g.searches, tc.wantSearches)
		})
	}
}
