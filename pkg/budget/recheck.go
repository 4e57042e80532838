package budget

// The re-check after a create. Lanes create pods at the same time (no global
// lock), so two lanes can both pass Check for the budget's last dollar: each
// reserved against what was in flight before the other's pod existed. Right
// after its create answers, a lane checks again, this time knowing its own
// pod, and counts only the live pods created before it (RunPod's createdAt,
// to the millisecond): every such pod exists by the time the lane lists,
// since it was created before this lane's pod, so every lane of a race sees
// the same order and the oldest pods win. Two pods of the same instant count
// against each other: both may be refused, never both kept past a limit. A
// lane whose pod passes a limit in that order deletes it at once. What the budget can be passed by is
// then what the deleted pods bill between their create and their deletion:
// OvershootBound each.

import (
	"context"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Rechecker is a Checker that can re-check a create that just answered. *Guard has it.
type Rechecker interface {
	Recheck(ctx context.Context, c spend.Create, pod runpod.Pod) (spend.Usage, error)
}

// RecheckWindow bounds how long a pod the re-check refuses can bill: the
// re-check's reads (CheckBudget) and its deletion (lifecycle's delete budget
// and its confirmation margin).
const RecheckWindow = CheckBudget + lifecycle.DefaultDeleteBudget + 10*time.Second

// OvershootBound is the most the budget can be passed by for each lane whose
// pod the re-check refuses: the spend room's bound over RecheckWindow.
func OvershootBound(price money.Rate) money.Amount {
	return spend.OvershootBound(price, RecheckWindow)
}

// CountsBefore reports whether pod p counts against own in a re-check: it is
// another pod, created before own or at the same instant (RunPod's createdAt).
// Ties count both ways, since neither lane can tell which create came first.
func CountsBefore(p, own runpod.Pod) bool {
	pt, _ := p.CreatedAt.Get()
	ot, _ := own.CreatedAt.Get()
	return p.ID != own.ID && !pt.After(ot)
}

// Recheck is Check again right after pod's create answered, with pod at its
// worst case (c.WorstCaseUSD) and the live pods counted only when created
// before it (see the file comment). A *spend.RefusedError says pod passes a limit
// and must be deleted at once; any other error means the budget could not be
// re-checked, which refuses pod as well. c.OwnPods must not name pod.
func (g *Guard) Recheck(ctx context.Context, c spend.Create, pod runpod.Pod) (spend.Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, CheckBudget)
	defer cancel()
	now := g.now().UTC()
	if !pod.CreatedAt.Known() {
		pod.CreatedAt = wire.KnownTime(now) // the answer did not say: it is no older than now
	}
	u := spend.Usage{Limits: g.Limits, WorstCaseUSD: c.WorstCaseUSD, At: now}
	billed, err := g.spent(ctx, now, &u)
	if err != nil {
		return u, err
	}
	own := map[string]bool{pod.ID: true}
	for _, id := range c.OwnPods {
		own[id] = true
	}
	older := func(p runpod.Pod) bool { return CountsBefore(p, pod) }
	if err := g.inFlightOf(ctx, billed, own, &u, older); err != nil {
		return u, fmt.Errorf("budget: the re-check after the create of pod %s could not read what is in flight (%w)", pod.ID, err)
	}
	g.addOwn(&u, c, billed)
	g.logf("budget re-check after the create of pod %s: %s (pods created before it); its worst case %s", pod.ID, u, c.WorstCaseUSD)
	err = spend.DecideBudget(u, c)
	if refused, ok := err.(*spend.RefusedError); ok {
		refused.Created = pod.ID
	}
	return u, err
}
