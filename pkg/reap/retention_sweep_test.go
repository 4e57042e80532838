package reap

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// TestRetentionRecordsFromOneListing: the records of every run come from one
// listing of the repository's artifacts, which stops at the page that reaches
// past the oldest keep-failed pod; a record the run it names did not upload
// makes that run's records unknown (left undecided, never deleted).
func TestRetentionRecordsFromOneListing(t *testing.T) {
	w := newWorld(t, worldOptions{})
	// 250 older artifacts of another run (three pages of 100), before any pod.
	old := w.addRun(t)
	for i := range 250 {
		_, err := w.cloud.GitHub.AddArtifact(cloud.Repository, old, githubsim.ArtifactSpec{Name: fmt.Sprintf("coverage-%d", i), Files: map[string]string{"a": "b"}})
		assert.NilError(t, err)
	}
	w.advance(2 * time.Hour)

	kept, forged, bare := w.addRun(t), w.addRun(t), w.addRun(t)
	pods := map[int64]string{}
	for _, run := range []int64{kept, forged, bare} {
		tags := tagsFor(run, 1, 1)
		tags.KeepFailed = true
		pods[run] = w.ownedPod(t, tags)
	}
	w.advance(10 * time.Minute)
	record := func(named, uploadedBy int64) {
		name, err := ownership.FormatRetentionName(named, 1, []string{pods[named]})
		assert.NilError(t, err)
		_, err = w.cloud.GitHub.AddArtifact(cloud.Repository, uploadedBy, githubsim.ArtifactSpec{Name: name, Files: map[string]string{"ids.txt": pods[named]}})
		assert.NilError(t, err)
	}
	record(kept, kept)
	record(forged, bare) // another run's workflow uploads a record naming forged's pod
	for _, run := range []int64{kept, forged, bare} {
		w.complete(t, run)
	}
	// 150 newer artifacts of other runs: the records sit on the second page.
	for i := range 150 {
		_, err := w.cloud.GitHub.AddArtifact(cloud.Repository, bare, githubsim.ArtifactSpec{Name: fmt.Sprintf("log-%d", i), Files: map[string]string{"a": "b"}})
		assert.NilError(t, err)
	}
	w.advance(time.Hour)

	before := len(w.cloud.GitHub.Requests())
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}})
	assert.Check(t, errors.Is(err, ErrIncomplete), "the forged run's pod is undecided: %v", err)
	got := decisions(rec)
	assert.Check(t, is.Equal(got[pods[kept]], "keep retained-for-debug"))
	assert.Check(t, is.Equal(got[pods[forged]], "error retention-lookup-failed"), "a record uploaded by another run is not trusted")
	assert.Check(t, is.Equal(got[pods[bare]], "reclaim run-completed"))
	for _, p := range rec.Pods {
		if p.PodID == pods[forged] {
			assert.Check(t, is.Contains(p.Detail, fmt.Sprintf("belongs to run %d", bare)))
		}
	}

	var listings, runReads int
	for _, r := range w.cloud.GitHub.Requests()[before:] {
		switch r.Path {
		case "/repos/" + cloud.Repository + "/actions/artifacts":
			listings++
		default:
			runReads++
		}
	}
	// 402 artifacts newest first (five pages): page 2 ends with the older ones
	// (created two hours before the pods, past the hour of clock skew
	// allowed), so the listing stops there.
	assert.Check(t, is.Equal(listings, 2), "pages of the repository listing")
	assert.Check(t, is.Equal(runReads, 3), "one read per run")
}
