package cleanup

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

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The tests in this file pin behaviour that mutation testing (issue 21) found
// untested: the capture bound's exact edge, the candidate number's sign, and
// each best-effort read's failure text.

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

func TestWriteArtifactFailsVisibly(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	assert.NilError(t, os.WriteFile(blocker, nil, 0o644))
	_, err := WriteArtifact(filepath.Join(blocker, "dir"), cost.Artifact{})
	assert.ErrorContains(t, err, "cost artifact: mkdir "+blocker+": not a directory")

	dir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, cost.ArtifactFileName), 0o755))
	_, err = WriteArtifact(dir, cost.Artifact{})
	assert.ErrorContains(t, err, "cost artifact: open "+filepath.Join(dir, cost.ArtifactFileName)+": is a directory")
}

func TestTriggerOf(t *testing.T) {
	for event, want := range map[string]cost.Trigger{
		"workflow_dispatch": cost.TriggerManual,
		"pull_request":      cost.TriggerAutomatic,
		"schedule":          cost.TriggerAutomatic,
		"":                  cost.TriggerAutomatic,
	} {
		assert.Check(t, is.Equal(TriggerOf(event), want), event)
	}
}
