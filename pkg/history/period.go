package history

import (
	"fmt"
	"time"
)

// Range is an inclusive range of UTC dates: Since and Until are midnight UTC
// of the first and the last day.
type Range struct {
	Since, Until time.Time
}

// ParseRange reads --since/--until dates (YYYY-MM-DD, UTC, inclusive).
func ParseRange(since, until string) (Range, error) {
	var r Range
	for _, d := range []struct {
		key, value string
		dst        *time.Time
	}{{"since", since, &r.Since}, {"until", until, &r.Until}} {
		t, err := time.Parse(time.DateOnly, d.value)
		if err != nil {
			return Range{}, fmt.Errorf("%w: %s %q: want a UTC date YYYY-MM-DD", ErrInvalidRange, d.key, d.value)
		}
		*d.dst = t
	}
	if r.Until.Before(r.Since) {
		return Range{}, fmt.Errorf("%w: until %s is before since %s", ErrInvalidRange, until, since)
	}
	return r, nil
}

// DefaultDays is how many full days a report covers when no dates are given
// to the action: a weekly schedule reports the week before it.
const DefaultDays = 7

// ParseRangeOr reads since and until as ParseRange does; with neither given
// it returns fallback.
func ParseRangeOr(since, until string, fallback Range) (Range, error) {
	switch {
	case since == "" && until == "":
		return fallback, nil
	case since == "" || until == "":
		return Range{}, fmt.Errorf("%w: since %q, until %q: give both dates, or neither for the last %d full days",
			ErrInvalidRange, since, until, DefaultDays)
	}
	return ParseRange(since, until)
}

// LastFullDays is the range of the days full days before now's UTC date: a
// scheduled run reports complete days only.
func LastFullDays(now time.Time, days int) Range {
	today := now.UTC().Truncate(24 * time.Hour)
	return Range{Since: today.AddDate(0, 0, -max(days, 1)), Until: today.AddDate(0, 0, -1)}
}

// Contains reports whether t falls on one of the range's days.
func (r Range) Contains(t time.Time) bool {
	return !t.Before(r.Since) && t.Before(r.end())
}

// String renders the range as GitHub's created filter does: "2026-10-06..2026-10-09".
func (r Range) String() string {
	return r.Since.Format(time.DateOnly) + ".." + r.Until.Format(time.DateOnly)
}

// end is the instant after the range's last day.
func (r Range) end() time.Time { return r.Until.AddDate(0, 0, 1) }

// createdFilter renders the half-open interval [from, to) of whole seconds
// as GitHub's inclusive created filter: whole days as dates, anything finer
// as RFC 3339 times.
func createdFilter(from, to time.Time) string {
	last := to.Add(-time.Second)
	if from.Equal(from.Truncate(24*time.Hour)) && to.Equal(to.Truncate(24*time.Hour)) {
		return from.Format(time.DateOnly) + ".." + last.Format(time.DateOnly)
	}
	return from.UTC().Format(time.RFC3339) + ".." + last.UTC().Format(time.RFC3339)
}

// splitPoint halves [from, to) on the coarsest boundary that splits it:
// days, then hours, then minutes, then seconds. ok is false for one second.
func splitPoint(from, to time.Time) (mid time.Time, ok bool) {
	span := to.Sub(from)
	for _, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if n := span / unit; n >= 2 {
			return from.Add(n / 2 * unit), true
		}
	}
	return time.Time{}, false
}

// isoWeek names t's ISO week, e.g. "2026-W41".
func isoWeek(t time.Time) string {
	year, week := t.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", year, week)
}
