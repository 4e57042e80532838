package githubsim

import (
	"strings"
	"time"
)

// timeRange is an inclusive-exclusive window [from, to); a zero bound is open.
type timeRange struct {
	from, to time.Time
}

func (r timeRange) contains(t time.Time) bool {
	return (r.from.IsZero() || !t.Before(r.from)) && (r.to.IsZero() || t.Before(r.to))
}

// parseCreated parses the created filter of the workflow-runs list, in GitHub's search date
// syntax: DATE, >DATE, >=DATE, <DATE, <=DATE, DATE..DATE, DATE..*, *..DATE, where DATE is
// YYYY-MM-DD (the whole UTC day) or an RFC 3339 time.
func parseCreated(v string) (timeRange, bool) {
	v = strings.TrimSpace(v)
	if from, to, ok := strings.Cut(v, ".."); ok {
		var r timeRange
		if from != "*" {
			lo, _, ok := parseSearchDate(from)
			if !ok {
				return timeRange{}, false
			}
			r.from = lo
		}
		if to != "*" {
			_, hi, ok := parseSearchDate(to)
			if !ok {
				return timeRange{}, false
			}
			r.to = hi
		}
		return r, from != "*" || to != "*"
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		rest, ok := strings.CutPrefix(v, op)
		if !ok {
			continue
		}
		lo, hi, ok := parseSearchDate(rest)
		if !ok {
			return timeRange{}, false
		}
		switch op {
		case ">=":
			return timeRange{from: lo}, true
		case ">":
			return timeRange{from: hi}, true
		case "<=":
			return timeRange{to: hi}, true
		default:
			return timeRange{to: lo}, true
		}
	}
	lo, hi, ok := parseSearchDate(v)
	return timeRange{from: lo, to: hi}, ok
}

// parseSearchDate returns the instant a date names and the instant after it: a day spans
// 24 hours, a timestamp one second.
func parseSearchDate(s string) (lo, hi time.Time, ok bool) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, t.AddDate(0, 0, 1), true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, t.Add(time.Second), true
	}
	return time.Time{}, time.Time{}, false
}
