package cost

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
)

// Provision's rejected attempts travel to cleanup as one output value: one
// line, read back exactly, and anything else refused with the key named.
func TestFormatAndParseAttempts(t *testing.T) {
	rejected := rejectedAttempts()
	rejected[0].Reason = "line one\nline two | <b>"
	value := FormatAttempts(rejected)
	assert.Check(t, !strings.ContainsAny(value, "\r\n"), "an output value is one line: %s", value)
	got, err := ParseAttempts(value)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, rejected)
	assert.Equal(t, FormatAttempts(nil), "[]")

	tests := []struct {
		name, value, wantErr string
	}{
		{name: "empty", value: "", wantErr: "want a JSON array of provision's rejected attempts"},
		{name: "not an array", value: `{"attempt":1}`, wantErr: "want a JSON array"},
		{name: "null", value: `null`, wantErr: "want a JSON array"},
		{name: "bad attempt", value: `[{"attempt":0,"outcome":"rejected"}]`, wantErr: `key "[0].attempt"`},
		{name: "bad seconds", value: `[{"attempt":1,"outcome":"rejected","seconds":-4}]`, wantErr: `key "[0].seconds"`},
		{name: "accepted", value: `[{"attempt":1,"outcome":"accepted"}]`, wantErr: `key "[0].outcome": invalid value: "accepted": want a rejected or failed attempt`},
		{name: "twice", value: `[{"attempt":1,"outcome":"rejected","podId":"p"},{"attempt":2,"outcome":"rejected","podId":"p"}]`,
			wantErr: `key "[1].podId": invalid value: "p": listed twice`},
		{name: "too long", value: "[" + strings.Repeat(" ", MaxAttemptsValue) + "]", wantErr: "want at most 65536"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAttempts(tc.value)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func FuzzParseAttempts(f *testing.F) {
	f.Add(FormatAttempts(rejectedAttempts()))
	f.Add(`[{"attempt":1,"outcome":"failed"}]`)
	f.Fuzz(func(t *testing.T, value string) {
		got, err := ParseAttempts(value)
		if err != nil {
			return
		}
		again, err := ParseAttempts(FormatAttempts(got))
		if err != nil || len(again) != len(got) {
			t.Fatalf("%q: round trip failed: %v", value, err)
		}
	})
}

// The gantt chart draws the stages end to end from 0 s, one section per run
// of a kind, and keeps step names from breaking out of the Mermaid syntax.
func TestGantt(t *testing.T) {
	r := Report{Stages: []Stage{
		{Kind: StageStartup, Name: StartupStageName, Seconds: 30},
		{Kind: StageSetup, Name: "Set up: job; #1 %% x", Seconds: 5},
		{Kind: StageTests, Name: "Run GPU tests", Seconds: 100},
		{Kind: StageCleanup, Name: CleanupStageName, Seconds: 10},
		{Kind: StageOverhead, Name: OverheadStageName, Seconds: 0},
	}}
	got := r.Gantt()
	for _, want := range []string{
		"```mermaid\ngantt\n",
		"    dateFormat x\n",
		"    section startup\n    runner startup and queue (30 s) :s0, 0, 30000\n",
		"    section setup\n    Set up - job, 1 x (5 s) :s1, 30000, 35000\n",
		"    section tests\n    Run GPU tests (100 s) :s2, 35000, 135000\n",
		"    section cleanup\n    cleanup and queue (10 s) :s3, 135000, 145000\n```\n",
	} {
		assert.Check(t, is.Contains(got, want))
	}
	assert.Check(t, !strings.Contains(got, "overhead"), "a zero-second stage draws nothing")
	assert.Equal(t, Report{}.Gantt(), "")
	assert.Check(t, is.Contains(acceptedReportMarkdown(t), "```mermaid\ngantt\n"), "the cost report carries the chart")
}

func acceptedReportMarkdown(t *testing.T) string { return acceptedReport(t).Markdown() }

// Attempts carry where their pod ran, when they ended and the host verdict
// through provision's output and the cost artifact; records written before
// they did read with those fields unknown, and a verdict that is none of the
// defined ones is refused, naming the key and the value.
func TestAttemptPlacementJSON(t *testing.T) {
	ended := time.Date(2026, 11, 2, 10, 4, 5, 0, time.UTC)
	full := Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA L4", PodID: "p1", Price: KnownPrice(money.PerHour(0.44), "v2 cost"),
		Outcome: OutcomeRejected, Reason: "EXITED while starting", Seconds: KnownSeconds(90),
		Cloud: "SECURE", DataCenter: "EU-RO-1", Driver: "12.8", Host: HostFailed, At: ended}
	tests := []struct {
		name    string
		in      string
		want    Attempt
		wantErr string
	}{
		{name: "round trip", in: FormatAttempts([]Attempt{full}), want: full},
		{name: "an older record: placement, verdict and time unknown",
			in: `[{"attempt":1,"candidate":"live-1","gpu":"NVIDIA L4","podId":"p1","price":{"perHour":0.44,"known":true,"source":"v2 cost"},` +
				`"outcome":"rejected","reason":"EXITED while starting","seconds":90}]`,
			want: Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA L4", PodID: "p1", Price: KnownPrice(money.PerHour(0.44), "v2 cost"),
				Outcome: OutcomeRejected, Reason: "EXITED while starting", Seconds: KnownSeconds(90)}},
		{name: "an unknown verdict", in: `[{"attempt":1,"outcome":"rejected","host":"flaky"}]`, wantErr: `key "[0].host"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAttempts(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.ErrorContains(t, err, `"flaky": want worked, failed or no value`)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, []Attempt{tc.want})
		})
	}
	// Unknown fields stay out of the written form, so older readers see what they knew.
	old := FormatAttempts([]Attempt{{Number: 1, Outcome: OutcomeNoCapacity}})
	for _, key := range []string{"cloud", "dataCenter", "driver", "host", `"at"`} {
		assert.Check(t, !strings.Contains(old, key), "%s written for an attempt without it: %s", key, old)
	}
}
