package serverless

import (
	"context"
	"fmt"

	"github.com/org/runpod-gpu/pkg/budget"
)

// WorstCaseUSD is the most one attempt can cost: what the ledger reserves
// for its setup and its job (each at least the ledger's least stage).
func (l *Lane) WorstCaseUSD() float64 {
	floor := l.Ledger.Caps.MinStage
	return float64(max(l.Settings.SetupReservationCents(), floor)+max(l.Settings.JobReservationCents(), floor)) / 100
}

// checkBudget asks the repository's budget, shared with the pod lane,
// whether the attempt's worst case still fits, before its first create.
func (l *Lane) checkBudget(ctx context.Context, attempt string) error {
	if l.Budget == nil {
		return nil
	}
	u, err := l.Budget.Check(ctx, budget.Create{Lane: budget.LaneServerless, What: "attempt " + attempt, WorstCaseUSD: l.WorstCaseUSD()})
	l.BudgetUsage = &u
	if err != nil {
		return fmt.Errorf("setup (nothing created): %w", err)
	}
	return nil
}
