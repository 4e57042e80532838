package simclock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestVirtualFiresTimersInDeadlineOrder(t *testing.T) {
	clock := simclock.NewVirtual(start)
	var fired []string
	record := func(name string) func() {
		return func() { fired = append(fired, fmt.Sprintf("%s@%s", name, clock.Now().Sub(start))) }
	}
	clock.AfterFunc(30*time.Second, record("c"))
	clock.AfterFunc(10*time.Second, record("a"))
	clock.AfterFunc(10*time.Second, record("b")) // same deadline: scheduling order decides
	clock.AfterFunc(time.Minute, record("late"))

	clock.Advance(45 * time.Second)

	assert.DeepEqual(t, fired, []string{"a@10s", "b@10s", "c@30s"})
	assert.Equal(t, clock.Now(), start.Add(45*time.Second))
	assert.Equal(t, clock.Pending(), 1)
}

func TestVirtualFiresTimersScheduledByCallbacksWithinTheSameAdvance(t *testing.T) {
	clock := simclock.NewVirtual(start)
	var at []time.Duration
	clock.AfterFunc(5*time.Second, func() {
		at = append(at, clock.Now().Sub(start))
		clock.AfterFunc(5*time.Second, func() { at = append(at, clock.Now().Sub(start)) })
	})

	clock.Advance(20 * time.Second)

	assert.DeepEqual(t, at, []time.Duration{5 * time.Second, 10 * time.Second})
}

func TestVirtualTimerStop(t *testing.T) {
	clock := simclock.NewVirtual(start)
	fired := false
	timer := clock.AfterFunc(time.Second, func() { fired = true })

	assert.Assert(t, timer.Stop(), "a pending timer stops")
	assert.Assert(t, !timer.Stop(), "a stopped timer is no longer pending")
	clock.Advance(time.Minute)
	assert.Assert(t, !fired)
}

func TestVirtualZeroDelayFiresOnNextAdvanceNotInline(t *testing.T) {
	clock := simclock.NewVirtual(start)
	fired := false
	clock.AfterFunc(0, func() { fired = true })
	assert.Assert(t, !fired, "AfterFunc must not call back inline")

	clock.Advance(0)
	assert.Assert(t, fired)
	assert.Equal(t, clock.Now(), start)
}

func TestVirtualNeverMovesBackwards(t *testing.T) {
	clock := simclock.NewVirtual(start)
	clock.Advance(-time.Hour)
	assert.Equal(t, clock.Now(), start)
}

func TestVirtualSleepAdvances(t *testing.T) {
	clock := simclock.NewVirtual(start)
	assert.NilError(t, clock.Sleep(context.Background(), 3*time.Second))
	assert.Equal(t, clock.Now(), start.Add(3*time.Second))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, clock.Sleep(ctx, time.Hour), context.Canceled)
	assert.Equal(t, clock.Now(), start.Add(3*time.Second), "a cancelled sleep does not move time")
}

func TestRealSleepHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, simclock.Real{}.Sleep(ctx, time.Hour), context.Canceled)
}

func TestRealAfterFuncCanBeStopped(t *testing.T) {
	timer := simclock.Real{}.AfterFunc(time.Hour, func() { t.Error("fired") })
	assert.Assert(t, timer.Stop())
}

// A sleeper woken by a timer callback (its context ends) stops at that
// callback's time; the timers after it stay pending.
func TestVirtualSleepStopsWhenACallbackWakesTheSleeper(t *testing.T) {
	clock := simclock.NewVirtual(start)
	ctx, wake := context.WithCancel(context.Background())
	clock.AfterFunc(7*time.Second, wake)
	later := false
	clock.AfterFunc(9*time.Second, func() { later = true })

	err := clock.Sleep(ctx, 30*time.Second)

	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, clock.Now(), start.Add(7*time.Second))
	assert.Assert(t, !later)
	assert.Equal(t, clock.Pending(), 1)
}

// A callback that sends something through other goroutines calls Notify:
// the sleep waits, in wall time, for the sleeper to be woken by it before
// moving the clock on, and a callback that does not notify is not waited for.
func TestVirtualSleepWaitsForANotifiedWakeUp(t *testing.T) {
	clock := simclock.NewVirtual(start)
	ctx, wake := context.WithCancel(context.Background())
	sent := make(chan struct{}, 1)
	go func() {
		<-sent
		time.Sleep(20 * time.Millisecond) // the trip through a stream
		wake()
	}()
	clock.AfterFunc(3*time.Second, func() {}) // nothing sent: no wait
	clock.AfterFunc(5*time.Second, func() {
		sent <- struct{}{}
		clock.Notify()
	})

	err := clock.Sleep(ctx, time.Minute)

	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, clock.Now(), start.Add(5*time.Second))
}

// Something sent outside the clock's callbacks (NotifyNext) is waited for by
// the next Sleep before the clock moves at all; a Notify outside a Sleep's
// callbacks concerns no sleeper and is not waited for.
func TestVirtualSleepWaitsForWhatWasSentBeforeIt(t *testing.T) {
	clock := simclock.NewVirtual(start)
	clock.Notify() // outside any callback: ignored
	assert.NilError(t, clock.Sleep(context.Background(), time.Second))
	assert.Equal(t, clock.Now(), start.Add(time.Second))

	ctx, wake := context.WithCancel(context.Background())
	clock.AfterFunc(5*time.Second, func() {})
	clock.NotifyNext()
	go func() {
		time.Sleep(20 * time.Millisecond) // the trip through a stream
		wake()
	}()
	err := clock.Sleep(ctx, time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, clock.Now(), start.Add(time.Second), "woken before the clock moved")
}

// Next names the earliest pending deadline (none once every timer fired or
// stopped), so a driver can advance from one timer to the next.
func TestVirtualNextIsTheEarliestPendingDeadline(t *testing.T) {
	clock := simclock.NewVirtual(start)
	_, ok := clock.Next()
	assert.Check(t, !ok)
	late := clock.AfterFunc(time.Hour, func() {})
	clock.AfterFunc(time.Minute, func() {})
	at, ok := clock.Next()
	assert.Check(t, ok)
	assert.Equal(t, at, start.Add(time.Minute))
	clock.Advance(time.Minute)
	at, _ = clock.Next()
	assert.Equal(t, at, start.Add(time.Hour))
	late.Stop()
	_, ok = clock.Next()
	assert.Check(t, !ok)
}
