package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/org/runpod-gpu/pkg/plan"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
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
	u, err := r.deps.Budget.Check(ctx, r.budgetCreate(c, r.ownPods()))
	r.res.Budget = &u
	switch {
	case errors.Is(err, spend.ErrOverBudget):
		return r.fail(spend.ErrOverBudget, err.Error())
	case err != nil:
		return r.fail(ErrStopped, err.Error())
	}
	return nil
}

// budgetCreate is candidate c's create as the budget counts it: its worst
// case, and the lane's own pods (own) at their bound.
func (r *run) budgetCreate(c plan.Candidate, own []string) spend.Create {
	price := c.PricePerHour
	return spend.Create{Lane: spend.LanePod, What: fmt.Sprintf("candidate %s (%s at %s)", c.Name, c.GPUID, price.Format(money.Cents)),
		WorstCaseUSD: spend.Candidate(price, r.cfg.StartupTimeout(), r.cfg.Lifetime()), OwnUSD: r.req.Committed + r.res.SpentBound, OwnPods: own}
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
