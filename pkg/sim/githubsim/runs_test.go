package githubsim

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

const gpuWorkflow = ".github/workflows/gpu.yml"

func TestGetWorkflowRunAndAttempts(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: gpuWorkflow, Event: "pull_request", HeadBranch: "fast", Actor: "alice",
		PullRequests: []int{n}, Status: "completed", Conclusion: "failure",
	})
	assert.NilError(t, err)
	f.clock.Advance(time.Hour)
	attempt, err := f.srv.RerunWorkflowRun(repoName, runID, nil)
	assert.NilError(t, err)
	assert.Equal(t, attempt, 2)

	run, _, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	assert.NilError(t, err)
	assert.Equal(t, run.GetID(), runID)
	assert.Equal(t, run.GetPath(), gpuWorkflow)
	assert.Equal(t, run.GetName(), "gpu.yml")
	assert.Equal(t, run.GetEvent(), "pull_request")
	assert.Equal(t, run.GetHeadBranch(), "fast")
	assert.Equal(t, run.GetHeadSHA(), sha('a'), "the head defaults to the branch's")
	assert.Equal(t, run.GetRunNumber(), 1)
	assert.Equal(t, run.GetRunAttempt(), 2)
	assert.Equal(t, run.GetStatus(), "queued")
	assert.Equal(t, run.GetActor().GetLogin(), "alice")
	assert.Equal(t, run.GetRepository().GetFullName(), "octo/gpu-lib")
	assert.Equal(t, run.GetCreatedAt().Time, start)
	assert.Equal(t, run.GetRunStartedAt().Time, start.Add(time.Hour))
	assert.Equal(t, run.GetPreviousAttemptURL(), fmt.Sprintf("%s/repos/octo/gpu-lib/actions/runs/%d/attempts/1", f.ts.URL, runID))
	assert.Equal(t, len(run.PullRequests), 1)
	assert.Equal(t, run.PullRequests[0].GetNumber(), n)
	assert.Assert(t, run.GetWorkflowID() != 0 && run.GetCheckSuiteID() != 0)

	first, _, err := f.app.Actions.GetWorkflowRunAttempt(ctx, "octo", "gpu-lib", runID, 1, nil)
	assert.NilError(t, err)
	assert.Equal(t, first.GetRunAttempt(), 1)
	assert.Equal(t, first.GetStatus(), "completed")
	assert.Equal(t, first.GetConclusion(), "failure")

	_, _, err = f.app.Actions.GetWorkflowRunAttempt(ctx, "octo", "gpu-lib", runID, 3, nil)
	assert.Equal(t, statusOf(err), http.StatusNotFound)
	_, _, err = f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", run.GetWorkflowID())
	assert.Equal(t, statusOf(err), http.StatusNotFound, "ids never collide across kinds")
}

func TestRerunNeedsCompletedRun(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	_, err = f.srv.RerunWorkflowRun(repoName, runID, nil)
	assert.Check(t, errors.Is(err, ErrConflict))
}

func TestListWorkflowRunsFilters(t *testing.T) {
	f := newFixture(t)
	add := func(spec WorkflowRunSpec) int64 {
		spec.Repo = repoName
		if spec.WorkflowPath == "" {
			spec.WorkflowPath = gpuWorkflow
		}
		id, err := f.srv.AddWorkflowRun(spec)
		assert.NilError(t, err)
		return id
	}
	assert.NilError(t, f.srv.SetBranch(repoName, "dev", sha('d')))
	day := func(d int) time.Time { return time.Date(2026, 2, d, 12, 0, 0, 0, time.UTC) }
	a := add(WorkflowRunSpec{Event: "push", CreatedAt: day(1), Status: "completed", Conclusion: "success"})
	b := add(WorkflowRunSpec{Event: "pull_request", HeadBranch: "dev", CreatedAt: day(2), Status: "completed", Conclusion: "failure"})
	c := add(WorkflowRunSpec{Event: "schedule", CreatedAt: day(3), WorkflowPath: ".github/workflows/reap.yml"})
	d := add(WorkflowRunSpec{Event: "workflow_dispatch", CreatedAt: day(4), Actor: "maintainer"})

	tests := []struct {
		name string
		file string
		opts github.ListWorkflowRunsOptions
		want []int64
	}{
		{name: "all, newest first", want: []int64{d, c, b, a}},
		{name: "event", opts: github.ListWorkflowRunsOptions{Event: "pull_request"}, want: []int64{b}},
		{name: "branch", opts: github.ListWorkflowRunsOptions{Branch: "dev"}, want: []int64{b}},
		{name: "head sha", opts: github.ListWorkflowRunsOptions{HeadSHA: sha('0')}, want: []int64{d, c, a}},
		{name: "status", opts: github.ListWorkflowRunsOptions{Status: "completed"}, want: []int64{b, a}},
		{name: "status as conclusion", opts: github.ListWorkflowRunsOptions{Status: "failure"}, want: []int64{b}},
		{name: "actor", opts: github.ListWorkflowRunsOptions{Actor: "maintainer"}, want: []int64{d}},
		{name: "created day", opts: github.ListWorkflowRunsOptions{Created: "2026-02-02"}, want: []int64{b}},
		{name: "created range", opts: github.ListWorkflowRunsOptions{Created: "2026-02-02..2026-02-03"}, want: []int64{c, b}},
		{name: "created after", opts: github.ListWorkflowRunsOptions{Created: ">2026-02-03"}, want: []int64{d}},
		{name: "by workflow file", file: "reap.yml", want: []int64{c}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs *github.WorkflowRuns
			var err error
			if tt.file != "" {
				runs, _, err = f.app.Actions.ListWorkflowRunsByFileName(ctx, "octo", "gpu-lib", tt.file, &tt.opts)
			} else {
				runs, _, err = f.app.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "gpu-lib", &tt.opts)
			}
			assert.NilError(t, err)
			var got []int64
			for _, r := range runs.WorkflowRuns {
				got = append(got, r.GetID())
			}
			assert.DeepEqual(t, got, tt.want)
			assert.Equal(t, runs.GetTotalCount(), len(tt.want))
		})
	}

	_, _, err := f.app.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "gpu-lib", &github.ListWorkflowRunsOptions{Created: "last week"})
	assert.Equal(t, statusOf(err), http.StatusUnprocessableEntity)
	_, _, err = f.app.Actions.ListWorkflowRunsByFileName(ctx, "octo", "gpu-lib", "missing.yml", nil)
	assert.Equal(t, statusOf(err), http.StatusNotFound)
}

func TestFilteredRunSearchCapsAtAThousand(t *testing.T) {
	f := newFixture(t)
	for range 1005 {
		_, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow, Event: "push"})
		assert.NilError(t, err)
	}
	all, _, err := f.app.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "gpu-lib", &github.ListWorkflowRunsOptions{ListOptions: github.ListOptions{PerPage: 1}})
	assert.NilError(t, err)
	assert.Equal(t, all.GetTotalCount(), 1005, "unfiltered lists are not capped")

	opts := &github.ListWorkflowRunsOptions{Event: "push", ListOptions: github.ListOptions{PerPage: 100, Page: 10}}
	page, resp, err := f.app.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "gpu-lib", opts)
	assert.NilError(t, err)
	assert.Equal(t, page.GetTotalCount(), 1000)
	assert.Equal(t, len(page.WorkflowRuns), 100)
	assert.Equal(t, resp.NextPage, 0, "the tenth page of 100 is the last a filtered search returns")
	opts.Page = 11
	page, _, err = f.app.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "gpu-lib", opts)
	assert.NilError(t, err)
	assert.Equal(t, len(page.WorkflowRuns), 0)
}

func TestStaticJobsAndSteps(t *testing.T) {
	f := newFixture(t)
	t0 := start.Add(-time.Hour)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: gpuWorkflow, Status: "completed", Conclusion: "success",
		Jobs: []JobSpec{{
			Name: "gpu-tests", Labels: []string{"rp-7-c1"}, Status: "completed", Conclusion: "success",
			StartedAt: t0, CompletedAt: t0.Add(10 * time.Minute), RunnerID: 5, RunnerName: "rp-7-c1",
			Steps: []StepSpec{
				{Name: "Set up job", Status: "completed", Conclusion: "success", StartedAt: t0, CompletedAt: t0.Add(time.Minute)},
				{Name: "Run tests", Status: "completed", Conclusion: "success", StartedAt: t0.Add(time.Minute), CompletedAt: t0.Add(10 * time.Minute)},
			},
		}},
	})
	assert.NilError(t, err)

	jobs, _, err := f.app.Actions.ListWorkflowJobsAttempt(ctx, "octo", "gpu-lib", runID, 1, nil)
	assert.NilError(t, err)
	assert.Equal(t, jobs.GetTotalCount(), 1)
	j := jobs.Jobs[0]
	assert.Equal(t, j.GetName(), "gpu-tests")
	assert.Equal(t, j.GetRunID(), runID)
	assert.Equal(t, j.GetRunAttempt(), int64(1))
	assert.Equal(t, j.GetRunnerName(), "rp-7-c1")
	assert.Equal(t, j.GetRunnerID(), int64(5))
	assert.DeepEqual(t, j.Labels, []string{"rp-7-c1"})
	assert.Equal(t, j.GetWorkflowName(), "gpu.yml")
	assert.Equal(t, len(j.Steps), 2)
	assert.Equal(t, j.Steps[1].GetName(), "Run tests")
	assert.Equal(t, j.Steps[1].GetNumber(), int64(2))
	assert.Equal(t, j.Steps[1].GetStartedAt().Time, t0.Add(time.Minute))
	assert.Equal(t, j.Steps[1].GetCompletedAt().Time, t0.Add(10*time.Minute))

	byID, _, err := f.app.Actions.GetWorkflowJobByID(ctx, "octo", "gpu-lib", j.GetID())
	assert.NilError(t, err)
	assert.Equal(t, byID.GetName(), "gpu-tests")

	assert.NilError(t, f.srv.SetJobSteps(repoName, j.GetID(), []StepSpec{{Name: "only", Status: "completed", Conclusion: "skipped"}}))
	jobs, _, err = f.app.Actions.ListWorkflowJobs(ctx, "octo", "gpu-lib", runID, nil)
	assert.NilError(t, err)
	assert.Equal(t, jobs.Jobs[0].Steps[0].GetConclusion(), "skipped")
}

func TestListJobsAcrossAttempts(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: gpuWorkflow,
		Jobs: []JobSpec{{Name: "provision", Status: "completed", Conclusion: "failure"}},
	})
	assert.NilError(t, err)
	_, err = f.srv.RerunWorkflowRun(repoName, runID, []JobSpec{{Name: "provision"}})
	assert.NilError(t, err)

	tests := []struct {
		filter  string
		wantLen int
	}{{filter: "", wantLen: 1}, {filter: "latest", wantLen: 1}, {filter: "all", wantLen: 2}}
	for _, tt := range tests {
		t.Run("filter="+tt.filter, func(t *testing.T) {
			jobs, _, err := f.app.Actions.ListWorkflowJobs(ctx, "octo", "gpu-lib", runID, &github.ListWorkflowJobsOptions{Filter: tt.filter})
			assert.NilError(t, err)
			assert.Equal(t, len(jobs.Jobs), tt.wantLen)
		})
	}
	first, _, err := f.app.Actions.ListWorkflowJobsAttempt(ctx, "octo", "gpu-lib", runID, 1, nil)
	assert.NilError(t, err)
	assert.Equal(t, first.Jobs[0].GetConclusion(), "failure")
}

// scriptedRun adds a run whose one job waits for a runner labelled label.
func scriptedRun(t *testing.T, f *fixture, label string, steps ...StepSpec) int64 {
	t.Helper()
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: gpuWorkflow,
		Jobs: []JobSpec{{Name: "gpu-tests", Labels: []string{label}, Steps: steps}},
	})
	assert.NilError(t, err)
	return runID
}

func connectRunner(t *testing.T, f *fixture, name string) string {
	t.Helper()
	jit, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest(name, name))
	assert.NilError(t, err)
	_, err = f.srv.RunnerConnect(jit.GetEncodedJITConfig())
	assert.NilError(t, err)
	return jit.GetEncodedJITConfig()
}

func TestScriptedJobFollowsTheClock(t *testing.T) {
	f := newFixture(t)
	runID := scriptedRun(t, f, "rp-8-c1",
		StepSpec{Name: "Set up job", Duration: 30 * time.Second},
		StepSpec{Name: "Run GPU tests", Duration: 10 * time.Minute},
		StepSpec{Name: "Complete job", Duration: 5 * time.Second},
	)
	jobs, err := f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Status, "queued", "no runner yet")

	f.clock.Advance(2 * time.Minute)
	connectRunner(t, f, "rp-8-c1")
	connectedAt := start.Add(2 * time.Minute)

	f.clock.Advance(time.Minute)
	got, _, err := f.app.Actions.ListWorkflowJobsAttempt(ctx, "octo", "gpu-lib", runID, 1, nil)
	assert.NilError(t, err)
	j := got.Jobs[0]
	assert.Equal(t, j.GetStatus(), "in_progress")
	assert.Equal(t, j.GetRunnerName(), "rp-8-c1")
	assert.Equal(t, j.GetRunnerGroupName(), "Default")
	assert.Equal(t, j.GetStartedAt().Time, connectedAt)
	assert.Equal(t, j.Steps[0].GetStatus(), "completed")
	assert.Equal(t, j.Steps[1].GetStatus(), "in_progress")
	assert.Equal(t, j.Steps[1].GetStartedAt().Time, connectedAt.Add(30*time.Second))
	assert.Assert(t, j.Steps[2].StartedAt == nil)
	run, _, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	assert.NilError(t, err)
	assert.Equal(t, run.GetStatus(), "in_progress")
	runners := f.srv.Runners()
	assert.Assert(t, runners[0].Busy && runners[0].JobID == j.GetID())

	f.clock.Advance(time.Hour) // polling late must not change when things happened
	got, _, err = f.app.Actions.ListWorkflowJobsAttempt(ctx, "octo", "gpu-lib", runID, 1, nil)
	assert.NilError(t, err)
	j = got.Jobs[0]
	end := connectedAt.Add(30*time.Second + 10*time.Minute + 5*time.Second)
	assert.Equal(t, j.GetStatus(), "completed")
	assert.Equal(t, j.GetConclusion(), "success")
	assert.Equal(t, j.GetCompletedAt().Time, end)
	assert.Equal(t, j.Steps[2].GetCompletedAt().Time, end)
	run, _, err = f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	assert.NilError(t, err)
	assert.Equal(t, run.GetStatus(), "completed")
	assert.Equal(t, run.GetConclusion(), "success")
	assert.Equal(t, run.GetUpdatedAt().Time, end)
	assert.Equal(t, len(f.srv.Runners()), 0, "the ephemeral runner leaves after its job")
}

func TestScriptedJobFailingStep(t *testing.T) {
	f := newFixture(t)
	runID := scriptedRun(t, f, "rp-9-c1",
		StepSpec{Name: "Run GPU tests", Duration: time.Minute, Conclusion: "failure"},
		StepSpec{Name: "Upload", Duration: time.Minute},
	)
	connectRunner(t, f, "rp-9-c1")
	f.clock.Advance(5 * time.Minute)

	jobs, err := f.srv.Jobs(repoName, runID, 1)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Conclusion, "failure")
	assert.Equal(t, jobs[0].CompletedAt, start.Add(time.Minute))
	assert.Equal(t, jobs[0].Steps[1].Conclusion, "skipped")
	attempt, err := f.srv.WorkflowRunAttempt(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, attempt.Conclusion, "failure")
}

// A runner lost in the middle of a job stops its steps where they were; the job stays in
// progress until its lock expires (RunnerLostTimeout), then fails and the runner leaves.
func TestRunnerLostMidJob(t *testing.T) {
	f := newFixture(t)
	runID := scriptedRun(t, f, "rp-10-c1", StepSpec{Name: "Run GPU tests", Duration: time.Hour})
	config := connectRunner(t, f, "rp-10-c1")
	f.clock.Advance(time.Minute)

	assert.NilError(t, f.srv.RunnerDisconnect(config))
	f.clock.Advance(RunnerLostTimeout - time.Second)
	jobs, err := f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Status, "in_progress", "GitHub waits for the job's lock to expire")
	assert.Equal(t, jobs[0].RunnerLostAt, start.Add(time.Minute))
	assert.Equal(t, jobs[0].Steps[0].Status, "in_progress")

	f.clock.Advance(time.Second)
	jobs, err = f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Conclusion, "failure")
	assert.Equal(t, jobs[0].Steps[0].Conclusion, "failure")
	assert.Equal(t, jobs[0].CompletedAt, start.Add(time.Minute+RunnerLostTimeout))
	assert.Equal(t, len(f.srv.Runners()), 0)
}

// An External job's steps are what its player reports: queued until started, ended with
// the conclusion given; EndJob completes the job and its runner leaves. Nothing can be
// reported once the job ended or its runner was lost.
func TestExternalJobStepsAreReported(t *testing.T) {
	f := newFixture(t, WithRunnerLostTimeout(time.Minute))
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow,
		Jobs: []JobSpec{{Name: "gpu", Labels: []string{"rp-12-c1"}, External: true, Steps: []StepSpec{{Name: "Download"}, {Name: "Run GPU tests"}, {Name: "Upload"}}}}})
	assert.NilError(t, err)
	jobs, _ := f.srv.Jobs(repoName, runID, 0)
	jobID := jobs[0].ID
	assert.ErrorContains(t, f.srv.StartStep(repoName, jobID, 1), "queued")
	connectRunner(t, f, "rp-12-c1")
	f.clock.Advance(time.Hour)
	jobs, _ = f.srv.Jobs(repoName, runID, 0)
	assert.Equal(t, jobs[0].Status, "in_progress", "the clock alone never moves an External job")
	assert.Equal(t, jobs[0].Steps[0].Status, "queued")

	assert.NilError(t, f.srv.StartStep(repoName, jobID, 1))
	f.clock.Advance(time.Second)
	assert.NilError(t, f.srv.EndStep(repoName, jobID, 1, "failure"))
	assert.NilError(t, f.srv.StartStep(repoName, jobID, 2))
	jobs, _ = f.srv.Jobs(repoName, runID, 0)
	assert.Equal(t, jobs[0].Steps[0].Conclusion, "failure")
	assert.Equal(t, jobs[0].Steps[1].Status, "in_progress")
	assert.Equal(t, jobs[0].Steps[1].StartedAt, start.Add(time.Hour+time.Second))
	assert.ErrorContains(t, f.srv.EndStep(repoName, jobID, 4, "success"), "not a step 4")
	assert.ErrorContains(t, f.srv.EndStep(repoName, jobID, 2, "fine"), `step conclusion "fine"`)
	assert.NilError(t, f.srv.EndStep(repoName, jobID, 2, "success"))
	assert.NilError(t, f.srv.EndJob(repoName, jobID, "failure"))
	jobs, _ = f.srv.Jobs(repoName, runID, 0)
	assert.Equal(t, jobs[0].Conclusion, "failure")
	assert.Equal(t, jobs[0].Steps[2].Conclusion, "skipped")
	assert.Equal(t, len(f.srv.Runners()), 0, "the ephemeral runner left with its job")
	assert.ErrorContains(t, f.srv.StartStep(repoName, jobID, 3), "completed failure")

	scripted := scriptedRun(t, f, "rp-13-c1", StepSpec{Name: "t", Duration: time.Minute})
	jobs, _ = f.srv.Jobs(repoName, scripted, 0)
	assert.ErrorContains(t, f.srv.StartStep(repoName, jobs[0].ID, 1), "only an External job")
}

func TestRunnerTakesOnlyMatchingJobs(t *testing.T) {
	f := newFixture(t)
	runID := scriptedRun(t, f, "rp-11-c1", StepSpec{Name: "t", Duration: time.Minute})
	connectRunner(t, f, "rp-11-c2") // another attempt's runner

	jobs, err := f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Status, "queued")
	assert.Check(t, !f.srv.Runners()[0].Busy)
}

func TestWorkflowDispatch(t *testing.T) {
	f := newFixture(t)
	assert.NilError(t, f.srv.SetWorkflowJobs(repoName, ".github/workflows/local-gate.yml", []JobSpec{{Name: "relay"}}))

	resp, err := f.client(userToken).Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "gpu-lib", "local-gate.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]interface{}{"pr": "1", "sha": sha('a')}})
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusNoContent)

	d := f.srv.Dispatches()
	assert.Equal(t, len(d), 1)
	assert.Equal(t, d[0].WorkflowPath, ".github/workflows/local-gate.yml")
	assert.Equal(t, d[0].Ref, "main")
	assert.Equal(t, d[0].Actor, "maintainer")
	assert.DeepEqual(t, d[0].Inputs, map[string]any{"pr": "1", "sha": sha('a')})
	run, _, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", d[0].RunID)
	assert.NilError(t, err)
	assert.Equal(t, run.GetEvent(), "workflow_dispatch")
	assert.Equal(t, run.GetHeadSHA(), sha('0'))
	assert.Equal(t, run.GetActor().GetLogin(), "maintainer")
	jobs, err := f.srv.Jobs(repoName, d[0].RunID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Name, "relay")

	var details struct {
		WorkflowRunID int64 `json:"workflow_run_id"`
	}
	resp, err = f.raw(t, f.app, "POST", "repos/octo/gpu-lib/actions/workflows/local-gate.yml/dispatches",
		map[string]any{"ref": "main", "return_run_details": true}, &details)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	assert.Equal(t, details.WorkflowRunID, f.srv.Dispatches()[1].RunID)

	_, err = f.app.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "gpu-lib", "local-gate.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "no-such-branch"})
	assert.Equal(t, statusOf(err), http.StatusUnprocessableEntity)
	_, err = f.app.Actions.CreateWorkflowDispatchEventByFileName(ctx, "octo", "gpu-lib", "nope.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main"})
	assert.Equal(t, statusOf(err), http.StatusNotFound)
	assert.Equal(t, len(f.srv.Dispatches()), 2, "refused dispatches are not recorded")
}

func TestCancelWorkflowRun(t *testing.T) {
	f := newFixture(t)
	runID := scriptedRun(t, f, "rp-12-c1", StepSpec{Name: "Set up", Duration: time.Minute}, StepSpec{Name: "Run GPU tests", Duration: time.Hour})
	connectRunner(t, f, "rp-12-c1")
	f.clock.Advance(10 * time.Minute)

	resp, err := f.app.Actions.CancelWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	var accepted *github.AcceptedError
	assert.Assert(t, errors.As(err, &accepted), "go-github reports 202 as AcceptedError: %v", err)
	assert.Equal(t, resp.StatusCode, http.StatusAccepted)

	c := f.srv.Cancellations()
	assert.DeepEqual(t, c, []Cancellation{{Repo: repoName, RunID: runID, Attempt: 1, Actor: "runpod-gpu-gate[bot]", At: start.Add(10 * time.Minute)}})
	run, _, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	assert.NilError(t, err)
	assert.Equal(t, run.GetStatus(), "completed")
	assert.Equal(t, run.GetConclusion(), "cancelled")
	jobs, err := f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].Conclusion, "cancelled")
	assert.Equal(t, jobs[0].Steps[0].Conclusion, "success")
	assert.Equal(t, jobs[0].Steps[1].Conclusion, "cancelled")
	assert.Equal(t, len(f.srv.Runners()), 0)

	_, err = f.app.Actions.CancelWorkflowRunByID(ctx, "octo", "gpu-lib", runID)
	assert.Equal(t, statusOf(err), http.StatusConflict, "a completed run cannot be cancelled")
	assert.Equal(t, len(f.srv.Cancellations()), 1)
}

func TestGetWorkflow(t *testing.T) {
	f := newFixture(t)
	id, err := f.srv.AddWorkflow(repoName, gpuWorkflow, "GPU CI")
	assert.NilError(t, err)
	byFile, _, err := f.app.Actions.GetWorkflowByFileName(ctx, "octo", "gpu-lib", "gpu.yml")
	assert.NilError(t, err)
	byID, _, err := f.app.Actions.GetWorkflowByID(ctx, "octo", "gpu-lib", id)
	assert.NilError(t, err)
	assert.Equal(t, byFile.GetID(), id)
	assert.Equal(t, byID.GetName(), "GPU CI")
	assert.Equal(t, byID.GetPath(), gpuWorkflow)

	_, err = f.srv.AddWorkflow(repoName, gpuWorkflow, "again")
	assert.Check(t, errors.Is(err, ErrAlreadyExists))
	_, err = f.srv.AddWorkflow(repoName, "ci.yml", "")
	assert.Check(t, errors.Is(err, ErrInvalid))
}

// A job added to a running attempt (a matrix leg GitHub creates once its
// needs ended) is listed with the attempt's jobs and keeps it in progress.
func TestAddJobJoinsTheLatestAttempt(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow,
		Jobs: []JobSpec{{Name: "build", Status: "completed", Conclusion: "success"}}})
	assert.NilError(t, err)
	id, err := f.srv.AddJob(repoName, runID, JobSpec{Name: "GPU tests (ampere)", Labels: []string{"gpu-1"}})
	assert.NilError(t, err)
	jobs, err := f.srv.Jobs(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, len(jobs), 2)
	assert.Equal(t, jobs[1].ID, id)
	assert.Equal(t, jobs[1].Status, "queued")
	attempt, err := f.srv.WorkflowRunAttempt(repoName, runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, attempt.Status, "in_progress")
	_, err = f.srv.AddJob(repoName, runID+100, JobSpec{Name: "x"})
	assert.Check(t, errors.Is(err, ErrNotFound))
}

// A job or run is found only under its own repository: asked for under another one, or by an
// id no job or run has, every handler that reads it from the path answers 404 as GitHub does.
func TestJobsAndRunsByPathAreScopedToTheirRepository(t *testing.T) {
	f := newFixture(t)
	assert.NilError(t, f.srv.AddRepo(Repo{Owner: "octo", Name: "other", DefaultBranchSHA: sha('1')}))
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	jobID, err := f.srv.AddJob(repoName, runID, JobSpec{Name: "GPU tests", Labels: []string{"gpu-1"}})
	assert.NilError(t, err)
	assert.NilError(t, f.srv.SetJobLog(repoName, jobID, "ok\n"))
	job, run := itoa(jobID), itoa(runID)
	tests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/repos/octo/gpu-lib/actions/jobs/" + job, http.StatusOK},
		{"GET", "/repos/octo/gpu-lib/actions/jobs/" + job + "/logs", http.StatusFound},
		{"GET", "/repos/octo/gpu-lib/actions/runs/" + run, http.StatusOK},
		{"GET", "/repos/octo/other/actions/jobs/" + job, http.StatusNotFound},
		{"GET", "/repos/octo/other/actions/jobs/" + job + "/logs", http.StatusNotFound},
		{"GET", "/repos/octo/other/actions/runs/" + run, http.StatusNotFound},
		{"GET", "/repos/octo/other/actions/runs/" + run + "/attempts/1", http.StatusNotFound},
		{"POST", "/repos/octo/other/actions/runs/" + run + "/cancel", http.StatusNotFound},
		{"GET", "/repos/octo/gpu-lib/actions/jobs/999999", http.StatusNotFound},
		{"GET", "/repos/octo/gpu-lib/actions/jobs/999999/logs", http.StatusNotFound},
		{"POST", "/repos/octo/gpu-lib/actions/runs/999999/cancel", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec, body := serveDirect(t, f.srv, tt.method, tt.path, appToken, nil)
			assert.Equal(t, rec.Code, tt.want, "body: %s", body)
		})
	}
	assert.Equal(t, len(f.srv.Cancellations()), 0)
}
