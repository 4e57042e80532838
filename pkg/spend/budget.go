package spend

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// Limits is the configured budget, per UTC day and month; a zero limit is not set.
type Limits struct {
	DailyUSD   money.Amount
	MonthlyUSD money.Amount
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
	WorstCaseUSD money.Amount
	// OwnUSD bounds what the lane's own pods so far can cost in all (its
	// rejected pods' bound, its handed-over and lost pods' worst case: what
	// max_run_spend_usd counts), and OwnPods are their ids. RunPod's billing
	// shows a pod's charges with a delay and a deleted pod is in no listing,
	// so the budget counts OwnUSD less what billing already shows for
	// OwnPods, and none of OwnPods again among the live pods.
	OwnUSD  money.Amount
	OwnPods []string
}

// Usage is what a budget check saw: the budget used so far and what it was told.
type Usage struct {
	Limits
	SpentToday, SpentMonth money.Amount
	Source                 string // where the spend was read, with the record's age
	InFlightUSD            money.Amount
	InFlight               []string // the live pods and endpoints counted, for messages
	WorstCaseUSD           money.Amount
	At                     time.Time
}

// String is the summary line: "today $0.45 of $0.50 spent (RunPod billing),
// $0.00 in flight; this month $3.10 of $50.00".
func (u Usage) String() string {
	var parts []string
	if u.DailyUSD > 0 {
		parts = append(parts, fmt.Sprintf("today %s of %s", u.SpentToday, u.DailyUSD))
	}
	if u.MonthlyUSD > 0 {
		parts = append(parts, fmt.Sprintf("this month %s of %s", u.SpentMonth, u.MonthlyUSD))
	}
	return fmt.Sprintf("%s spent (%s), %s in flight (%d live pod(s) and endpoint(s))", strings.Join(parts, "; "), u.Source, u.InFlightUSD, len(u.InFlight))
}

// ErrOverBudget classifies a refused create.
var ErrOverBudget = errors.New("over the GPU CI budget")

// RefusedError is a create the budget refused.
type RefusedError struct {
	Usage
	Create Create
	Period string // "daily" or "monthly"
	Limit  money.Amount
	Spent  money.Amount // the period's spend
	// Created is the pod a re-check after its create refused: it exists and
	// is to be deleted at once. Empty: nothing was created.
	Created string
}

func (e *RefusedError) Error() string {
	total := e.Spent + e.InFlightUSD + e.WorstCaseUSD
	if e.Created != "" {
		return fmt.Sprintf("%s budget %s: %s spent (%s) + %s in flight (pods created before this one) + this pod's worst case %s = %s passes it; "+
			"another lane's pod took the budget first: %s %s (pod %s) is deleted at once", e.Period, e.Limit, e.Spent, e.Source, e.InFlightUSD,
			e.WorstCaseUSD, total, e.Create.Lane, e.Create.What, e.Created)
	}
	return fmt.Sprintf("%s budget %s: %s spent (%s) + %s in flight + this create's worst case %s = %s would pass it; "+
		"%s %s was not created", e.Period, e.Limit, e.Spent, e.Source, e.InFlightUSD, e.WorstCaseUSD,
		total, e.Create.Lane, e.Create.What)
}

// Unwrap makes errors.Is(err, ErrOverBudget) hold.
func (e *RefusedError) Unwrap() error { return ErrOverBudget }

// DecideBudget refuses (a *RefusedError) a create whose worst case would
// take spent + in flight past a limit; nil means it fits.
func DecideBudget(u Usage, c Create) error {
	for _, p := range []struct {
		name         string
		limit, spent money.Amount
	}{{"daily", u.DailyUSD, u.SpentToday}, {"monthly", u.MonthlyUSD, u.SpentMonth}} {
		if p.limit > 0 && p.spent+u.InFlightUSD+c.WorstCaseUSD > p.limit {
			return &RefusedError{Usage: u, Create: c, Period: p.name, Limit: p.limit, Spent: p.spent}
		}
	}
	return nil
}

// OwnInFlight is what the lane's own pods may still cost: c.OwnUSD less what
// billing already shows for them, never below zero.
func OwnInFlight(c Create, shown money.Amount) money.Amount { return max(c.OwnUSD-shown, 0) }

// LiveBound is what a live pod or endpoint at price may still cost: its
// price for its whole bound, less what billing already shows for it (below
// zero when billing shows more; the budget counts it at zero).
func LiveBound(price money.Rate, bound time.Duration, billed money.Amount) money.Amount {
	return price.For(bound) - billed
}

// Retained is the most a pod kept for debugging at price bills until the
// reaper's retention cap deletes it.
func Retained(price money.Rate, retentionCap time.Duration) money.Amount {
	return price.For(retentionCap)
}

// OvershootBound is the most the budget can be passed by for each lane whose
// pod the re-check refuses: that pod's price for window, the re-check's reads
// and its deletion (RunPod bills by the second).
func OvershootBound(price money.Rate, window time.Duration) money.Amount {
	return price.For(window)
}
