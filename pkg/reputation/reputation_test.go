package reputation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
)

const (
	a5000 = "NVIDIA RTX A5000"
	l4    = "NVIDIA L4"
	h100  = "NVIDIA H100 80GB HBM3"
	a100  = "NVIDIA A100 80GB PCIe"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// input is a two-tier plan input: A5000 in EU-RO-1 and US-TX-3, L4 in
// EU-RO-1, both cheap (live); the H100 tier is a static slot.
func input() plan.Input {
	dcs := func(ids ...string) []plan.DataCenterStock {
		var out []plan.DataCenterStock
		for _, id := range ids {
			out = append(out, plan.DataCenterStock{ID: id, Availability: "HIGH"})
		}
		return out
	}
	return plan.Input{
		Tiers: []plan.Tier{{Name: "cheap", GPUIDs: []string{a5000, l4}}, {Name: "big", GPUIDs: []string{h100}}},
		Offers: []plan.Offer{
			{GPUID: a5000, MemoryGB: 24, Cloud: plan.CloudSecure, PricePerHour: money.PerHour(0.27), Availability: "HIGH", DataCenters: dcs("EU-RO-1", "US-TX-3")},
			{GPUID: l4, MemoryGB: 24, Cloud: plan.CloudSecure, PricePerHour: money.PerHour(0.43), Availability: "HIGH", DataCenters: dcs("EU-RO-1")},
			{GPUID: a100, MemoryGB: 80, Cloud: plan.CloudSecure, PricePerHour: money.PerHour(1.64), Availability: "HIGH", DataCenters: dcs("US-KS-2")},
		},
		GPUCount: 1, MinVRAMGB: 16, MaxPriceCandidates: 3, MaxAttempts: 6,
	}
}

func obs(at time.Time, gpu, dc string, ok bool) reputation.Observation {
	return reputation.Observation{At: at, GPU: gpu, DataCenter: dc, Cloud: "SECURE", OK: ok, Seconds: 180, PricePerHour: money.PerHour(0.27)}
}

// timeout is a failure that was paid to the 15-minute startup timeout.
func timeout(at time.Time, gpu, dc string) reputation.Observation {
	o := obs(at, gpu, dc, false)
	o.Seconds = 900
	return o
}

func build(rec *reputation.Record, at time.Time) plan.Plan {
	in := input()
	if rec != nil {
		in.Rank = reputation.New(*rec, at, reputation.DefaultParams).Rank
	}
	return plan.Build(in)
}

// summary renders candidates as "GPU@dc,dc" (any: RunPod chooses).
func summary(p plan.Plan) []string {
	var out []string
	for _, c := range p.Candidates {
		where := "any"
		if len(c.DataCenterIDs) > 0 {
			where = strings.Join(c.DataCenterIDs, ",")
		}
		out = append(out, fmt.Sprintf("%s %s@%s", c.Name, strings.TrimPrefix(c.GPUID, "NVIDIA "), where))
	}
	return out
}

func TestRank(t *testing.T) {
	seed := summary(build(nil, now))
	assert.DeepEqual(t, seed, []string{"live-1 RTX A5000@any", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"})
	h := time.Hour
	q := reputation.DefaultParams.QuarantineFor
	tests := []struct {
		name string
		obs  []reputation.Observation
		at   time.Time
		want []string
	}{
		{name: "cold start: no record is the seed's plan", obs: nil, want: seed},
		{name: "evidence of good pairs only changes nothing", at: now,
			obs:  []reputation.Observation{obs(now.Add(-h), a5000, "EU-RO-1", true), obs(now.Add(-2*h), l4, "EU-RO-1", true)},
			want: seed},
		{name: "one failure pins the type to its other data center", at: now,
			obs:  []reputation.Observation{obs(now.Add(-h), a5000, "EU-RO-1", false)},
			want: []string{"live-1 RTX A5000@US-TX-3", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"}},
		{name: "two failures quarantine the pair; a type with no other data center goes last", at: now,
			obs: []reputation.Observation{obs(now.Add(-3*h), l4, "EU-RO-1", false), obs(now.Add(-2*h), l4, "EU-RO-1", false),
				obs(now.Add(-h), a5000, "EU-RO-1", true)},
			want: []string{"live-1 RTX A5000@any", "static-big-1 H100 80GB HBM3@any", "live-3 L4@any"}},
		{name: "quarantine holds until its window ends", at: now.Add(-2*h + q - time.Second),
			obs:  []reputation.Observation{obs(now.Add(-3*h), l4, "EU-RO-1", false), obs(now.Add(-2*h), l4, "EU-RO-1", false)},
			want: []string{"live-1 RTX A5000@US-TX-3", "static-big-1 H100 80GB HBM3@any", "live-3 L4@any"}},
		{name: "released after its window: tried again in its place", at: now.Add(-2*h + q),
			obs:  []reputation.Observation{obs(now.Add(-3*h), l4, "EU-RO-1", false), obs(now.Add(-2*h), l4, "EU-RO-1", false)},
			want: []string{"live-1 RTX A5000@US-TX-3", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"}},
		{name: "a failure after release quarantines it again", at: now.Add(11 * h),
			obs: []reputation.Observation{obs(now.Add(-q-3*h), l4, "EU-RO-1", false), obs(now.Add(-q-2*h), l4, "EU-RO-1", false),
				obs(now, l4, "EU-RO-1", false)},
			// EU-RO-1's failures also make it doubtful for the A5000 (a bad rollout hits every type there).
			want: []string{"live-1 RTX A5000@US-TX-3", "static-big-1 H100 80GB HBM3@any", "live-3 L4@any"}},
		{name: "a success ends the run of failures: no quarantine", at: now,
			obs: []reputation.Observation{obs(now.Add(-3*h), l4, "EU-RO-1", false), obs(now.Add(-2*h), l4, "EU-RO-1", false),
				obs(now.Add(-h), l4, "EU-RO-1", true)},
			want: []string{"live-1 RTX A5000@US-TX-3", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"}},
		{name: "a cheap type whose failures run to the timeout ranks below a dearer one", at: now,
			obs: []reputation.Observation{timeout(now.Add(-5*h), a5000, "EU-RO-1"), timeout(now.Add(-4*h), a5000, "US-TX-3"),
				obs(now.Add(-3*h), a5000, "EU-RO-1", true), obs(now.Add(-2*h), a5000, "US-TX-3", true),
				timeout(now.Add(-90*time.Minute), a5000, "EU-RO-1"), timeout(now.Add(-1*h), a5000, "US-TX-3")},
			want: []string{"live-1 L4@any", "live-2 RTX A5000@any", "static-big-1 H100 80GB HBM3@any"}},
		{name: "a type failing everywhere goes after one that works, even when its failures are cheap", at: now,
			obs: []reputation.Observation{obs(now.Add(-5*h), a5000, "EU-RO-1", false), obs(now.Add(-4*h), a5000, "US-TX-3", false),
				obs(now.Add(-3*h), a5000, "EU-RO-1", true), obs(now.Add(-2*h), a5000, "US-TX-3", true),
				obs(now.Add(-90*time.Minute), a5000, "EU-RO-1", false), obs(now.Add(-1*h), a5000, "US-TX-3", false),
				obs(now.Add(-30*time.Minute), l4, "EU-RO-1", true)},
			want: []string{"live-1 L4@any", "live-2 RTX A5000@any", "static-big-1 H100 80GB HBM3@any"}},
		{name: "a flaky host model: its data centers without evidence are doubtful too", at: now,
			obs: []reputation.Observation{obs(now.Add(-3*h), a5000, "EU-RO-1", false), obs(now.Add(-2*h), a5000, "EU-RO-1", true),
				obs(now.Add(-h), a5000, "EU-RO-1", false), obs(now.Add(-30*time.Minute), l4, "EU-RO-1", true),
				obs(now.Add(-20*time.Minute), l4, "EU-RO-1", true)},
			want: []string{"live-1 L4@any", "live-2 RTX A5000@US-TX-3", "static-big-1 H100 80GB HBM3@any"}},
		{name: "old failures are forgotten", at: now.Add(30 * 24 * h),
			obs:  []reputation.Observation{obs(now, a5000, "EU-RO-1", false)},
			want: seed},
		{name: "allowlist boundary: evidence about an unreviewed type adds nothing", at: now,
			obs:  []reputation.Observation{obs(now.Add(-h), a100, "US-KS-2", true), obs(now.Add(-h), a5000, "EU-RO-1", false)},
			want: []string{"live-1 RTX A5000@US-TX-3", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &reputation.Record{}
			rec.Add(tc.obs...)
			assert.DeepEqual(t, summary(build(rec, tc.at)), tc.want)
		})
	}
}

// A zone restriction is never widened: pinning only narrows within it, and
// a quarantined zone keeps the restriction rather than leaving it.
func TestRankKeepsZones(t *testing.T) {
	in := input()
	in.Zones = []string{"EU-RO-1", "US-TX-3"}
	rec := reputation.Record{}
	rec.Add(obs(now.Add(-2*time.Hour), a5000, "EU-RO-1", false), obs(now.Add(-time.Hour), a5000, "EU-RO-1", false))
	in.Rank = reputation.New(rec, now, reputation.DefaultParams).Rank
	p := plan.Build(in)
	for _, c := range p.Candidates {
		for _, dc := range c.DataCenterIDs {
			assert.Check(t, is.Contains(in.Zones, dc), "%s placed in %s, outside zones", c.Name, dc)
		}
	}
	assert.DeepEqual(t, p.Candidates[0].DataCenterIDs, []string{"US-TX-3"})

	in.Zones = []string{"EU-RO-1"}
	p = plan.Build(in)
	last := p.Candidates[len(p.Candidates)-1]
	assert.Equal(t, last.GPUID, a5000, "its only zone is quarantined: tried last")
	assert.DeepEqual(t, last.DataCenterIDs, []string{"EU-RO-1"})
}

func TestEstimate(t *testing.T) {
	rec := reputation.Record{}
	rec.Add(obs(now.Add(-72*time.Hour), a5000, "EU-RO-1", false), obs(now, a5000, "EU-RO-1", true))
	e := reputation.New(rec, now, reputation.DefaultParams)
	got := e.Estimate(reputation.Pair{GPU: a5000, Cloud: "secure", DataCenter: "eu-ro-1"})
	// One failure at half weight and one success. The pooled rate of the
	// type (and of the data center) is (0.5 + 0.1×4) / (1.5 + 4) = 0.1636;
	// it is the pair's prior: (0.5 + 0.1636×2) / (1.5 + 2).
	assert.Check(t, is.Equal(fmt.Sprintf("%.4f", got.Failure), "0.2364"))
	assert.Check(t, is.Equal(fmt.Sprintf("%.2f", got.Evidence), "1.50"))
	assert.Check(t, got.QuarantinedUntil.IsZero())
	sameDC := e.Estimate(reputation.Pair{GPU: l4, DataCenter: "EU-RO-1"})
	assert.Check(t, is.Equal(fmt.Sprintf("%.4f", sameDC.Failure), "0.1636"), "another type in the same data center starts from its pooled rate")
	fresh := e.Estimate(reputation.Pair{GPU: l4, DataCenter: "US-TX-3"})
	assert.Check(t, is.Equal(fresh.Failure, reputation.DefaultParams.PriorFailure))
}

func TestRecordRoundTripAndBound(t *testing.T) {
	rec := reputation.Record{}
	for i := range reputation.MaxObservations + 5 {
		rec.Add(obs(now.Add(time.Duration(i)*time.Minute), a5000, "EU-RO-1", i%2 == 0))
	}
	assert.Equal(t, len(rec.Observations), reputation.MaxObservations)
	assert.Equal(t, rec.Observations[0].At, now.Add(5*time.Minute), "the oldest went first")
	b, err := rec.Marshal()
	assert.NilError(t, err)
	back, err := reputation.Parse(b)
	assert.NilError(t, err)
	assert.DeepEqual(t, back, rec)
}

// A record is bounded in size and in observations: a planted or corrupt
// artifact cannot make provision read or rank an unbounded one.
func TestParseRefusesARecordBeyondItsBounds(t *testing.T) {
	over := reputation.Record{Version: reputation.RecordVersion}
	for i := range reputation.MaxObservations + 1 {
		over.Observations = append(over.Observations, obs(now.Add(time.Duration(i)*time.Second), a5000, "EU-RO-1", true))
	}
	b, err := json.Marshal(over)
	assert.NilError(t, err)
	_, err = reputation.Parse(b)
	assert.Check(t, is.ErrorContains(err, "2001 observations; want at most 2000"))

	big := []byte(`{"version":1,"observations":[]}` + strings.Repeat(" ", reputation.MaxRecordBytes))
	_, err = reputation.Parse(big)
	assert.Check(t, is.ErrorContains(err, "want at most 2097152"))
}

func TestParseRejectsBadRecords(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", `{`, "want a JSON object"},
		{"unknown field", `{"version":1,"observations":[],"extra":1}`, `unknown field "extra"`},
		{"wrong version", `{"version":2,"observations":[]}`, "version 2; want 1"},
		{"no time", `{"version":1,"observations":[{"gpu":"g","dataCenter":"EU-RO-1","ok":true,"seconds":1}]}`, `observation 0: "at" is missing`},
		{"no gpu", `{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","dataCenter":"EU-RO-1","ok":true,"seconds":1}]}`, `"gpu" is empty`},
		{"no data center", `{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"g","ok":true,"seconds":1}]}`, `"dataCenter" is empty`},
		{"negative seconds", `{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"g","dataCenter":"X","ok":true,"seconds":-1}]}`, "seconds -1; want 0 or more"},
		{"a machine id that is not one", `{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"g","dataCenter":"X","machine":"m1\n::warning::x","ok":true,"seconds":1}]}`,
			`machine "m1\n::warning::x"; want RunPod's machine id`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reputation.Parse([]byte(tc.in))
			assert.ErrorContains(t, err, tc.want)
			assert.Check(t, !errors.Is(err, nil))
		})
	}
}

// on is an observation of the A5000 in EU-RO-1 on one machine.
func on(at time.Time, machine string, ok bool) reputation.Observation {
	o := obs(at, a5000, "EU-RO-1", ok)
	o.Machine = machine
	return o
}

// A machine is held bad by its own evidence of the last MachineHold: one
// failure and no success is enough (deleting its next pod before the proof
// costs seconds), a success as well keeps it, old failures are forgotten.
func TestBadMachine(t *testing.T) {
	h := time.Hour
	hold := reputation.DefaultParams.MachineHold
	tests := []struct {
		name string
		obs  []reputation.Observation
		at   time.Time
		want bool
	}{
		{name: "one failure holds it", obs: []reputation.Observation{on(now.Add(-h), "m1", false)}, at: now, want: true},
		{name: "a failure and a success do not", obs: []reputation.Observation{on(now.Add(-2*h), "m1", false), on(now.Add(-h), "m1", true)}, at: now},
		{name: "a flaky machine: two failures in three", at: now, want: true,
			obs: []reputation.Observation{on(now.Add(-3*h), "m1", false), on(now.Add(-2*h), "m1", true), on(now.Add(-h), "m1", false)}},
		{name: "held until its failure is MachineHold old", obs: []reputation.Observation{on(now, "m1", false)}, at: now.Add(hold), want: true},
		{name: "released after", obs: []reputation.Observation{on(now, "m1", false)}, at: now.Add(hold + time.Second)},
		{name: "another machine's failure says nothing", obs: []reputation.Observation{on(now.Add(-h), "m2", false)}, at: now},
		{name: "an unknown machine is never held", obs: []reputation.Observation{on(now.Add(-h), "", false)}, at: now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := reputation.Record{}
			rec.Add(tc.obs...)
			bad, why := reputation.New(rec, tc.at, reputation.DefaultParams).BadMachine("m1")
			assert.Check(t, is.Equal(bad, tc.want), why)
			assert.Check(t, is.Equal(why != "", tc.want))
		})
	}
}

// The case: one bad machine among good ones in a data center keeps
// taking placements. Judged by data center alone (records without machines)
// the pair looks bad, is quarantined and its data center poisons the other
// types' prior there; judged by machine, the bad one is held (its pods are
// deleted before their proof), the pair is judged by its good machines and
// the data center's pool counts the bad machine once.
func TestOneBadMachineAmongGoodOnes(t *testing.T) {
	var withMachines, withoutMachines reputation.Record
	for i := range 20 {
		at := now.Add(time.Duration(i-20) * time.Hour)
		good := on(at, fmt.Sprintf("good%d", i%3), true)
		bad := on(at.Add(30*time.Minute), "bad", false)
		withMachines.Add(good, bad)
		good.Machine, bad.Machine = "", ""
		withoutMachines.Add(good, bad)
	}
	pair := reputation.Pair{GPU: a5000, Cloud: "SECURE", DataCenter: "EU-RO-1"}
	other := reputation.Pair{GPU: l4, Cloud: "SECURE", DataCenter: "EU-RO-1"}

	old := reputation.New(withoutMachines, now, reputation.DefaultParams)
	assert.Check(t, old.Estimate(pair).Failure > 0.4, "by data center: %.3f", old.Estimate(pair).Failure)
	assert.Check(t, !old.Estimate(pair).QuarantinedUntil.IsZero() || old.Estimate(pair).Failure > reputation.DefaultParams.Avoid)
	assert.Check(t, old.Estimate(other).Failure > reputation.DefaultParams.Avoid, "another type's prior there: %.3f", old.Estimate(other).Failure)

	e := reputation.New(withMachines, now, reputation.DefaultParams)
	bad, _ := e.BadMachine("bad")
	assert.Check(t, bad)
	est := e.Estimate(pair)
	assert.Check(t, est.Failure < 0.1, "by its good machines: %.3f", est.Failure)
	assert.Check(t, est.QuarantinedUntil.IsZero())
	assert.Check(t, is.Equal(fmt.Sprintf("%.2f", est.Screened), "0.50"), "half its placements land on the held machine")
	assert.Check(t, e.Estimate(other).Failure < 0.15, "the bad machine counts once in its data center's pool: %.3f", e.Estimate(other).Failure)
}

// A data center whose placements mostly land on a held machine is left out
// of the pin when another has none; with every data center's placements held
// the candidate is doubtful and goes after one that works.
func TestRankAvoidsPlacementsOnHeldMachines(t *testing.T) {
	rec := reputation.Record{}
	for i := range 4 {
		at := now.Add(time.Duration(i-8) * time.Hour)
		rec.Add(on(at, "bad", false), on(at.Add(time.Minute), "bad", false), on(at.Add(2*time.Minute), "good", true))
		o := obs(at, a5000, "US-TX-3", true)
		o.Machine = "tx"
		rec.Add(o)
	}
	assert.DeepEqual(t, summary(build(&rec, now)), []string{"live-1 RTX A5000@US-TX-3", "live-2 L4@any", "static-big-1 H100 80GB HBM3@any"})
}

// A record written before observations named their machine reads as before.
func TestRecordWithAndWithoutMachines(t *testing.T) {
	old := `{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"g","dataCenter":"EU-RO-1","ok":false,"seconds":30}]}`
	rec, err := reputation.Parse([]byte(old))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(rec.Observations[0].Machine, ""))
	e := reputation.New(rec, now, reputation.DefaultParams)
	assert.Check(t, is.Equal(e.HeldMachines(), 0))

	rec.Observations[0].Machine = "m7xk2"
	b, err := rec.Marshal()
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), `"machine": "m7xk2"`))
	back, err := reputation.Parse(b)
	assert.NilError(t, err)
	assert.DeepEqual(t, back, rec)
}
