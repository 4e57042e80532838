// Package budget is GPU CI's one budget, per day and per month, shared by
// the pod lane and the Serverless lane: right before any create, each lane
// asks the same Checker whether the create's worst case still fits.
//
// What counts is what the RunPod account of the lane's key is charged:
// RunPod bills per account and cannot say which repository a deleted pod
// served, so the budget is the repository's when the repository has its own
// key, and the organisation's when its repositories share one (an
// organisation secret). Spent is read from RunPod's billing (today's and
// this month's day buckets, UTC); when billing cannot be read, from the cost
// history's spend record (Record): a lower bound, since it ends with the
// last day the history collected and leaves out costs its evidence does not
// show, which the check's message names. In flight is every live pod and
// Serverless endpoint of the suite on the account, each at its price for its
// whole bound (startup and lifetime, or the reaper's), less what billing
// already shows for it: what it may still cost; the lane's own pods count at
// their bound (spend.Create.OwnUSD), as billing shows charges with a delay. The
// decision is the spend room's (spend.DecideBudget): a create is refused,
// with the numbers, when spent + in flight + its worst case would pass a
// limit. This package only reads; spend that cannot be read at all (no
// billing and no record) refuses too, as does an unreadable listing.
package budget

import (
	"context"

	"github.com/org/runpod-gpu/pkg/spend"
)

// Checker is the one budget check both lanes call right before a create. A
// nil error means the create fits; spend.ErrOverBudget (a
// *spend.RefusedError) means it does not; any other error means the budget
// could not be checked, which refuses the create as well.
type Checker interface {
	Check(ctx context.Context, c spend.Create) (spend.Usage, error)
}

// Spend sources.
const (
	SourceBilling = "RunPod billing"
	SourceRecord  = "the cost history's record"
)
