package provision

// Parallel creation. Lanes of different trees create their pods at the same
// time: no concurrency group holds them in turn. What the global lock once
// guarded is kept without it:
//   - one paid pod per tested tree: the claim (gatecheck.ClaimOrWait) decides
//     before any create, and simultaneous claims pay once;
//   - the budget: the check before a create reserves the candidate's worst
//     case (budget.go), and the re-check right after it (afterCreate) counts
//     the pods created before this one; a pod that passes a limit in that
//     order is deleted at once, so the budget is passed by at most
//     budget.OvershootBound per refused pod;
//   - RunPod's rate limits: each lane's policy honours Retry-After and the
//     RateLimit headers on its own (pkg/reqpolicy), so a lane that is told to
//     wait waits without holding the others;
//   - max_concurrent_pods: a lane waits for a free slot before its create
//     (waitForSlot), and one whose new pod is past the maximum, counted in
//     creation order, deletes it at once, waits again and retries.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Slot waits under max_concurrent_pods.
const (
	// SlotWaitLimit is the longest a lane waits for a free slot before one
	// create (gatecheck.LaneBound allows it).
	SlotWaitLimit = gatecheck.SlotWaitMargin
	// SlotPoll is the pause between listings while it waits.
	SlotPoll = 20 * time.Second
	// SlotListBudget bounds one listing of the live pods.
	SlotListBudget = 30 * time.Second
)

// treeReader reads a commit's tree. *ghapi.Client has it.
type treeReader interface {
	CommitTree(ctx context.Context, sha string) (string, error)
}

// sameTreePushed reports whether the PR's head moved to one whose merge
// commit has this lane's tested tree (Request.Reuse.Key): an amended message
// or a rebase that leaves the merged tree as it was. The lane then goes on
// testing that tree instead of stopping as obsolete: the re-push's lane
// follows this one (gatecheck.ClaimRequest.FollowEarlierHeads) and this
// lane's gate job completes its follow gate on the PR's head. Anything it
// cannot read says no: the lane stops as before.
func (r *run) sameTreePushed(ctx context.Context, pr *github.PullRequest) bool {
	key := r.req.Reuse.Key
	tr, ok := r.deps.GitHub.(treeReader)
	merge := pr.GetMergeCommitSHA()
	if key == nil || !ok || !wire.IsCommitSHA(merge) {
		return false
	}
	tree, err := tr.CommitTree(ctx, merge)
	if err != nil || tree != key.Tree {
		return false
	}
	r.logf("PR #%d head moved from %s to %s with the same merged tree %s: this lane goes on testing it, and the new head's lane follows it",
		r.req.PRNumber, r.req.ExpectedHeadSHA, pr.GetHead().GetSHA(), tree)
	return true
}

// RateLimitReserve is the share of each RunPod rate-limit window a lane
// leaves for the other lanes sharing its key (reqpolicy.WithReserve): below
// it, the lane holds its own requests until the window resets.
const RateLimitReserve = 0.10

// outcomeSlotTaken: the pod just created was past max_concurrent_pods and was
// deleted at once; the candidate is tried again once a slot is free
// (retryAfterSlot).
const outcomeSlotTaken outcome = 100

// retryAfterSlot puts candidate i of the plan again right after it, under a
// new number (so a new pod name and runner label: a name is created once, and
// its by-name reconciliation stays sound), while the plan stays within
// max_provision_attempts, which bounds the pods a run creates; past it the
// next candidate is tried.
func (r *run) retryAfterSlot(i int) {
	cands := r.res.Plan.Candidates
	if len(cands) >= r.cfg.MaxProvisionAttempts {
		r.logf("candidate %s lost its slot: max_provision_attempts %d reached, trying the next candidate", cands[i].Name, r.cfg.MaxProvisionAttempts)
		return
	}
	again := cands[i]
	for _, c := range cands {
		again.N = max(again.N, c.N+1)
	}
	r.res.Plan.Candidates = slices.Insert(slices.Clone(cands), i+1, again)
	r.logf("candidate %s lost its slot: trying it again as candidate %d once a slot is free", again.Name, again.N)
}

// waitForSlot waits, before a create, until fewer than max_concurrent_pods
// pods of this repository are live, within SlotWaitLimit. A listing that
// fails is retried at the next poll: a create never goes out uncounted.
func (r *run) waitForSlot(ctx context.Context) error {
	most := r.cfg.MaxConcurrentPods
	if most <= 0 {
		return nil
	}
	start := r.now()
	for {
		live, err := r.repositoryPods(ctx, nil)
		if err == nil && len(live) < most {
			return nil
		}
		waited := r.now().Sub(start)
		why := fmt.Sprintf("%d of max_concurrent_pods %d live", len(live), most)
		if err != nil {
			why = fmt.Sprintf("the live pods could not be listed (%v)", err)
		}
		if waited >= SlotWaitLimit {
			return r.fail(ErrStopped, fmt.Sprintf("no free slot for a pod of %s after %s: %s; no pod was created", r.req.Owner.Repository, waited.Round(time.Second), why))
		}
		r.logf("waiting for a free slot: %s; waited %s of %s", why, waited.Round(time.Second), SlotWaitLimit)
		if err := r.deps.Policy.Wait(ctx, min(SlotPoll, SlotWaitLimit-waited), "a free slot under max_concurrent_pods"); err != nil {
			return r.fail(ErrStopped, fmt.Sprintf("waiting for a free slot: %v", err))
		}
	}
}

// repositoryPods lists this repository's live pods; with own set, only those
// that count against it (budget.CountsBefore: created before it or at the
// same instant).
func (r *run) repositoryPods(ctx context.Context, own *runpod.Pod) ([]runpod.Pod, error) {
	lctx, cancel := r.bound(ctx, SlotListBudget)
	defer cancel()
	pods, err := r.deps.RunPod.ListPods(lctx, runpod.ListPodsQuery{})
	if err != nil {
		return nil, err
	}
	var out []runpod.Pod
	for _, p := range pods {
		tags, err := ownership.FromPod(p.Name, p.Env)
		if err != nil || tags.Repository != r.req.Owner.Repository || p.Status.Ended() {
			continue
		}
		if own != nil && !budget.CountsBefore(p, *own) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// afterCreate re-checks, right after pod's create answered, what the lanes
// creating at the same time may have taken: the budget (budget.Rechecker)
// and max_concurrent_pods, each counting only the pods created before this
// one. A pod past either is deleted at once (reject): over the budget the
// run stops, saying so; past the maximum the candidate is tried again
// once a slot is free (outcomeSlotTaken). stop is false when the pod is kept.
func (r *run) afterCreate(ctx context.Context, a *attemptState, pod *runpod.Pod) (_ outcome, _ error, stop bool) {
	// Its spend is bounded from the pod's own creation when that is later than the POST.
	created := *a
	created.createdAt = podCreatedAt(pod, a.createdAt)
	refuse := func(reason string) (outcome, error) {
		a.rec.Cloud, a.rec.DataCenter, a.rec.Driver = pod.Cloud, pod.DataCenterID, pod.CudaVersion
		w := watchResult{overSpend: true, start: created.createdAt, reason: reason}
		return r.reject(ctx, &created, pod, w)
	}
	if checker, ok := r.deps.Budget.(budget.Rechecker); ok && a.c.PriceKnown {
		own := r.ownPods()
		own = own[:len(own):len(own)]
		for i, id := range own {
			if id == pod.ID {
				own = append(own[:i:i], own[i+1:]...)
				break
			}
		}
		u, err := checker.Recheck(ctx, r.budgetCreate(a.c, own), *pod)
		r.res.Budget = &u
		if err != nil {
			price := a.c.PricePerHour
			r.res.BudgetRecheck = fmt.Sprintf("re-check after the create of pod %s: %v (it can bill at most %s, %s at %s, before its deletion)",
				pod.ID, err, budget.OvershootBound(price).Format(money.Fine), budget.RecheckWindow, price.Format(money.Cents))
			r.logf("budget: %s", r.res.BudgetRecheck)
			if _, rerr := refuse("over the budget after its create (another lane's pod took it first): deleted at once"); rerr != nil {
				return 0, rerr, true
			}
			if errors.Is(err, spend.ErrOverBudget) {
				return 0, r.fail(spend.ErrOverBudget, r.res.BudgetRecheck), true
			}
			return 0, r.fail(ErrStopped, r.res.BudgetRecheck), true
		}
		r.res.BudgetRecheck = fmt.Sprintf("re-check after the create of pod %s: %s with it, within the budget: kept", pod.ID, u)
		r.logf("budget: %s", r.res.BudgetRecheck)
	}
	if most := r.cfg.MaxConcurrentPods; most > 0 {
		older, err := r.repositoryPods(ctx, pod)
		if err == nil && len(older) < most {
			return 0, nil, false
		}
		why := fmt.Sprintf("%d pod(s) of %s created before it are live, max_concurrent_pods %d", len(older), r.req.Owner.Repository, most)
		if err != nil {
			why = fmt.Sprintf("the live pods could not be listed (%v), so max_concurrent_pods %d cannot be shown to hold", err, most)
		}
		r.logf("pod %s is past the maximum of concurrent pods: %s; deleting it at once and waiting for a slot", pod.ID, why)
		if _, rerr := refuse("past max_concurrent_pods after its create (" + why + "): deleted at once"); rerr != nil {
			return 0, rerr, true
		}
		return outcomeSlotTaken, nil, true
	}
	return 0, nil, false
}

// podCreatedAt is when pod was created: its record's time when that is later
// than post, its first POST (no pod of it is older); a record without one is
// given post.
func podCreatedAt(pod *runpod.Pod, post time.Time) time.Time {
	if !pod.CreatedAt.Known() {
		pod.CreatedAt = wire.KnownTime(post)
		return post
	}
	if at, _ := pod.CreatedAt.Get(); at.After(post) {
		return at
	}
	return post
}
