package cost

import (
	"time"

	"github.com/org/runpod-gpu/pkg/wire"
)

// Window is a pod's paid window: from the provider's start (v2 startedAt, v1
// lastStartedAt) to confirmed deletion. Either end may be unknown; an unknown
// start is never replaced by createdAt.
type Window struct {
	Start wire.Time `json:"start"`
	End   wire.Time `json:"end"`
}

// Validate reports an *IntervalError wrapping ErrNegativeInterval when both
// ends are known and the window ends before it starts, and an ErrInvalidValue
// error for an end RFC 3339 cannot write (UTC year outside 0001–9999), which
// would not survive a trip through a cost artifact. Unknown ends are valid.
func (w Window) Validate() error {
	start, okStart := w.Start.Get()
	end, okEnd := w.End.Get()
	for _, e := range []struct {
		key   string
		t     time.Time
		known bool
	}{{"start", start, okStart}, {"end", end, okEnd}} {
		if y := e.t.UTC().Year(); e.known && (y < 1 || y > 9999) {
			return fieldErr(e.key, invalid("%s: want a time between years 0001 and 9999 UTC", e.t.UTC().Format(time.RFC3339Nano)))
		}
	}
	if okStart && okEnd && end.Before(start) {
		return &IntervalError{What: "paid window", Start: start, End: end, Err: ErrNegativeInterval}
	}
	return nil
}

// Seconds returns the window's length in whole seconds, rounded up; it is
// unknown when either end is unknown or the window is negative.
func (w Window) Seconds() Seconds {
	start, okStart := w.Start.Get()
	end, okEnd := w.End.Get()
	if !okStart || !okEnd || end.Before(start) {
		return Seconds{}
	}
	return KnownSeconds(wholeSeconds(end.Sub(start)))
}

// Dollars estimates the window's cost at the price; unknown when either is.
func Dollars(w Window, p Price) Money { return w.Seconds().At(p) }
