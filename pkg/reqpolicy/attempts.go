package reqpolicy

import (
	"context"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
)

type attemptLimitKey struct{}

// WithAttemptLimit caps the wire attempts of requests made with ctx at n (at
// least 1), below the policy's own maximum. Callers that count requests
// themselves, like the bounded pod deletion ("at most 5 DELETEs"), set 1.
func WithAttemptLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptLimitKey{}, max(n, 1))
}

// attemptsFor returns the attempt budget of a request context.
func (p *Policy) attemptsFor(ctx context.Context) int {
	if optional(ctx) {
		return 1 // a retry waits on the cooldown, which its answer did not move
	}
	if n, ok := ctx.Value(attemptLimitKey{}).(int); ok && n < p.maxAttempts {
		return n
	}
	return p.maxAttempts
}

type clockDeadlineKey struct{}

// WithDeadline sets a deadline on the policy's clock, which every wait of
// requests made with ctx must fit. Use it for budgets measured in the policy's
// time (a 180 s deletion budget, a 60 s create deadline): a context deadline is
// wall-clock time and would expire at the wrong moment under a virtual clock.
// The earlier of two deadlines wins.
func WithDeadline(ctx context.Context, t time.Time) context.Context {
	if prev, ok := ctx.Value(clockDeadlineKey{}).(time.Time); ok && prev.Before(t) {
		return ctx
	}
	return context.WithValue(ctx, clockDeadlineKey{}, t)
}

// Remaining is what is left before ctx's earliest deadline: the context's own
// deadline measured on the wall clock (it expires in wall time), and a
// WithDeadline one measured on the policy's clock. With a real clock the two
// are the same; with a virtual clock only WithDeadline follows virtual time.
func (p *Policy) Remaining(ctx context.Context) (time.Duration, bool) {
	var left time.Duration
	found := false
	if d, ok := ctx.Deadline(); ok {
		left, found = time.Until(d), true
	}
	if d, ok := ctx.Value(clockDeadlineKey{}).(time.Time); ok {
		if v := d.Sub(p.clock.Now()); !found || v < left {
			left, found = v, true
		}
	}
	return left, found
}

// Bound limits a call to d: on c (the deadline every wait must fit, see
// WithDeadline) and in wall time (so a request that hangs is cut). Under a
// real clock the two coincide; under a virtual clock the first follows the
// simulation and the second only guards against a stuck connection.
func Bound(ctx context.Context, c clock.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(WithDeadline(ctx, c.Now().Add(d)), d)
}

// mark is a yes-or-no property a caller sets on a context for its requests:
// urgent, optional, allowed a retry.
type mark int

const (
	markUrgent mark = iota + 1
	markOptional
	markAllowRetry
)

// on returns ctx marked m.
func (m mark) on(ctx context.Context) context.Context { return context.WithValue(ctx, m, true) }

// in reports whether ctx is marked m.
func (m mark) in(ctx context.Context) bool {
	set, _ := ctx.Value(m).(bool)
	return set
}

// Urgent marks ctx so that the first attempt of its requests goes out at once
// when the shared cooldown is longer than their deadline allows, instead of
// failing unsent. Use it only for requests that stop spending — deleting a
// billing pod, or the one listing that finds a pod whose create answer was
// lost — where an answer of 429 costs nothing and waiting costs money.
// A cooldown that fits the deadline is still waited out, and retries obey it.
func Urgent(ctx context.Context) context.Context {
	return markUrgent.on(ctx)
}

func urgent(ctx context.Context) bool { return markUrgent.in(ctx) }

// Optional marks ctx's requests as reads whose failure costs nothing (the
// caller records the answer as unknown): each is sent once, and its answer
// never moves the shared cooldown or the rate-limit reserve, so a 429 to one
// of them, from an endpoint with a limit of its own, cannot pause the
// requests that decide a paid pod's fate. It still waits out the cooldown
// others set.
func Optional(ctx context.Context) context.Context {
	return markOptional.on(ctx)
}

func optional(ctx context.Context) bool { return markOptional.in(ctx) }
