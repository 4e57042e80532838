package spend

import (
	"errors"
	"testing"

	"github.com/org/runpod-gpu/pkg/money"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// DecideBudget refuses a create only when a limit that is set would be passed;
// reaching a limit exactly is allowed, and an unset limit refuses nothing.
func TestDecideRefusesOnlyWhatPassesASetLimit(t *testing.T) {
	tests := []struct {
		name       string
		usage      Usage
		worst      money.Amount
		wantPeriod string // "" when allowed
	}{
		{name: "daily only, inside", usage: Usage{Limits: Limits{DailyUSD: usd(0.50)}, SpentToday: usd(0.30), SpentMonth: usd(9)}, worst: usd(0.10)},
		{name: "daily only, exactly at it", usage: Usage{Limits: Limits{DailyUSD: usd(0.50)}, SpentToday: usd(0.40)}, worst: usd(0.10)},
		{name: "daily only, past it", usage: Usage{Limits: Limits{DailyUSD: usd(0.50)}, SpentToday: usd(0.45)}, worst: usd(0.10), wantPeriod: "daily"},
		{name: "in flight counts", usage: Usage{Limits: Limits{DailyUSD: usd(0.50)}, SpentToday: usd(0.30), InFlightUSD: usd(0.15)}, worst: usd(0.10), wantPeriod: "daily"},
		{name: "monthly only, inside", usage: Usage{Limits: Limits{MonthlyUSD: usd(50)}, SpentToday: usd(3), SpentMonth: usd(40)}, worst: usd(1)},
		{name: "monthly only, past it", usage: Usage{Limits: Limits{MonthlyUSD: usd(50)}, SpentMonth: usd(49.5)}, worst: usd(1), wantPeriod: "monthly"},
		{name: "both, the month passes", usage: Usage{Limits: Limits{DailyUSD: usd(5), MonthlyUSD: usd(50)}, SpentToday: usd(1), SpentMonth: usd(49.5)}, worst: usd(1), wantPeriod: "monthly"},
		{name: "no limit", usage: Usage{SpentToday: usd(100), SpentMonth: usd(1000)}, worst: usd(10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := DecideBudget(tc.usage, Create{Lane: LanePod, What: "candidate 1", WorstCaseUSD: tc.worst})
			if tc.wantPeriod == "" {
				assert.NilError(t, err)
				return
			}
			var refused *RefusedError
			assert.Assert(t, errors.As(err, &refused), "got %v", err)
			assert.Check(t, is.Equal(refused.Period, tc.wantPeriod))
			assert.Check(t, errors.Is(err, ErrOverBudget))
		})
	}
}

// usd is a test's dollar figure as an exact amount.
func usd(v float64) money.Amount { return money.FromDollars(v) }
