package history

import (
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// TestReportGolden summarizes the saved evidence offline into the golden
// JSON and Markdown reports (regenerate them with -update).
func TestReportGolden(t *testing.T) {
	report, err := Summarize(evidenceDir, nil)
	assert.NilError(t, err)
	data, err := json.MarshalIndent(report, "", "  ")
	assert.NilError(t, err)
	golden.Assert(t, string(data)+"\n", "report.json")
	golden.Assert(t, report.Markdown(), "report.md")
}
