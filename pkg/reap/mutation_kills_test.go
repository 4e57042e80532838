package reap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/org/runpod-gpu/pkg/wire"
)

// The tests in this file pin what mutation testing (issue 21) found
// untested: each outcome of the run's cancellation after a lifetime reclaim,
// the incomplete sweep's exact text, the lookups' bounds and the retention
// listing's failure and horizon.

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

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

// fakeRuns answers run reads (first from reads, then from run), artifact
// listings and cancels, recording each call and the time its context had left.
type fakeRuns struct {
	run       *github.WorkflowRun
	runErr    error
	failIDs   map[int64]error // runs whose read fails with this error
	cancelErr error
	artifacts []*github.Artifact
	artErr    error
	calls     []string
	since     []time.Time
	left      []time.Duration
}

func (f *fakeRuns) record(ctx context.Context, call string) error {
	f.calls = append(f.calls, call)
	if dl, ok := ctx.Deadline(); ok {
		f.left = append(f.left, time.Until(dl))
	}
	return ctx.Err()
}

func (f *fakeRuns) GetWorkflowRun(ctx context.Context, id int64) (*github.WorkflowRun, error) {
	if err := f.record(ctx, fmt.Sprintf("GET run %d", id)); err != nil {
		return nil, err
	}
	if err := f.failIDs[id]; err != nil {
		return nil, err
	}
	return f.run, f.runErr
}

func (f *fakeRuns) ArtifactsWithPrefix(ctx context.Context, prefix string, since time.Time) ([]*github.Artifact, error) {
	f.since = append(f.since, since)
	if err := f.record(ctx, "LIST "+prefix); err != nil {
		return nil, err
	}
	var out []*github.Artifact
	for _, a := range f.artifacts {
		if a.CreatedAt == nil || !a.GetCreatedAt().Before(since) {
			out = append(out, a)
		}
	}
	return out, f.artErr
}

func (f *fakeRuns) CancelWorkflowRun(ctx context.Context, id int64) error {
	if err := f.record(ctx, fmt.Sprintf("CANCEL run %d", id)); err != nil {
		return err
	}
	return f.cancelErr
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

func ghRun(attempt int, status string) *github.WorkflowRun {
	return &github.WorkflowRun{ID: github.Int64(testRun), RunAttempt: github.Int(attempt), Status: github.String(status),
		Path: github.String(testWorkflow), Repository: &github.Repository{FullName: github.String(testRepo)}}
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

func TestRecordWriteFile(t *testing.T) {
	rec := &Record{Version: RecordVersion, CheckedAt: decisionNow, Repository: testRepo, Pods: []PodRecord{}}
	path := filepath.Join(t.TempDir(), "record.json")
	assert.NilError(t, rec.WriteFile(path))
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	want, err := rec.JSON()
	assert.NilError(t, err)
	assert.Equal(t, string(data), string(want))
	assert.Check(t, strings.HasSuffix(string(data), "}\n"))

	err = rec.WriteFile(filepath.Join(t.TempDir(), "missing", "record.json"))
	assert.ErrorContains(t, err, "reap: write decision record: open ")
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

// A run id or attempt of zero is malformed by name, not a generic tag error:
// the record says which tag is wrong.
func TestViewNamesTheMalformedTag(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		want       Reason
	}{
		{ownership.EnvRunID, "0", ReasonMalformedRunID},
		{ownership.EnvRunID, "-1", ReasonMalformedRunID},
		{ownership.EnvRunID, "x", ReasonMalformedRunID},
		{ownership.EnvAttempt, "0", ReasonMalformedAttempt},
		{ownership.EnvAttempt, "-1", ReasonMalformedAttempt},
		{ownership.EnvCandidate, "x", ReasonMalformedTags},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			p := ownedPod(testTags(), time.Hour)
			p.Env[tc.key] = tc.value
			assert.Equal(t, View(p, testScope).Foreign, tc.want)
		})
	}
}

// The summary's overflow line counts exactly the pods left out, and the cost
// disclaimer appears only when an executed sweep reclaimed something.
func TestRecordMarkdownCountsAndDisclaimer(t *testing.T) {
	rec := &Record{CheckedAt: decisionNow, Repository: testRepo, Execute: true}
	for i := range maxSummaryRows + 5 {
		rec.Pods = append(rec.Pods, PodRecord{PodID: fmt.Sprint("p", i), Decision: DecisionKeep, Reason: ReasonRunActive})
	}
	md := rec.Markdown()
	assert.Check(t, is.Contains(md, "\n\n5 more pod(s) are in the decision record.\n"))
	assert.Check(t, !strings.Contains(md, "Estimates, not invoices"), "nothing reclaimed: no cost disclaimer")

	rec.Pods[0].Decision, rec.Pods[0].Reason = DecisionReclaim, ReasonLifetime
	assert.Check(t, is.Contains(rec.Markdown(), "Estimates, not invoices"))
	rec.Execute = false
	assert.Check(t, !strings.Contains(rec.Markdown(), "Estimates, not invoices"), "a dry run deletes nothing")
}

// An executed Serverless sweep that reclaims nothing lists once: no
// confirmation listing without deletions to confirm.
func TestServerlessSweepWithoutReclaimListsOnce(t *testing.T) {
	api := &fakeSls{}
	api.endpoints, api.templates = slsPair(testRepo, time.Minute)
	s := &ServerlessSweeper{API: api, GitHub: &fakeRuns{run: ghRun(1, "in_progress")}, Clock: fixedClock(decisionNow)}

	recs, err := s.Sweep(context.Background(), testRepo, true)

	assert.NilError(t, err)
	assert.Check(t, is.Equal(recs[0].Reason, SlsReasonRunActive))
	assert.Check(t, is.Equal(api.lists, 2), "one ListEndpoints and one ListTemplates")
	assert.Check(t, is.Len(api.calls, 0))
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

// A table of exactly maxSummaryRows pods shows them all and has no overflow line.
func TestRecordMarkdownAtExactlyTheRowBound(t *testing.T) {
	rec := &Record{CheckedAt: decisionNow, Repository: testRepo}
	for i := range maxSummaryRows {
		rec.Pods = append(rec.Pods, PodRecord{PodID: fmt.Sprint("p", i), Decision: DecisionKeep, Reason: ReasonRunActive})
	}
	md := rec.Markdown()
	assert.Check(t, is.Contains(md, fmt.Sprintf("| p%d |", maxSummaryRows-1)))
	assert.Check(t, !strings.Contains(md, "more pod(s)"), "no pod was left out")
}
