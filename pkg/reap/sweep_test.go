package reap

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// mixed is a sweep scenario: owned pods under every rule, retained and
// foreign pods, and what the sweep must decide about each.
type mixed struct {
	want map[string]string // pod id → "decision reason"
	// runs whose pods outlived the backstop while the run was still going.
	lifetimeRuns []int64
	errorRun     int64 // a run the scenario may break with a GitHub fault
	errorPod     string
}

// newMixed builds the scenario on w over three virtual hours.
func newMixed(t *testing.T, w *world) mixed {
	t.Helper()
	m := mixed{want: map[string]string{}}
	expect := func(id string, d Decision, r Reason) { m.want[id] = string(d) + " " + string(r) }

	// Three hours before the sweep: one pod that runs and one stuck before startup (pod 2 dies in boot).
	long := w.addRun(t)
	expect(w.ownedPod(t, tagsFor(long, 1, 1)), DecisionReclaim, ReasonLifetime)
	stuck := w.addRun(t)
	expect(w.ownedPod(t, tagsFor(stuck, 1, 1)), DecisionReclaim, ReasonLifetime)
	m.lifetimeRuns = []int64{long, stuck}
	w.advance(2*time.Hour + 40*time.Minute)

	done := w.addRun(t)
	retainedTags := tagsFor(done, 1, 1)
	retainedTags.KeepFailed = true
	retained := w.ownedPod(t, retainedTags)
	expect(retained, DecisionKeep, ReasonRetained)
	unrecordedTags := tagsFor(done, 1, 2)
	unrecordedTags.KeepFailed = true
	expect(w.ownedPod(t, unrecordedTags), DecisionReclaim, ReasonRunCompleted)
	expect(w.ownedPod(t, tagsFor(done, 1, 3)), DecisionReclaim, ReasonRunCompleted)

	superseded := w.addRun(t)
	expect(w.ownedPod(t, tagsFor(superseded, 1, 1)), DecisionReclaim, ReasonAttemptSuperseded)
	w.rerun(t, superseded)
	expect(w.ownedPod(t, tagsFor(superseded, 2, 1)), DecisionKeep, ReasonRunActive)

	recent := w.addRun(t)
	recentPod := w.ownedPod(t, tagsFor(recent, 1, 1))
	orphan := w.addRun(t)
	m.errorRun = orphan
	m.errorPod = w.ownedPod(t, tagsFor(orphan, 1, 1))
	expect(m.errorPod, DecisionReclaim, ReasonRunCompleted)
	active := w.addRun(t)
	expect(w.ownedPod(t, tagsFor(active, 1, 1)), DecisionKeep, ReasonRunActive)

	// Foreign pods: none is ever touched, however old.
	other := tagsFor(long, 1, 2)
	other.Repository = w.plant("someone/PLANTEDrepo")
	expect(w.createPod(t, other.PodName(), other.Env()), DecisionSkipForeign, ReasonOtherRepository)
	expect(w.createPod(t, "my-notebook", nil), DecisionSkipForeign, ReasonUntagged)
	expect(w.createPod(t, "rgpu-1-1-c9", tagsFor(long, 1, 3).Env()), DecisionSkipForeign, ReasonNameDisagrees)
	malformed := tagsFor(long, 1, 4).Env()
	malformed[ownership.EnvRunID] = w.plant("run-PLANTED-id")
	expect(w.createPod(t, tagsFor(long, 1, 4).PodName(), malformed), DecisionSkipForeign, ReasonMalformedRunID)
	marker := tagsFor(long, 1, 5).Env()
	marker[ownership.EnvOwner] = w.plant("other-tool:PLANTEDmarker")
	expect(w.createPod(t, tagsFor(long, 1, 5).PodName(), marker), DecisionSkipForeign, ReasonForeignOwner)

	w.advance(10 * time.Minute)
	w.complete(t, done)
	w.complete(t, orphan)
	name, err := ownership.FormatRetentionName(done, 1, []string{retained})
	assert.NilError(t, err)
	_, err = w.cloud.GitHub.AddArtifact(cloud.Repository, done, githubsim.ArtifactSpec{Name: name, Files: map[string]string{"ids.txt": retained}})
	assert.NilError(t, err)
	w.advance(9 * time.Minute)
	w.complete(t, recent)
	expect(recentPod, DecisionKeep, ReasonRunCompletedRecently)
	w.advance(time.Minute)
	return m
}

func mixedWorld(t *testing.T) (*world, mixed) {
	w := newWorld(t, worldOptions{pageSize: 3, faults: runpodsim.Faults{DieDuringBoot: runpodsim.Trigger{Nth: []int{2}}}})
	return w, newMixed(t, w)
}

func TestSweepReclaimsExactlyTheEligiblePods(t *testing.T) {
	w, m := mixedWorld(t)
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true, Event: "schedule"})
	assert.NilError(t, err)
	assert.DeepEqual(t, decisions(rec), m.want)
	assert.Check(t, is.Len(rec.Pods, 15), "the listing followed every page")

	live := w.live()
	for _, p := range rec.Pods {
		assert.Check(t, live[p.PodID] == (p.Decision != DecisionReclaim), "pod %s (%s) live=%v", p.PodID, p.Decision, live[p.PodID])
		if p.Decision != DecisionReclaim {
			assert.Check(t, !p.DeletedAt.Known() && p.Cost == nil)
			continue
		}
		assert.Check(t, p.DeletedAt.Known(), "pod %s deletion confirmed", p.PodID)
		assert.Assert(t, p.Cost != nil)
		bill, err := w.cloud.RunPod.Bill(p.PodID)
		assert.NilError(t, err)
		if p.AgeFrom == AgeFromCreated {
			assert.Check(t, !p.Cost.Dollars().Known, "a pod that never started has an unknown cost, never createdAt's")
			continue
		}
		assert.Check(t, math.Abs(p.Cost.Dollars().USD-bill.Dollars) < 0.001, "pod %s: reported %v, billed %v", p.PodID, p.Cost.Dollars(), bill.Dollars)
	}
	var cancelled []int64
	for _, c := range w.cloud.GitHub.Cancellations() {
		cancelled = append(cancelled, c.RunID)
	}
	assert.DeepEqual(t, cancelled, m.lifetimeRuns)
	assertNoPlanted(t, w, rec)
}

func TestSweepDryRunDecidesTheSameAndDeletesNothing(t *testing.T) {
	w, m := mixedWorld(t)
	before := w.live()
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Event: "workflow_dispatch"})
	assert.NilError(t, err)
	assert.Check(t, !rec.Execute)
	assert.DeepEqual(t, decisions(rec), m.want)
	assert.DeepEqual(t, w.live(), before)
	assert.Check(t, is.Len(w.cloud.GitHub.Cancellations(), 0))
	for _, p := range rec.Pods {
		assert.Check(t, !p.DeletedAt.Known() && p.Cost == nil && p.RunCancellation == "")
	}
	assert.Check(t, is.Contains(rec.Markdown(), "dry run — nothing deleted"))
	assertNoPlanted(t, w, rec)
}

func TestSweepRunLookupErrorLeavesThatPodOnly(t *testing.T) {
	w, m := mixedWorld(t)
	w.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502,
		Path: fmt.Sprintf("/repos/%s/actions/runs/%d", cloud.Repository, m.errorRun)})
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})

	var incomplete *IncompleteError
	assert.Assert(t, errors.As(err, &incomplete), "got %v", err)
	assert.Check(t, errors.Is(err, ErrIncomplete))
	assert.DeepEqual(t, incomplete.Undecided, []string{m.errorPod})
	want := m.want
	want[m.errorPod] = string(DecisionError) + " " + string(ReasonRunLookupFailed)
	assert.DeepEqual(t, decisions(rec), want)
	live := w.live()
	assert.Check(t, live[m.errorPod], "the pod whose run could not be read is untouched")
	for _, p := range rec.Pods {
		if p.Decision == DecisionReclaim {
			assert.Check(t, !live[p.PodID], "the other pods are reaped: %s", p.PodID)
		}
	}
	assert.Check(t, is.Contains(err.Error(), m.errorPod))
}

func TestSweepListingFailureDecidesNothing(t *testing.T) {
	w := newWorld(t, worldOptions{pageSize: 2, maxPages: 2})
	run := w.addRun(t)
	for c := 1; c <= 5; c++ {
		w.ownedPod(t, tagsFor(run, 1, c))
	}
	w.complete(t, run)
	w.advance(time.Hour)
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})
	assert.Check(t, errors.Is(err, runpod.ErrPageBound), "got %v", err)
	assert.Check(t, is.Contains(rec.Error, "page bound"))
	assert.Check(t, is.Len(rec.Pods, 0))
	assert.Check(t, is.Len(w.live(), 5), "nothing is deleted from a partial list")
	assert.Check(t, is.Equal(w.githubCalls(), 0))
}

func TestSweepUnconfirmedDeletionFailsVisiblyAndCancelsNothing(t *testing.T) {
	w := newWorld(t, worldOptions{faults: runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 500}}})
	run := w.addRun(t)
	pod := w.ownedPod(t, tagsFor(run, 1, 1))
	w.advance(3 * time.Hour)
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})
	var incomplete *IncompleteError
	assert.Assert(t, errors.As(err, &incomplete), "got %v", err)
	assert.DeepEqual(t, incomplete.Unconfirmed, []string{pod})
	assert.Equal(t, rec.Pods[0].Decision, DecisionReclaim)
	assert.Check(t, is.Contains(rec.Pods[0].DeleteError, "unconfirmed"))
	assert.Check(t, rec.Pods[0].Failed())
	assert.Check(t, is.Len(w.cloud.GitHub.Cancellations(), 0), "cancellation only follows confirmed deletion")
	assert.Check(t, w.live()[pod])
}

// racingDeleter reruns the pod's run right after deleting it, as a maintainer
// might between the sweep's read and its cancellation.
type racingDeleter struct {
	PodDeleter
	after func()
}

func (d racingDeleter) Delete(ctx context.Context, id string) (time.Time, error) {
	at, err := d.PodDeleter.Delete(ctx, id)
	d.after()
	return at, err
}

func TestSweepNeverCancelsANewerAttempt(t *testing.T) {
	w := newWorld(t, worldOptions{})
	run := w.addRun(t)
	w.ownedPod(t, tagsFor(run, 1, 1))
	w.advance(3 * time.Hour)
	w.sweeper.Deleter = racingDeleter{PodDeleter: w.sweeper.Deleter, after: func() { w.rerun(t, run) }}
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})
	assert.NilError(t, err)
	assert.Equal(t, rec.Pods[0].Reason, ReasonLifetime)
	assert.Check(t, rec.Pods[0].DeletedAt.Known())
	assert.Equal(t, rec.Pods[0].RunCancellation, "not cancelled: attempt 2 is newer than the pod's attempt 1")
	assert.Check(t, is.Len(w.cloud.GitHub.Cancellations(), 0))
}

func TestSweepCancelsARunOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	run := w.addRun(t)
	w.ownedPod(t, tagsFor(run, 1, 1))
	w.ownedPod(t, tagsFor(run, 1, 2))
	w.advance(3 * time.Hour)
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})
	assert.NilError(t, err)
	assert.Equal(t, rec.Pods[0].RunCancellation, fmt.Sprintf("cancelled run %d attempt 1", run))
	assert.Equal(t, rec.Pods[1].RunCancellation, rec.Pods[0].RunCancellation)
	assert.Check(t, is.Len(w.cloud.GitHub.Cancellations(), 1))
}

// TestSweepCallsScaleWithRuns: 300 pods over 10 runs cost one run lookup per
// run and one listing of the repository's retention artifacts (one page here),
// not one listing per run with eligible keep-failed pods.
func TestSweepCallsScaleWithRuns(t *testing.T) {
	w := newWorld(t, worldOptions{pageSize: 100})
	const runs, podsPerRun = 10, 30
	ids := make([]int64, runs)
	for r := range ids {
		ids[r] = w.addRun(t)
		for c := 1; c <= podsPerRun; c++ {
			tags := tagsFor(ids[r], 1, c)
			tags.KeepFailed = r%2 == 0
			w.ownedPod(t, tags)
		}
	}
	for _, id := range ids[:runs/2] {
		w.complete(t, id)
	}
	w.advance(time.Hour)
	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}})
	assert.NilError(t, err)
	assert.Equal(t, rec.Count(DecisionReclaim), runs/2*podsPerRun)
	// Runs 0, 2 and 4 are completed with keep-failed pods: their records come from one listing.
	assert.Equal(t, w.githubCalls(), runs+1)
	assert.Equal(t, w.cloud.RunPod.Requests()[len(w.cloud.RunPod.Requests())-1].Route, "GET /v2/pods")
}

// assertNoPlanted scans the record and the logs for every planted env value.
func assertNoPlanted(t *testing.T, w *world, rec *Record) {
	t.Helper()
	b, err := rec.JSON()
	assert.NilError(t, err)
	assert.Assert(t, len(w.planted) > 0)
	for _, secret := range w.planted {
		assert.Check(t, !strings.Contains(string(b), secret), "record leaks %q", secret)
		assert.Check(t, !strings.Contains(rec.Markdown(), secret), "summary leaks %q", secret)
		assert.Check(t, !strings.Contains(w.logs.String(), secret), "logs leak %q", secret)
	}
	for _, key := range []string{"HF_TOKEN", "RUNNER_JIT_CONFIG", ownership.EnvOwner} {
		assert.Check(t, !strings.Contains(string(b), key), "record names env key %s", key)
	}
}

// deadlineLister records the deadline of the listing's context and stalls
// until it expires, as a hung RunPod edge would.
type deadlineLister struct{ deadline *time.Time }

func (d deadlineLister) ListPods(ctx context.Context, _ runpod.ListPodsQuery) ([]runpod.Pod, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return nil, errors.New("the listing has no deadline")
	}
	*d.deadline = dl
	return nil, context.DeadlineExceeded
}

// A stalled listing ends the sweep within ListPodsTimeout (every outside call
// has a deadline), with nothing decided.
func TestSweepListingHasADeadline(t *testing.T) {
	w := newWorld(t, worldOptions{})
	var deadline time.Time
	w.sweeper.Pods = deadlineLister{deadline: &deadline}
	start := time.Now()

	rec, err := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}, Execute: true})
	end := time.Now()

	assert.Check(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.Check(t, !deadline.Before(start.Add(ListPodsTimeout)) && !deadline.After(end.Add(ListPodsTimeout)),
		"the deadline is ListPodsTimeout after the listing began: %s after the start", deadline.Sub(start))
	assert.Check(t, is.Len(rec.Pods, 0))
}
