package market

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Processes started together run side by side under the virtual clock: each
// one's waits pass while the others run, they interleave in timer order, and
// Run returns when the main process has joined them all.
func TestSchedulerRunsProcessesSideBySide(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	run := func() []string {
		clock := simclock.NewVirtual(start)
		s := newScheduler(clock)
		var log []string
		err := s.Run(func() {
			for i, d := range []time.Duration{3 * time.Minute, time.Minute, 2 * time.Minute} {
				s.Go(func() {
					for step := range 2 {
						s.pause(d)
						log = append(log, fmt.Sprintf("lane %d step %d at %s", i, step, clock.Now().Sub(start)))
					}
				})
			}
			s.Join()
			log = append(log, fmt.Sprintf("joined at %s", clock.Now().Sub(start)))
		})
		assert.NilError(t, err)
		return log
	}
	want := []string{
		"lane 1 step 0 at 1m0s",
		"lane 2 step 0 at 2m0s",
		"lane 1 step 1 at 2m0s",
		"lane 0 step 0 at 3m0s",
		"lane 2 step 1 at 4m0s",
		"lane 0 step 1 at 6m0s",
		"joined at 6m0s",
	}
	for range 20 {
		assert.DeepEqual(t, run(), want)
	}
}

// A done context ends a lane's sleep before it starts, as the virtual
// clock's Sleep does, and takes no virtual time.
func TestSchedulerSleepHonoursADoneContext(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	clock := simclock.NewVirtual(start)
	s := newScheduler(clock)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	assert.NilError(t, s.Run(func() { err = s.Sleep(ctx, time.Hour) }))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, clock.Now(), start)
}

// A sleep whose context ends meanwhile (a log line woke the watch, from a
// goroutine the scheduler settles) ends at the clock's step where that was
// seen, not at the end of its time; a sleep whose context stays ends on time.
func TestSchedulerSleepEndsWhenItsContextEnds(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	clock := simclock.NewVirtual(start)
	s := newScheduler(clock)
	ctx, cancel := context.WithCancel(context.Background())
	woken := make(chan struct{})
	clock.AfterFunc(time.Minute, func() { close(woken) })
	s.settle = func() error { // the outside goroutine: it cancels once it has seen the line
		select {
		case <-woken:
			cancel()
		default:
		}
		return nil
	}
	var cut, kept error
	var cutAt, keptAt time.Duration
	assert.NilError(t, s.Run(func() {
		s.Go(func() { cut = s.Sleep(ctx, time.Hour); cutAt = clock.Now().Sub(start) })
		s.Go(func() { kept = s.Sleep(context.Background(), 2*time.Minute); keptAt = clock.Now().Sub(start) })
		s.Join()
	}))
	assert.ErrorIs(t, cut, context.Canceled)
	assert.Equal(t, cutAt, time.Minute)
	assert.NilError(t, kept)
	assert.Equal(t, keptAt, 2*time.Minute)
}

// Pull requests of different trees pushed at once get their runners side
// by side, as through the shipped lane (no concurrency group): a lane waits
// for no earlier one, so of eight pushed together the median time to a
// runner stays within twice the fastest (some lanes take longer on their
// own: a rejected pod, a slow pull). Lanes run one after another would put
// the median four lanes behind.
func TestReplayLanesOfDifferentTreesRunAtOnce(t *testing.T) {
	s, err := Scenario{Seed: 3, PRs: 8, WarmUp: -1}.withDefaults()
	assert.NilError(t, err)
	fleet, err := NewFleet(s)
	assert.NilError(t, err)
	var refs []ref
	for pr := 1; pr <= 8; pr++ {
		refs = append(refs, ref{PR: pr, Push: 1, At: s.Start.Add(time.Minute), Job: 10 * time.Minute})
	}
	var seed Policy
	for _, p := range Policies() {
		if p.Name == "seed" {
			seed = p
		}
	}
	res, err := runPolicy(context.Background(), s, fleet, refs, seed)
	assert.NilError(t, err)
	assert.Equal(t, res.RefsTested, 8)
	ts := slices.Sorted(slices.Values(res.TimesToRunner))
	t.Logf("times to a runner: %v", ts)
	assert.Check(t, ts[4] < 2*ts[0], "median %s, fastest %s", ts[4], ts[0])
}
