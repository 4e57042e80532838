package spend

import (
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"gotest.tools/v3/assert"
)

func priced(prices ...float64) plan.Plan {
	var p plan.Plan
	for i, v := range prices {
		p.Candidates = append(p.Candidates, plan.Candidate{N: i + 1, Name: "c", PricePerHour: money.PerHour(v), PriceKnown: true})
	}
	return p
}

func TestCandidate(t *testing.T) {
	assert.Equal(t, Candidate(money.PerHour(2), 30*time.Minute, 90*time.Minute), 4*money.Dollar)
	assert.Equal(t, Candidate(money.PerHour(0.25), 20*time.Second, time.Hour), money.Amount(251_389), "rounded up to the micro-dollar")
	assert.Equal(t, Candidate(0, time.Hour, time.Hour), money.Amount(0))
}

func TestOfPlan(t *testing.T) {
	tests := []struct {
		name                     string
		p                        plan.Plan
		startupTimeout, lifetime time.Duration
		wantFine, wantString     string
	}{
		{name: "every candidate's startup, the dearest's lifetime",
			// (0.49+0.69+0.86+1.64+2.99) × 420/3600 + 2.99 × 1
			p: priced(0.49, 0.69, 0.86, 1.64, 2.99), startupTimeout: 420 * time.Second, lifetime: time.Hour,
			wantFine: "$3.7682", wantString: "$3.77"},
		{name: "per-pod prices bound the run",
			// (0.34+0.49+0.69+0.89+0.86+2.99) × 420/3600 + 2.99
			p: priced(0.34, 0.49, 0.69, 0.89, 0.86, 2.99), startupTimeout: 420 * time.Second, lifetime: time.Hour,
			wantFine: "$3.7203", wantString: "$3.72"},
		{name: "unpriced candidates are named, not counted",
			// 0.5×0.5 + 1.0×0.5 + 1.0×2
			p: plan.Plan{Candidates: []plan.Candidate{
				{Name: "live-1", PricePerHour: money.PerHour(0.5), PriceKnown: true},
				{Name: "live-2", PricePerHour: money.PerHour(1.0), PriceKnown: true},
				{Name: "static-ada-1"},
			}}, startupTimeout: 30 * time.Minute, lifetime: 2 * time.Hour,
			wantFine: "$2.7500", wantString: "$2.75 + 1 unpriced candidate(s) (static-ada-1)"},
		{name: "no candidates", wantFine: "$0.0000", wantString: "$0.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := OfPlan(tt.p, tt.startupTimeout, tt.lifetime)
			assert.Equal(t, w.Amount.Format(money.Fine), tt.wantFine)
			assert.Equal(t, w.String(), tt.wantString)
		})
	}
}

func TestLaneWorstCase(t *testing.T) {
	w := LaneWorstCase{Committed: 50 * money.Cent, Tiers: []string{"ampere", "any reviewed tier"},
		PerTier: []PlanWorstCase{{Amount: money.Dollar}, {Amount: 2 * money.Dollar, Unpriced: []string{"x"}}}}
	assert.Equal(t, w.Total(), 3*money.Dollar+50*money.Cent)
	assert.Equal(t, w.Rerun(), 3*money.Dollar)
	assert.Equal(t, w.Unpriced(), 1)
	assert.Equal(t, w.String(), "$3.50 + 1 unpriced candidate(s) across 2 tier(s) (ampere $1.00, any reviewed tier $2.00 + 1 unpriced candidate(s) (x), the lane's earlier pods $0.50)")
}
