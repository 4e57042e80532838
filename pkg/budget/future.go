package budget

import (
	"fmt"
	"time"
)

// recordClockSkew is how far ahead of this runner's clock a record's
// writtenAt may be, another runner's clock being a little ahead.
const recordClockSkew = 5 * time.Minute

// FutureError is a spend record dated after now: it cannot have seen
// today's spend, so it must not count as "$0 today".
type FutureError struct {
	What, Value string // the field and its value
	Now         time.Time
}

func (e *FutureError) Error() string {
	return fmt.Sprintf("the spend record's %s %s is after now (%s): want a record written by an earlier cost history; it is not counted",
		e.What, e.Value, e.Now.UTC().Format(time.RFC3339))
}

// notFromTheFuture returns a *FutureError when the record was written, or
// covers a day, after now.
func (r *Record) notFromTheFuture(now time.Time) error {
	today := now.UTC().Format(time.DateOnly)
	switch {
	case r.WrittenAt.After(now.Add(recordClockSkew)):
		return &FutureError{What: "writtenAt", Value: r.WrittenAt.UTC().Format(time.RFC3339), Now: now}
	case r.Until > today:
		return &FutureError{What: "until", Value: r.Until, Now: now}
	}
	for _, d := range r.Days {
		if d.Day > today {
			return &FutureError{What: "day", Value: d.Day, Now: now}
		}
	}
	return nil
}
