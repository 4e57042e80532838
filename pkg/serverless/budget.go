package serverless

import (
	"context"
	"fmt"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

// attemptBound is the most one attempt can cost, as the spend room reckons
// it: what the ledger reserves for its setup and its job (each at least the
// ledger's least stage).
func (l *Lane) attemptBound() money.Amount {
	return l.Ledger.Caps.Attempt(l.Settings.SetupReservation(), l.Settings.JobReservation())
}

// checkBudget asks the repository's budget, shared with the pod lane,
// whether the attempt's worst case still fits, before its first create.
func (l *Lane) checkBudget(ctx context.Context, attempt string) error {
	if l.Budget == nil {
		return nil
	}
	u, err := l.Budget.Check(ctx, spend.Create{Lane: spend.LaneServerless, What: "attempt " + attempt, WorstCaseUSD: l.attemptBound()})
	l.BudgetUsage = &u
	if err != nil {
		return fmt.Errorf("setup (nothing created): %w", err)
	}
	return nil
}
