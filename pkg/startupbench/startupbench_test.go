package startupbench

import (
	"context"
	"io"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestRunWantsAtLeastOneStart(t *testing.T) {
	err := Run(context.Background(), io.Discard, "", 0)
	assert.Error(t, err, "-n 0: want at least 1 start per role")
}

func TestSummaries(t *testing.T) {
	ds := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 10 * time.Millisecond}
	assert.Equal(t, mean(ds), 4*time.Millisecond)
	assert.Equal(t, median(ds), 3*time.Millisecond) // the upper middle of an even count
	assert.DeepEqual(t, ds, []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 10 * time.Millisecond})
	assert.Equal(t, ms(1500*time.Microsecond), "1.50 ms")
}

func TestStartRefusesARoleThatDoesNotStopOnItsInputs(t *testing.T) {
	_, err := start(context.Background(), program{path: "true"}, t.TempDir(), nil)
	assert.ErrorContains(t, err, "want an input error and a non-zero exit")
	d, err := start(context.Background(), program{path: "sh", args: []string{"-c", "echo '::error::missing input'; exit 1"}}, t.TempDir(), nil)
	assert.NilError(t, err)
	assert.Assert(t, d > 0)
}
