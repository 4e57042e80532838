package history

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
)

func TestScanLogsReadsEachLineOnce(t *testing.T) {
	line := cost.AttemptLine(rejectedAttempt(1, "pod0", "G", 0.25, 10)).Format()
	tests := []struct {
		name         string
		files        map[string]string
		wantAttempts int
		wantProblems []string
	}{
		{
			name: "a job file and its step files hold the same lines",
			files: map[string]string{
				provisionLog:                      logText(t0, "start", line),
				JobProvision + "/2_Provision.txt": logText(t0, line),
			},
			wantAttempts: 1,
		},
		{
			name:         "step files of a job without a job file are read",
			files:        map[string]string{JobProvision + "/2_Provision.txt": logText(t0, line)},
			wantAttempts: 1,
		},
		{
			name:         "two jobs",
			files:        map[string]string{provisionLog: logText(t0, line), "1_again.txt": logText(t0, line)},
			wantAttempts: 2,
		},
		{
			name: "malformed and unknown structured lines are problems, not evidence",
			files: map[string]string{provisionLog: logText(t0,
				`runpod-gpu::attempt {"attempt":0}`, `runpod-gpu::bill {}`, "ordinary", line)},
			wantAttempts: 1,
			wantProblems: []string{
				`0_Provision a GPU.txt line 1: log line runpod-gpu::attempt: key "attempt": invalid value: 0: want an attempt number of 1 or more`,
				`0_Provision a GPU.txt line 2: log line: unknown structured log line kind "bill": want attempt, cost or seal`,
			},
		},
		{
			name:         "a line too long ends the file's scan",
			files:        map[string]string{provisionLog: logText(t0, line, strings.Repeat("x", maxLineBytes+1), line)},
			wantAttempts: 1,
			wantProblems: []string{"0_Provision a GPU.txt: a line longer than 1048576 bytes: the rest of the file is not read"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scanLogs(zipOf(t, tc.files), trustAll)
			assert.NilError(t, err)
			assert.Check(t, is.Len(s.attempts, tc.wantAttempts))
			assert.Check(t, is.DeepEqual(s.problems, tc.wantProblems))
			if at, ok := s.last.Get(); assert.Check(t, ok) {
				assert.Check(t, !at.Before(t0))
			}
		})
	}
	_, err := scanLogs([]byte("not a zip"), trustAll)
	assert.ErrorContains(t, err, "logs archive")
}

// trustAll trusts every job: these tests are about reading lines.
func trustAll(string) bool { return true }

func TestGateMarkers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []gatecheck.ExternalID
	}{
		{name: "the gate action's line", in: "published runpod-gpu-gate:v1:" + refA + ":reused (https://x/runs/1): ok",
			want: []gatecheck.ExternalID{{TestedRef: refA, Kind: gatecheck.KindReused}}},
		{name: "quoted, at the end", in: `external_id "runpod-gpu-gate:v1:` + refA + `:not-required"`,
			want: []gatecheck.ExternalID{{TestedRef: refA, Kind: gatecheck.KindNotRequired}}},
		{name: "two markers", in: "runpod-gpu-gate:v1:" + refA + ":failed then runpod-gpu-gate:v1:" + refB + ":paid.",
			want: []gatecheck.ExternalID{{TestedRef: refA, Kind: gatecheck.KindFailed}, {TestedRef: refB, Kind: gatecheck.KindPaid}}},
		{name: "an unknown kind", in: "runpod-gpu-gate:v1:" + refA + ":maybe"},
		{name: "a short ref", in: "runpod-gpu-gate:v1:abc123:paid"},
		{name: "the local relay's marker never counts", in: "local-gpu-gate:v1:" + refA},
		{name: "no marker", in: "paid-path decision: reused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, gateMarkers(tc.in), tc.want)
		})
	}
}

func TestReadArtifact(t *testing.T) {
	good, err := json.Marshal(artifactOf(7, 1, cost.TriggerManual, refA, acceptedReport("p", "G", 0.5, t0, 60)))
	assert.NilError(t, err)
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{name: "the cost file", files: map[string]string{cost.ArtifactFileName: string(good)}},
		{name: "in a folder", files: map[string]string{"out/" + cost.ArtifactFileName: string(good)}},
		{name: "no cost file", files: map[string]string{"other.json": "{}"}, wantErr: "archive has no runpod-gpu-cost.json"},
		{name: "another schema", files: map[string]string{cost.ArtifactFileName: `{"schema":"runpod-gpu-cost/v9"}`},
			wantErr: "unsupported cost artifact schema"},
		{name: "too big", files: map[string]string{cost.ArtifactFileName: strings.Repeat(" ", maxArtifactBytes+1)},
			wantErr: "more than 1048576 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := readArtifact(zipOf(t, tc.files))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, a.Run.TestedRef, refA)
		})
	}
}

// FuzzScanLogs feeds outside log text through the scanner: it never panics
// and what it keeps is valid.
func FuzzScanLogs(f *testing.F) {
	f.Add(logText(t0, cost.AttemptLine(rejectedAttempt(1, "p", "G", 0.2, 10)).Format()))
	f.Add(logText(t0, cost.CostLine(acceptedReport("p", "G", 0.2, t0, 60)).Format()))
	f.Add("2026-10-07T12:00:00Z published runpod-gpu-gate:v1:" + refA + ":paid (x)\n")
	f.Add("runpod-gpu::cost {\"window\":{\"start\":\"x\"}}\r\n\x00")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := scanLogs(zipOf(t, map[string]string{"0_job.txt": text}), trustAll)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range s.attempts {
			if err := a.Validate(); err != nil {
				t.Fatalf("kept an invalid attempt: %v", err)
			}
		}
		for _, r := range s.reports {
			if err := r.Validate(); err != nil {
				t.Fatalf("kept an invalid report: %v", err)
			}
		}
		for _, g := range s.gates {
			if err := g.Validate(); err != nil {
				t.Fatalf("kept an invalid gate marker: %v", err)
			}
		}
	})
}

// FuzzReadArtifact feeds outside artifact bytes through the reader.
func FuzzReadArtifact(f *testing.F) {
	good, _ := json.Marshal(artifactOf(7, 1, cost.TriggerManual, refA, acceptedReport("p", "G", 0.5, t0, 60)))
	f.Add(good)
	f.Add([]byte(`{"schema":"runpod-gpu-cost/v1","run":{},"report":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, _, err := readArtifact(zipOf(t, map[string]string{cost.ArtifactFileName: string(body)}))
		if err == nil {
			if err := a.Run.Validate(); err != nil {
				t.Fatalf("accepted an artifact with an invalid run: %v", err)
			}
		}
	})
}

// FuzzAttemptRecord feeds outside attempt.json bytes through the store.
func FuzzAttemptRecord(f *testing.F) {
	rec := completedAttempt(7, 1, "pull_request", t0)
	rec.Schema = recordSchema
	good, _ := json.Marshal(rec)
	f.Add(good)
	f.Add([]byte(`{"schema":"runpod-gpu-history-attempt/v1","runId":7,"runAttempt":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		st := store{dir: dir}
		k := AttemptKey{RunID: 7, Attempt: 1}
		if err := st.writeFile(k, recordFile, body); err != nil {
			t.Fatal(err)
		}
		got, ok, err := st.load(k)
		if err != nil || !ok {
			return
		}
		if got.Key() != k || got.CreatedAt.IsZero() {
			t.Fatalf("loaded a record that does not name its attempt: %+v", got)
		}
		_ = readAttempt(st, got, nil) // never panics on whatever the record claims
	})
}
