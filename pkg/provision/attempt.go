package provision

// One candidate's attempt, in order: mint its runner config and create its
// pod (create.go), watch it start (watch.go), then accept or reject it
// (accept.go); pods looked for by name live in reconcile.go.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// outcome is how one candidate ended, for the loop's counters.
type outcome int

const (
	outcomeAccepted       outcome = iota
	outcomeStartupFailure         // created, never online: counts toward the early stop
	outcomeNoCapacity             // nothing created, nothing paid
	outcomeLocal                  // the PR was labelled for local validation meanwhile: stop, nothing more paid
	outcomeScreened               // placed on a machine the reputation holds bad: deleted before its proof (reputation.go)
)

// attemptState is what one candidate's attempt carries from its create to
// its end: the steps that accept, reject or screen out its pod share it.
type attemptState struct {
	c         plan.Candidate
	label     string           // its runner label, unique to the attempt
	jit       *ghapi.JITConfig // its single-use runner config
	rec       *cost.Attempt    // its record, stamped and published by done
	listPrice cost.Price       // the candidate's catalog price (unknown without one)
	createdAt time.Time        // its first POST: no pod of it is older
	done      func(o cost.Outcome, reason string)
}

// attempt tries one candidate. A returned error stops the whole run.
func (r *run) attempt(ctx context.Context, c plan.Candidate) (outcome, error) {
	label, err := r.runnerLabel(c.N)
	if err != nil {
		return 0, r.fail(ErrStopped, err.Error())
	}
	listPrice := listPriceOf(c)
	rec := cost.Attempt{Number: c.N, Candidate: c.Name, GPU: c.GPUID, Price: listPrice}
	done := r.attemptDone(c, &rec)

	jit, err := r.mintJIT(ctx, label)
	if err != nil {
		done(cost.OutcomeFailed, "JIT runner config: "+err.Error())
		return 0, r.fail(ErrStopped, fmt.Sprintf("could not mint a runner config for %s: %v", label, err))
	}
	postAt := r.now() // no pod of this candidate exists before its first POST
	r.current = currentAttempt{postAt: postAt, price: listPrice.PerHour, cand: c}
	pod, err := r.create(ctx, c, label, jit)
	switch {
	case errors.Is(err, runpod.ErrCapacity):
		r.removeRunner(ctx, jit)
		done(cost.OutcomeNoCapacity, "no capacity: "+err.Error())
		return outcomeNoCapacity, nil
	case errors.Is(err, errNotCreated):
		r.removeRunner(ctx, jit)
		done(cost.OutcomeFailed, err.Error())
		return outcomeNoCapacity, nil
	case err != nil:
		done(cost.OutcomeFailed, err.Error())
		return 0, r.fail(ErrStopped, err.Error())
	}
	a := &attemptState{c: c, label: label, jit: jit, rec: &rec, listPrice: listPrice, createdAt: postAt, done: done}
	if spent := r.now().Sub(a.createdAt); spent >= r.cfg.StartupTimeout() {
		return r.foundTooLate(ctx, a, pod, spent)
	}
	if out, err, stop := r.afterCreate(ctx, a, pod); stop {
		return out, err
	}
	w := r.watch(ctx, pod, c, label, a.createdAt)
	pod, w = r.unlessForeign(ctx, a, pod, w)
	if pod == nil {
		r.removeRunner(ctx, jit)
		done(cost.OutcomeFailed, w.reason)
		return outcomeNoCapacity, nil
	}
	rec.Machine = w.machine
	if w.screened { // its log named a machine the reputation holds bad (reputation.go)
		return r.screenOut(ctx, a, pod, w)
	}
	rec.PodID = pod.ID
	// Where the pod ran: the watch's records, else the create's answer.
	rec.Cloud, rec.DataCenter, rec.Driver = cmp.Or(w.cloud, pod.Cloud), cmp.Or(w.dataCenter, pod.DataCenterID), cmp.Or(w.driver, pod.CudaVersion)
	r.dropLateDuplicates(ctx, pod)
	if !w.start.IsZero() {
		rec.Price = cost.FirstKnown(w.price, listPrice)
	}
	if w.accepted {
		return r.accept(a, pod, w)
	}
	return r.reject(ctx, a, pod, w)
}

// listPriceOf is the candidate's catalog price, unknown when the plan had none.
func listPriceOf(c plan.Candidate) cost.Price {
	if !c.PriceKnown {
		return cost.Price{}
	}
	return cost.KnownPrice(c.PricePerHour, "catalog list price")
}

// attemptDone returns the end of c's attempt: it stamps rec with the outcome
// and publishes it (the result, the observer, the log).
func (r *run) attemptDone(c plan.Candidate, rec *cost.Attempt) func(o cost.Outcome, reason string) {
	return func(o cost.Outcome, reason string) {
		rec.Outcome, rec.Reason, rec.At = o, reason, r.now()
		r.res.Attempts = append(r.res.Attempts, *rec)
		r.deps.Observer.AttemptDone(*rec)
		r.logf("attempt %d %s: %s on %s, %s: %s (%s paid seconds, %s)", c.N, c.Name, o, c.GPUID, rec.Price, orDash(reason), rec.Seconds, rec.Dollars())
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
