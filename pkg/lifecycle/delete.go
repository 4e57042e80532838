// Package lifecycle holds what every action does to end a pod's life: the
// bounded, idempotent deletion that all of provision, cleanup, watchdog and
// reaper share, so a pod is deleted by one well-tested piece of code.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Deletion bounds: at most DefaultMaxDeletes DELETE requests within
// DefaultDeleteBudget, each bounded by DefaultRequestTimeout, so a run's
// cleanup ends in bounded time whatever RunPod answers.
const (
	DefaultMaxDeletes     = 5
	DefaultDeleteBudget   = 180 * time.Second
	DefaultRequestTimeout = 20 * time.Second
)

// PodAPI is the part of the RunPod client deletion needs.
type PodAPI interface {
	DeletePod(ctx context.Context, id string) error
	GetPod(ctx context.Context, id string) (*runpod.Pod, error)
}

// Deleter deletes pods within fixed bounds. Its zero bounds take the defaults.
type Deleter struct {
	Pods PodAPI
	// Policy supplies the clock and the shared cooldown every wait obeys.
	Policy         *reqpolicy.Policy
	MaxDeletes     int
	Budget         time.Duration
	RequestTimeout time.Duration
	// Logf receives one line per attempt; nil discards them.
	Logf func(format string, args ...any)
}

// ErrUnconfirmed marks a deletion that could not be confirmed; the pod may still bill.
var ErrUnconfirmed = errors.New("pod deletion unconfirmed")

// UnconfirmedError names the pod that may still be running and why.
type UnconfirmedError struct {
	PodID    string
	Deletes  int
	Elapsed  time.Duration
	LastErr  error
	Stopped  string // why the helper stopped: "permanent error", "attempts exhausted", "budget exhausted"
	Finished time.Time
}

func (e *UnconfirmedError) Error() string {
	return fmt.Sprintf("deletion of pod %s unconfirmed after %d DELETE(s) in %s (%s): %v — the pod may still be billing; delete it by hand",
		e.PodID, e.Deletes, e.Elapsed.Round(time.Second), e.Stopped, e.LastErr)
}

// Is makes errors.Is(err, ErrUnconfirmed) hold.
func (e *UnconfirmedError) Is(target error) bool { return target == ErrUnconfirmed }

// Unwrap exposes the last API error.
func (e *UnconfirmedError) Unwrap() error { return e.LastErr }

// Delete deletes the pod and returns when the deletion was confirmed: a 2xx to
// DELETE, a 404, or a GET after a lost response showing it gone. It sends at most
// MaxDeletes DELETEs within Budget, each bounded by RequestTimeout capped by what
// is left, stops at once on a permanent error, and never checks a lost response
// with GET before the shared cooldown has passed.
func (d *Deleter) Delete(ctx context.Context, podID string) (time.Time, error) {
	maxDeletes, budget, perRequest := d.bounds()
	clock := d.Policy // the policy's clock, so tests run on virtual time
	start := clock.Now()
	deadline := start.Add(budget)
	// The budget is measured on the policy's clock; the wall-clock timeout is only a backstop.
	ctx = reqpolicy.WithDeadline(ctx, deadline)
	ctx, cancel := context.WithTimeout(ctx, budget+perRequest)
	defer cancel()
	// One wire attempt per DELETE: the bound is on requests sent, not on calls.
	ctx = reqpolicy.WithAttemptLimit(ctx, 1)

	fail := func(deletes int, why string, err error) (time.Time, error) {
		now := clock.Now()
		return time.Time{}, &UnconfirmedError{PodID: podID, Deletes: deletes, Elapsed: now.Sub(start), LastErr: err, Stopped: why, Finished: now}
	}
	var lastErr error
	for n := 1; n <= maxDeletes; n++ {
		if n > 1 {
			// The shared cooldown (Retry-After, backoff) decides when the next request may go.
			if err := d.Policy.Wait(ctx, 0, "before DELETE retry"); err != nil {
				return fail(n-1, "budget exhausted", errors.Join(lastErr, err))
			}
		}
		remaining := deadline.Sub(clock.Now())
		if remaining <= 0 {
			return fail(n-1, "budget exhausted", lastErr)
		}
		err := d.deleteOnce(ctx, podID, n == 1, min(perRequest, remaining))
		switch {
		case err == nil:
			d.logf("pod %s: DELETE %d/%d confirmed", podID, n, maxDeletes)
			return clock.Now(), nil
		case errors.Is(err, runpod.ErrNotFound):
			d.logf("pod %s: DELETE %d/%d answered 404: already gone", podID, n, maxDeletes)
			return clock.Now(), nil
		case permanent(err):
			d.logf("pod %s: DELETE %d/%d failed permanently: %v", podID, n, maxDeletes, err)
			return fail(n, "permanent error", err)
		case lost(err):
			d.logf("pod %s: DELETE %d/%d response lost: %v; checking with GET after the cooldown", podID, n, maxDeletes, err)
			if gone, gerr := d.checkGone(ctx, podID); gone {
				return clock.Now(), nil
			} else if gerr != nil {
				err = errors.Join(err, gerr)
			}
		default:
			d.logf("pod %s: DELETE %d/%d failed: %v", podID, n, maxDeletes, err)
		}
		lastErr = err
	}
	return fail(maxDeletes, "attempts exhausted", lastErr)
}

// bounds returns the deleter's bounds, with the defaults for those unset.
func (d *Deleter) bounds() (maxDeletes int, budget, perRequest time.Duration) {
	maxDeletes, budget, perRequest = d.MaxDeletes, d.Budget, d.RequestTimeout
	if maxDeletes <= 0 {
		maxDeletes = DefaultMaxDeletes
	}
	if budget <= 0 {
		budget = DefaultDeleteBudget
	}
	if perRequest <= 0 {
		perRequest = DefaultRequestTimeout
	}
	return maxDeletes, budget, perRequest
}

// deleteOnce sends one DELETE of podID bounded by timeout.
func (d *Deleter) deleteOnce(ctx context.Context, podID string, first bool, timeout time.Duration) error {
	rctx, rcancel := context.WithTimeout(ctx, timeout)
	defer rcancel()
	if first {
		// A pod bills every second: the first DELETE goes out even while a
		// cooldown longer than the budget (a huge Retry-After) is in force.
		rctx = reqpolicy.Urgent(rctx)
	}
	return d.Pods.DeletePod(rctx, podID)
}

// checkGone reads the pod after the cooldown; 404 or TERMINATED confirms deletion.
func (d *Deleter) checkGone(ctx context.Context, podID string) (bool, error) {
	if err := d.Policy.Wait(ctx, 0, "before GET after a lost DELETE"); err != nil {
		return false, err
	}
	rctx, cancel := context.WithTimeout(ctx, d.requestTimeout(ctx))
	defer cancel()
	pod, err := d.Pods.GetPod(rctx, podID)
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		d.logf("pod %s: GET answered 404: deletion confirmed", podID)
		return true, nil
	case err != nil:
		return false, err
	case pod.Status == runpod.PodTerminated:
		d.logf("pod %s: GET shows TERMINATED: deletion confirmed", podID)
		return true, nil
	}
	return false, nil
}

func (d *Deleter) requestTimeout(ctx context.Context) time.Duration {
	t := d.RequestTimeout
	if t <= 0 {
		t = DefaultRequestTimeout
	}
	if left, ok := d.Policy.Remaining(ctx); ok {
		t = min(t, left)
	}
	return max(t, time.Millisecond)
}

// permanent errors will not change on a retry: the key, the request or the pod is wrong.
func permanent(err error) bool {
	for _, e := range []error{runpod.ErrUnauthorized, runpod.ErrForbidden, runpod.ErrInvalidRequest, runpod.ErrBadRequest} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// lost errors leave it unknown whether the DELETE took effect.
func lost(err error) bool {
	return errors.Is(err, runpod.ErrTransport) || errors.Is(err, context.DeadlineExceeded)
}

func (d *Deleter) logf(format string, args ...any) {
	if d.Logf != nil {
		d.Logf(format, args...)
	}
}
