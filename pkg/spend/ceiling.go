package spend

import (
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// Run is one provision run as max_run_spend_usd counts it: what its rejected
// and unconfirmed pods may have cost, what the lane's other pods may cost,
// and the bounds one more pod is kept for.
type Run struct {
	Ceiling    money.Amount // max_run_spend_usd; meaningful only when HasCeiling
	HasCeiling bool
	// Committed bounds what the lane's other pods can cost; CommittedUnknown
	// says one of them has no known price, so no later create can be bounded.
	Committed        money.Amount
	CommittedUnknown bool
	// SpentBound bounds what this run's rejected and unconfirmed pods cost
	// (RejectedBound, UnconfirmedBound).
	SpentBound     money.Amount
	StartupTimeout time.Duration
	Lifetime       time.Duration
}

// RejectedBound is what a rejected pod billed from its creation to its
// confirmed deletion, at the higher of its billed and catalog prices.
func RejectedBound(billed, catalog money.Rate, createdAt, deletedAt time.Time) money.Amount {
	return max(billed, catalog).For(deletedAt.Sub(createdAt))
}

// UnconfirmedBound is what a pod whose deletion was not confirmed may bill
// until the cleanup job or the reaper deletes it: a candidate's worst case at
// the higher of its billed and catalog prices.
func (r Run) UnconfirmedBound(billed, catalog money.Rate) money.Amount {
	return Candidate(max(billed, catalog), r.StartupTimeout, r.Lifetime)
}

// Worst is what the run could come to with one more pod at price: the spent
// bound, the lane's other pods and the pod's worst case.
func (r Run) Worst(price money.Rate) money.Amount {
	return r.SpentBound + r.Committed + Candidate(price, r.StartupTimeout, r.Lifetime)
}

// RefuseCreate says why candidate name (gpu) at its catalog price must not be
// created, or "" when it fits the ceiling or none is set. priceKnown false
// (no catalog price) refuses under a ceiling: the pod could not be bounded.
func (r Run) RefuseCreate(name, gpu string, price money.Rate, priceKnown bool) string {
	if !r.HasCeiling {
		return ""
	}
	if !priceKnown {
		return fmt.Sprintf("candidate %s (%s) has no known price and max_run_spend_usd is set; no pod was created for it", name, gpu)
	}
	if r.CommittedUnknown {
		return fmt.Sprintf("max_run_spend_usd is set and a pod of this lane has no known price, so candidate %s (%s) could not be bounded; no pod was created for it", name, gpu)
	}
	worst := r.Worst(price)
	if worst <= r.Ceiling {
		return ""
	}
	return fmt.Sprintf("max_run_spend_usd %s: creating candidate %s (%s at %s) could bring the run to %s "+
		"(rejected pods %s%s + startup_timeout_seconds %d + lifetime_seconds %d at its price); no pod was created for it",
		r.Ceiling.Format(money.Cents), name, gpu, price.Format(money.Cents), worst.Format(money.Fine),
		r.SpentBound.Format(money.Fine), r.committedNote(), seconds(r.StartupTimeout), seconds(r.Lifetime))
}

// RefuseRunning says why a running pod RunPod bills at billed (its catalog
// price was catalog) must not be accepted, or "" when it may. The check
// before the create used the catalog price; the same bound is applied again
// with the higher of the two, so a pod billing above its catalog price is
// never accepted past the ceiling.
func (r Run) RefuseRunning(billed, catalog money.Rate, billedKnown bool) string {
	if !r.HasCeiling || !billedKnown || billed <= catalog {
		return ""
	}
	worst := r.Worst(billed)
	if worst <= r.Ceiling {
		return ""
	}
	return fmt.Sprintf("max_run_spend_usd %s: RunPod bills this pod at %s (catalog %s), which could bring the run to %s "+
		"(rejected pods %s%s + startup_timeout_seconds %d + lifetime_seconds %d at that price): not accepted",
		r.Ceiling.Format(money.Cents), billed.Format(money.Fine), catalog.Format(money.Cents), worst.Format(money.Fine),
		r.SpentBound.Format(money.Fine), r.committedNote(), seconds(r.StartupTimeout), seconds(r.Lifetime))
}

// Note says how the ceiling bounds a printed worst case: "" without one.
func (r Run) Note() string {
	if !r.HasCeiling {
		return ""
	}
	return fmt.Sprintf("; max_run_spend_usd %s: no create that could pass it is made", r.Ceiling.Format(money.Cents))
}

// committedNote names what the lane's other pods add to a ceiling's sum.
func (r Run) committedNote() string {
	if r.Committed == 0 {
		return ""
	}
	return " + the lane's other pods at their worst case " + r.Committed.Format(money.Fine)
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }
