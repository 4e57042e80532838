package reqpolicy

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header value: delay-seconds ("7") or an
// HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT"), relative to now. ok is false for
// an empty or malformed value. A date in the past means no wait; a seconds value
// too large for a time.Duration saturates rather than overflows.
func ParseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(math.MaxInt64/int64(time.Second)) {
			// Only overflow fails ParseUint on a digit string.
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	when, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := when.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
