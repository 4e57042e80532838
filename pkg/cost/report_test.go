package cost

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// rejectedAttempts are two candidates paid for before the accepted pod.
func rejectedAttempts() []Attempt {
	return []Attempt{
		{Number: 1, Candidate: "live-1", GPU: "NVIDIA RTX A4000", PodID: "p1rejected", Price: KnownPrice(money.PerHour(0.17), "v2 cost"),
			Outcome: OutcomeRejected, Reason: "SMOKE FAIL: PTX ISA 8.7 not supported by driver 12.6", Seconds: KnownSeconds(212)},
		{Number: 2, Candidate: "baseline", GPU: "NVIDIA RTX A5000", PodID: "p2rejected", Price: KnownPrice(money.PerHour(0.27), "v2 cost"),
			Outcome: OutcomeRejected, Reason: "startup timeout after 420 s | runner never online", Seconds: KnownSeconds(420)},
	}
}

// acceptedReport builds a report the way cleanup does: the price captured
// while the pod ran, the provider's start to confirmed deletion, the window
// split by the GPU job's steps.
func acceptedReport(t *testing.T) Report {
	t.Helper()
	window := Window{Start: sec(0), End: sec(600)}
	stages, err := Stages(window, typicalJob(), TestStepNamed(testStep))
	assert.NilError(t, err)
	return Report{PodID: "p3accepted", GPU: "NVIDIA GeForce RTX 4090", Tier: "full", Price: KnownPrice(money.PerHour(0.69), "v2 cost"), Window: window,
		Stages: stages, Rejected: rejectedAttempts(), ProvisionRejected: true}
}

func reportCases(t *testing.T) map[string]Report {
	// A pod that stopped before its record was captured: no start, and a cost
	// of 0, which means unknown rather than free.
	unknownPrice := Price{Source: "v2 cost missing or 0; it reads 0 once the pod stops, so capture it while RUNNING"}
	return map[string]Report{
		"accepted": acceptedReport(t),
		"unknown_start_and_price": {
			PodID: "p4nostart", GPU: "NVIDIA A40", Tier: "baseline", Price: unknownPrice,
			Window: Window{Start: wire.Time{}, End: sec(900)},
			Rejected: []Attempt{{Number: 1, Candidate: "live-1", GPU: "NVIDIA A40", PodID: "p5", Price: Price{Source: "v2 cost"},
				Outcome: OutcomeRejected, Reason: "EXITED during boot", Seconds: KnownSeconds(61)}},
			Notes:             []string{"Stage breakdown unavailable: the paid window start is unknown."},
			ProvisionRejected: true,
		},
		"exhausted": {
			Rejected: []Attempt{
				rejectedAttempts()[0],
				{Number: 2, Candidate: "baseline", GPU: "NVIDIA RTX A5000", PodID: "p6", Price: KnownPrice(money.PerHour(0.27), "v2 cost"),
					Outcome: OutcomeFailed, Reason: "deletion not confirmed", Seconds: Seconds{}},
			},
			Notes:             []string{"Provision stopped after 2 consecutive startup failures."},
			ProvisionRejected: true,
		},
	}
}

func TestReportGolden(t *testing.T) {
	for name, r := range reportCases(t) {
		t.Run(name, func(t *testing.T) {
			assert.NilError(t, r.Validate())
			golden.Assert(t, r.Markdown(), name+".md")
			b, err := json.MarshalIndent(r, "", "  ")
			assert.NilError(t, err)
			golden.Assert(t, string(b)+"\n", name+".json")
		})
	}
}

func TestReportTotals(t *testing.T) {
	r := acceptedReport(t)
	// 600 s at $0.69/h, 212 s at $0.17/h, 420 s at $0.27/h.
	accepted, rejected := 600*0.69/3600, 212*0.17/3600+420*0.27/3600
	assert.Equal(t, r.Dollars().String(), KnownMoney(money.FromDollars(accepted)).String())
	assert.Equal(t, r.RejectedDollars().String(), KnownMoney(money.FromDollars(rejected)).String())
	assert.Equal(t, r.Total().String(), KnownMoney(money.FromDollars(accepted+rejected)).String())

	r.Window.Start = wire.Time{}
	assert.Assert(t, !r.Total().Known, "an unknown start makes the total unknown, not smaller")
	assert.Equal(t, r.RejectedDollars().String(), KnownMoney(money.FromDollars(rejected)).String())

	assert.Equal(t, Report{}.Total(), KnownMoney(money.FromDollars(0)), "no pod and no rejections cost nothing")
}

func TestReportJSONRoundTrip(t *testing.T) {
	for name, r := range reportCases(t) {
		t.Run(name, func(t *testing.T) {
			first, err := json.Marshal(r)
			assert.NilError(t, err)
			var back Report
			assert.NilError(t, json.Unmarshal(first, &back))
			second, err := json.Marshal(back)
			assert.NilError(t, err)
			assert.Equal(t, string(second), string(first))
			assert.Equal(t, back.Markdown(), r.Markdown())
		})
	}
}

func TestReportValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Report)
		wantErr string
		wantIs  error
	}{
		{name: "stages short of the window", edit: func(r *Report) { r.Stages[0].Seconds-- },
			wantErr: `key "stages": stages do not sum to the paid window: stages sum to 599 s, the window is 600 s`, wantIs: ErrStageSum},
		{name: "stages without a known window", edit: func(r *Report) { r.Window.Start = wire.Time{} },
			wantErr: "the paid window is unknown", wantIs: ErrStageSum},
		{name: "negative stage", edit: func(r *Report) { r.Stages[1].Seconds = -1; r.Stages[2].Seconds += 2 },
			wantErr: `key "stages[1].seconds": invalid value: -1`, wantIs: ErrInvalidValue},
		{name: "unknown stage kind", edit: func(r *Report) { r.Stages[3].Kind = "lunch" },
			wantErr: `key "stages[3].kind": invalid value: "lunch": want startup, setup, tests, cleanup or overhead`, wantIs: ErrInvalidValue},
		{name: "negative window", edit: func(r *Report) { r.Window.End = sec(-1) },
			wantErr: `key "window": paid window`, wantIs: ErrNegativeInterval},
		{name: "bad rejected outcome", edit: func(r *Report) { r.Rejected[1].Outcome = "meh" },
			wantErr: `key "rejected[1].outcome": invalid value: "meh"`, wantIs: ErrInvalidValue},
		{name: "rejected attempt without a number", edit: func(r *Report) { r.Rejected[0].Number = 0 },
			wantErr: `key "rejected[0].attempt"`, wantIs: ErrInvalidValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := acceptedReport(t)
			tc.edit(&r)
			err := r.Validate()
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Assert(t, errors.Is(err, tc.wantIs))

			b, mErr := json.Marshal(r)
			assert.NilError(t, mErr)
			var back Report
			assert.ErrorContains(t, json.Unmarshal(b, &back), tc.wantErr, "decoding validates too")
		})
	}
}

func TestReportUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{name: "not an object", in: `[]`, wantErr: "[]: want a JSON object"},
		{name: "bad start", in: `{"window":{"start":"soon"}}`, wantErr: `key "window.start": timestamp "soon"`},
		{name: "stage seconds not a number", in: `{"window":{"start":"2026-09-23T08:48:28Z","end":"2026-09-23T08:48:29Z"},"stages":[{"kind":"setup","name":"x","seconds":"1"}]}`,
			wantErr: `key "stages[0].seconds": invalid value: "1": want a whole number`},
		{name: "rejected seconds negative", in: `{"rejected":[{"attempt":1,"outcome":"rejected","seconds":-3}]}`,
			wantErr: `key "rejected[0].seconds": invalid value: -3`},
		{name: "stages not an array", in: `{"stages":{}}`, wantErr: `key "stages": invalid value: {}: want an array`},
		{name: "notes not strings", in: `{"notes":[1]}`, wantErr: `key "notes[0]": invalid value: 1: want a string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			assert.ErrorContains(t, json.Unmarshal([]byte(tc.in), &r), tc.wantErr)
		})
	}
}

// The accepted pod's placement comes from its record before deletion, and
// only from a record that describes it.
func TestReportPlacementFromThePodRecord(t *testing.T) {
	start := wire.KnownTime(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	rec := func(id string) *runpod.Pod {
		return &runpod.Pod{ID: id, Status: runpod.PodRunning, Cost: 0.44, StartedAt: start, GPU: &runpod.PodGPU{ID: "NVIDIA L4"},
			Cloud: "COMMUNITY", DataCenterID: "EU-RO-1", CudaVersion: "12.8"}
	}
	tests := []struct {
		name              string
		record            *runpod.Pod
		cloud, dc, driver string
	}{
		{name: "its own record", record: rec("p1"), cloud: "COMMUNITY", dc: "EU-RO-1", driver: "12.8"},
		{name: "another pod's record says nothing about it", record: rec("other")},
		{name: "no record", record: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(Evidence{PodID: "p1", Record: tc.record, DeletedAt: wire.KnownTime(time.Date(2026, 11, 2, 10, 10, 0, 0, time.UTC))})
			assert.Check(t, is.Equal(r.Cloud, tc.cloud))
			assert.Check(t, is.Equal(r.DataCenter, tc.dc))
			assert.Check(t, is.Equal(r.Driver, tc.driver))

			data, err := json.Marshal(r)
			assert.NilError(t, err)
			var back Report
			assert.NilError(t, json.Unmarshal(data, &back))
			assert.Check(t, is.Equal(back.DataCenter, tc.dc), "the artifact keeps it: %s", data)
		})
	}
}
