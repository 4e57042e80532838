package lanes

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/wire"
)

// leakedKeys are keys no step of the test holds (the gate never holds the
// RunPod key), in the forms a file can carry them, by what they are.
func leakedKeys() map[string]string {
	const runpodKey = "rpa_LEAKEDRUNPODKEY0123456789ABCDEFGHIJKL"
	return map[string]string{
		"a RunPod key":                   runpodKey,
		"its base64":                     base64.StdEncoding.EncodeToString([]byte(runpodKey)),
		"its URL-safe base64":            base64.RawURLEncoding.EncodeToString([]byte(runpodKey)),
		"its URL-encoded form":           strings.ReplaceAll(url.QueryEscape("key="+runpodKey), "_", "%5F"),
		"a personal GitHub token":        "ghp_LeakedPersonalToken0123456789abcdefgh",
		"an OAuth GitHub token":          "gho_LeakedOAuthToken0123456789abcdefghijk",
		"an App installation token":      "ghs_LeakedInstallToken0123456789abcdefghi",
		"a fine-grained GitHub token":    "github_pat_11LEAKED0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
		"a Basic header holding a token": base64.StdEncoding.EncodeToString([]byte("x-access-token:ghs_LeakedInstallToken0123456789abcdefghi")),
	}
}

// assertNoLeak checks that no form of any leaked key is in text.
func assertNoLeak(t *testing.T, where, text string) {
	t.Helper()
	for what, key := range leakedKeys() {
		assert.Check(t, !strings.Contains(text, key), "%s publishes %s", where, what)
	}
}

// TestNoSecretInPublishedFiles: the files the lane publishes — the cost
// report the gate puts in its check run, the cost history's reports, host
// reputation and spend record (artifacts and the job summary) — carry no key,
// in any form, whether or not the step that wrote them held it.
func TestNoSecretInPublishedFiles(t *testing.T) {
	var planted strings.Builder
	for what, key := range leakedKeys() {
		planted.WriteString(what + ": " + key + "\n")
	}

	t.Run("the gate's check run", func(t *testing.T) {
		s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
		pr := s.openPR(t)
		assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, "cost.md"), []byte("## Cost\n\n"+planted.String()), 0o644))
		st := s.GateStep(pr, map[string]string{"kind": string(gatecheck.KindPaid), "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA,
			"pod-id": "pod7h9k2m4n6p", "gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0.25", "cost-report-path": "cost.md"})
		delete(st.Env, "RUNPOD_API_KEY")
		res := gateRunOK(t, s, st)
		checks := s.gateChecks(t, harness.HeadSHA)
		assert.Assert(t, is.Len(checks, 1))
		out := checks[0].GetOutput()
		assert.Check(t, is.Contains(out.GetText(), "a RunPod key: ***"))
		assertNoLeak(t, "the check run", out.GetTitle()+out.GetSummary()+out.GetText())
		assertNoLeak(t, "the job summary and log", res.Summary+harness.WithoutMasks(res.Stdout))
	})

	t.Run("the cost history's reports and records", func(t *testing.T) {
		w := historyStart(t)
		created := time.Now().UTC()
		id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
			Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "success", Jobs: historyLaneJobs(created)})
		assert.NilError(t, err)
		start := created.Add(2 * time.Minute)
		report := cost.Report{PodID: "leakpod", GPU: "NVIDIA L4", Tier: "full", Price: cost.KnownPrice(money.PerHour(0.36), "v2 cost"),
			Window:   cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(10 * time.Minute))},
			Rejected: []cost.Attempt{{Number: 1, Candidate: "c1", GPU: "NVIDIA L4", PodID: "rej1", Outcome: cost.OutcomeRejected, Reason: planted.String(), Seconds: cost.KnownSeconds(60), Price: cost.KnownPrice(money.PerHour(0.36), "v2 cost")}},
			Notes:    []string{planted.String()}}
		w.historyUpload(t, id, history.JobCleanup, 0, cost.Artifact{Run: cost.Run{Repository: historyRepo, ID: id, Attempt: 1, Trigger: cost.TriggerAutomatic}, Action: "cleanup", Report: report})
		w.setLogs(t, id, map[string]string{historyLogFile(0, history.JobProvision): created.Format(time.RFC3339Nano) + " " + cost.AttemptLine(report.Rejected[0]).Format() + "\n"})

		day := created.Format(time.DateOnly)
		res := harness.RunStep(t, w.step(map[string]string{"since": day, "until": day}))
		assert.Equal(t, res.ExitCode, 0, res.Stdout)
		js, err := os.ReadFile(res.Outputs["report-json"])
		assert.NilError(t, err)
		assert.Check(t, is.Contains(string(js), `"leakpod"`), "the attempt is reported")
		assert.Check(t, is.Contains(string(js), "a RunPod key: ***"), "its notes, redacted")
		for _, output := range []string{"report-json", "report-markdown", "reputation-file", "spend-file"} {
			data, err := os.ReadFile(res.Outputs[output])
			assert.NilError(t, err, output)
			assertNoLeak(t, output, string(data))
		}
		assertNoLeak(t, "the job summary and log", res.Summary+harness.WithoutMasks(res.Stdout))
	})
}
