package lanetiers

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
)

func sampleRecord() Record {
	return Record{
		Tiers: []Tier{
			{Name: "ampere", PaidPath: "paid", Pod: &Pod{Tier: "ampere", RunnerLabel: "runpod-gpu-1-1-c1-00", PodID: "pod1", GPUType: "NVIDIA A100", PricePerHour: "1.5"},
				Rejected: []cost.Attempt{{Number: 2, Candidate: "live-2", Outcome: cost.OutcomeRejected, PodID: "pod0"}}},
			{Name: "hopper", PaidPath: "reused", ReusedCheckURL: "https://github.com/o/r/runs/1"},
			{Name: "ada", Error: "provision attempts exhausted",
				Lost: []HostFault{{Tier: "ada", PodID: "pod2", GPUType: "NVIDIA L4", DataCenter: "EU-RO-1", Kind: FaultVanished, Detail: "gone"}}},
		},
		CommittedUSD: 3_250_000, NextCandidate: 7,
	}
}

func TestRecordRoundTrips(t *testing.T) {
	want := sampleRecord()
	got, err := ParseRecord(Format(want))
	assert.NilError(t, err)
	assert.DeepEqual(t, *got, want)
	assert.Check(t, got.Matrix())
	assert.Check(t, is.Len(got.Pods(), 1))
	tier, ok := got.Tier("ada")
	assert.Assert(t, ok)
	assert.Check(t, is.Equal(tier.Lost[0].Where(), "NVIDIA L4 in EU-RO-1"))
	none, err := ParseRecord("")
	assert.NilError(t, err)
	assert.Check(t, none == nil)
}

func TestParseRefusesWhatNoJobWrites(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{name: "not JSON", value: "[", want: "want provision's tiers output"},
		{name: "unknown key", value: `{"tiers":[],"extra":1}`, want: "want provision's tiers output"},
		{name: "tier twice", value: `{"tiers":[{"tier":"a","paid-path":"paid"},{"tier":"a","paid-path":"paid"}],"committed-usd":0,"next-candidate":0}`, want: `tier "a" is listed twice`},
		{name: "pod of another tier", value: `{"tiers":[{"tier":"a","paid-path":"paid","pod":{"tier":"b","runner-label":"l","pod-id":"p","gpu-type":"","gpu-tier":"","price-per-hour":"","started-at":"","startup-seconds":""}}],"committed-usd":0,"next-candidate":0}`, want: `the pod names tier "b"`},
		{name: "negative commitment", value: `{"tiers":[],"committed-usd":-1,"next-candidate":0}`, want: "is negative"},
		{name: "two values", value: `{"tiers":[]} {}`, want: "want one JSON value"},
		{name: "too long", value: `{"tiers":[` + strings.Repeat(" ", MaxValue) + `]}`, want: "bytes: want at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRecord(tc.value)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParsePodsAndHostFaults(t *testing.T) {
	pods, err := ParsePods(Format(sampleRecord().Pods()))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(pods[0].JobName("GPU tests"), "GPU tests (ampere)"))
	assert.Check(t, is.Equal(JobName("GPU tests", ""), "GPU tests"))
	_, err = ParsePods(`[{"tier":"a","pod-id":"p"}]`)
	assert.ErrorContains(t, err, "needs its pod-id and runner-label")
	_, err = ParsePods(`[{"tier":"a","pod-id":"p","runner-label":"l"},{"tier":"a","pod-id":"q","runner-label":"m"}]`)
	assert.ErrorContains(t, err, `tier "a" has two pods`)
	// A pod's fields are held to the watchdog's own input forms.
	for _, tc := range []struct{ pods, wantErr string }{
		{`[{"tier":"a","pod-id":"<img>","runner-label":"l"}]`, `[0].pod-id "<img>": want a RunPod pod id`},
		{`[{"tier":"a\n::warning::x","pod-id":"p","runner-label":"l"}]`, `[0].tier "a\n::warning::x": want a tier name`},
		{`[{"tier":"a","pod-id":"p","runner-label":"l","gpu-type":"[x](https://e.example)"}]`, `[0].gpu-type "[x](https://e.example)": want an exact RunPod GPU id`},
		{`[{"tier":"a","pod-id":"p","runner-label":"l","price-per-hour":"1e308"}]`, `[0].price-per-hour "1e308": want a positive number of USD per hour up to 1000`},
		{`[{"tier":"a","pod-id":"p","runner-label":"l x"}]`, `[0].runner-label "l x": want a runner label`},
	} {
		_, err = ParsePods(tc.pods)
		assert.Check(t, is.ErrorContains(err, tc.wantErr))
	}

	faults, err := ParseHostFaults(`[{"tier":"","pod-id":"p","gpu-type":"G","kind":"runtime-lost","detail":"d"}]`)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(faults[0].Where(), "G (data center unknown)"))
	_, err = ParseHostFaults(`[{"tier":"","pod-id":"p","gpu-type":"G","kind":"tests-failed","detail":"d"}]`)
	assert.ErrorContains(t, err, `kind "tests-failed"`)
	_, err = ParseHostFaults(`[{"tier":"","pod-id":"","gpu-type":"G","kind":"exited","detail":"d"}]`)
	assert.ErrorContains(t, err, "names its pod-id")
}

func TestFinalIsEachTiersLastRow(t *testing.T) {
	rows := []Result{
		{Tier: "ampere", Outcome: OutcomeHostFault},
		{Tier: "hopper", Outcome: OutcomeFailed},
		{Tier: "ampere", Outcome: OutcomePassed, Rerun: true},
	}
	final := Final(rows)
	assert.Assert(t, is.Len(final, 2))
	assert.Check(t, is.Equal(final[0].Tier, "ampere"))
	assert.Check(t, final[0].Passed())
	assert.Check(t, !final[1].Passed())
	assert.Check(t, is.Equal(final[1].Label(), "tier hopper"))
	assert.Check(t, is.Equal(Result{}.Label(), "the GPU"))
	back, err := ParseResults(Format(rows))
	assert.NilError(t, err)
	assert.DeepEqual(t, back, rows)
	_, err = ParseResults(`[{"tier":"a","outcome":"green"}]`)
	assert.ErrorContains(t, err, `outcome "green"`)
}

// The records come from other jobs' outputs: no value may panic a parser.
func FuzzParse(f *testing.F) {
	f.Add(Format(sampleRecord()))
	f.Add(`[{"tier":"a","pod-id":"p","runner-label":"l"}]`)
	f.Add(`[{"tier":"a","outcome":"passed","paid-seconds":3}]`)
	f.Fuzz(func(t *testing.T, value string) {
		_, _ = ParseRecord(value)
		_, _ = ParsePods(value)
		_, _ = ParseHostFaults(value)
		_, _ = ParseResults(value)
	})
}

func TestHandOverWait(t *testing.T) {
	tests := []struct {
		name             string
		accepted, handed string
		want             time.Duration
	}{
		{name: "waited for the later tiers", accepted: "2026-01-01T00:05:00Z", handed: "2026-01-01T00:20:30Z", want: 15*time.Minute + 30*time.Second},
		{name: "the last tier", accepted: "2026-01-01T00:20:30Z", handed: "2026-01-01T00:20:30Z"},
		{name: "handed over before accepted: no wait", accepted: "2026-01-01T00:20:30Z", handed: "2026-01-01T00:05:00Z"},
		{name: "no hand-over (an older provision)", accepted: "2026-01-01T00:05:00Z"},
		{name: "unreadable", accepted: "yesterday", handed: "2026-01-01T00:05:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.Equal(Pod{AcceptedAt: tc.accepted, HandedOverAt: tc.handed}.HandOverWait(), tc.want))
		})
	}
}
