package reap

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

const (
	testRepo     = "org/gpu-project"
	testWorkflow = ".github/workflows/runpod-gpu.yml"
	testRun      = int64(9001)
)

// decisionNow is the injected clock of the decision tables.
var decisionNow = time.Date(2026, 10, 7, 12, 0, 0, 0, time.UTC)

var testScope = Scope{Repository: testRepo}

func testTags() ownership.Tags {
	return ownership.Tags{Repository: testRepo, Workflow: testWorkflow, RunID: testRun, Attempt: 1, Candidate: 1}
}

// ownedPod is a pod provision would create for tags, started `age` ago.
func ownedPod(tags ownership.Tags, age time.Duration) runpod.Pod {
	env := tags.Env()
	env["RUNNER_JIT_CONFIG"] = "jit-secret"
	return runpod.Pod{
		ID: "pod" + fmt.Sprint(tags.Candidate), Name: tags.PodName(), Status: runpod.PodRunning, Env: env, Cost: 0.25,
		GPU: &runpod.PodGPU{ID: "NVIDIA RTX A4000"}, CreatedAt: wire.KnownTime(decisionNow.Add(-age - time.Minute)),
		StartedAt: wire.KnownTime(decisionNow.Add(-age)),
	}
}

func runInfo(status string, attempt int, updatedAgo time.Duration) RunInfo {
	return RunInfo{ID: testRun, Repository: testRepo, Workflow: testWorkflow, LatestAttempt: attempt, Status: status,
		UpdatedAt: wire.KnownTime(decisionNow.Add(-updatedAgo))}
}

func TestDecide(t *testing.T) {
	notFound := &ghapi.Error{Op: "get workflow run 9001", StatusCode: http.StatusNotFound, Err: errors.New("404 Not Found")}
	retainedRecord := RetentionLookup{Records: []ownership.Retention{{RunID: testRun, Attempt: 1, PodIDs: []string{"pod1"}}}}
	tests := []struct {
		name      string
		pod       func() runpod.Pod
		scope     Scope
		run       *RunInfo // nil: the run was never looked up
		retention *RetentionLookup
		cap       time.Duration // the retention cap; zero: the default
		want      Verdict
	}{
		// Reclaim rules.
		{name: "run completed five minutes ago", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run:  ptr(runInfo("completed", 1, CompletedGrace)),
			want: Verdict{DecisionReclaim, ReasonRunCompleted, "run completed 5m0s ago"}},
		{name: "run completed just now is left to its cleanup", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run:  ptr(runInfo("completed", 1, CompletedGrace-time.Second)),
			want: Verdict{DecisionKeep, ReasonRunCompletedRecently, "run completed 4m59s ago; its cleanup may still run"}},
		{name: "attempt superseded", pod: func() runpod.Pod { return ownedPod(testTags(), 10*time.Minute) },
			run:  ptr(runInfo("in_progress", 2, 0)),
			want: Verdict{DecisionReclaim, ReasonAttemptSuperseded, "run 9001 is at attempt 2"}},
		{name: "active over two hours", pod: func() runpod.Pod { return ownedPod(testTags(), MaxLifetime+time.Second) },
			run:  ptr(runInfo("in_progress", 1, 0)),
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 2h0m1s (since startedAt), over the 2h0m0s backstop"}},
		{name: "exactly two hours is not over", pod: func() runpod.Pod { return ownedPod(testTags(), MaxLifetime) },
			run:  ptr(runInfo("in_progress", 1, 0)),
			want: Verdict{DecisionKeep, ReasonRunActive, "run is in_progress"}},
		{name: "never started: age from createdAt", pod: func() runpod.Pod {
			p := ownedPod(testTags(), 0)
			p.Status, p.StartedAt, p.CreatedAt = runpod.PodProvisioning, wire.Time{}, wire.KnownTime(decisionNow.Add(-3*time.Hour))
			return p
		}, run: ptr(runInfo("queued", 1, 0)),
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since createdAt), over the 2h0m0s backstop"}},
		{name: "no timestamps at all: age unknown", pod: func() runpod.Pod {
			p := ownedPod(testTags(), 0)
			p.StartedAt, p.CreatedAt = wire.Time{}, wire.Time{}
			return p
		}, run: ptr(runInfo("in_progress", 1, 0)),
			want: Verdict{DecisionKeep, ReasonRunActive, "run is in_progress"}},
		{name: "recently completed run but pod past the backstop", pod: func() runpod.Pod { return ownedPod(testTags(), 3*time.Hour) },
			run:  ptr(runInfo("completed", 1, time.Minute)),
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "young pod of an active run", pod: func() runpod.Pod { return ownedPod(testTags(), 10*time.Minute) },
			run:  ptr(runInfo("in_progress", 1, 0)),
			want: Verdict{DecisionKeep, ReasonRunActive, "run is in_progress"}},
		{name: "terminated pod needs nothing", pod: func() runpod.Pod {
			p := ownedPod(testTags(), 3*time.Hour)
			p.Status = runpod.PodTerminated
			return p
		}, want: Verdict{DecisionKeep, ReasonTerminated, "already deleted"}},

		// Retention.
		{name: "retained debug pod is kept", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), time.Hour) },
			run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionKeep, ReasonRetained, "kept for inspection by run 9001 attempt 1 until the 24h0m0s retention cap, 23h0m0s left (would be run-completed)"}},
		{name: "retained debug pod past the backstop is kept", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), 5*time.Hour) },
			run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionKeep, ReasonRetained, "kept for inspection by run 9001 attempt 1 until the 24h0m0s retention cap, 19h0m0s left (would be lifetime-exceeded)"}},
		{name: "retained exactly the cap is kept", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), DefaultRetentionCap) },
			retention: &retainedRecord,
			want:      Verdict{DecisionKeep, ReasonRetained, "kept for inspection by run 9001 attempt 1 until the 24h0m0s retention cap, 0s left (would be lifetime-exceeded)"}},
		{name: "retained past the default cap is reclaimed", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), DefaultRetentionCap+time.Second) },
			retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonRetentionCap,
				"kept for inspection by run 9001 attempt 1, active 24h0m1s (since startedAt), past the 24h0m0s retention cap"}},
		{name: "retained past a configured cap is reclaimed", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), 90*time.Minute) },
			run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord, cap: time.Hour,
			want: Verdict{DecisionReclaim, ReasonRetentionCap,
				"kept for inspection by run 9001 attempt 1, active 1h30m0s (since startedAt), past the 1h0m0s retention cap"}},
		{name: "retained, never started: the cap counts from createdAt", pod: func() runpod.Pod {
			p := ownedPod(keepFailed(testTags()), 0)
			p.Status, p.StartedAt, p.CreatedAt = runpod.PodExited, wire.Time{}, wire.KnownTime(decisionNow.Add(-30*time.Hour))
			return p
		}, retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonRetentionCap,
				"kept for inspection by run 9001 attempt 1, active 30h0m0s (since createdAt), past the 24h0m0s retention cap"}},
		{name: "retained with no timestamps: the cap cannot apply", pod: func() runpod.Pod {
			p := ownedPod(keepFailed(testTags()), 0)
			p.StartedAt, p.CreatedAt = wire.Time{}, wire.Time{}
			return p
		}, run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionKeep, ReasonRetained,
				"kept for inspection by run 9001 attempt 1; age unknown, so the 24h0m0s retention cap cannot apply (would be run-completed)"}},
		{name: "retention records unreadable past the cap: reclaimed either way", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), 25*time.Hour) },
			retention: &RetentionLookup{Err: errors.New("list artifacts: 502")},
			want: Verdict{DecisionReclaim, ReasonRetentionCap,
				"active 25h0m0s (since startedAt), past the 24h0m0s retention cap; retention records unread, reclaimable either way"}},
		{name: "keep-failed pod past the cap that no record names", pod: func() runpod.Pod {
			tags := keepFailed(testTags())
			tags.Candidate = 2
			return ownedPod(tags, 25*time.Hour)
		}, retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 25h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "record of another attempt does not retain", pod: func() runpod.Pod {
			tags := keepFailed(testTags())
			tags.Attempt = 2
			return ownedPod(tags, time.Hour)
		}, run: ptr(runInfo("completed", 2, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonRunCompleted, "run completed 1h0m0s ago"}},
		{name: "keep-failed pod missing from the record is reclaimed", pod: func() runpod.Pod {
			tags := keepFailed(testTags())
			tags.Candidate = 2
			return ownedPod(tags, time.Hour)
		}, run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonRunCompleted, "run completed 1h0m0s ago"}},
		{name: "record ignored without the keep-failed tag", pod: func() runpod.Pod { return ownedPod(testTags(), time.Hour) },
			run: ptr(runInfo("completed", 1, time.Hour)), retention: &retainedRecord,
			want: Verdict{DecisionReclaim, ReasonRunCompleted, "run completed 1h0m0s ago"}},
		{name: "retention lookup failed", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), time.Hour) },
			run: ptr(runInfo("completed", 1, time.Hour)), retention: &RetentionLookup{Err: errors.New("list artifacts: 502")},
			want: Verdict{DecisionError, ReasonRetentionLookupFailed, "list artifacts: 502"}},
		{name: "retention never read", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), time.Hour) },
			run:  ptr(runInfo("completed", 1, time.Hour)),
			want: Verdict{DecisionError, ReasonFactsMissing, "retention records of run 9001 were not read"}},
		{name: "retention failure does not matter for a kept pod", pod: func() runpod.Pod { return ownedPod(keepFailed(testTags()), time.Minute) },
			run: ptr(runInfo("in_progress", 1, 0)), retention: &RetentionLookup{Err: errors.New("list artifacts: 502")},
			want: Verdict{DecisionKeep, ReasonRunActive, "run is in_progress"}},

		// Run facts.
		{name: "run lookup failed", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run:  &RunInfo{Err: errors.New("get workflow run 9001: 500 Server Error")},
			want: Verdict{DecisionError, ReasonRunLookupFailed, "get workflow run 9001: 500 Server Error"}},
		{name: "run lookup failed past the backstop", pod: func() runpod.Pod { return ownedPod(testTags(), 3*time.Hour) },
			run:  &RunInfo{Err: errors.New("get workflow run 9001: 500 Server Error")},
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "run not found", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run: &RunInfo{Err: notFound},
			want: Verdict{DecisionError, ReasonRunNotFound,
				"run 9001 is not in this repository, was deleted, or the token cannot read Actions; the pod is reclaimed once active over the 2h0m0s backstop"}},
		{name: "run not found past the backstop", pod: func() runpod.Pod { return ownedPod(testTags(), MaxLifetime+time.Second) },
			run:  &RunInfo{Err: notFound},
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 2h0m1s (since startedAt), over the 2h0m0s backstop"}},
		{name: "run not found, never started, past the backstop", pod: func() runpod.Pod {
			p := ownedPod(testTags(), 0)
			p.Status, p.StartedAt, p.CreatedAt = runpod.PodProvisioning, wire.Time{}, wire.KnownTime(decisionNow.Add(-3*time.Hour))
			return p
		}, run: &RunInfo{Err: notFound},
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since createdAt), over the 2h0m0s backstop"}},
		{name: "run never read", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			want: Verdict{DecisionError, ReasonFactsMissing, "run 9001 was not read"}},
		{name: "past the backstop the run is not needed", pod: func() runpod.Pod { return ownedPod(testTags(), 3*time.Hour) },
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "answer about another run is not trusted", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run: &RunInfo{ID: 4242, Repository: testRepo, Workflow: testWorkflow, LatestAttempt: 2, Status: "completed",
				UpdatedAt: wire.KnownTime(decisionNow.Add(-time.Hour))},
			want: Verdict{DecisionKeep, ReasonRunMismatch,
				"asked for run 9001 of org/gpu-project .github/workflows/runpod-gpu.yml, GitHub answered with run 4242 of org/gpu-project .github/workflows/runpod-gpu.yml: the answer is not trusted; the pod is left to the 2h0m0s backstop"}},
		{name: "answer naming no run is not trusted", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run: &RunInfo{Status: "completed", UpdatedAt: wire.KnownTime(decisionNow.Add(-time.Hour))},
			want: Verdict{DecisionKeep, ReasonRunMismatch,
				"asked for run 9001 of org/gpu-project .github/workflows/runpod-gpu.yml, GitHub answered with run 0 of (none) (none): the answer is not trusted; the pod is left to the 2h0m0s backstop"}},
		{name: "answer about another run past the backstop", pod: func() runpod.Pod { return ownedPod(testTags(), 3*time.Hour) },
			run:  &RunInfo{ID: 4242, Repository: testRepo, Workflow: testWorkflow, LatestAttempt: 1, Status: "in_progress"},
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "run of another workflow path", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run: &RunInfo{ID: testRun, Repository: testRepo, Workflow: ".github/workflows/other.yml", LatestAttempt: 1, Status: "completed",
				UpdatedAt: wire.KnownTime(decisionNow.Add(-time.Hour))},
			want: Verdict{DecisionKeep, ReasonRunMismatch,
				"asked for run 9001 of org/gpu-project .github/workflows/runpod-gpu.yml, GitHub answered with run 9001 of org/gpu-project .github/workflows/other.yml: the answer is not trusted; the pod is left to the 2h0m0s backstop"}},
		{name: "run of another repository", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run: &RunInfo{ID: testRun, Repository: "org/other", Workflow: testWorkflow, LatestAttempt: 2, Status: "completed"},
			want: Verdict{DecisionKeep, ReasonRunMismatch,
				"asked for run 9001 of org/gpu-project .github/workflows/runpod-gpu.yml, GitHub answered with run 9001 of org/other .github/workflows/runpod-gpu.yml: the answer is not trusted; the pod is left to the 2h0m0s backstop"}},
		{name: "run repository compared case-insensitively", pod: func() runpod.Pod { return ownedPod(testTags(), 30*time.Minute) },
			run:  &RunInfo{ID: testRun, Repository: "Org/GPU-Project", Workflow: testWorkflow, LatestAttempt: 1, Status: "in_progress"},
			want: Verdict{DecisionKeep, ReasonRunActive, "run is in_progress"}},
		{name: "attempt the run does not have", pod: func() runpod.Pod {
			tags := testTags()
			tags.Attempt = 3
			return ownedPod(tags, 30*time.Minute)
		}, run: ptr(runInfo("completed", 2, time.Hour)),
			want: Verdict{DecisionKeep, ReasonRunMismatch, "run 9001 has 2 attempt(s); the tags name attempt 3: the answer is not trusted; the pod is left to the 2h0m0s backstop"}},

		// Ownership failures.
		{name: "foreign repository", pod: func() runpod.Pod {
			tags := testTags()
			tags.Repository = "someone/else"
			return ownedPod(tags, 3*time.Hour)
		}, want: Verdict{DecisionSkipForeign, ReasonOtherRepository, ""}},
		{name: "repository compared case-insensitively", pod: func() runpod.Pod {
			tags := testTags()
			tags.Repository = "ORG/GPU-project"
			return ownedPod(tags, 3*time.Hour)
		}, run: ptr(runInfo("in_progress", 1, 0)),
			want: Verdict{DecisionReclaim, ReasonLifetime, "active 3h0m0s (since startedAt), over the 2h0m0s backstop"}},
		{name: "workflow outside the scope", pod: func() runpod.Pod { return ownedPod(testTags(), 3*time.Hour) },
			scope: Scope{Repository: testRepo, Workflows: []string{".github/workflows/gpu.yml"}},
			want:  Verdict{DecisionSkipForeign, ReasonOtherWorkflow, ""}},
		{name: "another workflow of the repository, default scope: not the lane's", pod: func() runpod.Pod {
			tags := testTags()
			tags.Workflow = ".github/workflows/release.yml"
			return ownedPod(tags, 3*time.Hour)
		}, run: ptr(runInfo("in_progress", 1, 0)), want: Verdict{DecisionSkipForeign, ReasonOtherWorkflow, ""}},
		{name: "malformed run id", pod: withEnv(ownership.EnvRunID, "12x"), want: Verdict{DecisionSkipForeign, ReasonMalformedRunID, ""}},
		{name: "negative run id", pod: withEnv(ownership.EnvRunID, "-5"), want: Verdict{DecisionSkipForeign, ReasonMalformedRunID, ""}},
		{name: "malformed attempt", pod: withEnv(ownership.EnvAttempt, "first"), want: Verdict{DecisionSkipForeign, ReasonMalformedAttempt, ""}},
		{name: "zero attempt", pod: withEnv(ownership.EnvAttempt, "0"), want: Verdict{DecisionSkipForeign, ReasonMalformedAttempt, ""}},
		{name: "unknown owner marker", pod: withEnv(ownership.EnvOwner, "other-tool:gpu"), want: Verdict{DecisionSkipForeign, ReasonForeignOwner, ""}},
		{name: "malformed repository tag", pod: withEnv(ownership.EnvRepository, "no-slash"), want: Verdict{DecisionSkipForeign, ReasonMalformedTags, ""}},
		{name: "malformed candidate", pod: withEnv(ownership.EnvCandidate, "c1"), want: Verdict{DecisionSkipForeign, ReasonMalformedTags, ""}},
		{name: "name disagrees", pod: func() runpod.Pod {
			p := ownedPod(testTags(), 3*time.Hour)
			p.Name = "rgpu-9001-2-c1"
			return p
		}, want: Verdict{DecisionSkipForeign, ReasonNameDisagrees, ""}},
		{name: "untagged pod", pod: func() runpod.Pod {
			return runpod.Pod{ID: "nb1", Name: "my-notebook", Status: runpod.PodRunning, Env: map[string]string{"HF_TOKEN": "hf_secret"},
				StartedAt: wire.KnownTime(decisionNow.Add(-30 * time.Hour))}
		}, want: Verdict{DecisionSkipForeign, ReasonUntagged, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope := testScope
			if tc.scope.Repository != "" {
				scope = tc.scope
			}
			facts := Facts{Now: decisionNow, RetentionCap: tc.cap, Runs: map[int64]RunInfo{}, Retained: map[int64]RetentionLookup{}}
			if tc.run != nil {
				facts.Runs[testRun] = *tc.run
			}
			if tc.retention != nil {
				facts.Retained[testRun] = *tc.retention
			}
			view := View(tc.pod(), scope)
			assert.DeepEqual(t, Decide(view, facts), tc.want)
		})
	}
}

// The reaper's default workflows are the files runpod-gpu init writes.
func TestLaneWorkflowsAreTheCallersInitWrites(t *testing.T) {
	assert.DeepEqual(t, LaneWorkflows, []string{callers.LanePath, callers.RelayPath})
}

func TestNeedsRetentionOnlyForEligibleKeepFailedPods(t *testing.T) {
	facts := Facts{Now: decisionNow, Runs: map[int64]RunInfo{testRun: runInfo("completed", 1, time.Hour)}}
	assert.Check(t, NeedsRetention(View(ownedPod(keepFailed(testTags()), time.Hour), testScope), facts))
	assert.Check(t, !NeedsRetention(View(ownedPod(testTags(), time.Hour), testScope), facts), "not a keep-failed pod")
	facts.Runs[testRun] = runInfo("in_progress", 1, 0)
	assert.Check(t, !NeedsRetention(View(ownedPod(keepFailed(testTags()), time.Minute), testScope), facts), "kept anyway")
}

func TestViewDropsTheEnvironment(t *testing.T) {
	v := View(ownedPod(testTags(), time.Hour), testScope)
	assert.Equal(t, v.Foreign, Reason(""))
	assert.DeepEqual(t, v.Tags, testTags())
	age, basis := v.Age(decisionNow)
	assert.Equal(t, age, time.Hour)
	assert.Equal(t, basis, AgeFromStart)
}

func TestRunInfoFrom(t *testing.T) {
	updated := decisionNow.Add(-time.Hour)
	got := RunInfoFrom(&github.WorkflowRun{
		ID: github.Int64(testRun), Path: github.String(testWorkflow + "@refs/heads/main"), RunAttempt: github.Int(3), Status: github.String("completed"),
		UpdatedAt: &github.Timestamp{Time: updated}, Repository: &github.Repository{FullName: github.String(testRepo)},
	})
	completedAt, known := got.UpdatedAt.Get()
	assert.Check(t, known && completedAt.Equal(updated))
	got.UpdatedAt = wire.Time{}
	assert.DeepEqual(t, got, RunInfo{ID: testRun, Repository: testRepo, Workflow: testWorkflow, LatestAttempt: 3, Status: "completed"},
		cmpopts.IgnoreUnexported(wire.Time{}))
	assert.Check(t, got.Completed())
	assert.Check(t, is.Equal(RunInfoFrom(&github.WorkflowRun{}).UpdatedAt.Known(), false), "no updated_at stays unknown")
}

func TestShouldExecute(t *testing.T) {
	tests := []struct {
		event   string
		execute bool
		want    bool
	}{
		{"schedule", false, true},
		{"schedule", true, true},
		{"workflow_dispatch", false, false},
		{"workflow_dispatch", true, true},
		{"push", false, false},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(ShouldExecute(tc.event, tc.execute), tc.want), "%s execute=%v", tc.event, tc.execute)
	}
}

func keepFailed(t ownership.Tags) ownership.Tags {
	t.KeepFailed = true
	return t
}

func withEnv(key, value string) func() runpod.Pod {
	return func() runpod.Pod {
		p := ownedPod(testTags(), 3*time.Hour)
		p.Env[key] = value
		return p
	}
}

func ptr[T any](v T) *T { return &v }

// FuzzView: whatever a pod's name and tags hold, View never panics, and a pod
// it places in the scope is one ownership.FromPod accepts for this repository.
func FuzzView(f *testing.F) {
	f.Add("rgpu-9001-1-c1", testRepo, "runpod-gpu:"+testWorkflow, "9001", "1", "1")
	f.Add("my-notebook", "", "", "", "", "")
	f.Add("rgpu-9001-1-c1", testRepo, "runpod-gpu:"+testWorkflow, "9001", "-1", "1")
	f.Fuzz(func(t *testing.T, name, repo, owner, run, attempt, candidate string) {
		env := map[string]string{ownership.EnvRepository: repo, ownership.EnvOwner: owner,
			ownership.EnvRunID: run, ownership.EnvAttempt: attempt, ownership.EnvCandidate: candidate}
		v := View(runpod.Pod{ID: "p", Name: name, Env: env}, testScope)
		if v.Foreign != "" {
			if Decide(v, Facts{}).Decision != DecisionSkipForeign {
				t.Fatalf("foreign pod %q not skipped", name)
			}
			return
		}
		tags, err := ownership.FromPod(name, env)
		if err != nil || tags != v.Tags || tags.PodName() != name || !strings.EqualFold(tags.Repository, testRepo) {
			t.Fatalf("in scope: %q %+v (%v)", name, v.Tags, err)
		}
	})
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
