package spend

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
)

// Candidate is the most one pod at price can cost: its whole startup budget,
// then accepted and kept for its whole lifetime bound.
func Candidate(price money.Rate, startupTimeout, lifetime time.Duration) money.Amount {
	return price.For(startupTimeout + lifetime)
}

// PlanWorstCase is the most a run can spend under a plan: every candidate
// created and kept until the startup timeout, then the dearest one accepted
// and kept for the whole lifetime backstop. It is an upper bound, not an
// estimate.
type PlanWorstCase struct {
	Amount money.Amount
	// Unpriced lists candidates without a catalog price; when non-empty Amount excludes them.
	Unpriced []string
}

// OfPlan computes p's worst case for the given startup timeout and lifetime.
func OfPlan(p plan.Plan, startupTimeout, lifetime time.Duration) PlanWorstCase {
	var w PlanWorstCase
	var dearest money.Rate
	for _, c := range p.Candidates {
		if !c.PriceKnown {
			w.Unpriced = append(w.Unpriced, c.Name)
			continue
		}
		price := c.PricePerHour
		w.Amount += price.For(startupTimeout)
		dearest = max(dearest, price)
	}
	w.Amount += dearest.For(lifetime)
	return w
}

// String renders the bound with its caveat, e.g. "$3.21" or "$3.21 + 2 unpriced candidates".
func (w PlanWorstCase) String() string {
	s := w.Amount.Format(money.Cents)
	if len(w.Unpriced) > 0 {
		s += fmt.Sprintf(" + %d unpriced candidate(s) (%s)", len(w.Unpriced), strings.Join(w.Unpriced, ", "))
	}
	return s
}

// LaneWorstCase is the most a lane's pods can cost: what earlier pods of the
// lane committed to, plus each tier's plan now.
type LaneWorstCase struct {
	Committed money.Amount
	Tiers     []string // the tiers, as named in messages
	PerTier   []PlanWorstCase
}

// Total is the bound over every tier, with the pods committed before.
func (w LaneWorstCase) Total() money.Amount {
	total := w.Committed
	for _, t := range w.PerTier {
		total += t.Amount
	}
	return total
}

// Rerun is what a host-fault re-run (once per tier) could add: every tier's plan again.
func (w LaneWorstCase) Rerun() money.Amount { return w.Total() - w.Committed }

// String renders "$T across 2 tier(s) (ampere $a, hopper $b)".
func (w LaneWorstCase) String() string {
	parts := make([]string, len(w.Tiers))
	for i, t := range w.Tiers {
		parts[i] = fmt.Sprintf("%s %s", t, w.PerTier[i])
	}
	if w.Committed > 0 {
		parts = append(parts, "the lane's earlier pods "+w.Committed.Format(money.Cents))
	}
	total := w.Total().Format(money.Cents)
	if n := w.Unpriced(); n > 0 {
		total += fmt.Sprintf(" + %d unpriced candidate(s)", n)
	}
	return fmt.Sprintf("%s across %d tier(s) (%s)", total, len(w.Tiers), strings.Join(parts, ", "))
}

// Unpriced counts the candidates without a price, which no bound covers.
func (w LaneWorstCase) Unpriced() int {
	n := 0
	for _, t := range w.PerTier {
		n += len(t.Unpriced)
	}
	return n
}
