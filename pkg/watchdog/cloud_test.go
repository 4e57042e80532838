package watchdog

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/startup"
)

// simulatedWatch runs the watchdog against the simulated RunPod and GitHub on
// one virtual clock: a pod created the way provision creates it, and a run
// whose GPU job waits for that pod's runner and then follows its steps.
type simulatedWatch struct {
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	deps   Deps
	req    Request
	runID  int64
	podID  string
	pr     int
	policy *reqpolicy.Policy
}

func startSimulatedWatch(t *testing.T, withRunner bool, steps ...githubsim.StepSpec) *simulatedWatch {
	t.Helper()
	return startSimulatedWatchWithJitter(t, 0.5, withRunner, steps...)
}

// startSimulatedWatchWithJitter fixes the GitHub policy's backoff jitter, which
// decides how far a run of failures pushes the shared cooldown.
func startSimulatedWatchWithJitter(t *testing.T, jitter float64, withRunner bool, steps ...githubsim.StepSpec) *simulatedWatch {
	t.Helper()
	ctx := context.Background()
	c, err := cloud.Start(cloud.Options{Start: epoch})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName,
		Policy: reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return jitter }),
			reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))})
	assert.NilError(t, err)
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy))

	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: headSHA, HeadRef: "feature"})
	assert.NilError(t, err)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: headSHA, PullRequests: []int{pr},
		Jobs: []githubsim.JobSpec{{Name: "gpu-tests", Labels: []string{testLabel}, Steps: steps}}})
	assert.NilError(t, err)

	tags := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1, Candidate: 1}
	env := tags.Env()
	if withRunner {
		jit, err := gh.GenerateJITConfig(ctx, ghapi.JITRequest{Name: testLabel, Labels: []string{testLabel}, RunnerGroupID: 1})
		assert.NilError(t, err)
		env[startup.JITConfigEnv] = jit.EncodedConfig
	}
	pod, err := rp.CreatePod(ctx, runpod.CreatePodRequest{Name: tags.PodName(), Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: "NVIDIA RTX A4000", Count: 1, MinCudaVersion: "12.6"}, Env: env})
	assert.NilError(t, err)
	clock.Advance(2 * time.Minute) // booted; the watchdog's hosted job starts

	return &simulatedWatch{cloud: c, clock: clock, runID: runID, podID: pod.ID, pr: pr, policy: rpPolicy,
		deps: Deps{Pods: rp, GitHub: gh, Policy: rpPolicy, Clock: clock, Sleep: clock.Sleep},
		req: Request{PodID: pod.ID, RunID: runID, Attempt: 1, RunnerLabel: testLabel, PRNumber: pr, ExpectedHeadSHA: headSHA,
			SetupBudget: 900 * time.Second, Lifetime: 3600 * time.Second, Poll: 20 * time.Second}}
}

func (s *simulatedWatch) pod(t *testing.T) (status string, started, ended time.Time) {
	t.Helper()
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == s.podID {
			return p.Status, p.StartedAt, p.TerminatedAt
		}
	}
	t.Fatalf("no pod %s", s.podID)
	return "", time.Time{}, time.Time{}
}

func TestSimulatedNoProgressIsDeletedAtTheDeadlineThenCancelled(t *testing.T) {
	// No runner ever takes the GPU job: setup never reaches the tests.
	s := startSimulatedWatch(t, false, githubsim.StepSpec{Name: "Run GPU tests", Duration: time.Minute})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.Check(t, errors.Is(err, ErrDeadline))
	assert.Equal(t, res.Outcome, OutcomeSetupExpired)

	status, started, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	assert.Equal(t, ended, started.Add(900*time.Second), "deleted exactly at the setup deadline")
	cancels := s.cloud.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Equal(t, cancels[0].RunID, s.runID)
	assert.Check(t, !cancels[0].At.Before(ended), "cancelled only after the deletion was confirmed")
}

func TestSimulatedTestsDisarmTheSetupDeadline(t *testing.T) {
	// The job's setup alone outlasts the 900 s budget counted from the pod's
	// start, but its test step starts in time; the job then finishes.
	s := startSimulatedWatch(t, true,
		githubsim.StepSpec{Name: "Set up job", Duration: 10 * time.Minute},
		githubsim.StepSpec{Name: "Run GPU tests", Duration: 20 * time.Minute},
		githubsim.StepSpec{Name: "Complete job", Duration: 30 * time.Second})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeJobFinished)
	assert.Check(t, res.TestsStarted)
	status, started, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	assert.Check(t, ended.Sub(started) > 900*time.Second, "lived past the setup budget once tests ran")
	assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 0), "a finished job's run is not cancelled")
	assert.Check(t, res.Report == nil, "cleanup reports a normally finished pod")
}

func TestSimulatedHeadMovedIsDeletedThenCancelled(t *testing.T) {
	s := startSimulatedWatch(t, true, githubsim.StepSpec{Name: "Set up job", Duration: time.Hour})
	s.clock.AfterFunc(5*time.Minute, func() {
		_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedSHA })
	})
	res, err := Run(context.Background(), s.deps, s.req)
	assert.NilError(t, err)
	assert.Equal(t, res.Outcome, OutcomeObsolete)
	assert.Check(t, res.Cancel.Requested)
	status, _, ended := s.pod(t)
	assert.Equal(t, status, "TERMINATED")
	cancels := s.cloud.GitHub.Cancellations()
	assert.Assert(t, is.Len(cancels, 1))
	assert.Check(t, !cancels[0].At.Before(ended))
	attempt, err := s.cloud.GitHub.WorkflowRunAttempt(cloud.Repository, s.runID, 1)
	assert.NilError(t, err)
	assert.Equal(t, attempt.Conclusion, "cancelled")
	bill, err := s.cloud.RunPod.Bill(s.podID)
	assert.NilError(t, err)
	assert.Equal(t, res.Report.Window.Seconds().N, bill.Seconds, "the interrupted pod's reported window is what the provider billed")
}
