package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/plan"
)

// checkBudget asks the repository's budget, shared with the Serverless lane,
// whether candidate c's worst case (its price for its whole startup and
// lifetime bounds) still fits, right before its create. A refusal, or a
// budget that cannot be checked, stops the run before the create.
func (r *run) checkBudget(ctx context.Context, c plan.Candidate) error {
	if r.deps.Budget == nil {
		return nil
	}
	if !c.PriceKnown {
		return r.fail(ErrStopped, fmt.Sprintf("candidate %s (%s) has no known price and a budget is set; no pod was created for it", c.Name, c.GPUID))
	}
	worst := CandidateWorstCase(c.PricePerHour, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	u, err := r.deps.Budget.Check(ctx, budget.Create{Lane: budget.LanePod,
		What: fmt.Sprintf("candidate %s (%s at $%.2f/h)", c.Name, c.GPUID, c.PricePerHour), WorstCaseUSD: worst})
	r.res.Budget = &u
	switch {
	case errors.Is(err, budget.ErrOverBudget):
		return r.fail(budget.ErrOverBudget, err.Error())
	case err != nil:
		return r.fail(ErrStopped, err.Error())
	}
	return nil
}
