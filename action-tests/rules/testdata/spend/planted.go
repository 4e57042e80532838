// Package planted reckons spend outside pkg/spend on purpose:
// TestSpendRuleCatchesAPlantedWorstCase reads it. It is testdata, never built.
package planted

import "time"

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
