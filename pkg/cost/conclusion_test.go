package cost

import (
	"encoding/json"
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

func TestJobConclusion(t *testing.T) {
	tests := []struct {
		status, conclusion string
		want               Conclusion
	}{
		{"completed", "success", ConclusionSuccess},
		{"completed", "failure", ConclusionFailure},
		{"completed", "timed_out", ConclusionFailure},
		{"completed", "cancelled", ConclusionCancelled},
		{"completed", "skipped", ConclusionSkipped},
		{"completed", "neutral", ConclusionUnknown},
		{"completed", "", ConclusionUnknown},
		{"in_progress", "", ConclusionUnknown},
		{"in_progress", "success", ConclusionUnknown}, // a conclusion before completion is not trusted
		{"", "", ConclusionUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.status+"/"+tc.conclusion, func(t *testing.T) {
			assert.Equal(t, JobConclusion(tc.status, tc.conclusion), tc.want)
		})
	}
}

// The artifact carries the GPU job's conclusion; one written before it did
// reads as unknown, and a value this version does not know is an error
// naming the key, the value and what is allowed.
func TestArtifactJobConclusion(t *testing.T) {
	valid, err := json.Marshal(testArtifact(t))
	assert.NilError(t, err)
	withConclusion := func(value string) []byte {
		var top map[string]json.RawMessage
		assert.NilError(t, json.Unmarshal(valid, &top))
		var report map[string]json.RawMessage
		assert.NilError(t, json.Unmarshal(top["report"], &report))
		if value == "" {
			delete(report, "jobConclusion")
		} else {
			report["jobConclusion"] = json.RawMessage(value)
		}
		var err error
		top["report"], err = json.Marshal(report)
		assert.NilError(t, err)
		b, err := json.Marshal(top)
		assert.NilError(t, err)
		return b
	}
	tests := []struct {
		name    string
		value   string
		want    Conclusion
		wantErr string
	}{
		{name: "as written", value: `"failure"`, want: ConclusionFailure},
		{name: "success", value: `"success"`, want: ConclusionSuccess},
		{name: "older artifact without the field", value: "", want: ConclusionUnknown},
		{name: "null", value: "null", want: ConclusionUnknown},
		{name: "unknown value", value: `"timed_out"`,
			wantErr: `key "report.jobConclusion": invalid value: "timed_out": want success, failure, cancelled, skipped or unknown`},
		{name: "not a string", value: `1`, wantErr: `key "report.jobConclusion": invalid value: 1: want success`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseArtifact(withConclusion(tc.value))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrInvalidValue))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, a.Report.Conclusion(), tc.want)
		})
	}
}

func TestReportValidateConclusion(t *testing.T) {
	r := acceptedReport(t)
	r.JobConclusion = "meh"
	assert.ErrorContains(t, r.Validate(), `key "jobConclusion": invalid value: "meh": want success, failure, cancelled, skipped or unknown`)
	r.JobConclusion = ""
	assert.NilError(t, r.Validate(), "not stated is valid: the reaper knows no job")
}
