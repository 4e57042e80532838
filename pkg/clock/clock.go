// Package clock is the suite's one notion of injected time: Clock tells what
// time it is, Wall is the real one, and a Sleeper waits. Packages take a Clock
// (and a Sleeper) so that tests can drive time instead of waiting for it.
package clock

import (
	"context"
	"time"
)

// Clock tells the time; tests inject a fake one, the simulated cloud a virtual one.
type Clock interface {
	Now() time.Time
}

// Wall is the real clock.
type Wall struct{}

// Now returns time.Now().
func (Wall) Now() time.Time { return time.Now() }

// Now is c's time, or the wall clock's when c is nil: the zero value of a
// struct with an optional Clock field reads the real time.
func Now(c Clock) time.Time {
	if c == nil {
		return time.Now()
	}
	return c.Now()
}

// Func adapts a function to Clock, for a clock that is only known later (a
// value whose construction needs the clock that reads it).
type Func func() time.Time

// Now returns f().
func (f Func) Now() time.Time { return f() }

// Sleeper waits for d or until ctx is done, whichever comes first, and returns
// ctx.Err() in the latter case. Tests inject one that only records the wait.
type Sleeper func(ctx context.Context, d time.Duration) error

// SleepContext is the real Sleeper: it honours cancellation of ctx, and a
// non-positive wait on a done context reports it rather than racing a zero timer.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
