package market

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// scheduler runs the replay's lanes as processes at the same time under the
// virtual clock, as the shipped lane runs them (no concurrency group holds
// one lane while another creates), and still reproducibly: exactly one
// process runs at any moment. A process waits only through Sleep, which
// schedules its wake-up on the clock and hands control back; the driver
// (Run) advances the clock from one timer to the next, and a wake-up's timer
// callback hands control to its process and takes it back when the process
// waits again or ends. So processes interleave in the clock's timer order
// (deadline, then scheduling order), which depends on the seed alone, never
// on the Go scheduler or the machine's load.
//
// Processes must not wait any other way (a channel another process fills, a
// wall-clock timer, the clock's own Sleep or Advance): the driver would wait
// for them forever.
//
// Goroutines outside the processes (a pod log stream's reader) keep pace
// through settle: the driver calls it before it hands control to a process
// and after each step of the clock, and settle returns once they have taken
// in everything sent so far. A sleep whose context ended (the reader
// woke its watch) then ends at that step's time.
type scheduler struct {
	clock *simclock.Virtual
	// yield carries control back from the running process to the timer
	// callback that resumed (or started) it.
	yield chan struct{}
	// settle waits for the goroutines outside the processes; an error
	// (one that never caught up) ends Run.
	settle func() error

	mu       sync.Mutex // guards the fields below (held only between handoffs)
	live     int        // processes started and not ended
	joiner   chan struct{}
	done     bool       // the main process ended
	sleepers []*sleeper // in the order they went to sleep
	err      error      // the first settle error
}

// sleeper is a process in Sleep.
type sleeper struct {
	ctx   context.Context
	timer simclock.Timer
	wake  chan struct{}
}

func newScheduler(clock *simclock.Virtual) *scheduler {
	return &scheduler{clock: clock, yield: make(chan struct{}), settle: func() error { return nil }}
}

// errStalled is a replay whose processes all wait on something the clock
// will never bring.
var errStalled = errors.New("market: the replay stalled: processes wait and no timer is pending")

// Run runs main as the first process and drives the clock until it ends.
// Run itself is not a process: it must be called from outside the replay.
func (s *scheduler) Run(main func()) error {
	s.start(func() {
		main()
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	})
	for {
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done {
			return nil
		}
		next, ok := s.clock.Next()
		if !ok {
			return errStalled
		}
		s.clock.Advance(next.Sub(s.clock.Now()))
		s.keepPace()
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return err
		}
		s.wakeWoken()
	}
}

// keepPace waits for the goroutines outside the processes (settle),
// keeping its first error.
func (s *scheduler) keepPace() {
	if err := s.settle(); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

// wakeWoken ends, at the current time, the sleeps whose context ended, in
// the order they began.
func (s *scheduler) wakeWoken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.sleepers[:0]
	for _, sl := range s.sleepers {
		if sl.ctx.Err() != nil && sl.timer.Stop() {
			s.resume(0, sl.wake)
			continue
		}
		kept = append(kept, sl)
	}
	clear(s.sleepers[len(kept):])
	s.sleepers = kept
}

// Go starts f as a process at the current virtual time, after the running
// process next waits (or ends).
func (s *scheduler) Go(f func()) {
	s.mu.Lock()
	s.live++
	s.mu.Unlock()
	s.start(func() {
		f()
		s.mu.Lock()
		s.live--
		joiner := s.joiner
		if s.live == 0 {
			s.joiner = nil
		} else {
			joiner = nil
		}
		s.mu.Unlock()
		if joiner != nil {
			s.resume(0, joiner)
		}
	})
}

// start schedules f's goroutine to begin at the next firing, with control.
func (s *scheduler) start(f func()) {
	s.clock.AfterFunc(0, func() {
		s.keepPace()
		go func() {
			f()
			s.yield <- struct{}{}
		}()
		<-s.yield
	})
}

// resume schedules the process waiting on wake to go on after d.
func (s *scheduler) resume(d time.Duration, wake chan struct{}) simclock.Timer {
	return s.clock.AfterFunc(d, func() { s.handOff(wake) })
}

// handOff gives control to the process waiting on wake, once the
// goroutines outside the processes caught up, and takes it back when the
// process waits again or ends.
func (s *scheduler) handOff(wake chan struct{}) {
	s.keepPace()
	wake <- struct{}{}
	<-s.yield
}

// park hands control back and waits until wake is sent.
func (s *scheduler) park(wake chan struct{}) {
	s.yield <- struct{}{}
	<-wake
}

// Sleep is the processes' only wait: the clock moves on (other processes
// run) for d, then the caller goes on. It is the lane's sleeper: a done ctx
// ends it before it starts, as the virtual clock's Sleep does, and a ctx
// that ends meanwhile (a line of the pod's log woke the watch) ends it at
// the clock's step where that was seen.
func (s *scheduler) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sl := &sleeper{ctx: ctx, wake: make(chan struct{})}
	s.mu.Lock()
	sl.timer = s.clock.AfterFunc(d, func() {
		s.mu.Lock()
		if i := slices.Index(s.sleepers, sl); i >= 0 {
			s.sleepers = slices.Delete(s.sleepers, i, i+1)
		}
		s.mu.Unlock()
		s.handOff(sl.wake)
	})
	s.sleepers = append(s.sleepers, sl)
	s.mu.Unlock()
	s.park(sl.wake)
	return ctx.Err()
}

// pause waits for d of virtual time whatever the caller's context: the
// time a request spends on the wire passes even for a cancelled one.
func (s *scheduler) pause(d time.Duration) {
	wake := make(chan struct{})
	s.resume(d, wake)
	s.park(wake)
}

// Join waits until every process started with Go has ended; only the main
// process may call it.
func (s *scheduler) Join() {
	s.mu.Lock()
	if s.live == 0 {
		s.mu.Unlock()
		return
	}
	wake := make(chan struct{})
	s.joiner = wake
	s.mu.Unlock()
	s.park(wake)
}
