package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// goStringLayouts are the layouts of Go's time.Time.String output that live
// RunPod v1 records used ("2026-09-23 08:48:28.204 +0000 UTC"); the fraction is
// optional and may have 1–9 digits, which the .999999999 form accepts.
var goStringLayouts = []string{
	"2006-01-02 15:04:05.999999999 -0700 MST",
	"2006-01-02 15:04:05.999999999 -0700 -0700", // zones without an abbreviation print the offset twice
	"2006-01-02 15:04:05.999999999 -0700",
}

// ParseTime parses an API timestamp in RFC 3339 (any fraction) or in Go's
// time.String layout, and returns it in UTC. Go's monotonic suffix (" m=+1.2") is
// ignored. The error names the value and the accepted forms.
func ParseTime(s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	if i := strings.Index(v, " m="); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return time.Time{}, fmt.Errorf("timestamp %q: empty; want RFC 3339 or Go layout \"2006-01-02 15:04:05.000 +0000 UTC\"", s)
	}
	for _, layout := range append([]string{time.RFC3339Nano}, goStringLayouts...) {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		// Outside years 1–9999 (in UTC) RFC 3339 cannot write the time back.
		if y := t.UTC().Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("timestamp %q: year %d in UTC is outside 0001–9999", s, y)
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %q: want RFC 3339 (2026-09-23T08:48:28Z) or Go layout (2026-09-23 08:48:28.204 +0000 UTC)", s)
}

// Time is a timestamp that may be unknown. JSON null, "" or an absent field
// decode to unknown; unknown is never the zero time, so a missing start can
// never be mistaken for the epoch or silently replaced.
type Time struct {
	t     time.Time
	known bool
}

// KnownTime returns a known Time holding t in UTC.
func KnownTime(t time.Time) Time { return Time{t: t.UTC(), known: true} }

// Get returns the time and whether it is known.
func (w Time) Get() (time.Time, bool) { return w.t, w.known }

// Known reports whether the time is known.
func (w Time) Known() bool { return w.known }

// String renders the time in RFC 3339 or "unknown".
func (w Time) String() string {
	if !w.known {
		return "unknown"
	}
	return w.t.Format(time.RFC3339Nano)
}

// UnmarshalJSON accepts a string in either layout, "" or null (unknown).
func (w *Time) UnmarshalJSON(b []byte) error {
	*w = Time{}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp %s: want a JSON string or null", truncate(b))
	}
	if strings.TrimSpace(s) == "" {
		return nil
	}
	t, err := ParseTime(s)
	if err != nil {
		return err
	}
	*w = KnownTime(t)
	return nil
}

// MarshalJSON writes null when unknown and RFC 3339 UTC otherwise.
func (w Time) MarshalJSON() ([]byte, error) {
	if !w.known {
		return []byte("null"), nil
	}
	return json.Marshal(w.t.UTC().Format(time.RFC3339Nano))
}

// truncate keeps error messages short when outside data is large.
func truncate(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
