package spend

import (
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// run420 is a run with the default bounds (420 s startup, 1 h lifetime) under ceiling.
func run420(ceiling money.Amount) Run {
	return Run{Ceiling: ceiling, HasCeiling: true, StartupTimeout: 420 * time.Second, Lifetime: time.Hour}
}

func TestRunRefuseCreate(t *testing.T) {
	half := money.PerHour(0.5)
	one := Candidate(half, 420*time.Second, time.Hour) // $0.558334
	tests := []struct {
		name       string
		run        Run
		price      money.Rate
		priceKnown bool
		want       string // "" : the create fits
	}{
		{name: "no ceiling", run: Run{}, price: half, priceKnown: false},
		{name: "exactly at the ceiling", run: run420(one), price: half, priceKnown: true},
		{name: "a micro-dollar past it", run: run420(one - 1), price: half, priceKnown: true,
			want: "max_run_spend_usd $0.56: creating candidate live-1 (NVIDIA RTX A4000 at $0.50/h) could bring the run to $0.5583 " +
				"(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds 3600 at its price); no pod was created for it"},
		{name: "rejected pods and the lane's other pods count", run: func() Run {
			r := run420(one + 20*money.Cent)
			r.SpentBound, r.Committed = 15*money.Cent, 10*money.Cent
			return r
		}(), price: half, priceKnown: true,
			want: "(rejected pods $0.1500 + the lane's other pods at their worst case $0.1000 + startup_timeout_seconds 420"},
		{name: "no catalog price", run: run420(money.Dollar), priceKnown: false,
			want: "candidate live-1 (NVIDIA RTX A4000) has no known price and max_run_spend_usd is set; no pod was created for it"},
		{name: "a lane pod of unknown price", run: func() Run { r := run420(money.Dollar); r.CommittedUnknown = true; return r }(), price: half, priceKnown: true,
			want: "a pod of this lane has no known price, so candidate live-1 (NVIDIA RTX A4000) could not be bounded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.run.RefuseCreate("live-1", "NVIDIA RTX A4000", tt.price, tt.priceKnown)
			if tt.want == "" {
				assert.Equal(t, got, "")
				return
			}
			assert.Check(t, is.Contains(got, tt.want))
		})
	}
}

func TestRunRefuseRunning(t *testing.T) {
	catalog, billed := money.PerHour(0.5), money.PerHour(0.75)
	atBilled := Candidate(billed, 420*time.Second, time.Hour)
	assert.Equal(t, run420(atBilled/2).RefuseRunning(catalog, catalog, true), "", "the catalog price was checked before the create")
	assert.Equal(t, run420(atBilled/2).RefuseRunning(billed, catalog, false), "", "an unknown billed price")
	assert.Equal(t, run420(atBilled).RefuseRunning(billed, catalog, true), "", "exactly at the ceiling")
	assert.Equal(t, run420(atBilled-money.Cent).RefuseRunning(billed, catalog, true),
		"max_run_spend_usd $0.83: RunPod bills this pod at $0.7500/h (catalog $0.50/h), which could bring the run to $0.8375 "+
			"(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds 3600 at that price): not accepted")
	assert.Equal(t, Run{}.RefuseRunning(billed, catalog, true), "", "no ceiling")
}

func TestRunBounds(t *testing.T) {
	t0 := time.Date(2026, 10, 14, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, RejectedBound(money.PerHour(0.3), money.PerHour(0.36), t0, t0.Add(10*time.Minute)), 60*money.Cent/10,
		"the higher of billed and catalog, from creation to deletion")
	assert.Equal(t, RejectedBound(money.PerHour(0.3), 0, t0, t0.Add(-time.Minute)), money.Amount(0), "a clock going back bills nothing")
	assert.Equal(t, run420(0).UnconfirmedBound(0, money.PerHour(3.6)), Candidate(money.PerHour(3.6), 420*time.Second, time.Hour))
	assert.Equal(t, run420(5*money.Dollar).Note(), "; max_run_spend_usd $5.00: no create that could pass it is made")
	assert.Equal(t, Run{}.Note(), "")
}

func TestLiveAndRetainedBounds(t *testing.T) {
	assert.Equal(t, LiveBound(money.PerHour(0.4), time.Hour, 10*money.Cent), 30*money.Cent, "its bound less what billing shows")
	assert.Equal(t, LiveBound(money.PerHour(0.4), time.Hour, money.Dollar), -60*money.Cent, "billing may show more than the bound")
	assert.Equal(t, Retained(money.PerHour(0.25), 24*time.Hour), 6*money.Dollar)
}
