package budget

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// decide refuses a create only when a limit that is set would be passed;
// reaching a limit exactly is allowed, and an unset limit refuses nothing.
func TestDecideRefusesOnlyWhatPassesASetLimit(t *testing.T) {
	tests := []struct {
		name       string
		usage      Usage
		worst      float64
		wantPeriod string // "" when allowed
	}{
		{name: "daily only, inside", usage: Usage{Limits: Limits{DailyUSD: 0.50}, SpentToday: 0.30, SpentMonth: 9}, worst: 0.10},
		{name: "daily only, exactly at it", usage: Usage{Limits: Limits{DailyUSD: 0.50}, SpentToday: 0.40}, worst: 0.10},
		{name: "daily only, past it", usage: Usage{Limits: Limits{DailyUSD: 0.50}, SpentToday: 0.45}, worst: 0.10, wantPeriod: "daily"},
		{name: "in flight counts", usage: Usage{Limits: Limits{DailyUSD: 0.50}, SpentToday: 0.30, InFlightUSD: 0.15}, worst: 0.10, wantPeriod: "daily"},
		{name: "monthly only, inside", usage: Usage{Limits: Limits{MonthlyUSD: 50}, SpentToday: 3, SpentMonth: 40}, worst: 1},
		{name: "monthly only, past it", usage: Usage{Limits: Limits{MonthlyUSD: 50}, SpentMonth: 49.5}, worst: 1, wantPeriod: "monthly"},
		{name: "both, the month passes", usage: Usage{Limits: Limits{DailyUSD: 5, MonthlyUSD: 50}, SpentToday: 1, SpentMonth: 49.5}, worst: 1, wantPeriod: "monthly"},
		{name: "no limit", usage: Usage{SpentToday: 100, SpentMonth: 1000}, worst: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := decide(tc.usage, Create{Lane: LanePod, What: "candidate 1", WorstCaseUSD: tc.worst})
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
