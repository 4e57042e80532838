package spend

import (
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// ErrLedgerBudget is matched when the Serverless ledger's caps refuse a
// reservation (pkg/serverless calls it ErrBudget).
var ErrLedgerBudget = errors.New("budget refused")

// LedgerCaps bound the Serverless ledger's reservations.
type LedgerCaps struct {
	MinStage money.Amount // every reservation is at least this
	MaxStage money.Amount // no stage may reserve more
	Total    money.Amount // all reservations of the ledger together
}

// DefaultLedgerCaps are the seed's: at least $1 and at most $3 a stage, $10 in all.
var DefaultLedgerCaps = LedgerCaps{MinStage: money.Dollar, MaxStage: 3 * money.Dollar, Total: 10 * money.Dollar}

// LedgerMax bounds any one amount the ledger holds or is asked for
// ($100,000): with at most the ledger's reservations no sum can overflow.
const LedgerMax = 100_000 * money.Dollar

// Validate refuses caps that cannot hold together; the message speaks in
// cents, the unit of the action's inputs.
func (c LedgerCaps) Validate() error {
	switch {
	case c.MinStage <= 0:
		return fmt.Errorf("ledger caps: min stage %d cents: want > 0", c.MinStage.CentsUp())
	case c.MaxStage < c.MinStage:
		return fmt.Errorf("ledger caps: max stage %d cents is below the min stage %d cents", c.MaxStage.CentsUp(), c.MinStage.CentsUp())
	case c.Total < c.MaxStage:
		return fmt.Errorf("ledger caps: total %d cents is below the max stage %d cents", c.Total.CentsUp(), c.MaxStage.CentsUp())
	case c.Total > LedgerMax:
		return fmt.Errorf("ledger caps: total %d cents is above the ledger's bound of %d", c.Total.CentsUp(), LedgerMax.CentsUp())
	}
	return nil
}

// Stage is what the ledger reserves for a stage that asked for asked: at
// least MinStage.
func (c LedgerCaps) Stage(asked money.Amount) money.Amount { return max(asked, c.MinStage) }

// Admit decides whether the ledger can take a reservation of stage asking
// for asked, when it already holds held and the same request's earlier stages
// add pending (also reserved if this one fits). path names the ledger in the
// refusal (ErrLedgerBudget).
func (c LedgerCaps) Admit(stage string, asked, held, pending money.Amount, path string) error {
	need := c.Stage(asked)
	if need > c.MaxStage || need > LedgerMax {
		return fmt.Errorf("%w: stage %s needs %s, above the per-stage cap of %s", ErrLedgerBudget, stage, need, c.MaxStage)
	}
	if held < 0 || pending < 0 || held+pending > LedgerMax*100_000 || held+pending+need > c.Total {
		also := ""
		if pending > 0 {
			also = fmt.Sprintf(" (and %s for the attempt's earlier stage)", pending)
		}
		return fmt.Errorf("%w: stage %s needs %s; the ledger %s already holds %s%s of the %s total cap",
			ErrLedgerBudget, stage, need, path, held, also, c.Total)
	}
	return nil
}

// StageEstimate is what d at price costs, rounded up to a cent, plus a
// one-cent allowance (ephemeral disk and rounding): what the ledger, which
// counts cents, estimates.
func StageEstimate(d time.Duration, price money.Rate) money.Amount {
	return (price.For(d).CentsUp() + 1).Amount()
}

// StageReservation is a stage's reservation: the estimate plus $1, because
// worker initialisation can bill before (or without) any job.
func StageReservation(d time.Duration, price money.Rate) money.Amount {
	return StageEstimate(d, price) + money.Dollar
}

// Attempt is the most one Serverless attempt can cost: what the ledger
// reserves for its setup and its job, each at least its least stage.
func (c LedgerCaps) Attempt(setup, job money.Amount) money.Amount {
	return c.Stage(setup) + c.Stage(job)
}
