package githubsim

import "time"

// Clock is the simulation's only source of time; tests and benchmarks pass a
// *simclock.Virtual, which moves only when told to.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
