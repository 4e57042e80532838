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
// their bound (Create.OwnUSD), as billing shows charges with a delay. A
// create is refused, with the numbers, when spent + in flight + its worst
// case would pass a limit; spend that cannot be read at all (no billing and
// no record) refuses too, as does an unreadable listing.
package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits is the configured budget; a zero limit is not set.
type Limits struct {
	DailyUSD   float64
	MonthlyUSD float64
}

// Set reports whether any limit is set.
func (l Limits) Set() bool { return l.DailyUSD > 0 || l.MonthlyUSD > 0 }

// Lanes a create comes from.
const (
	LanePod        = "pod"
	LaneServerless = "serverless"
)

// Create is one create a lane is about to make.
type Create struct {
	Lane string // LanePod or LaneServerless
	What string // the candidate or attempt, for the message
	// WorstCaseUSD is the most the create can cost: a pod's price for its
	// whole startup and lifetime bounds, a Serverless attempt's reservations.
	WorstCaseUSD float64
	// OwnUSD bounds what the lane's own pods so far can cost in all (its
	// rejected pods' bound, its handed-over and lost pods' worst case: what
	// max_run_spend_usd counts), and OwnPods are their ids. RunPod's billing
	// shows a pod's charges with a delay and a deleted pod is in no listing,
	// so the check counts OwnUSD less what billing already shows for
	// OwnPods, and none of OwnPods again among the live pods.
	OwnUSD  float64
	OwnPods []string
}

// Checker is the one budget check both lanes call right before a create. A
// nil error means the create fits; ErrOverBudget (a *RefusedError) means it
// does not; any other error means the budget could not be checked, which
// refuses the create as well.
type Checker interface {
	Check(ctx context.Context, c Create) (Usage, error)
}

// Spend sources.
const (
	SourceBilling = "RunPod billing"
	SourceRecord  = "the cost history's record"
)

// Usage is what a check saw: the budget used so far and what it was told.
type Usage struct {
	Limits
	SpentToday, SpentMonth float64
	Source                 string // SourceBilling or SourceRecord, with the record's age
	InFlightUSD            float64
	InFlight               []string // the live pods and endpoints counted, for messages
	WorstCaseUSD           float64
	At                     time.Time
}

// String is the summary line: "today $0.45 of $0.50 spent (RunPod billing),
// $0.00 in flight; this month $3.10 of $50.00".
func (u Usage) String() string {
	var parts []string
	if u.DailyUSD > 0 {
		parts = append(parts, fmt.Sprintf("today %s of %s", usd(u.SpentToday), usd(u.DailyUSD)))
	}
	if u.MonthlyUSD > 0 {
		parts = append(parts, fmt.Sprintf("this month %s of %s", usd(u.SpentMonth), usd(u.MonthlyUSD)))
	}
	return fmt.Sprintf("%s spent (%s), %s in flight (%d live pod(s) and endpoint(s))", strings.Join(parts, "; "), u.Source, usd(u.InFlightUSD), len(u.InFlight))
}

// ErrOverBudget classifies a refused create.
var ErrOverBudget = errors.New("over the GPU CI budget")

// RefusedError is a create the budget refused.
type RefusedError struct {
	Usage
	Create Create
	Period string // "daily" or "monthly"
	Limit  float64
	Spent  float64 // the period's spend
	// Created is the pod a re-check after its create refused (Recheck):
	// it exists and is to be deleted at once. Empty: nothing was created.
	Created string
}

func (e *RefusedError) Error() string {
	if e.Created != "" {
		return fmt.Sprintf("%s budget %s: %s spent (%s) + %s in flight (pods created before this one) + this pod's worst case %s = %s passes it; "+
			"another lane's pod took the budget first: %s %s (pod %s) is deleted at once", e.Period, usd(e.Limit), usd(e.Spent), e.Source, usd(e.InFlightUSD),
			usd(e.WorstCaseUSD), usd(e.Spent+e.InFlightUSD+e.WorstCaseUSD), e.Create.Lane, e.Create.What, e.Created)
	}
	return fmt.Sprintf("%s budget %s: %s spent (%s) + %s in flight + this create's worst case %s = %s would pass it; "+
		"%s %s was not created", e.Period, usd(e.Limit), usd(e.Spent), e.Source, usd(e.InFlightUSD), usd(e.WorstCaseUSD),
		usd(e.Spent+e.InFlightUSD+e.WorstCaseUSD), e.Create.Lane, e.Create.What)
}

// Unwrap makes errors.Is(err, ErrOverBudget) hold.
func (e *RefusedError) Unwrap() error { return ErrOverBudget }

// decide refuses a create whose worst case would pass a limit.
func decide(u Usage, c Create) error {
	for _, p := range []struct {
		name         string
		limit, spent float64
	}{{"daily", u.DailyUSD, u.SpentToday}, {"monthly", u.MonthlyUSD, u.SpentMonth}} {
		if p.limit > 0 && p.spent+u.InFlightUSD+c.WorstCaseUSD > p.limit+1e-9 {
			return &RefusedError{Usage: u, Create: c, Period: p.name, Limit: p.limit, Spent: p.spent}
		}
	}
	return nil
}

// usd renders dollars to the cent, as budgets are read.
func usd(v float64) string { return fmt.Sprintf("$%.2f", v) }
