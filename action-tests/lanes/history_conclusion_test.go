package lanes

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
)

// The real cost-history binary tells a paid failure from a paid success by
// the GPU job conclusion the cost artifacts carry; an artifact written before
// they carried it counts as unknown.
func TestHistoryActionReportsSpendByGPUJobConclusion(t *testing.T) {
	w := historyStart(t)
	day := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	for i, c := range []cost.Conclusion{cost.ConclusionSuccess, cost.ConclusionFailure, cost.ConclusionFailure, ""} {
		w.conclusion = c
		_, publish := w.run(t, day.Add(time.Duration(i)*time.Hour), string(rune('a'+i)))
		publish()
	}
	res := harness.RunStep(t, w.step(map[string]string{"since": "2026-10-06", "until": "2026-10-06"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)

	data, err := os.ReadFile(res.Outputs["report-json"])
	assert.NilError(t, err)
	var report struct {
		Conclusions []struct {
			Conclusion string             `json:"conclusion"`
			Attempts   int                `json:"attempts"`
			Pods       int                `json:"pods"`
			Spend      map[string]float64 `json:"spend"`
		} `json:"conclusions"`
	}
	assert.NilError(t, json.Unmarshal(data, &report))
	got := map[string][2]int{}
	spend := map[string]float64{}
	for _, g := range report.Conclusions {
		got[g.Conclusion] = [2]int{g.Attempts, g.Pods}
		spend[g.Conclusion] = g.Spend["usd"]
	}
	// Each run: a rejected A4000 (144 s at $0.25/h) and an accepted L4 (600 s at $0.36/h): $0.07.
	assert.DeepEqual(t, got, map[string][2]int{"success": {1, 2}, "failure": {2, 4}, "cancelled": {0, 0}, "skipped": {0, 0}, "unknown": {1, 2}})
	assert.Check(t, is.Equal(spend["failure"], 0.14), "a paid failure's spend: %v", spend)
	assert.Check(t, is.Equal(spend["success"], 0.07))
	assert.Check(t, is.Contains(res.Summary, "### Paid attempts by GPU job conclusion"))
	assert.Check(t, is.Contains(res.Summary, "| failure | 2 | 4 | $0.1400 |"))
	assert.Check(t, is.Contains(res.Summary, "| unknown | 1 | 2 | $0.0700 |"))
}
