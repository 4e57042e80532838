package market

import (
	"context"
	"errors"
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
type scheduler struct {
	clock *simclock.Virtual
	// yield carries control back from the running process to the timer
	// callback that resumed (or started) it.
	yield chan struct{}

	mu     sync.Mutex // guards the fields below (held only between handoffs)
	live   int        // processes started and not ended
	joiner chan struct{}
	done   bool // the main process ended
}

func newScheduler(clock *simclock.Virtual) *scheduler {
	return &scheduler{clock: clock, yield: make(chan struct{})}
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
	}
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
		go func() {
			f()
			s.yield <- struct{}{}
		}()
		<-s.yield
	})
}

// resume schedules the process waiting on wake to go on after d.
func (s *scheduler) resume(d time.Duration, wake chan struct{}) {
	s.clock.AfterFunc(d, func() {
		wake <- struct{}{}
		<-s.yield
	})
}

// park hands control back and waits until wake is sent.
func (s *scheduler) park(wake chan struct{}) {
	s.yield <- struct{}{}
	<-wake
}

// Sleep is the processes' only wait: the clock moves on (other processes
// run) for d, then the caller goes on. It is the lane's sleeper: a done ctx
// ends it before it starts, as the virtual clock's Sleep does.
func (s *scheduler) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.pause(d)
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
