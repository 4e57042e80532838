package cloud

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// PodJob is a job of a caller's own that runs on a pod's runner, its steps for real.
type PodJob struct {
	RunID int64
	// JobID is the job of the run to play (waiting for its turn); 0 adds one, as GitHub
	// adds a job once the jobs it needs ended.
	JobID int64
	// Name is the job's name as GitHub lists it; Label its runs-on (the pod's runner label).
	Name, Label string
	Job         *workflowplay.WorkflowJob
	Contexts    workflowplay.Contexts
	// Machine runs the steps: RunPodJob sets its Artifacts and Stop, and reports each step
	// to the simulated GitHub before the Machine's own Started and Ended hear of it.
	Machine *workflowplay.Machine
	// Poll is how often the job is looked at (default 50ms of wall time).
	Poll time.Duration
}

// RunPodJob plays a GPU job as GitHub and the pod's runner run it: the job is queued for
// the runner's label, and once the pod's runner took it, its steps run for real on the
// machine, each reported to the simulated GitHub as it really starts and ends (so the
// watchdog sees the test step start when its process starts), with the run's results
// service for the artifact actions. It returns the job's conclusion as GitHub gives it: the
// steps' result; cancelled when the run was cancelled meanwhile (the steps are stopped);
// failure when the runner was lost with its pod, once GitHub gives up on the runner
// (githubsim.RunnerLostTimeout after, on the cloud's clock).
func (c *Cloud) RunPodJob(ctx context.Context, pj PodJob) (string, error) {
	if pj.Machine == nil || pj.Job == nil {
		return "", errors.New("a pod job needs its Job and a Machine")
	}
	steps := make([]githubsim.StepSpec, 0, len(pj.Job.Steps))
	for _, st := range pj.Job.Steps {
		steps = append(steps, githubsim.StepSpec{Name: workflowplay.StepName(st)})
	}
	spec := githubsim.JobSpec{Name: pj.Name, Labels: []string{pj.Label}, Status: "queued", Steps: steps, External: true}
	jobID := pj.JobID
	var err error
	if jobID == 0 {
		jobID, err = c.GitHub.AddJob(Repository, pj.RunID, spec)
	} else {
		err = c.GitHub.SetJob(Repository, jobID, spec)
	}
	if err != nil {
		return "", err
	}
	poll := pj.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	job, err := c.waitJob(ctx, pj.RunID, jobID, poll, func(j githubsim.Job) bool { return j.Status != "queued" })
	if err != nil || job.Status == "completed" {
		return job.Conclusion, err // cancelled before a runner took it
	}
	rt, err := c.GitHub.RuntimeToken(Repository, pj.RunID, pj.Name)
	if err != nil {
		return "", err
	}
	m := *pj.Machine
	m.Artifacts = &workflowplay.Artifacts{URL: c.GitHubURL, Token: rt.Token, RunBackendID: rt.RunBackendID, JobBackendID: rt.JobBackendID}
	started, ended := pj.Machine.Started, pj.Machine.Ended
	m.Started = func(i int) {
		_ = c.GitHub.StartStep(Repository, jobID, i+1) // refused once the job ended or lost its runner
		if started != nil {
			started(i)
		}
	}
	m.Ended = func(i int, conclusion string) {
		_ = c.GitHub.EndStep(Repository, jobID, i+1, conclusion)
		if ended != nil {
			ended(i, conclusion)
		}
	}
	stop := make(chan struct{})
	m.Stop = stop
	watchCtx, endWatch := context.WithCancel(ctx)
	var watched sync.WaitGroup
	watched.Add(1)
	go func() { // the runner goes with its pod, and a cancelled run stops its jobs
		defer watched.Done()
		_, _ = c.waitJob(watchCtx, pj.RunID, jobID, poll, func(j githubsim.Job) bool { return j.Status == "completed" || !j.RunnerLostAt.IsZero() })
		close(stop)
	}()
	run, err := m.RunJob(ctx, pj.Job, pj.Contexts)
	endWatch()
	watched.Wait()
	if err != nil {
		return "", err
	}
	job, err = c.job(pj.RunID, jobID)
	switch {
	case err != nil:
		return "", err
	case job.Status == "completed": // cancelled meanwhile
		return job.Conclusion, nil
	case !job.RunnerLostAt.IsZero(): // GitHub fails the job when its lock expires
		job, err = c.waitJob(ctx, pj.RunID, jobID, poll, func(j githubsim.Job) bool { return j.Status == "completed" })
		return job.Conclusion, err
	}
	if err := c.GitHub.EndJob(Repository, jobID, run.Result); err != nil {
		return "", err
	}
	return run.Result, nil
}

func (c *Cloud) job(runID, jobID int64) (githubsim.Job, error) {
	jobs, err := c.GitHub.Jobs(Repository, runID, 0)
	if err != nil {
		return githubsim.Job{}, err
	}
	for _, j := range jobs {
		if j.ID == jobID {
			return j, nil
		}
	}
	return githubsim.Job{}, fmt.Errorf("run %d has no job %d", runID, jobID)
}

// waitJob looks at the job every poll until done says so or ctx ends.
func (c *Cloud) waitJob(ctx context.Context, runID, jobID int64, poll time.Duration, done func(githubsim.Job) bool) (githubsim.Job, error) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		j, err := c.job(runID, jobID)
		if err != nil || done(j) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-tick.C:
		}
	}
}
