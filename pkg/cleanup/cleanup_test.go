package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/wire"
)

func TestRunDeletesTheAcceptedPodAndReportsItsStages(t *testing.T) {
	s := newScene(t, runpodsim.Faults{}, gpuJob(label(1), 30, 120, 5))
	id := s.launch(t, s.tags(1), true)
	// Boot, the proof, then the GPU job's 155 s on the pod's runner.
	s.clock.Advance(4 * time.Minute)
	assert.Equal(t, s.status(t, id), runpodsim.StatusRunning)

	req := s.request(id)
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(money.PerHour(0.30), cost.SnapshotSource), GPU: gpuID, Tier: "ampere"}
	// Provision rejected a candidate before this one; its output reaches cleanup.
	provisioned, err := cost.ParseProvisionAttempts(cost.FormatAttempts([]cost.Attempt{{Number: 1, Candidate: "live-1", GPU: gpuID, PodID: "rejected1",
		Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost while running"), Outcome: cost.OutcomeRejected, Seconds: cost.KnownSeconds(72),
		Reason: "pod EXITED while starting (the CUDA smoke proof or the runner failed)"}}))
	assert.NilError(t, err)
	req.Provision = provisioned
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{id})
	assert.Check(t, is.Len(res.Remaining(), 0))
	assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)

	r := res.Report
	assert.NilError(t, r.Validate())
	assert.Equal(t, r.Price.Source, "v2 cost before deletion", "the record read before deletion wins over the snapshot")
	assert.Equal(t, r.Price.PerHour, money.PerHour(0.25))
	assert.Equal(t, r.Tier, "ampere")
	var tests int64
	for _, st := range r.Stages {
		if st.Kind == cost.StageTests {
			tests += st.Seconds
		}
	}
	assert.Equal(t, tests, int64(120), "the test step's seconds, from GitHub's step times")
	bill, err := s.cloud.RunPod.Bill(id)
	assert.NilError(t, err)
	assert.Equal(t, r.Window.Seconds(), cost.KnownSeconds(bill.Seconds), "the paid window matches what the provider billed")
	assert.Equal(t, r.Total().String(), cost.KnownMoney(r.Dollars().USD+money.PerHour(0.25).For(72*time.Second)).String(), "the run total includes provision's rejected candidate")
	golden.Assert(t, res.Summary(nil), "summary-accepted.golden")
}

func TestRunPodAlreadyGoneIsSuccess(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(time.Minute)
	assert.NilError(t, s.rp.DeletePod(context.Background(), id))

	req := s.request(id)
	started := virtualStart.Add(10 * time.Second)
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(money.PerHour(0.25), cost.SnapshotSource), StartedAt: wire.KnownTime(started)}
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Deletions, 1))
	assert.Check(t, res.Deletions[0].AlreadyGone)
	assert.Check(t, res.Deletions[0].Confirmed())
	assert.Equal(t, res.Report.Price.Source, cost.SnapshotSource)
	assert.Equal(t, res.Report.Window.Start, wire.KnownTime(started))
	assert.Check(t, is.Contains(strings.Join(res.Report.Notes, "\n"), "already gone"))
	assert.Check(t, is.Contains(res.Summary(nil), "| already gone |"))
}

func TestRunDeletesOnlyPodsOfThisRunAttempt(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	tracked := s.launch(t, s.tags(2), false)
	lost := s.launch(t, s.tags(1), false) // a provision step killed before it published this id
	otherRun := s.tags(1)
	otherRun.RunID += 1000
	otherAttempt := s.tags(1)
	otherAttempt.Attempt = 2
	foreign := []string{
		s.launch(t, otherRun, false),
		s.launch(t, otherAttempt, false),
		s.untagged(t, "my-notebook"),
	}
	// Tags of this attempt under a name that disagrees with them: not ours to delete.
	mismatched, err := s.rp.CreatePod(context.Background(), podRequest("rgpu-hand-made", s.tags(3)))
	assert.NilError(t, err)
	foreign = append(foreign, mismatched.ID)
	s.clock.Advance(time.Minute) // started, so the untracked pod has paid seconds

	res, err := Run(context.Background(), s.deps(), s.request(tracked))
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{tracked, lost})
	assert.Check(t, !res.Deletions[1].Tracked)
	for _, id := range foreign {
		assert.Check(t, s.status(t, id) != runpodsim.StatusTerminated, "pod %s is not this attempt's", id)
	}
	assert.Assert(t, is.Len(res.Report.Rejected, 1), "the untracked pod's paid seconds are reported")
	untracked := res.Report.Rejected[0]
	assert.Equal(t, untracked.PodID, lost)
	assert.Equal(t, untracked.Number, 1)
	assert.Check(t, untracked.Seconds.Known)
	assert.Check(t, is.Contains(res.Summary(nil), "run attempt tags (never published)"))
}

func TestRunWithoutPodIDStillFindsTheAttemptsPods(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	lost := s.launch(t, s.tags(1), false)
	res, err := Run(context.Background(), s.deps(), s.request(""))
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{lost})
	assert.Equal(t, res.Report.PodID, "")
	assert.Check(t, is.Contains(res.Report.Markdown(), "No pod was accepted."))
}

func TestRunNothingToDelete(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	res, err := Run(context.Background(), s.deps(), s.request(""))
	assert.NilError(t, err)
	assert.Check(t, is.Len(res.Deletions, 0))
	assert.Check(t, is.Contains(res.Summary(nil), "No pod of this run attempt needed deleting."))
	assert.Equal(t, res.Outputs().CostUSD, "unknown")
}

// The capture's 5 s bound on virtual time: the simulated API answers the
// pre-delete GET only after 6 s, so the record is discarded, the pod is still
// deleted at once, and the report falls back to the startup snapshot.
func TestRunCaptureBoundFallsBackToTheSnapshot(t *testing.T) {
	slowGet := runpodsim.SlowFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Delay: 6 * time.Second}
	s := newScene(t, runpodsim.Faults{Slow: []runpodsim.SlowFault{slowGet}})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(50 * time.Second)

	started := virtualStart.Add(8 * time.Second)
	req := s.request(id)
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(money.PerHour(0.25), cost.SnapshotSource), StartedAt: wire.KnownTime(started), GPU: gpuID}
	before := s.clock.Now()
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)
	assert.Equal(t, res.Deletions[0].DeletedAt.Sub(before), 6*time.Second, "deleted as soon as the slow read ended")

	r := res.Report
	assert.Equal(t, r.Window.Start, wire.KnownTime(started))
	assert.Equal(t, r.Price.Source, cost.SnapshotSource)
	assert.Check(t, r.Dollars().Known)
	assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), ErrCaptureTimeout.Error()))
	assert.Check(t, is.Contains(strings.Join(s.log.all, "\n"), "pod "+id+": record before deletion unreadable or unusable"))
}

func TestRunCaptureFailureWithoutSnapshotIsUnknown(t *testing.T) {
	fail := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Status: 502}
	s := newScene(t, runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{fail}})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(50 * time.Second)

	res, err := Run(context.Background(), s.deps(), s.request(id))
	assert.NilError(t, err, strings.Join(s.log.all, "\n"))
	assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)
	r := res.Report
	assert.Check(t, !r.Window.Start.Known(), "never replaced by createdAt")
	assert.Check(t, !r.Price.Known)
	assert.Check(t, is.Contains(r.Markdown(), "| Estimated cost (start to deletion) | unknown |"))
	assert.Equal(t, res.Outputs().PaidSeconds, "unknown")
}

func TestRunKeepsRetainedDebugPods(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	rejected := s.launch(t, s.tags(1), false)
	accepted := s.launch(t, s.tags(2), false)

	req := s.request(accepted)
	req.RetainedPodIDs = []string{rejected}
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{accepted})
	assert.DeepEqual(t, res.Kept, []string{rejected})
	assert.Check(t, s.status(t, rejected) != runpodsim.StatusTerminated)

	// A pod-id that names a retained pod (provision failed after keeping it) is kept too.
	req = s.request(rejected)
	req.RetainedPodIDs = []string{rejected}
	res, err = Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.Check(t, is.Len(res.Deletions, 0))
	assert.Check(t, is.Contains(res.Summary(nil), "Kept for inspection"))
}

func TestRunUnconfirmedDeletionNamesTheRemainingPods(t *testing.T) {
	s := newScene(t, runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 403}})
	id := s.launch(t, s.tags(1), false)
	lost := s.launch(t, s.tags(2), false)
	s.clock.Advance(50 * time.Second)

	res, err := Run(context.Background(), s.deps(), s.request(id))
	assert.Check(t, errors.Is(err, ErrPodsRemain))
	assert.Check(t, errors.Is(err, lifecycle.ErrUnconfirmed))
	var remaining *RemainingError
	assert.Assert(t, errors.As(err, &remaining))
	assert.DeepEqual(t, remaining.PodIDs, []string{id, lost})
	assert.Equal(t, res.Outputs().RemainingPodIDs, id+","+lost)
	assert.Check(t, !res.Report.Window.End.Known())
	golden.Assert(t, res.Summary(err), "summary-unconfirmed.golden")
}

func TestRunListingFailureStillDeletesTheTrackedPod(t *testing.T) {
	down := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Status: 503}
	s := newScene(t, runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{down}})
	id := s.launch(t, s.tags(1), false)

	res, err := Run(context.Background(), s.deps(), s.request(id))
	assert.Check(t, errors.Is(err, ErrUntrackedUnchecked))
	assert.Check(t, !errors.Is(err, ErrPodsRemain))
	assert.DeepEqual(t, res.Deleted(), []string{id})
	assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)
}

func TestRunWithoutGitHubReportsNoStages(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	deps := s.deps()
	deps.Jobs = nil
	res, err := Run(context.Background(), deps, s.request(id))
	assert.NilError(t, err)
	assert.Check(t, is.Len(res.Report.Stages, 0))
	assert.Check(t, is.Contains(strings.Join(res.Report.Notes, "\n"), "Stage breakdown unknown: no GitHub credentials"))
}

func TestResultArtifactRoundTrips(t *testing.T) {
	s := newScene(t, runpodsim.Faults{}, gpuJob(label(1), 10, 20, 1))
	id := s.launch(t, s.tags(1), true)
	s.clock.Advance(3 * time.Minute)
	res, err := Run(context.Background(), s.deps(), s.request(id))
	assert.NilError(t, err)

	path, err := WriteArtifact(t.TempDir()+"/nested", res.Artifact())
	assert.NilError(t, err)
	assert.Check(t, strings.HasSuffix(path, "/"+cost.ArtifactFileName))
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	got, err := cost.ParseArtifact(data)
	assert.NilError(t, err)
	assert.Equal(t, got.Action, "cleanup")
	assert.Equal(t, got.Run, res.Run)
	assert.Equal(t, got.Report.Markdown(), res.Report.Markdown())
	assert.Equal(t, res.Outputs().CostArtifactName, cost.ArtifactName(s.runID, 1))
}

func podRequest(name string, tags ownership.Tags) runpod.CreatePodRequest {
	return runpod.CreatePodRequest{Name: name, Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: gpuID}, Env: tags.Env()}
}

func TestRunNeedsRunPod(t *testing.T) {
	_, err := Run(context.Background(), Deps{}, Request{PodID: "p"})
	assert.ErrorContains(t, err, "Deps.RunPod is required")
}

// stalledListing stands for a listing that hangs until its context ends: it
// records the context's deadline and answers as that deadline would. The
// other calls go to the simulator.
type stalledListing struct {
	RunPod
	deadline *time.Time
}

func (s stalledListing) ListPods(ctx context.Context, _ runpod.ListPodsQuery) ([]runpod.Pod, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return nil, errors.New("no deadline: this would hang until the step timeout")
	}
	*s.deadline = dl
	return nil, context.DeadlineExceeded
}

// The sweep for untracked pods has a deadline (ListBound): a stalled listing
// costs at most that, and the tracked pod is deleted anyway.
func TestRunStalledListingIsBounded(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	deps := s.deps()
	var deadline time.Time
	deps.RunPod = stalledListing{RunPod: s.rp, deadline: &deadline}
	start := time.Now()

	_, err := Run(context.Background(), deps, s.request(id))

	assert.Check(t, !deadline.IsZero() && deadline.Sub(start) <= ListBound+time.Second, "listing deadline %s after the start", deadline.Sub(start))
	assert.Check(t, errors.Is(err, ErrUntrackedUnchecked), "got %v", err)
	assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)
}

func TestCheckRecord(t *testing.T) {
	run := cost.Run{Repository: "org/app", ID: 9001, Attempt: 2}
	tags := ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: 9001, Attempt: 2, Candidate: 3}
	otherRun := tags
	otherRun.RunID = 9002
	otherRepo := tags
	otherRepo.Repository = "org/other"
	tests := []struct {
		name    string
		pod     *runpod.Pod
		run     cost.Run
		wantErr string
	}{
		{name: "ours, with tags", pod: &runpod.Pod{ID: "p1", Name: tags.PodName(), Env: tags.Env()}, run: run},
		{name: "ours, name only (env left out)", pod: &runpod.Pod{ID: "p1", Name: tags.PodName()}, run: run},
		{name: "id only when the run is unknown", pod: &runpod.Pod{ID: "p1", Name: "anything"}},
		{name: "no record", wantErr: `pod p1: no record`},
		{name: "another id", pod: &runpod.Pod{ID: "p9", Name: tags.PodName()}, run: run, wantErr: `pod p1: the record describes pod "p9"`},
		{name: "no id", pod: &runpod.Pod{Name: tags.PodName()}, run: run, wantErr: `pod p1: the record describes pod ""`},
		{name: "another run's name", pod: &runpod.Pod{ID: "p1", Name: otherRun.PodName(), Env: otherRun.Env()}, run: run,
			wantErr: `pod p1: the record is named "rgpu-9002-2-c3", not rgpu-9001-2-c<N> of run 9001 attempt 2`},
		{name: "another attempt's name", pod: &runpod.Pod{ID: "p1", Name: "rgpu-9001-1-c3"}, run: run, wantErr: `named "rgpu-9001-1-c3"`},
		{name: "a longer run id with our prefix", pod: &runpod.Pod{ID: "p1", Name: "rgpu-9001-2-c3x"}, run: run, wantErr: `named "rgpu-9001-2-c3x"`},
		{name: "candidate zero", pod: &runpod.Pod{ID: "p1", Name: "rgpu-9001-2-c0"}, run: run, wantErr: `named "rgpu-9001-2-c0"`},
		{name: "hand-made name", pod: &runpod.Pod{ID: "p1", Name: "my-pod"}, run: run, wantErr: `named "my-pod"`},
		{name: "our name, another repository's tags", pod: &runpod.Pod{ID: "p1", Name: tags.PodName(), Env: otherRepo.Env()}, run: run,
			wantErr: `the record's ownership tags do not name org/app run 9001 attempt 2: its tags name org/other run 9001 attempt 2`},
		{name: "our name, tags that disagree with it", pod: &runpod.Pod{ID: "p1", Name: tags.PodName(), Env: otherRun.Env()}, run: run,
			wantErr: `the record's ownership tags do not name org/app run 9001 attempt 2: ownership: pod name "rgpu-9001-2-c3" disagrees`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRecord(tc.pod, "p1", tc.run)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, runpod.ErrUnusableRecord))
		})
	}
}

// rewritePod edits the JSON pod record the simulator answers.
func rewritePod(t *testing.T, edit func(pod map[string]any)) func(int, []byte) []byte {
	return func(_ int, body []byte) []byte {
		var pod map[string]any
		assert.Check(t, json.Unmarshal(body, &pod))
		edit(pod)
		out, err := json.Marshal(pod)
		assert.Check(t, err)
		return out
	}
}

// A pod record that does not describe the request's pod of this run attempt
// is not used: the report falls back to the startup snapshot, a warning names
// the pod, and the pod is deleted all the same.
func TestRunDoesNotPriceAnotherPodsRecord(t *testing.T) {
	longAgo := virtualStart.Add(-28_900_000 * time.Second).Format(time.RFC3339)
	tests := []struct {
		name     string
		edit     func(s *scene, pod map[string]any)
		wantNote string
	}{
		{name: "another pod's record", wantNote: `the answer describes pod "someone-else"`, edit: func(_ *scene, pod map[string]any) {
			pod["id"], pod["name"], pod["startedAt"], pod["cost"] = "someone-else", "rgpu-1-1-c1", longAgo, 0.10
		}},
		{name: "our id, another run's name and tags", wantNote: "not rgpu-", edit: func(s *scene, pod map[string]any) {
			other := s.tags(1)
			other.RunID++
			pod["name"], pod["env"], pod["startedAt"] = other.PodName(), other.Env(), longAgo
		}},
		{name: "our id and name, another repository's tags", wantNote: "ownership tags do not name", edit: func(s *scene, pod map[string]any) {
			other := s.tags(1)
			other.Repository = "someone/else"
			pod["env"], pod["startedAt"] = other.Env(), longAgo
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s *scene
			rewrite := runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1},
				Body: rewritePod(t, func(pod map[string]any) { tc.edit(s, pod) })}
			s = newScene(t, runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{rewrite}})
			id := s.launch(t, s.tags(1), false)
			s.clock.Advance(2 * time.Minute)
			var warnings lines
			deps := s.deps()
			deps.Warnf = warnings.logf

			req := s.request(id)
			started := virtualStart.Add(30 * time.Second)
			req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(money.PerHour(0.25), cost.SnapshotSource), StartedAt: wire.KnownTime(started), GPU: gpuID}
			res, err := Run(context.Background(), deps, req)
			assert.NilError(t, err)
			assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)

			r := res.Report
			assert.Equal(t, r.Price, cost.KnownPrice(money.PerHour(0.25), cost.SnapshotSource), "the snapshot prices the pod, not the other record")
			assert.Equal(t, r.Window.Start, wire.KnownTime(started))
			assert.Check(t, r.Window.Seconds().N < 600, "paid seconds %s", r.Window.Seconds())
			assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), tc.wantNote))
			assert.Assert(t, is.Len(warnings.all, 1), "one warning: %v", warnings.all)
			assert.Check(t, is.Contains(warnings.all[0], "pod "+id+": record before deletion unreadable or unusable"))
			assert.Check(t, is.Contains(warnings.all[0], "unusable record"))
		})
	}
}

// The untouched record is used, with no warning: the check does not reject our own pod.
func TestRunUsesItsOwnRecordWithoutWarning(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(2 * time.Minute)
	var warnings lines
	deps := s.deps()
	deps.Warnf = warnings.logf
	res, err := Run(context.Background(), deps, s.request(id))
	assert.NilError(t, err)
	assert.Check(t, res.Report.Window.Start.Known(), "the start comes from the record (there is no snapshot)")
	assert.Check(t, !strings.Contains(strings.Join(res.Report.Notes, "\n"), "unavailable"), "notes: %v", res.Report.Notes)
	assert.Check(t, is.Len(warnings.all, 0))
}

// A pod record that could not be read at all is a warning naming the pod
// too; a pod already gone (404) is the idempotent case and is not.
func TestRunWarnsOfAnUnreadableRecord(t *testing.T) {
	fail := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Status: 503}
	s := newScene(t, runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{fail}})
	id := s.launch(t, s.tags(1), false)
	var warnings lines
	deps := s.deps()
	deps.Warnf = warnings.logf
	_, err := Run(context.Background(), deps, s.request(id))
	assert.NilError(t, err)
	assert.Assert(t, is.Len(warnings.all, 1))
	assert.Check(t, is.Contains(warnings.all[0], "pod "+id+": record before deletion unreadable or unusable"))

	gone := s.launch(t, s.tags(2), false)
	assert.NilError(t, s.rp.DeletePod(context.Background(), gone))
	warnings.all = nil
	_, err = Run(context.Background(), deps, s.request(gone))
	assert.NilError(t, err)
	assert.Check(t, is.Len(warnings.all, 0), "already gone is no warning: %v", warnings.all)
}

// Sibling of the record check: the pod listing's entries. One listed twice
// is deleted and priced once; a tagged entry without an id cannot be deleted
// and fails the cleanup by name rather than sending DELETE /v2/pods/.
func TestRunListingEntriesAreCheckedBeforeUse(t *testing.T) {
	var s *scene
	var lost string
	rewrite := runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{First: 1},
		Body: func(_ int, body []byte) []byte {
			var list struct {
				Pods []map[string]any `json:"pods"`
			}
			assert.Check(t, json.Unmarshal(body, &list))
			var extra []map[string]any
			for _, p := range list.Pods {
				if p["id"] == lost {
					extra = append(extra, p) // listed twice
				}
			}
			noID := s.tags(3)
			extra = append(extra, map[string]any{"id": "", "name": noID.PodName(), "env": noID.Env(), "status": "RUNNING"})
			var page map[string]any
			assert.Check(t, json.Unmarshal(body, &page))
			page["pods"] = append(list.Pods, extra...)
			out, err := json.Marshal(page)
			assert.Check(t, err)
			return out
		}}
	s = newScene(t, runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{rewrite}})
	tracked := s.launch(t, s.tags(1), false)
	lost = s.launch(t, s.tags(2), false)
	s.clock.Advance(time.Minute)

	res, err := Run(context.Background(), s.deps(), s.request(tracked))
	assert.Check(t, errors.Is(err, ErrUntrackedUnchecked))
	assert.ErrorContains(t, err, fmt.Sprintf("the pod listing shows %s, tagged with this run attempt, without an id", s.tags(3).PodName()))
	assert.DeepEqual(t, res.Deleted(), []string{tracked, lost})
	assert.Check(t, is.Len(res.Report.Rejected, 1), "the pod listed twice is reported once")
}

// Sibling of the record check: the GPU job. A job of another run or attempt
// in the answer (on a runner of the same label) lends neither its steps nor
// its conclusion to this pod's report.
func TestRunUsesOnlyTheGPUJobOfThisRunAttempt(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(2 * time.Minute)
	job := func(runID, attempt int64, conclusion string) *github.WorkflowJob {
		return &github.WorkflowJob{RunID: github.Int64(runID), RunAttempt: github.Int64(attempt), RunnerName: github.String(label(1)),
			Status: github.String("completed"), Conclusion: github.String(conclusion)}
	}
	tests := []struct {
		name string
		jobs []*github.WorkflowJob
		want cost.Conclusion
	}{
		{name: "this run attempt's job", jobs: []*github.WorkflowJob{job(s.runID, 1, "failure")}, want: cost.ConclusionFailure},
		{name: "another run's job", jobs: []*github.WorkflowJob{job(s.runID+1, 1, "success")}, want: cost.ConclusionUnknown},
		{name: "another attempt's job", jobs: []*github.WorkflowJob{job(s.runID, 2, "success")}, want: cost.ConclusionUnknown},
		{name: "another run's job listed first", jobs: []*github.WorkflowJob{job(s.runID+1, 1, "success"), job(s.runID, 1, "cancelled")},
			want: cost.ConclusionCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &cleaner{deps: Deps{Jobs: fixedJobs(tc.jobs), Policy: s.policy}, req: s.request(id)}
			got, err := c.gpuJob(context.Background(), c.req.RunnerLabel)
			if tc.want == cost.ConclusionUnknown {
				assert.ErrorContains(t, err, fmt.Sprintf("no job of run %d attempt 1 ran on runner %s", s.runID, label(1)))
				assert.Check(t, got == nil)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, cost.JobConclusion(got.GetStatus(), got.GetConclusion()), tc.want)
		})
	}
}

// fixedJobs answers every job listing with the same jobs.
type fixedJobs []*github.WorkflowJob

func (f fixedJobs) ListAttemptJobs(context.Context, int64, int) ([]*github.WorkflowJob, error) {
	return f, nil
}

// A shared cooldown longer than the listing's bound — RunPod answered an
// earlier read 429 with an hour's Retry-After — must not keep the tag sweep
// unsent: that listing is the only way cleanup finds a pod whose create
// answer was lost, which bills until someone deletes it. It goes out once, at
// once, as the deletion itself does (chaos seed 769 left such a pod alive).
func TestRunUntrackedListingGoesOutUnderACooldownThatDoesNotFit(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	lost := s.launch(t, s.tags(2), false)
	s.policy.Cooldown().Extend(s.clock.Now().Add(time.Hour))

	res, err := Run(context.Background(), s.deps(), s.request(""))
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{lost})
	assert.Equal(t, s.status(t, lost), runpodsim.StatusTerminated)
}

func TestParseIDs(t *testing.T) {
	assert.DeepEqual(t, ParseIDs(" a1, b2,,a1 ,c3"), []string{"a1", "b2", "c3"})
	assert.Check(t, is.Len(ParseIDs(""), 0))
}

func FuzzParseIDs(f *testing.F) {
	f.Add("a1,b2, c3")
	f.Fuzz(func(t *testing.T, list string) {
		ids := ParseIDs(list)
		seen := map[string]bool{}
		for _, id := range ids {
			if id == "" || strings.ContainsAny(id, ",") || strings.TrimSpace(id) != id || seen[id] {
				t.Fatalf("ParseIDs(%q) = %q", list, ids)
			}
			seen[id] = true
		}
	})
}

// killRun is the run attempt of the edge tests below: the capture bound's
// exact edge, the candidate number's sign, each best-effort read's failure text.
var killRun = cost.Run{Repository: "org/app", ID: 9001, Attempt: 2}

func killTags(candidate int) ownership.Tags {
	return ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: 9001, Attempt: 2, Candidate: candidate}
}

// fakeRunPod serves one pod record, slowly if asked (on the virtual clock),
// and deletes it. Only the methods cleanup calls are implemented.
type fakeRunPod struct {
	clock   *simclock.Virtual
	record  *runpod.Pod
	getTook time.Duration
	listed  []runpod.Pod
	deletes []string
}

func (f *fakeRunPod) GetPod(_ context.Context, id string) (*runpod.Pod, error) {
	if f.clock != nil {
		f.clock.Advance(f.getTook)
	}
	if f.record == nil {
		return nil, fmt.Errorf("get pod %s: %w", id, runpod.ErrNotFound)
	}
	p := *f.record
	return &p, nil
}

func (f *fakeRunPod) ListPods(context.Context, runpod.ListPodsQuery) ([]runpod.Pod, error) {
	return f.listed, nil
}

func (f *fakeRunPod) DeletePod(_ context.Context, id string) error {
	f.deletes = append(f.deletes, id)
	return nil
}

// fakeGitHub answers the jobs read and the runner registration calls.
type fakeGitHub struct {
	jobs      []*github.WorkflowJob
	jobsErr   error
	runner    *github.Runner
	lookupErr error
	deleteErr error
	removed   []int64
}

func (f *fakeGitHub) ListAttemptJobs(context.Context, int64, int) ([]*github.WorkflowJob, error) {
	return f.jobs, f.jobsErr
}

func (f *fakeGitHub) RunnerByName(context.Context, string, ghapi.Scope) (*github.Runner, bool, error) {
	return f.runner, f.runner != nil, f.lookupErr
}

func (f *fakeGitHub) DeleteRunner(_ context.Context, id int64, _ ghapi.Scope) error {
	if f.deleteErr != nil {
		return f.deleteErr
	}
	f.removed = append(f.removed, id)
	return nil
}

// A record that answers exactly at the capture bound is used; one that
// answers a nanosecond later is discarded as late, whatever it says.
func TestRunCaptureBoundEdge(t *testing.T) {
	started := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		took     time.Duration
		wantLate bool
	}{
		{took: CaptureBound},
		{took: CaptureBound + time.Nanosecond, wantLate: true},
	} {
		t.Run(tc.took.String(), func(t *testing.T) {
			clock := simclock.NewVirtual(started.Add(time.Minute))
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
			tags := killTags(1)
			rp := &fakeRunPod{clock: clock, getTook: tc.took,
				record: &runpod.Pod{ID: "p1", Name: tags.PodName(), Status: runpod.PodRunning, Cost: 0.5, StartedAt: wire.KnownTime(started)}}
			var warnings []string
			deps := Deps{RunPod: rp, Policy: policy, Warnf: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }}

			res, err := Run(context.Background(), deps, Request{PodID: "p1", Run: killRun})

			assert.NilError(t, err)
			assert.DeepEqual(t, rp.deletes, []string{"p1"})
			if !tc.wantLate {
				assert.Check(t, is.Len(warnings, 0))
				assert.Check(t, is.Equal(res.Report.Price.Source, "v2 cost before deletion"))
				return
			}
			assert.DeepEqual(t, warnings, []string{"pod p1: record before deletion unreadable or unusable, so the cost report falls back to the " +
				cost.SnapshotSource + ": pod record not read within the capture bound: answered after 5s"})
			assert.Check(t, !res.Report.Price.Known)
		})
	}
}

// A candidate number must be positive: "-0" and "+0" parse as zero.
func TestCheckRecordCandidateSign(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wantErr bool
	}{
		{name: "rgpu-9001-2-c-0", wantErr: true},
		{name: "rgpu-9001-2-c+0", wantErr: true},
		{name: "rgpu-9001-2-c-1", wantErr: true},
		{name: "rgpu-9001-2-c", wantErr: true},
		{name: "rgpu-9001-2-c12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRecord(&runpod.Pod{ID: "p1", Name: tc.name}, "p1", killRun)
			if !tc.wantErr {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, fmt.Sprintf(`runpod: unusable record: pod p1: the record is named %q, not rgpu-9001-2-c<N> of run 9001 attempt 2`, tc.name))
		})
	}
}

// Without a Policy cleanup builds its own, and deletes all the same.
func TestRunWithoutPolicy(t *testing.T) {
	rp := &fakeRunPod{record: &runpod.Pod{ID: "p1", Name: killTags(1).PodName(), Status: runpod.PodRunning}}
	res, err := Run(context.Background(), Deps{RunPod: rp}, Request{PodID: "p1", Run: killRun})
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{"p1"})
	assert.DeepEqual(t, rp.deletes, []string{"p1"})
}

// Each reason the stage breakdown is missing is named in the report's notes,
// and the runner's registration is removed or its failure warned about.
func TestRunBestEffortReadsExplainThemselves(t *testing.T) {
	label := "runpod-gpu-9001-2-c1"
	ours := &github.WorkflowJob{ID: github.Int64(1), RunID: github.Int64(9001), RunAttempt: github.Int64(2), RunnerName: github.String(label), Status: github.String("completed")}
	elsewhere := &github.WorkflowJob{ID: github.Int64(2), RunID: github.Int64(9001), RunAttempt: github.Int64(2), RunnerName: github.String("other"), Status: github.String("completed")}
	for _, tc := range []struct {
		name      string
		label     string
		gh        *fakeGitHub
		wantNote  string // "" when the breakdown is known
		wantLog   []string
		wantWarn  []string
		wantGone  []int64
		noJobsAPI bool
	}{
		{
			name: "no runner label", gh: &fakeGitHub{},
			wantNote: "Stage breakdown unknown: no runner label to find the GPU job by.",
		},
		{
			name: "no job on the runner", label: label, gh: &fakeGitHub{jobs: []*github.WorkflowJob{elsewhere}},
			wantNote: "Stage breakdown unknown: no job of run 9001 attempt 2 ran on runner runpod-gpu-9001-2-c1.",
			wantLog:  []string{"runner runpod-gpu-9001-2-c1: no registration remains"},
		},
		{
			name: "jobs read fails", label: label, gh: &fakeGitHub{jobsErr: errors.New("502 Bad Gateway")},
			wantNote: "Stage breakdown unknown: 502 Bad Gateway.",
			wantLog:  []string{"runner runpod-gpu-9001-2-c1: no registration remains"},
		},
		{
			name: "runner removed", label: label, gh: &fakeGitHub{jobs: []*github.WorkflowJob{ours}, runner: &github.Runner{ID: github.Int64(77)}},
			wantLog: []string{"runner runpod-gpu-9001-2-c1: registration removed"}, wantGone: []int64{77},
		},
		{
			name: "runner lookup fails", label: label, gh: &fakeGitHub{jobs: []*github.WorkflowJob{ours}, lookupErr: errors.New("403 Forbidden")},
			wantWarn: []string{"runner runpod-gpu-9001-2-c1: could not look up its registration to remove it (403 Forbidden); GitHub drops it within a day"},
		},
		{
			name: "runner removal fails", label: label, gh: &fakeGitHub{jobs: []*github.WorkflowJob{ours}, runner: &github.Runner{ID: github.Int64(77)}, deleteErr: errors.New("500")},
			wantWarn: []string{"runner runpod-gpu-9001-2-c1: could not remove its registration (500); GitHub drops it within a day"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := &fakeRunPod{record: &runpod.Pod{ID: "p1", Name: killTags(1).PodName(), Status: runpod.PodRunning, StartedAt: wire.KnownTime(time.Now().Add(-time.Minute))}}
			var logs, warns []string
			deps := Deps{RunPod: rp, Jobs: tc.gh, Policy: reqpolicy.New(),
				Logf:  func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) },
				Warnf: func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }}

			res, err := Run(context.Background(), deps, Request{PodID: "p1", Run: killRun, RunnerLabel: tc.label})

			assert.NilError(t, err)
			notes := strings.Join(res.Report.Notes, "\n")
			if tc.wantNote == "" {
				assert.Check(t, !strings.Contains(notes, "Stage breakdown unknown"), notes)
			} else {
				assert.Check(t, is.Contains(notes, tc.wantNote))
			}
			var runnerLogs []string
			for _, l := range logs {
				if strings.HasPrefix(l, "runner ") {
					runnerLogs = append(runnerLogs, l)
				}
			}
			assert.Check(t, is.DeepEqual(runnerLogs, tc.wantLog))
			assert.Check(t, is.DeepEqual(warns, tc.wantWarn))
			assert.Check(t, is.DeepEqual(tc.gh.removed, tc.wantGone))
		})
	}
}

// Without Warnf a warning still reaches the log.
func TestWarningsFallBackToTheLog(t *testing.T) {
	var logs []string
	c := &cleaner{deps: Deps{Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }}}
	c.warnf("pod %s: %s", "p1", "unreadable")
	assert.DeepEqual(t, logs, []string{"pod p1: unreadable"})
}
