package lanes

import (
	"context"
	"encoding/json"
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
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
	"github.com/org/runpod-gpu/pkg/wire"
)

// billingConfig takes the one healthy A4000 of billingMarket for each run.
const billingConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000"]
max_price_candidates: 1
max_provision_attempts: 2
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

// slsPrice is what the simulated Serverless pool bills: the lane's price
// ceiling, which its estimate uses, so that rounding alone makes the drift.
const slsPrice = 0.70

// billingMarket has A4000 hosts in the AMPERE_16 pool, for pods and the
// Serverless worker alike.
func billingMarket() *runpodsim.Market {
	m := testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true))
	m.GPUTypes[0].Pool, m.GPUTypes[0].ServerlessPrice = "AMPERE_16", slsPrice
	return m
}

// startBillingCloud is one simulated account serving both lanes, which bills
// every started minute (WithBillingRounding) where the lane estimates per second.
func startBillingCloud(t *testing.T) *slsCloud {
	t.Helper()
	bin, lib := slsArtifacts(t)
	worker := &processWorker{bin: bin, libDir: lib, root: t.TempDir(), driver: smoketest.DriverConfig{}, started: make(chan struct{})}
	c, err := cloud.Start(cloud.Options{Clock: simclock.Real{}, Market: billingMarket(), RunPodOptions: []runpodsim.Option{
		runpodsim.WithProvisioningDelay(200 * time.Millisecond), runpodsim.WithBillingRounding(time.Minute),
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: worker, ColdStart: 200 * time.Millisecond, PricePerHour: slsPrice})}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	jobs := httptest.NewServer(c.RunPod.JobHost())
	t.Cleanup(jobs.Close)
	ws := t.TempDir()
	for name, body := range map[string]string{".github/runpod-gpu.yml": billingConfig, "tests/run.sh": "echo running GPU tests\n", "README.md": "# gpu project\n"} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return &slsCloud{simulated: &simulated{&harness.Simulated{Cloud: c, Workspace: ws, RunID: 9400}}, jobURL: jobs.URL, worker: worker}
}

// laneRunForHistory plays one pod lane (provision, cleanup) as run id and
// gives the history's GitHub its logs and its cleanup's cost artifact.
func laneRunForHistory(t *testing.T, w *historyWorld, s *slsCloud, created time.Time) {
	t.Helper()
	id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
		Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: historyLaneJobs(created)})
	assert.NilError(t, err)
	pst := s.ProvisionStep(s.openPR(t))
	pst.Env = s.laneEnv(id)
	prov := harness.RunStep(t, pst)
	assert.Assert(t, prov.ExitCode == 0, prov.Stdout)
	clean := harness.RunStep(t, s.simulated.cleanupStep(id, prov.Outputs))
	assert.Assert(t, clean.ExitCode == 0, clean.Stdout)
	body, err := os.ReadFile(filepath.Join(s.Workspace, clean.Outputs["cost-artifact-path"]))
	assert.NilError(t, err)
	art, err := cost.ParseArtifact(body)
	assert.NilError(t, err)
	w.historyUpload(t, id, history.JobCleanup, 0, art)
	w.setLogs(t, id, map[string]string{
		historyLogFile(0, history.JobProvision): stamped(created, prov.Stdout),
		historyLogFile(2, history.JobCleanup):   stamped(created, clean.Stdout),
	})
}

// serverlessRunForHistory plays one Serverless lane as a run of the
// Serverless caller and uploads the cost file its action wrote.
func serverlessRunForHistory(t *testing.T, w *historyWorld, s *slsCloud, created time.Time) {
	t.Helper()
	id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: ".github/workflows/runpod-gpu-serverless.yml",
		Event: "workflow_dispatch", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: []githubsim.JobSpec{
			{Name: "gpu / " + history.JobServerless, Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 8", Status: "completed",
				Conclusion: "success", StartedAt: created, CompletedAt: created.Add(time.Minute)}}})
	assert.NilError(t, err)
	s.RunID = id
	lane := harness.RunStep(t, s.step(t, junitCommand))
	assert.Assert(t, lane.ExitCode == 0, lane.Stdout)
	body, err := os.ReadFile(filepath.Join(s.Workspace, ".runpod-gpu/serverless/runpod-gpu-cost.json"))
	assert.NilError(t, err)
	art, err := cost.ParseArtifact(body)
	assert.NilError(t, err)
	assert.Assert(t, art.Serverless != nil && art.Serverless.EndpointID != "", "the cost artifact names the endpoint: %s", body)
	w.historyUpload(t, id, history.JobServerless, 0, art)
	w.setLogs(t, id, map[string]string{historyLogFile(0, history.JobServerless): stamped(created, lane.Stdout)})
}

// The case: three pod lanes and one Serverless lane on a simulated
// account that bills started minutes, and a pod the suite never made. The
// cost history reads the account's bill and reports, per day and per run,
// a drift within the rounding (at most a started minute of each pod's or
// endpoint's price over its per-second estimate), and names the stranger.
func TestCostHistoryReconcilesBothLanesWithAMinuteBillingAccount(t *testing.T) {
	t.Parallel()
	w := historyStart(t)
	_, err := w.gh.AddWorkflow(historyRepo, ".github/workflows/runpod-gpu-serverless.yml", "RunPod GPU Serverless")
	assert.NilError(t, err)
	s := startBillingCloud(t)
	created := time.Now().UTC()
	day := created.Format(time.DateOnly)

	for range 3 {
		laneRunForHistory(t, w, s, created)
	}
	serverlessRunForHistory(t, w, s, created)
	// A pod the suite never recorded: a hand-made one on the same account.
	stranger, err := runpod.New(s.RunPodURL, cloud.RunPodKey).CreatePod(context.Background(), runpod.CreatePodRequest{
		Name: "someones-notebook", Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: harness.A4000, Count: 1}})
	assert.NilError(t, err)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, _ := s.RunPod.Bill(stranger.ID); b.Seconds > 0 {
			break // it ran, so it bills
		}
	}

	st := w.step(map[string]string{"since": day, "until": day, "workflow": "runpod-gpu.yml, runpod-gpu-serverless.yml",
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": s.RunPodURL})
	hist := harness.RunStep(t, st)
	assert.Equal(t, hist.ExitCode, 0, hist.Stdout)
	data, err := os.ReadFile(hist.Outputs["report-json"])
	assert.NilError(t, err)
	var report struct {
		Billing history.Reconciliation `json:"billing"`
	}
	assert.NilError(t, json.Unmarshal(data, &report))
	rec := report.Billing
	assert.Check(t, is.Equal(rec.Unreadable, ""))

	// Per run: each pod and the endpoint billed its per-second estimate plus
	// less than a started minute.
	assert.Assert(t, is.Len(rec.Runs, 4), "%s", data)
	kinds := map[string]int{}
	bound := 0.0
	for _, run := range rec.Runs {
		assert.Assert(t, is.Len(run.Resources, 1))
		res := run.Resources[0]
		kinds[res.Kind]++
		price := 0.25
		if res.Kind == history.KindEndpoint {
			price = slsPrice
		}
		minute := 60 * price / 3600
		bound += minute
		assert.Assert(t, run.DriftUSD != nil, "run %d: drift unknown", run.RunID)
		assert.Check(t, run.DriftUSD.Dollars() > -0.0002 && run.DriftUSD.Dollars() <= minute+0.0002,
			"run %d %s %s: billed %v against %v, drift %v beyond a started minute (%v)", run.RunID, res.Kind, res.ID, res.BilledUSD, res.Estimated, *run.DriftUSD, minute)
		assert.Check(t, res.Billed, "run %d: %s %s has no charge", run.RunID, res.Kind, res.ID)
	}
	assert.Check(t, is.DeepEqual(kinds, map[string]int{history.KindPod: 3, history.KindEndpoint: 1}))

	// Per day: the same within the sum of the runs' roundings.
	assert.Assert(t, is.Len(rec.Days, 1), "%s", data)
	d := rec.Days[0]
	assert.Check(t, is.Equal(d.Day, day))
	assert.Check(t, is.Equal(d.Count, 4))
	assert.Assert(t, d.DriftUSD != nil)
	assert.Check(t, d.DriftUSD.Dollars() > -0.001 && d.DriftUSD.Dollars() <= bound+0.001, "day drift %v beyond the runs' roundings (%v)", *d.DriftUSD, bound)

	// The pod nobody recorded is named, in the report and as a warning.
	assert.Assert(t, is.Len(rec.Untracked, 1), "%s", data)
	assert.Check(t, is.Equal(rec.Untracked[0].ID, stranger.ID))
	assert.Check(t, rec.Untracked[0].BilledUSD.Dollars() >= 60*0.25/3600-0.0001, "a started minute at least: %v", rec.Untracked[0].BilledUSD)
	assert.Check(t, is.Contains(strings.Join(rec.Findings, "\n"), "pod "+stranger.ID+" billed"))
	assert.Check(t, is.Contains(hist.Stdout, "::warning::1 billed pod(s) or endpoint(s) the lane never recorded: pod "+stranger.ID))
	md, err := os.ReadFile(hist.Outputs["report-markdown"])
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(md), "### Estimated against billed"))
	assert.Check(t, is.Contains(string(md), "| "+day+" | 4 |"))
	historyAssertNoToken(t, hist)
	assert.Check(t, !strings.Contains(harness.WithoutMasks(hist.Stdout), cloud.RunPodKey), "the RunPod key leaked into the log")
}

// rightSizeConfig reviews four tiers, from 8 GB to 80 GB.
const rightSizeConfig = `gpu_tiers:
  - name: turing8
    gpu_ids: ["NVIDIA RTX 4000"]
  - name: ampere16
    gpu_ids: ["NVIDIA RTX A4000"]
  - name: ada24
    gpu_ids: ["NVIDIA GeForce RTX 4090"]
  - name: hopper80
    gpu_ids: ["NVIDIA H100 80GB HBM3"]
max_provision_attempts: 8
`

// The right-sizing case through the action: a lane run on the 24 GB
// tier whose GPU job recorded a 9 GB peak; with the configuration and the
// RunPod catalog the report names the smallest reviewed tier that holds it.
func TestCostHistoryNamesTheSmallestTierThatHeldTheTests(t *testing.T) {
	t.Parallel()
	w := historyStart(t)
	rp, err := runpodsim.New(runpodsim.WithAPIKey(cloud.RunPodKey), runpodsim.WithMarket(runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: "NVIDIA RTX 4000", Name: "RTX 4000", MemoryGB: 8, SecurePrice: 0.16},
			{ID: harness.A4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25},
			{ID: "NVIDIA GeForce RTX 4090", Name: "RTX 4090", MemoryGB: 24, SecurePrice: 0.69},
			{ID: "NVIDIA H100 80GB HBM3", Name: "H100 SXM", MemoryGB: 80, SecurePrice: 2.99},
		},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US",
			NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
	}))
	assert.NilError(t, err)
	api := httptest.NewServer(rp)
	t.Cleanup(api.Close)

	created := time.Now().UTC()
	id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
		Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: historyLaneJobs(created)})
	assert.NilError(t, err)
	start := created.Add(2 * time.Minute)
	w.historyUpload(t, id, history.JobCleanup, 0, cost.Artifact{Run: cost.Run{Repository: historyRepo, ID: id, Attempt: 1, Trigger: cost.TriggerAutomatic},
		Action: "cleanup", Report: cost.Report{PodID: "pod-ada", GPU: "NVIDIA GeForce RTX 4090", Tier: "ada24", Price: cost.KnownPrice(money.PerHour(0.69), "v2 cost"),
			Window: cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Minute))}}})
	// The GPU job's test step prints its samples into its log.
	stamp := created.Format(time.RFC3339Nano) + " "
	w.setLogs(t, id, map[string]string{historyLogFile(3, "GPU tests"): stamp + history.UsageLinePrefix + "- 2026/12/02 09:00:01.000, 0, NVIDIA GeForce RTX 4090, 2048, 24564, 35\n" +
		stamp + history.UsageLinePrefix + "- 2026/12/02 09:00:02.000, 0, NVIDIA GeForce RTX 4090, 9216, 24564, 91\n"})
	assert.NilError(t, os.MkdirAll(filepath.Join(w.workspace, "runpod-gpu-config", ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(w.workspace, "runpod-gpu-config", ".github", "runpod-gpu.yml"), []byte(rightSizeConfig), 0o644))

	day := created.Format(time.DateOnly)
	hist := harness.RunStep(t, w.step(map[string]string{"since": day, "until": day, "config-path": "runpod-gpu-config/.github/runpod-gpu.yml",
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": api.URL}))
	assert.Equal(t, hist.ExitCode, 0, hist.Stdout)
	data, err := os.ReadFile(hist.Outputs["report-json"])
	assert.NilError(t, err)
	var report struct {
		RightSizing history.RightSizing `json:"rightSizing"`
	}
	assert.NilError(t, json.Unmarshal(data, &report))
	assert.Assert(t, is.Len(report.RightSizing.Tiers, 1), "%s", data)
	fit := report.RightSizing.Tiers[0]
	assert.Check(t, is.Equal(fit.Tier, "ada24"))
	assert.Check(t, is.Equal(fit.PeakMemoryGiB, 9.0))
	assert.Check(t, is.Equal(fit.SmallestFit, "ampere16"))
	assert.Check(t, is.Equal(fit.Cheaper, "ampere16"))
	assert.Check(t, is.Contains(hist.Summary, "the smallest reviewed tier that holds it is ampere16 (16 GB)"))
	historyAssertNoToken(t, hist)
}
