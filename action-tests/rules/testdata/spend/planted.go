// Package planted reckons spend outside pkg/spend on purpose:
// TestSpendRuleCatchesAPlantedWorstCase reads it. It is testdata, never built.
package planted

import (
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// The worst case of a pod, reckoned where it is created.
func CandidateWorstCase(pricePerHour float64, startup, lifetime time.Duration) float64 {
	return pricePerHour * (startup + lifetime).Hours()
}

type LaneWorstCase struct{ Total float64 }

type run struct{ spent, ceiling float64 }

func (r *run) checkCeiling(worst float64) bool { return r.spent+worst <= r.ceiling }

// Not a decision: named for neither.
func (r *run) caseWorstOrder() {}

type ceilingNote string

func bounds(pricePerHour money.Rate, d time.Duration, tiers map[string]int) money.Amount {
	_ = money.PerHour(0.25).For(d)
	_ = pricePerHour.For(d)
	return money.Rate(tiers["a"]).For(d) + 0*money.Amount(len(timeFor(d)))
}

// Not a price: a For of something else passes.
func timeFor(d time.Duration) string { return schedule{}.For(d) }

type schedule struct{}

func (schedule) For(d time.Duration) string { return d.String() }
