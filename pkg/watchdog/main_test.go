package watchdog

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// packageBound is how long the whole package's tests may take on the wall
// clock. They run on virtual time and take a few seconds even on a loaded
// machine; a run past the bound is waiting on the wall clock — a real sleep
// where the injected one was meant (a watch polls every 30 s for an hour) —
// and would otherwise hang until go test's own timeout.
const packageBound = 2 * time.Minute

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
