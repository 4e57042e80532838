package spend

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
)

// TestLedgerCapsAdmitAtTheCaps: a reservation exactly at a cap is admitted;
// one micro-dollar over is refused. The caps are limits, not fences below them.
func TestLedgerCapsAdmitAtTheCaps(t *testing.T) {
	caps := LedgerCaps{MinStage: money.Dollar, MaxStage: 3 * money.Dollar, Total: 10 * money.Dollar}
	tests := []struct {
		name                 string
		caps                 LedgerCaps
		asked, held, pending money.Amount
		wantErr              bool
	}{
		{name: "stage at the per-stage cap", caps: caps, asked: 3 * money.Dollar},
		{name: "stage over the per-stage cap", caps: caps, asked: 3*money.Dollar + 1, wantErr: true},
		{name: "sum at the total cap", caps: caps, asked: 2 * money.Dollar, held: 7 * money.Dollar, pending: money.Dollar},
		{name: "sum over the total cap", caps: caps, asked: 2 * money.Dollar, held: 7 * money.Dollar, pending: money.Dollar + 1, wantErr: true},
		{name: "stage at the ledger's bound", caps: LedgerCaps{MaxStage: LedgerMax, Total: LedgerMax}, asked: LedgerMax},
		{name: "stage over the ledger's bound", caps: LedgerCaps{MaxStage: LedgerMax + 1, Total: 2 * LedgerMax}, asked: LedgerMax + 1, wantErr: true},
		{name: "large holdings under the total", caps: LedgerCaps{MaxStage: money.Dollar, Total: 2 * LedgerMax}, asked: money.Dollar, held: LedgerMax},
		{name: "negative holding", caps: caps, asked: money.Dollar, held: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.caps.Admit("prepare", tt.asked, tt.held, tt.pending, "ledger.json")
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrLedgerBudget)
				return
			}
			assert.NilError(t, err)
		})
	}
}

// TestLaneWorstCaseStringWithoutExtras: no earlier pods and no unpriced
// candidate add nothing to the line.
func TestLaneWorstCaseStringWithoutExtras(t *testing.T) {
	w := LaneWorstCase{Tiers: []string{"ampere"}, PerTier: []PlanWorstCase{{Amount: money.Dollar}}}
	assert.Equal(t, w.String(), "$1.00 across 1 tier(s) (ampere $1.00)")
}
