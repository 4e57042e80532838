package reap

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// A pod a developer started with the runpod-gpu command line carries the
// developer marker; the reaper must never touch it, however old it is and
// whatever its name looks like, while it still reclaims the CI pod beside it.
func TestSweepNeverTouchesDeveloperPods(t *testing.T) {
	w := newWorld(t, worldOptions{})
	runID := w.addRun(t)
	w.rerun(t, runID) // attempt 1 is superseded: its pod is reclaimable
	ciPod := w.ownedPod(t, tagsFor(runID, 1, 1))
	dev := w.createPod(t, "dev", ownership.DeveloperEnv("alice"))
	// The same tags as the CI pod and its exact name, but the developer's marker.
	lookalikeEnv := tagsFor(runID, 1, 2).Env()
	for k, v := range ownership.DeveloperEnv("bob") {
		lookalikeEnv[k] = v
	}
	lookalike := w.createPod(t, tagsFor(runID, 1, 2).PodName(), lookalikeEnv)
	w.advance(MaxLifetime + time.Hour) // past the backstop that reclaims any owned pod

	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true, Event: "schedule"})
	assert.NilError(t, err)
	got := decisions(rec)
	assert.Equal(t, got[ciPod], "reclaim lifetime-exceeded")
	assert.Equal(t, got[dev], "skip-foreign foreign-owner-marker")
	assert.Equal(t, got[lookalike], "skip-foreign foreign-owner-marker")
	live := w.live()
	assert.Check(t, !live[ciPod])
	assert.Check(t, live[dev] && live[lookalike], "developer pods survive the sweep")
	assertNoPlanted(t, w, rec)
}
