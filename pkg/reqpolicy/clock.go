package reqpolicy

import (
	"context"
	"time"
)

// Clock tells the policy what time it is; tests inject a fake one.
type Clock interface {
	Now() time.Time
}

// Sleeper waits for d or until ctx is done, whichever comes first, and returns
// ctx.Err() in the latter case. Tests inject one that only records the wait.
type Sleeper func(ctx context.Context, d time.Duration) error

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// SleepContext is the real Sleeper: it honours cancellation of ctx.
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
