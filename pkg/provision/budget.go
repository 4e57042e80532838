package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/plan"
)

// checkBudget asks the repository's budget, shared with the Serverless lane,
// whether candidate c's worst case (its price for its whole startup and
// lifetime bounds) still fits, right before its create, with the lane's own
// pods so far at their bound: the other tiers' (Request.Committed) and this
// run's rejected ones, whose charges billing may not show yet. A refusal,
// or a budget that cannot be checked, stops the run before the create.
func (r *run) checkBudget(ctx context.Context, c plan.Candidate) error {
	if r.deps.Budget == nil {
		return nil
	}
	if !c.PriceKnown {
		return r.fail(ErrStopped, fmt.Sprintf("candidate %s (%s) has no known price and a budget is set; no pod was created for it", c.Name, c.GPUID))
	}
	worst := CandidateWorstCase(c.PricePerHour, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	u, err := r.deps.Budget.Check(ctx, budget.Create{Lane: budget.LanePod,
		What: fmt.Sprintf("candidate %s (%s at $%.2f/h)", c.Name, c.GPUID, c.PricePerHour), WorstCaseUSD: worst,
		OwnUSD: r.req.Committed + r.spentBound, OwnPods: r.ownPods()})
	r.res.Budget = &u
	switch {
	case errors.Is(err, budget.ErrOverBudget):
		return r.fail(budget.ErrOverBudget, err.Error())
	case err != nil:
		return r.fail(ErrStopped, err.Error())
	}
	return nil
}

// ownPods are the lane's pods the budget's OwnUSD bounds: the other tiers'
// and every pod this run created, but those kept for inspection (they bill
// on outside the bound, so the budget counts them among the live pods).
func (r *run) ownPods() []string {
	ids := slices.Clone(r.req.CommittedPods)
	for _, id := range r.created {
		if !slices.Contains(r.res.RetainedPodIDs, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
