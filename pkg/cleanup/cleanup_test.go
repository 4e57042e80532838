package cleanup

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/wire"
)

func TestRunDeletesTheAcceptedPodAndReportsItsStages(t *testing.T) {
	s := newScene(t, runpodsim.Faults{}, gpuJob(label(1), 30, 120, 5))
	id := s.launch(t, s.tags(1), true)
	// Boot, the proof, then the GPU job's 155 s on the pod's runner.
	s.clock.Advance(4 * time.Minute)
	assert.Equal(t, s.status(t, id), runpodsim.StatusRunning)

	req := s.request(id)
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(0.30, cost.SnapshotSource), GPU: gpuID, Tier: "ampere"}
	// Provision rejected a candidate before this one; its output reaches cleanup.
	provisioned, err := cost.ParseProvisionAttempts(cost.FormatAttempts([]cost.Attempt{{Number: 1, Candidate: "live-1", GPU: gpuID, PodID: "rejected1",
		Price: cost.KnownPrice(0.25, "v2 cost while running"), Outcome: cost.OutcomeRejected, Seconds: cost.KnownSeconds(72),
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
	assert.Equal(t, r.Price.PerHour, 0.25)
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
	assert.Equal(t, r.Total().String(), cost.KnownMoney(r.Dollars().USD+72*0.25/3600).String(), "the run total includes provision's rejected candidate")
	golden.Assert(t, res.Summary(nil), "summary-accepted.golden")
}

func TestRunPodAlreadyGoneIsSuccess(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	id := s.launch(t, s.tags(1), false)
	s.clock.Advance(time.Minute)
	assert.NilError(t, s.rp.DeletePod(context.Background(), id))

	req := s.request(id)
	started := virtualStart.Add(10 * time.Second)
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(0.25, cost.SnapshotSource), StartedAt: wire.KnownTime(started)}
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
	req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(0.25, cost.SnapshotSource), StartedAt: wire.KnownTime(started), GPU: gpuID}
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
