package cost

import (
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/wire"
)

// at parses a timestamp in either API layout, failing the test on error.
func at(t *testing.T, s string) wire.Time {
	t.Helper()
	v, err := wire.ParseTime(s)
	if err != nil {
		t.Fatalf("bad test timestamp %q: %v", s, err)
	}
	return wire.KnownTime(v)
}

// base is the paid window start most tests use.
var base = time.Date(2026, 9, 23, 8, 48, 28, 0, time.UTC)

// sec returns base plus n seconds as a known time.
func sec(n float64) wire.Time {
	return wire.KnownTime(base.Add(time.Duration(n * float64(time.Second))))
}
