package watchdog

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// packageBound is how long the whole package's tests may take on the wall
// clock. They run on virtual time and take about a second (a few on a loaded
// machine); a run past the bound is waiting on the wall clock — a real sleep
// where the injected one was meant (a watch polls every 30 s for an hour) —
// and would otherwise hang until go test's own timeout (or, under .ci/mutation,
// time out instead of failing: the bound stays under gremlins' per-mutant limit).
const packageBound = 30 * time.Second

// TestMain turns such a hang into a prompt failure whose goroutine dump
// shows the test and the line that waits.
func TestMain(m *testing.M) {
	guard := time.AfterFunc(packageBound, func() {
		panic(fmt.Sprintf("watchdog tests still running after %s: something waits on the wall clock instead of the virtual one", packageBound))
	})
	code := m.Run()
	guard.Stop()
	os.Exit(code)
}
