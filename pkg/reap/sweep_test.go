package reap

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/wire"
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
		assert.Check(t, math.Abs(p.Cost.Dollars().USD.Dollars()-bill.Dollars) < 0.001, "pod %s: reported %v, billed %v", p.PodID, p.Cost.Dollars(), bill.Dollars)
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

// fakeLister lists fixed pods and records the time its context had left.
type fakeLister struct {
	pods []runpod.Pod
	left time.Duration
}

func (f *fakeLister) ListPods(ctx context.Context, _ runpod.ListPodsQuery) ([]runpod.Pod, error) {
	if dl, ok := ctx.Deadline(); ok {
		f.left = time.Until(dl)
	}
	return f.pods, ctx.Err()
}

// fakeDeleter confirms every deletion at the clock's time unless told otherwise.
type fakeDeleter struct {
	errs    map[string]error
	deleted []string
}

func (f *fakeDeleter) Delete(_ context.Context, id string) (time.Time, error) {
	if err := f.errs[id]; err != nil {
		return time.Time{}, err
	}
	f.deleted = append(f.deleted, id)
	return decisionNow, nil
}

func sweeperOf(pods []runpod.Pod, runs *fakeRuns, del *fakeDeleter) (*Sweeper, *fakeLister) {
	lister := &fakeLister{pods: pods}
	return &Sweeper{Pods: lister, GitHub: runs, Deleter: del, Clock: fixedClock(decisionNow)}, lister
}

// A pod past the backstop is deleted, then its run is re-read and cancelled
// only while that answer is the pod's run at the pod's attempt and running.
// Two pods of one run cancel it once.
func TestSweepLifetimeCancellationOutcomes(t *testing.T) {
	other := ghRun(1, "in_progress")
	other.ID = github.Int64(testRun + 1)
	for _, tc := range []struct {
		name       string
		runs       fakeRuns
		wantCalls  []string
		wantCancel string // RunCancellation of both pods
		wantErr    string // CancelError of the first pod; "" when none
	}{
		{name: "running: cancelled once", runs: fakeRuns{run: ghRun(1, "in_progress")},
			wantCalls:  []string{"GET run 9001", "CANCEL run 9001"},
			wantCancel: "cancelled run 9001 attempt 1"},
		{name: "not found", runs: fakeRuns{runErr: fmt.Errorf("404: %w", ghapi.ErrNotFound)},
			wantCalls:  []string{"GET run 9001"},
			wantCancel: "not cancelled: run 9001 was not found"},
		{name: "newer attempt", runs: fakeRuns{run: ghRun(2, "in_progress")},
			wantCalls:  []string{"GET run 9001"},
			wantCancel: "not cancelled: attempt 2 is newer than the pod's attempt 1"},
		{name: "completed", runs: fakeRuns{run: ghRun(1, "completed")},
			wantCalls:  []string{"GET run 9001"},
			wantCancel: "not cancelled: the run already completed"},
		{name: "completed meanwhile", runs: fakeRuns{run: ghRun(1, "in_progress"), cancelErr: fmt.Errorf("409: %w", ghapi.ErrRunCompleted)},
			wantCalls:  []string{"GET run 9001", "CANCEL run 9001"},
			wantCancel: "not cancelled: the run completed meanwhile"},
		{name: "read fails: each pod retries and fails", runs: fakeRuns{runErr: errors.New("502 Bad Gateway")},
			wantCalls: []string{"GET run 9001", "GET run 9001"},
			wantErr:   "502 Bad Gateway"},
		{name: "cancel refused", runs: fakeRuns{run: ghRun(1, "in_progress"), cancelErr: errors.New("403 Forbidden")},
			wantCalls: []string{"GET run 9001", "CANCEL run 9001", "GET run 9001", "CANCEL run 9001"},
			wantErr:   "403 Forbidden"},
		{name: "an answer about another run", runs: fakeRuns{run: other},
			wantCalls: []string{"GET run 9001", "GET run 9001"},
			wantErr: "run 9001 not cancelled: asked for run 9001 of org/gpu-project .github/workflows/runpod-gpu.yml, GitHub answered with run 9002 of org/gpu-project .github/workflows/runpod-gpu.yml; " +
				"the answer is not trusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := testTags(), testTags()
			second.Candidate = 2
			del := &fakeDeleter{}
			s, _ := sweeperOf([]runpod.Pod{ownedPod(first, 3*time.Hour), ownedPod(second, 3*time.Hour)}, &tc.runs, del)

			rec, err := s.Sweep(context.Background(), Request{Scope: testScope, Execute: true})

			assert.DeepEqual(t, del.deleted, []string{"pod1", "pod2"})
			assert.DeepEqual(t, tc.runs.calls, tc.wantCalls)
			for _, p := range rec.Pods {
				assert.Check(t, is.Equal(p.Reason, ReasonLifetime))
				assert.Check(t, is.Equal(p.RunCancellation, tc.wantCancel), p.PodID)
				assert.Check(t, is.Equal(p.CancelError, tc.wantErr), p.PodID)
			}
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, "reap: sweep incomplete: 2 pod(s) deleted, but the owning run's cancellation failed: pod1, pod2 — see the decision record; the next sweep retries")
			assert.Check(t, is.Contains(rec.Markdown(), "| **failed:** "+cell(tc.wantErr)+" |"))
		})
	}
}

// A reclaim that is not a lifetime reclaim never cancels anything, and an
// unconfirmed deletion is named in the error and the record.
func TestSweepIncompleteNamesEveryKind(t *testing.T) {
	completed := testTags()
	failing := testTags()
	failing.Candidate = 2
	undecided := testTags()
	undecided.RunID, undecided.Candidate = testRun+5, 3
	pods := []runpod.Pod{ownedPod(completed, time.Hour), ownedPod(failing, time.Hour), ownedPod(undecided, time.Hour)}
	run := ghRun(1, "completed")
	run.UpdatedAt = &github.Timestamp{Time: decisionNow.Add(-CompletedGrace)}
	runs := &fakeRuns{run: run, failIDs: map[int64]error{testRun + 5: errors.New("502 Bad Gateway")}}
	del := &fakeDeleter{errs: map[string]error{"pod2": errors.New("deletion of pod pod2 unconfirmed")}}
	s, _ := sweeperOf(pods, runs, del)

	rec, err := s.Sweep(context.Background(), Request{Scope: testScope, Execute: true})

	assert.Error(t, err, "reap: sweep incomplete: 1 pod(s) undecided (facts unreadable, left untouched): pod3; "+
		"1 pod(s) deletion unconfirmed (may still be billing): pod2 — see the decision record; the next sweep retries")
	assert.Check(t, errors.Is(err, ErrIncomplete))
	assert.DeepEqual(t, del.deleted, []string{"pod1"})
	// No cancel after a completed-run reclaim.
	assert.DeepEqual(t, runs.calls, []string{"GET run 9001", "GET run 9006"})
	assert.Check(t, is.Equal(rec.Pods[0].Reason, ReasonRunCompleted))
	assert.Check(t, is.Equal(rec.Pods[1].DeleteError, "deletion of pod pod2 unconfirmed"))
	assert.Check(t, is.Contains(rec.Markdown(), "| **unconfirmed:** deletion of pod pod2 unconfirmed |"))
	assert.Check(t, is.Equal(rec.Pods[2].Decision, DecisionError))
}

// Each lookup is bounded by LookupTimeout (60 s by default) and the listing
// by ListPodsTimeout (3 min), so a stalled answer fails one run, not the sweep.
func TestSweepLookupBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{name: "default", want: DefaultLookupTimeout},
		{name: "configured", timeout: 5 * time.Second, want: 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := &fakeRuns{run: ghRun(1, "in_progress")}
			s, lister := sweeperOf([]runpod.Pod{ownedPod(testTags(), time.Hour)}, runs, &fakeDeleter{})
			s.LookupTimeout = tc.timeout

			rec, err := s.Sweep(context.Background(), Request{Scope: testScope})

			assert.NilError(t, err)
			assert.Check(t, is.Equal(rec.Pods[0].Reason, ReasonRunActive))
			assert.Check(t, lister.left <= ListPodsTimeout && lister.left > ListPodsTimeout-time.Second, "listing had %s", lister.left)
			assert.Assert(t, is.Len(runs.left, 1))
			assert.Check(t, runs.left[0] <= tc.want && runs.left[0] > tc.want-time.Second, "lookup had %s", runs.left[0])
		})
	}
}

// The retention records are read in one listing back to the oldest relevant
// pod's creation less an hour of clock skew — or all of them when a pod's
// creation is unknown — and a failed listing leaves every such pod undecided.
func TestSweepRetentionListingHorizonAndFailure(t *testing.T) {
	keep := func(candidate int, createdAgo time.Duration) runpod.Pod {
		tags := testTags()
		tags.Candidate, tags.KeepFailed = candidate, true
		p := ownedPod(tags, time.Hour)
		p.CreatedAt = wire.KnownTime(decisionNow.Add(-createdAgo))
		return p
	}
	unknownCreation := keep(3, 0)
	unknownCreation.CreatedAt = wire.Time{}
	for _, tc := range []struct {
		name      string
		pods      []runpod.Pod
		artErr    error
		wantSince time.Time
	}{
		{name: "oldest creation less an hour", pods: []runpod.Pod{keep(1, 70*time.Minute), keep(2, 90*time.Minute)},
			wantSince: decisionNow.Add(-90*time.Minute - time.Hour)},
		{name: "oldest first", pods: []runpod.Pod{keep(2, 90*time.Minute), keep(1, 70*time.Minute)},
			wantSince: decisionNow.Add(-90*time.Minute - time.Hour)},
		{name: "a creation unknown: every record", pods: []runpod.Pod{keep(1, 70*time.Minute), unknownCreation}},
		{name: "listing fails", pods: []runpod.Pod{keep(1, 70*time.Minute)}, artErr: errors.New("502 Bad Gateway"),
			wantSince: decisionNow.Add(-70*time.Minute - time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := ghRun(1, "completed")
			run.UpdatedAt = &github.Timestamp{Time: decisionNow.Add(-time.Hour)}
			runs := &fakeRuns{run: run, artErr: tc.artErr}
			s, _ := sweeperOf(tc.pods, runs, &fakeDeleter{})

			rec, err := s.Sweep(context.Background(), Request{Scope: testScope})

			assert.DeepEqual(t, runs.since, []time.Time{tc.wantSince})
			assert.DeepEqual(t, runs.calls, []string{"GET run 9001", "LIST " + ownership.RetentionPrefix})
			if tc.artErr == nil {
				assert.NilError(t, err)
				for _, p := range rec.Pods {
					assert.Check(t, is.Equal(p.Reason, ReasonRunCompleted), p.PodID)
				}
				return
			}
			assert.Check(t, errors.Is(err, ErrIncomplete))
			assert.Check(t, is.Equal(rec.Pods[0].Reason, ReasonRetentionLookupFailed))
			assert.Check(t, is.Equal(rec.Pods[0].Detail, "502 Bad Gateway"))
		})
	}
}

// A retention listing's entries that are not records, are malformed, name
// another run, or have expired keep nothing.
func TestSweepRetentionListingEntries(t *testing.T) {
	tags := testTags()
	tags.KeepFailed = true
	pod := ownedPod(tags, time.Hour)
	run := ghRun(1, "completed")
	run.UpdatedAt = &github.Timestamp{Time: decisionNow.Add(-time.Hour)}
	name, err := ownership.FormatRetentionName(testRun, 1, []string{pod.ID})
	assert.NilError(t, err)
	otherName, err := ownership.FormatRetentionName(testRun+1, 1, []string{pod.ID})
	assert.NilError(t, err)
	artifact := func(id int64, name string, runID int64, expired bool) *github.Artifact {
		return &github.Artifact{ID: github.Int64(id), Name: github.String(name), Expired: github.Bool(expired),
			WorkflowRun: &github.ArtifactWorkflowRun{ID: github.Int64(runID)}}
	}
	for _, tc := range []struct {
		name       string
		artifacts  []*github.Artifact
		wantReason Reason
		wantLog    string
	}{
		{name: "its record", artifacts: []*github.Artifact{artifact(1, name, testRun, false)}, wantReason: ReasonRetained},
		{name: "expired", artifacts: []*github.Artifact{artifact(1, name, testRun, true)}, wantReason: ReasonRunCompleted,
			wantLog: "run 9001: retention record \"" + name + "\" has expired; its pods are reclaimable"},
		{name: "another run's record", artifacts: []*github.Artifact{artifact(1, otherName, testRun+1, false)}, wantReason: ReasonRunCompleted},
		{name: "not a record", artifacts: []*github.Artifact{artifact(1, "coverage", testRun, false)}, wantReason: ReasonRunCompleted},
		{name: "malformed", artifacts: []*github.Artifact{artifact(7, ownership.RetentionPrefix+"9001-x", testRun, false)}, wantReason: ReasonRunCompleted,
			wantLog: "ignoring artifact 7: "},
		{name: "uploaded by another run", artifacts: []*github.Artifact{artifact(8, name, testRun+1, false), artifact(1, name, testRun, false)},
			wantReason: ReasonRetentionLookupFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs []string
			s, _ := sweeperOf([]runpod.Pod{pod}, &fakeRuns{run: run, artifacts: tc.artifacts}, &fakeDeleter{})
			s.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }

			rec, _ := s.Sweep(context.Background(), Request{Scope: testScope})

			assert.Check(t, is.Equal(rec.Pods[0].Reason, tc.wantReason))
			if tc.wantLog != "" {
				assert.Check(t, is.Contains(strings.Join(logs, "\n"), tc.wantLog))
			}
		})
	}
}

// A run's keep-failed pods may be hours apart (attempt 1's, then a rerun's):
// the retention listing must reach back to the oldest of them, whatever the
// listing order, or attempt 1's record is not read and the pod it retains is
// deleted before the retention cap.
func TestSweepRetentionReachesTheRunsOldestPod(t *testing.T) {
	old := testTags()
	old.KeepFailed = true
	oldPod := ownedPod(old, 10*time.Hour) // past the backstop, under the 24 h cap
	oldPod.ID = "podold"
	rerun := old
	rerun.Attempt = 2
	newPod := ownedPod(rerun, 30*time.Minute)
	newPod.ID = "podnew"
	name, err := ownership.FormatRetentionName(testRun, 1, []string{oldPod.ID})
	assert.NilError(t, err)
	record := &github.Artifact{ID: github.Int64(1), Name: github.String(name), Expired: github.Bool(false),
		CreatedAt:   &github.Timestamp{Time: decisionNow.Add(-10*time.Hour + 5*time.Minute)},
		WorkflowRun: &github.ArtifactWorkflowRun{ID: github.Int64(testRun)}}
	run := ghRun(2, "completed")
	run.UpdatedAt = &github.Timestamp{Time: decisionNow.Add(-10 * time.Minute)}
	for name, pods := range map[string][]runpod.Pod{
		"oldest listed first": {oldPod, newPod},
		"newest listed first": {newPod, oldPod},
	} {
		t.Run(name, func(t *testing.T) {
			runs := &fakeRuns{run: run, artifacts: []*github.Artifact{record}}
			s, _ := sweeperOf(pods, runs, &fakeDeleter{})

			rec, err := s.Sweep(context.Background(), Request{Scope: testScope})

			assert.NilError(t, err)
			assert.DeepEqual(t, decisions(rec), map[string]string{
				"podold": "keep retained-for-debug",
				"podnew": "reclaim run-completed",
			})
			assert.DeepEqual(t, runs.since, []time.Time{decisionNow.Add(-10*time.Hour - time.Minute - time.Hour)})
		})
	}
}

// Each run lookup sends at most LookupAttempts requests (2 by default): one
// 502 is retried by default, but not when one attempt is configured.
func TestSweepLookupAttempts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts int
		failures int
		want     string
	}{
		{name: "default: one 502 retried", failures: 1, want: "keep run-active"},
		{name: "default: two 502s fail the lookup", failures: 2, want: "error run-lookup-failed"},
		{name: "one attempt: one 502 fails the lookup", attempts: 1, failures: 1, want: "error run-lookup-failed"},
		{name: "three attempts: two 502s retried", attempts: 3, failures: 2, want: "keep run-active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOptions{})
			runID := w.addRun(t)
			pod := w.ownedPod(t, tagsFor(runID, 1, 1))
			w.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502, Times: tc.failures,
				Path: fmt.Sprintf("/repos/%s/actions/runs/%d", cloud.Repository, runID)})
			w.sweeper.LookupAttempts = tc.attempts

			rec, _ := w.sweeper.Sweep(context.Background(), Request{Scope: Scope{Repository: cloud.Repository}})

			assert.Equal(t, decisions(rec)[pod], tc.want)
		})
	}
}

// Unconfirmed deletions and failed cancels both fail the sweep, however many
// of each; the log shows each decision, with its detail only when it has one.
func TestSweepIncompleteMixAndDecisionLog(t *testing.T) {
	gone := testTags()
	cancelled := testTags()
	cancelled.Candidate = 2
	untagged := runpod.Pod{ID: "dev1", Name: "my-notebook", Status: runpod.PodRunning}
	runs := &fakeRuns{run: ghRun(1, "in_progress"), cancelErr: errors.New("403 Forbidden")}
	del := &fakeDeleter{errs: map[string]error{"pod1": errors.New("deletion of pod pod1 unconfirmed")}}
	s, _ := sweeperOf([]runpod.Pod{ownedPod(gone, 3*time.Hour), ownedPod(cancelled, 3*time.Hour), untagged}, runs, del)
	var logs []string
	s.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }

	_, err := s.Sweep(context.Background(), Request{Scope: testScope, Execute: true})

	assert.Error(t, err, "reap: sweep incomplete: 1 pod(s) deletion unconfirmed (may still be billing): pod1; "+
		"1 pod(s) deleted, but the owning run's cancellation failed: pod2 — see the decision record; the next sweep retries")
	var decided []string
	for _, l := range logs {
		if strings.HasPrefix(l, "pod ") && strings.Contains(l, "): ") {
			decided = append(decided, l)
		}
	}
	assert.DeepEqual(t, decided, []string{
		"pod pod1 (rgpu-9001-1-c1): reclaim, lifetime-exceeded: active 3h0m0s (since startedAt), over the 2h0m0s backstop",
		"pod pod2 (rgpu-9001-1-c2): reclaim, lifetime-exceeded: active 3h0m0s (since startedAt), over the 2h0m0s backstop",
		"pod dev1 (my-notebook): skip-foreign, untagged",
	})
}
