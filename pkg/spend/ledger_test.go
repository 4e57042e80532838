package spend

import (
	"errors"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"gotest.tools/v3/assert"
)

func TestLedgerCapsAdmit(t *testing.T) {
	c := DefaultLedgerCaps
	tests := []struct {
		name                 string
		asked, held, pending money.Amount
		wantErr              string
	}{
		{name: "fits", asked: 136 * money.Cent},
		{name: "raised to the least stage", asked: money.Cent, held: 9 * money.Dollar},
		{name: "above the stage cap", asked: 301 * money.Cent, wantErr: "budget refused: stage job needs $3.01, above the per-stage cap of $3.00"},
		{name: "the least stage passes the total", asked: money.Cent, held: 9*money.Dollar + money.Cent,
			wantErr: "budget refused: stage job needs $1.00; the ledger l.json already holds $9.01 of the $10.00 total cap"},
		{name: "with the attempt's earlier stage", asked: 2 * money.Dollar, held: 7 * money.Dollar, pending: 136 * money.Cent,
			wantErr: "already holds $7.00 (and $1.36 for the attempt's earlier stage) of the $10.00 total cap"},
		{name: "exactly at the total", asked: 2 * money.Dollar, held: 8 * money.Dollar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Admit("job", tt.asked, tt.held, tt.pending, "l.json")
			if tt.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Assert(t, errors.Is(err, ErrLedgerBudget))
		})
	}
}

func TestLedgerCapsValidate(t *testing.T) {
	assert.NilError(t, DefaultLedgerCaps.Validate())
	assert.ErrorContains(t, LedgerCaps{}.Validate(), "min stage 0 cents")
	assert.ErrorContains(t, LedgerCaps{MinStage: money.Dollar, MaxStage: 50 * money.Cent, Total: 10 * money.Dollar}.Validate(), "max stage 50 cents is below the min stage 100 cents")
	assert.ErrorContains(t, LedgerCaps{MinStage: money.Dollar, MaxStage: 3 * money.Dollar, Total: 2 * money.Dollar}.Validate(), "total 200 cents")
	assert.ErrorContains(t, LedgerCaps{MinStage: money.Dollar, MaxStage: money.Dollar, Total: LedgerMax + money.Cent}.Validate(), "above the ledger's bound of 10000000")
}

func TestStageReservation(t *testing.T) {
	ceiling := money.PerHour(0.70)
	assert.Equal(t, StageEstimate(30*time.Minute, ceiling), 36*money.Cent, "$0.35 rounded up to a cent, plus a cent")
	assert.Equal(t, StageEstimate(time.Hour, ceiling), 71*money.Cent, "exact cents take only the allowance")
	assert.Equal(t, StageReservation(30*time.Minute, ceiling), 136*money.Cent)
	assert.Equal(t, DefaultLedgerCaps.Attempt(20*money.Cent, 125*money.Cent), 225*money.Cent, "each stage at least the least stage")
}
