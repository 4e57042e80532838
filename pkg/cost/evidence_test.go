package cost

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// errCaptureTimeout stands for cleanup's error when the record is not read in time.
var errCaptureTimeout = errors.New("pod record not read within the capture bound")

var evidenceT0 = time.Date(2026, 9, 23, 8, 48, 28, 0, time.UTC)

func atSec(sec int) wire.Time {
	return wire.KnownTime(evidenceT0.Add(time.Duration(sec) * time.Second))
}

func tsAt(sec int) *github.Timestamp {
	return &github.Timestamp{Time: evidenceT0.Add(time.Duration(sec) * time.Second)}
}

func TestBuildReport(t *testing.T) {
	running := &runpod.Pod{ID: "p1", Status: runpod.PodRunning, Cost: 0.44, StartedAt: atSec(0), GPU: &runpod.PodGPU{ID: "NVIDIA L4"}}
	exited := &runpod.Pod{ID: "p1", Status: runpod.PodExited, Cost: 0, StartedAt: atSec(0)}
	notStarted := &runpod.Pod{ID: "p1", Status: runpod.PodExited, Cost: 0.44}
	otherPod := &runpod.Pod{ID: "p9", Status: runpod.PodRunning, Cost: 0.10, StartedAt: atSec(-28_900_000)}
	snapshot := Snapshot{Price: KnownPrice(money.PerHour(0.40), SnapshotSource), StartedAt: atSec(5), GPU: "NVIDIA L4", Tier: "ada"}
	tests := []struct {
		name        string
		evidence    Evidence
		wantStart   wire.Time
		wantPrice   string
		wantSeconds string
		wantNote    string
		noNote      string
	}{
		{name: "record wins", evidence: Evidence{PodID: "p1", Record: running, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(0), wantPrice: "$0.44/h (v2 cost before deletion)", wantSeconds: "600"},
		{name: "exited record reads cost 0: snapshot price", evidence: Evidence{PodID: "p1", Record: exited, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(0), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "600"},
		{name: "record without start: snapshot start", evidence: Evidence{PodID: "p1", Record: notStarted, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.44/h (v2 cost before deletion)", wantSeconds: "595", wantNote: "had no provider start time"},
		{name: "no record: snapshot", evidence: Evidence{PodID: "p1", RecordErr: errCaptureTimeout, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "595", wantNote: "unavailable (pod record not read within the capture bound)"},
		{name: "no record, no snapshot: unknown", evidence: Evidence{PodID: "p1", RecordErr: errCaptureTimeout, DeletedAt: atSec(600)},
			wantPrice: "unknown (neither the pod record nor the provision snapshot had a price)", wantSeconds: "unknown"},
		{name: "unconfirmed deletion", evidence: Evidence{PodID: "p1", Record: running},
			wantStart: atSec(0), wantPrice: "$0.44/h (v2 cost before deletion)", wantSeconds: "unknown"},
		{name: "already gone", evidence: Evidence{PodID: "p1", RecordErr: runpod.ErrNotFound, AlreadyGone: true, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "595", wantNote: "length is an upper bound"},
		// The watchdog deleted it when the GPU job ended: the usual case, said without an error.
		{name: "already deleted by the watchdog", evidence: Evidence{PodID: "p1", RecordErr: fmt.Errorf("runpod: get pod p1: 404 Not Found: %w", runpod.ErrNotFound), AlreadyGone: true, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "595", wantNote: "deleted before its record was read", noNote: "404"},
		{name: "gone, but the read failed otherwise", evidence: Evidence{PodID: "p1", RecordErr: errCaptureTimeout, AlreadyGone: true, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "595", wantNote: "unavailable (pod record not read within the capture bound)"},
		// The watchdog passes the record it holds: another pod's (started ~334 days
		// earlier) would be priced at ~28.9 M seconds.
		{name: "another pod's record: snapshot", evidence: Evidence{PodID: "p1", Record: otherPod, Snapshot: snapshot, DeletedAt: atSec(600)},
			wantStart: atSec(5), wantPrice: "$0.40/h (provision snapshot)", wantSeconds: "595", wantNote: `the record describes pod "p9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(tc.evidence)
			assert.NilError(t, r.Validate())
			assert.Equal(t, r.Window.Start, tc.wantStart)
			assert.Equal(t, r.Price.String(), tc.wantPrice)
			assert.Equal(t, r.Window.Seconds().String(), tc.wantSeconds)
			if tc.wantNote != "" {
				assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), tc.wantNote))
			}
			if tc.noNote != "" {
				assert.Check(t, !strings.Contains(strings.Join(r.Notes, "\n"), tc.noNote), "%q", r.Notes)
			}
		})
	}
}

func TestBuildReportStages(t *testing.T) {
	record := &runpod.Pod{ID: "p", Cost: 0.36, StartedAt: atSec(0)}
	job := func(steps ...*github.TaskStep) *github.WorkflowJob {
		return &github.WorkflowJob{Status: github.String("completed"), StartedAt: tsAt(60), CompletedAt: tsAt(400), Steps: steps}
	}
	step := func(name string, from, to int) *github.TaskStep {
		return &github.TaskStep{Name: github.String(name), Status: github.String("completed"), Conclusion: github.String("success"), StartedAt: tsAt(from), CompletedAt: tsAt(to)}
	}
	tests := []struct {
		name       string
		job        *github.WorkflowJob
		jobErr     error
		testStep   string
		wantStages string
		wantNote   string
	}{
		{name: "default test step", job: job(step("Set up job", 60, 100), step(DefaultTestStep, 100, 390), step("Post", 390, 400)),
			wantStages: "startup 60, setup 40, tests 290, cleanup 10, cleanup 200, overhead 0"},
		{name: "named test step", testStep: "Run CUDA tests from archive",
			job:        job(step("Set up job", 60, 100), step("Run CUDA tests from archive", 100, 390)),
			wantStages: "startup 60, setup 40, tests 290, cleanup 210, overhead 0"},
		{name: "tests never ran", job: job(step("Set up job", 60, 100)),
			wantStages: "startup 60, setup 40, cleanup 500, overhead 0", wantNote: `never ran its test step "Run GPU tests"`},
		{name: "job unreadable", jobErr: errors.New("list jobs: 502 Bad Gateway"), wantNote: "Stage breakdown unknown: list jobs: 502 Bad Gateway."},
		{name: "job before the pod started", job: &github.WorkflowJob{Status: github.String("completed"), StartedAt: tsAt(-5), CompletedAt: tsAt(30)},
			wantNote: "Stage breakdown unknown: job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(Evidence{PodID: "p", Record: record, DeletedAt: atSec(600), Job: tc.job, JobErr: tc.jobErr, TestStep: tc.testStep})
			assert.NilError(t, r.Validate())
			var got []string
			for _, s := range r.Stages {
				got = append(got, string(s.Kind)+" "+strconv.FormatInt(s.Seconds, 10))
			}
			assert.Equal(t, strings.Join(got, ", "), tc.wantStages)
			if tc.wantNote != "" {
				assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), tc.wantNote))
			}
		})
	}
}

func TestJobTimeline(t *testing.T) {
	queued := &github.WorkflowJob{Status: github.String("queued"), StartedAt: tsAt(0)}
	assert.Check(t, !JobTimeline(queued).Started.Known(), "a queued job's started_at is its creation")
	assert.Check(t, !JobTimeline(nil).Started.Known())

	running := &github.WorkflowJob{Status: github.String("in_progress"), StartedAt: tsAt(10), Steps: []*github.TaskStep{
		{Name: github.String("Set up job"), Status: github.String("completed"), Conclusion: github.String("success"), StartedAt: tsAt(10), CompletedAt: tsAt(20)},
		{Name: github.String("Run GPU tests"), Status: github.String("in_progress"), StartedAt: tsAt(20), CompletedAt: tsAt(20)},
		{Name: github.String("Skipped"), Status: github.String("completed"), Conclusion: github.String("skipped"), StartedAt: tsAt(20), CompletedAt: tsAt(20)},
		{Name: github.String("Later"), Status: github.String("queued")},
		nil,
	}}
	got := JobTimeline(running)
	assert.Equal(t, got.Started, atSec(10))
	assert.Check(t, !got.Completed.Known())
	assert.Assert(t, is.Len(got.Steps, 4))
	assert.Equal(t, got.Steps[0].Completed, atSec(20))
	assert.Check(t, got.Steps[1].Started.Known() && !got.Steps[1].Completed.Known(), "a running step has no end yet")
	assert.Check(t, !got.Steps[2].Started.Known(), "a skipped step never ran")
	assert.Check(t, !got.Steps[3].Started.Known())
}

func TestFindGPUJob(t *testing.T) {
	build := &github.WorkflowJob{ID: github.Int64(1), Labels: []string{"ubuntu-latest"}, RunnerName: github.String("GitHub Actions 2")}
	queued := &github.WorkflowJob{ID: github.Int64(2), Labels: []string{"runpod-gpu-9-1-c2"}}
	ran := &github.WorkflowJob{ID: github.Int64(3), Labels: []string{"runpod-gpu-9-1-c1"}, RunnerName: github.String("runpod-gpu-9-1-c1")}
	jobs := []*github.WorkflowJob{nil, build, queued, ran}
	tests := []struct {
		label  string
		wantID int64
	}{
		{label: "runpod-gpu-9-1-c1", wantID: 3},
		{label: "RUNPOD-GPU-9-1-C2", wantID: 2},
		{label: "runpod-gpu-9-1-c3"},
		{label: ""},
	}
	for _, tc := range tests {
		got := FindGPUJob(jobs, tc.label)
		assert.Equal(t, got.GetID(), tc.wantID, "label %q", tc.label)
	}
}

func TestParseSnapshot(t *testing.T) {
	tests := []struct {
		name, price, started string
		wantPrice            string
		wantStart            wire.Time
		wantErr              string
	}{
		{name: "both", price: "0.74", started: "2026-09-23T08:48:28Z", wantPrice: "$0.74/h (provision snapshot)", wantStart: atSec(0)},
		{name: "go layout start", started: "2026-09-23 08:48:28 +0000 UTC", wantPrice: "unknown (provision snapshot has no price)", wantStart: atSec(0)},
		{name: "empty", wantPrice: "unknown (provision snapshot has no price)"},
		{name: "bad price", price: "$0.74", wantPrice: "unknown (provision snapshot has no price)",
			wantErr: `input price-per-hour = "$0.74": want a positive number of USD per hour`},
		{name: "zero price is unknown", price: "0", wantPrice: "unknown (provision snapshot has no price)"},
		{name: "negative price", price: "-0.5", wantPrice: "unknown (provision snapshot has no price)", wantErr: "price-per-hour"},
		{name: "nan price", price: "NaN", wantPrice: "unknown (provision snapshot has no price)", wantErr: "price-per-hour"},
		{name: "bad start keeps the price", price: "0.5", started: "yesterday", wantPrice: "$0.50/h (provision snapshot)",
			wantErr: `input started-at = "yesterday": want an RFC 3339 time`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSnapshot(tc.price, tc.started, "NVIDIA L4", "ada")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrBadSnapshot))
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, got.Price.String(), tc.wantPrice)
			assert.Equal(t, got.StartedAt, tc.wantStart)
			assert.Equal(t, got.GPU, "NVIDIA L4")
		})
	}
}

func FuzzParseSnapshot(f *testing.F) {
	f.Add("0.74", "2026-09-23T08:48:28Z")
	f.Add("1e400", "2026-09-23 08:48:28.204 +0000 UTC")
	f.Add("-1", "")
	f.Fuzz(func(t *testing.T, price, started string) {
		s, err := ParseSnapshot(price, started, "", "")
		if s.Price.Known && (s.Price.PerHour <= 0 || price == "") {
			t.Fatalf("price %q read as %v", price, s.Price)
		}
		if err != nil && !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("error %v does not match ErrBadSnapshot", err)
		}
		v, perr := strconv.ParseFloat(price, 64)
		zero := perr == nil && v == 0 // 0 reads as unknown, without an error
		if err == nil && ((price != "" && !zero && !s.Price.Known) || (started != "" && !s.StartedAt.Known())) {
			t.Fatalf("%q, %q: no error, yet a value was dropped", price, started)
		}
	})
}

// GitHub's whole seconds against RunPod's fractions: a job in the pod's first
// second is in the window, a job a full second earlier is not.
func TestBuildReportGitHubSecondPrecision(t *testing.T) {
	record := &runpod.Pod{ID: "p", Cost: 0.36, StartedAt: wire.KnownTime(evidenceT0.Add(400 * time.Millisecond))}
	sameSecond := &github.WorkflowJob{Status: github.String("completed"), StartedAt: tsAt(0), CompletedAt: tsAt(0), Steps: []*github.TaskStep{
		{Name: github.String(DefaultTestStep), Status: github.String("completed"), Conclusion: github.String("success"), StartedAt: tsAt(0), CompletedAt: tsAt(0)},
	}}
	r := BuildReport(Evidence{PodID: "p", Record: record, DeletedAt: atSec(10), Job: sameSecond})
	assert.NilError(t, r.Validate())
	assert.Check(t, len(r.Stages) > 0, "notes: %v", r.Notes)

	earlier := &github.WorkflowJob{Status: github.String("completed"), StartedAt: tsAt(-1), CompletedAt: tsAt(5)}
	r = BuildReport(Evidence{PodID: "p", Record: record, DeletedAt: atSec(10), Job: earlier})
	assert.Check(t, is.Len(r.Stages, 0))
	assert.Check(t, is.Contains(strings.Join(r.Notes, "\n"), "starts before the paid window"))
}

// The report carries how the GPU job ended, so the cost history can tell a
// paid failure from a paid success; a job not finished or not found is unknown.
func TestBuildReportJobConclusion(t *testing.T) {
	job := func(status, conclusion string) *github.WorkflowJob {
		j := &github.WorkflowJob{Status: github.String(status)}
		if conclusion != "" {
			j.Conclusion = github.String(conclusion)
		}
		return j
	}
	tests := []struct {
		name  string
		podID string
		job   *github.WorkflowJob
		want  Conclusion
	}{
		{name: "success", podID: "p", job: job("completed", "success"), want: ConclusionSuccess},
		{name: "failure", podID: "p", job: job("completed", "failure"), want: ConclusionFailure},
		{name: "timed out is a failure", podID: "p", job: job("completed", "timed_out"), want: ConclusionFailure},
		{name: "cancelled", podID: "p", job: job("completed", "cancelled"), want: ConclusionCancelled},
		{name: "skipped", podID: "p", job: job("completed", "skipped"), want: ConclusionSkipped},
		{name: "still running (the watchdog ended it)", podID: "p", job: job("in_progress", ""), want: ConclusionUnknown},
		{name: "job unknown", podID: "p", want: ConclusionUnknown},
		{name: "no accepted pod: not stated", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Evidence{PodID: tc.podID, Job: tc.job}
			if tc.job == nil {
				e.JobErr = errors.New("not found")
			}
			r := BuildReport(e)
			assert.Equal(t, r.JobConclusion, tc.want)
			assert.Equal(t, r.Conclusion(), tc.want.OrUnknown())
		})
	}
}

// Provision's rejected candidates reach the report, each pod once, so the run
// total is the whole run's; without them the report says so instead of
// claiming there were none.
func TestBuildReportProvisionRejected(t *testing.T) {
	record := &runpod.Pod{ID: "p1", Status: runpod.PodRunning, Cost: 0.36, StartedAt: atSec(0)}
	rejected := Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA RTX A4000", PodID: "r1", Price: KnownPrice(money.PerHour(0.18), "v2 cost while running"),
		Outcome: OutcomeRejected, Reason: "pod EXITED while starting", Seconds: KnownSeconds(100)}
	still := UntrackedPod{Pod: runpod.Pod{ID: "r1", Cost: 0.18, StartedAt: atSec(0)}, Candidate: 1, DeletedAt: evidenceT0.Add(200 * time.Second)}
	tests := []struct {
		name         string
		evidence     Evidence
		wantPod      string
		wantRejected []string // pod id and seconds of each rejected row
		wantTotal    string
		wantText     []string
	}{
		{name: "not passed: says so", evidence: Evidence{PodID: "p1", Record: record, DeletedAt: atSec(600)},
			wantPod: "p1", wantTotal: "$0.0600",
			wantText: []string{"None found by this step. Provision's rejected candidates were not passed", "**Estimated total** (accepted pod and the pods this step found; provision's rejected candidates are not included"}},
		{name: "passed, none rejected", evidence: Evidence{PodID: "p1", Record: record, DeletedAt: atSec(600), Provision: ProvisionAttempts{Reported: true}},
			wantPod: "p1", wantTotal: "$0.0600", wantText: []string{"No rejected candidates.", "**Estimated run total** (accepted pod and every rejected candidate): $0.0600"}},
		{name: "passed: counted in the run total", evidence: Evidence{PodID: "p1", Record: record, DeletedAt: atSec(600),
			Provision: ProvisionAttempts{Reported: true, Rejected: []Attempt{rejected}}},
			wantPod: "p1", wantRejected: []string{"r1 100"}, wantTotal: "$0.0650",
			wantText: []string{"| 1 | live-1 | NVIDIA RTX A4000 | r1 | 100 |", "**Estimated run total** (accepted pod and every rejected candidate): $0.0650"}},
		{name: "a rejected pod still running is counted once, to cleanup's deletion", evidence: Evidence{PodID: "p1", Record: record, DeletedAt: atSec(600),
			Untracked: []UntrackedPod{still}, Provision: ProvisionAttempts{Reported: true, Rejected: []Attempt{rejected}}},
			wantPod: "p1", wantRejected: []string{"r1 200"}, wantTotal: "$0.0700", wantText: []string{"it is counted once"}},
		{name: "pod-id of a rejected pod is no accepted pod", evidence: Evidence{PodID: "r1", RecordErr: runpod.ErrNotFound, AlreadyGone: true, DeletedAt: atSec(600),
			Provision: ProvisionAttempts{Reported: true, Rejected: []Attempt{rejected}}},
			wantRejected: []string{"r1 100"}, wantTotal: "$0.0050", wantText: []string{"No pod was accepted.", "not an accepted pod"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(tc.evidence)
			assert.NilError(t, r.Validate())
			assert.Equal(t, r.PodID, tc.wantPod)
			var got []string
			for _, a := range r.Rejected {
				got = append(got, a.PodID+" "+a.Seconds.String())
			}
			assert.DeepEqual(t, got, tc.wantRejected)
			assert.Equal(t, r.Total().String(), tc.wantTotal)
			md := r.Markdown()
			for _, want := range tc.wantText {
				assert.Check(t, is.Contains(md, want))
			}
		})
	}
}

func TestParseProvisionAttempts(t *testing.T) {
	got, err := ParseProvisionAttempts("  ")
	assert.NilError(t, err)
	assert.Check(t, !got.Reported, "empty: not passed")
	got, err = ParseProvisionAttempts("[]")
	assert.NilError(t, err)
	assert.Check(t, got.Reported && len(got.Rejected) == 0, "passed, none rejected")
	got, err = ParseProvisionAttempts("0.0017")
	assert.ErrorContains(t, err, `input rejected-attempts: invalid value: 0.0017: want a JSON array of provision's rejected attempts`)
	assert.Check(t, !got.Reported, "unreadable reads as not passed")
}
