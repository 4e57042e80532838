package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/wire"
)

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
			req.Snapshot = cost.Snapshot{Price: cost.KnownPrice(0.25, cost.SnapshotSource), StartedAt: wire.KnownTime(started), GPU: gpuID}
			res, err := Run(context.Background(), deps, req)
			assert.NilError(t, err)
			assert.Equal(t, s.status(t, id), runpodsim.StatusTerminated)

			r := res.Report
			assert.Equal(t, r.Price, cost.KnownPrice(0.25, cost.SnapshotSource), "the snapshot prices the pod, not the other record")
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
			got, err := c.gpuJob(context.Background())
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
