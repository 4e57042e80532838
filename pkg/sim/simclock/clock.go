// Package simclock is the time source of the simulated cloud: a virtual clock
// that moves only when told to (tests, model-mode benchmarks) and a wrapper of
// the real clock (the demo), behind one small interface.
//
// Both are a clock.Clock, the suite's one Now-only interface, so one Virtual
// can drive every simulator of a scenario and every client under test.
package simclock

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
)

// Clock is a source of time that can also run a function later.
type Clock interface {
	clock.Clock
	// AfterFunc runs f once the clock reaches Now()+d, in its own call stack.
	AfterFunc(d time.Duration, f func()) Timer
	// Sleep waits for d or until ctx is done. On a Virtual clock sleeping is
	// advancing: the caller moves time forward instead of waiting for it.
	Sleep(ctx context.Context, d time.Duration) error
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop cancels the call; it reports whether the call was still pending.
	Stop() bool
}

// Real is the wall clock (clock.Wall) with timers and sleeps.
type Real struct{ clock.Wall }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Sleep waits for d of wall time or until ctx is done, whichever is first.
func (Real) Sleep(ctx context.Context, d time.Duration) error { return clock.SleepContext(ctx, d) }

// Virtual is a clock that moves only through Advance (or Sleep). Timers fire
// inside Advance, in deadline order (ties in scheduling order), each seeing
// Now() equal to its own deadline, so a simulation is exact and repeatable.
// It is safe for concurrent use; timer callbacks must not call Advance.
type Virtual struct {
	advancing sync.Mutex // serializes Advance so timers fire in one order

	mu        sync.Mutex
	now       time.Time
	seq       uint64
	timers    timerHeap
	notified  bool // a callback of the current Sleep called Notify
	announced bool // NotifyNext since the last Sleep began
}

// NotifyWait bounds how long, in wall time, Sleep waits after a callback
// that called Notify for its context to end.
const NotifyWait = 2 * time.Second

// NewVirtual returns a Virtual clock that reads start until it is advanced.
func NewVirtual(start time.Time) *Virtual {
	return &Virtual{now: start}
}

// Now returns the clock's current time.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// AfterFunc schedules f at Now()+d. A non-positive d fires at the next Advance
// (even Advance(0)), never inside this call, so callers may hold their own locks.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	t := &virtualTimer{clock: v, when: v.now.Add(max(d, 0)), seq: v.seq, f: f, index: -1}
	heap.Push(&v.timers, t)
	return t
}

// Sleep advances the clock by d: in virtual time a wait is the passage of
// time. When ctx ends while timers fire (a callback woke the sleeper), the
// clock stops at that callback's time and Sleep returns ctx's error.
func (v *Virtual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// What was sent before this sleep (NotifyNext) may wake it at once; a
	// Notify outside a callback of this sleep concerns no sleeper.
	v.mu.Lock()
	announced := v.announced
	v.notified, v.announced = false, false
	v.mu.Unlock()
	if err := v.awaitWake(ctx, announced); err != nil {
		return err
	}
	return v.advance(d, func() error {
		v.mu.Lock()
		notified := v.notified
		v.notified = false
		v.mu.Unlock()
		return v.awaitWake(ctx, notified)
	})
}

// awaitWake waits, when something was sent (notified), for ctx to end: it
// travels through real goroutines (a stream over loopback HTTP), so the
// sleeper gets the wall time (at most NotifyWait) to take it in and wake
// before the clock moves on.
func (v *Virtual) awaitWake(ctx context.Context, notified bool) error {
	if notified {
		timer := time.NewTimer(NotifyWait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	return ctx.Err()
}

// Notify says that the timer callback running now sent something out of the
// clock's reach — a line on a client's stream — that may wake the goroutine
// sleeping on the clock. After the callback, that Sleep waits (in wall time,
// at most NotifyWait) for its context to end before the clock moves on, so
// the sleeper wakes at the time of what it was sent, not at the end of its
// sleep. Outside a Sleep's callbacks it does nothing.
func (v *Virtual) Notify() {
	v.mu.Lock()
	v.notified = true
	v.mu.Unlock()
}

// NotifyNext is Notify for something sent outside the clock's callbacks (an
// answer's body that follows its headers): the next Sleep waits for its
// context to end, the same way, before it moves the clock at all.
func (v *Virtual) NotifyNext() {
	v.mu.Lock()
	v.announced = true
	v.mu.Unlock()
}

// Advance moves the clock forward by d (a negative d counts as 0), firing every
// timer whose deadline is reached, including timers those callbacks schedule.
func (v *Virtual) Advance(d time.Duration) {
	_ = v.advance(d, nil)
}

// advance is Advance; after each callback, a non-nil stop error from after
// ends it there, at that callback's time.
func (v *Virtual) advance(d time.Duration, after func() error) error {
	v.advancing.Lock()
	defer v.advancing.Unlock()
	v.mu.Lock()
	target := v.now.Add(max(d, 0))
	v.mu.Unlock()
	for {
		v.mu.Lock()
		if len(v.timers) == 0 || v.timers[0].when.After(target) {
			v.now = target
			v.mu.Unlock()
			return nil
		}
		t := heap.Pop(&v.timers).(*virtualTimer)
		if t.when.After(v.now) {
			v.now = t.when
		}
		v.mu.Unlock()
		t.f()
		if after != nil {
			if err := after(); err != nil {
				return err
			}
		}
	}
}

// Pending returns how many timers have not fired or been stopped yet.
func (v *Virtual) Pending() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.timers)
}

type virtualTimer struct {
	clock *Virtual
	when  time.Time
	seq   uint64
	f     func()
	index int // position in the heap; -1 once fired or stopped
}

func (t *virtualTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.clock.timers, t.index)
	return true
}

type timerHeap []*virtualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*virtualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// Next returns the deadline of the earliest pending timer; ok is false when
// none is pending. A driver that advances to each deadline in turn fires the
// same timers in the same order as one Advance over the whole span, and can
// stop between any two of them.
func (v *Virtual) Next() (at time.Time, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.timers) == 0 {
		return time.Time{}, false
	}
	return v.timers[0].when, true
}
