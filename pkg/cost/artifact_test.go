package cost

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/money"
)

func testArtifact(t *testing.T) Artifact {
	report := acceptedReport(t)
	report.JobConclusion = ConclusionFailure
	return Artifact{
		Run: Run{Repository: "org/app", ID: 9001, Attempt: 2, TestedRef: "0123456789abcdef0123456789abcdef01234567",
			Trigger: TriggerAutomatic, PRNumber: 42},
		Action: "cleanup",
		Report: report,
	}
}

func TestArtifactName(t *testing.T) {
	assert.Equal(t, ArtifactName(9001, 2), "runpod-gpu-cost-9001-2")
	assert.Assert(t, strings.HasPrefix(ArtifactName(1, 1), ArtifactNamePrefix))
}

// The name carries the uploading job; only a name written for the attempt
// reads back, and only with a positive decimal job id.
func TestArtifactJobReadsWhatJobArtifactNameWrote(t *testing.T) {
	assert.Equal(t, JobArtifactName(9001, 2, 51725241954), "runpod-gpu-cost-9001-2-job-51725241954")
	tests := []struct {
		name   string
		wantID int64
		wantOK bool
	}{
		{name: JobArtifactName(9001, 2, 51725241954), wantID: 51725241954, wantOK: true},
		{name: ArtifactName(9001, 2)},                             // names no job
		{name: ArtifactName(9001, 2) + "-x"},                      // a suffix, not a job
		{name: JobArtifactName(9001, 1, 7)},                       // another attempt's
		{name: JobArtifactName(90011, 2, 7)},                      // another run's
		{name: "runpod-gpu-cost-9001-2-job-0"},                    // no job has id 0
		{name: "runpod-gpu-cost-9001-2-job-007"},                  // not how the id is written
		{name: "runpod-gpu-cost-9001-2-job-7-extra"},              // more after the id
		{name: "runpod-gpu-cost-9001-2-job-99999999999999999999"}, // overflows
		{name: "runpod-gpu-cost-9001-2-job-"},
	}
	for _, tc := range tests {
		id, ok := ArtifactJob(tc.name, 9001, 2)
		assert.Check(t, ok == tc.wantOK && id == tc.wantID, "%s: got %d, %v", tc.name, id, ok)
	}
}

func TestArtifactGolden(t *testing.T) {
	b, err := json.MarshalIndent(testArtifact(t), "", "  ")
	assert.NilError(t, err)
	golden.Assert(t, string(b)+"\n", "artifact.json")

	// The golden file is what the history tool reads: it must parse back to the same artifact.
	data, err := os.ReadFile(filepath.Join("testdata", "artifact.json"))
	assert.NilError(t, err)
	got, err := ParseArtifact(data)
	assert.NilError(t, err)
	again, err := json.MarshalIndent(got, "", "  ")
	assert.NilError(t, err)
	assert.Equal(t, string(again)+"\n", string(data))
}

func TestParseArtifact(t *testing.T) {
	valid, err := json.Marshal(testArtifact(t))
	assert.NilError(t, err)
	// edit rewrites one top-level key of the valid artifact.
	edit := func(key, value string) string {
		var m map[string]json.RawMessage
		assert.NilError(t, json.Unmarshal(valid, &m))
		if value == "" {
			delete(m, key)
		} else {
			m[key] = json.RawMessage(value)
		}
		b, err := json.Marshal(m)
		assert.NilError(t, err)
		return string(b)
	}
	tests := []struct {
		name    string
		in      string
		wantErr string
		wantIs  error
	}{
		{name: "valid", in: string(valid)},
		{name: "unknown keys are ignored", in: edit("futureField", `{"x":1}`)},
		{name: "not an object", in: `"runpod-gpu-cost/v1"`, wantErr: "cost artifact: invalid value: want a JSON object", wantIs: ErrInvalidValue},
		{name: "newer schema", in: edit("schema", `"runpod-gpu-cost/v2"`),
			wantErr: `key "schema": unsupported cost artifact schema "runpod-gpu-cost/v2": want "runpod-gpu-cost/v1"`, wantIs: ErrUnsupportedSchema},
		{name: "missing schema", in: edit("schema", ""), wantErr: `unsupported cost artifact schema ""`, wantIs: ErrUnsupportedSchema},
		{name: "schema not a string", in: edit("schema", `1`), wantErr: `key "schema": invalid value: 1: want a string`, wantIs: ErrInvalidValue},
		{name: "missing report", in: edit("report", ""), wantErr: `key "report": invalid value: missing`, wantIs: ErrInvalidValue},
		{name: "null run", in: edit("run", "null"), wantErr: `key "run": invalid value: missing`, wantIs: ErrInvalidValue},
		{name: "bad trigger", in: edit("run", `{"runId":1,"runAttempt":1,"trigger":"cron"}`),
			wantErr: `key "run.trigger": invalid value: "cron": want automatic or manual`, wantIs: ErrInvalidValue},
		{name: "run id not a number", in: edit("run", `{"runId":"1"}`),
			wantErr: `key "run.runId": invalid value: "1": want a whole number`, wantIs: ErrInvalidValue},
		{name: "zero attempt", in: edit("run", `{"runId":1,"runAttempt":0,"trigger":"manual"}`),
			wantErr: `key "run.runAttempt": invalid value: 0`, wantIs: ErrInvalidValue},
		{name: "stages that do not sum", in: strings.Replace(string(valid), `"seconds":349`, `"seconds":348`, 1),
			wantErr: `key "report.stages": stages do not sum to the paid window: stages sum to 599 s, the window is 600 s`, wantIs: ErrStageSum},
		{name: "bad timestamp", in: strings.Replace(string(valid), `"end":"2026-09-23T08:58:28Z"`, `"end":"later"`, 1),
			wantErr: `key "report.window.end": timestamp "later"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseArtifact([]byte(tc.in))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				if tc.wantIs != nil {
					assert.Assert(t, errors.Is(err, tc.wantIs))
				}
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got.Run, testArtifact(t).Run)
			assert.Equal(t, got.Report.Markdown(), testArtifact(t).Report.Markdown())
		})
	}
}

func FuzzParseArtifact(f *testing.F) {
	valid, err := json.Marshal(Artifact{
		Run:    Run{Repository: "org/app", ID: 1, Attempt: 1, TestedRef: "abc", Trigger: TriggerManual},
		Report: Report{PodID: "p", Price: KnownPrice(money.PerHour(0.4), "v2 cost"), Window: Window{Start: sec(0), End: sec(10)}, Stages: []Stage{{Kind: StageStartup, Name: StartupStageName, Seconds: 10}}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"schema":"runpod-gpu-cost/v1","run":{"runId":1,"runAttempt":1,"trigger":"automatic"},"report":{"rejected":[{"attempt":1,"outcome":"rejected","seconds":null}]}}`))
	f.Add([]byte(`{"schema":"runpod-gpu-cost/v1","run":{},"report":{"stages":[{"seconds":-1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseArtifact(data)
		if err != nil {
			return
		}
		// Whatever parses must re-encode to a fixed point and stay valid.
		first, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseArtifact(first)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", first, err)
		}
		second, err := json.Marshal(back)
		if err != nil || string(second) != string(first) {
			t.Fatalf("not a fixed point:\n%s\n%s", first, second)
		}
	})
}

// A lane of several pods writes one artifact: the first pod's report and
// the others' (another tier, a pod lost to its host) in more, each with its
// host verdict; it parses back whole, and a verdict it does not know fails.
func TestArtifactWithMorePods(t *testing.T) {
	a := testArtifact(t)
	lost := acceptedReport(t)
	lost.PodID, lost.Host = "lostpod0000001", HostFailed
	a.More = []Report{lost}
	data, err := json.Marshal(a)
	assert.NilError(t, err)
	got, err := ParseArtifact(data)
	assert.NilError(t, err)
	assert.Equal(t, len(got.Reports()), 2)
	assert.Equal(t, got.Reports()[1].Host, HostFailed)
	assert.Equal(t, got.Reports()[0].Host, HostVerdict(""))
	assert.Assert(t, strings.Contains(lost.Markdown(), "lost while its GPU job ran"))

	bad := strings.Replace(string(data), `"host":"failed"`, `"host":"flaky"`, 1)
	_, err = ParseArtifact([]byte(bad))
	assert.ErrorContains(t, err, `"flaky": want worked, failed or no value`)
}

func TestTriggerOf(t *testing.T) {
	for event, want := range map[string]Trigger{
		"workflow_dispatch": TriggerManual,
		"pull_request":      TriggerAutomatic,
		"schedule":          TriggerAutomatic,
		"":                  TriggerAutomatic,
	} {
		assert.Check(t, is.Equal(TriggerOf(event), want), event)
	}
}
