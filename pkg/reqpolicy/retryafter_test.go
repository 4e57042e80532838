package reqpolicy

import (
	"math"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in       string
		wantWait time.Duration
		wantOK   bool
	}{
		{in: "7", wantWait: 7 * time.Second, wantOK: true},
		{in: " 120 ", wantWait: 2 * time.Minute, wantOK: true},
		{in: "0", wantWait: 0, wantOK: true},
		{in: "Thu, 01 Oct 2026 12:01:30 GMT", wantWait: 90 * time.Second, wantOK: true},
		{in: "Thursday, 01-Oct-26 12:00:10 GMT", wantWait: 10 * time.Second, wantOK: true},
		{in: "Thu Oct  1 12:00:05 2026", wantWait: 5 * time.Second, wantOK: true},
		{in: "Thu, 01 Oct 2026 11:00:00 GMT", wantWait: 0, wantOK: true},
		{in: "99999999999999999999999", wantWait: time.Duration(math.MaxInt64), wantOK: true},
		{in: "", wantOK: false},
		{in: "-5", wantOK: false},
		{in: "1.5", wantOK: false},
		{in: "soon", wantOK: false},
		{in: "2026-10-01T12:01:00Z", wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			wait, ok := ParseRetryAfter(tc.in, now)
			assert.Equal(t, ok, tc.wantOK)
			assert.Equal(t, wait, tc.wantWait)
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0", "", "Thu, 01 Oct 2026 12:01:30 GMT", "Thu Oct  1 12:00:05 2026", "-1", "1e9", "184467440737095516160"} {
		f.Add(s)
	}
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		wait, ok := ParseRetryAfter(v, now)
		if !ok {
			if wait != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %s, false; want 0 when not ok", v, wait)
			}
			return
		}
		if wait < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s; a wait is never negative", v, wait)
		}
		// Small delay-seconds values read back exactly.
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 && secs < 1<<30 && wait != time.Duration(secs)*time.Second {
			t.Fatalf("ParseRetryAfter(%q) = %s; want %ds", v, wait, secs)
		}
	})
}

// The largest delay-seconds a time.Duration holds is read exactly; one more
// saturates.
func TestParseRetryAfterSaturationEdge(t *testing.T) {
	const most = math.MaxInt64 / int64(time.Second) // 9223372036
	wait, ok := ParseRetryAfter("9223372036", epoch)
	assert.Check(t, ok)
	assert.Equal(t, wait, time.Duration(most)*time.Second)

	wait, ok = ParseRetryAfter("9223372037", epoch)
	assert.Check(t, ok)
	assert.Equal(t, wait, time.Duration(math.MaxInt64))
}
