package reqpolicy

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestSleepContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Check(t, errors.Is(SleepContext(ctx, time.Hour), context.Canceled), "a cancelled context ends the sleep at once")
	assert.NilError(t, SleepContext(context.Background(), 0))
	assert.NilError(t, SleepContext(context.Background(), time.Nanosecond))
}

// The real sleeper waits until its context ends when that comes first, and a
// zero wait on a cancelled context always reports the cancellation (a zero
// timer must not race it).
func TestSleepContextEdges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.Check(t, errors.Is(SleepContext(ctx, time.Hour), context.DeadlineExceeded), "an hour's sleep ends with its context")

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	for i := 0; i < 64; i++ {
		assert.Assert(t, errors.Is(SleepContext(cancelled, 0), context.Canceled), "try %d", i)
	}
}
