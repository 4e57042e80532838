package cleanup

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/startup"
)

// virtualStart lies in the future, so real-time context deadlines derived from
// the virtual clock never fire before the virtual ones; it keeps goldens stable.
var virtualStart = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

const gpuID = "NVIDIA RTX A4000"

// scene is a simulated cloud on a virtual clock with one workflow run whose
// attempt 1 owns the pods a test launches.
type scene struct {
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	policy *reqpolicy.Policy
	rp     *runpod.Client
	gh     *ghapi.Client
	runID  int64
	log    *lines
}

type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, fmt.Sprintf(format, args...))
}

func newScene(t *testing.T, faults runpodsim.Faults, jobs ...githubsim.JobSpec) *scene {
	t.Helper()
	c, err := cloud.Start(cloud.Options{Start: virtualStart, Faults: faults})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request", Jobs: jobs})
	assert.NilError(t, err)
	return &scene{cloud: c, clock: clock, policy: policy, rp: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy)),
		gh: gh, runID: runID, log: &lines{}}
}

// label is the runner label of candidate n. Provision's labels also name the
// run, which the simulated GitHub numbers only once the run exists.
func label(n int) string { return fmt.Sprintf("runpod-gpu-test-c%d", n) }

func (s *scene) tags(n int) ownership.Tags {
	return ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: s.runID, Attempt: 1, Candidate: n}
}

// launch creates a pod tagged with tags, as provision does; withRunner gives
// it a JIT config so its runner comes online and takes the GPU job.
func (s *scene) launch(t *testing.T, tags ownership.Tags, withRunner bool) string {
	t.Helper()
	env := tags.Env()
	if withRunner {
		label := label(tags.Candidate)
		jit, err := s.gh.GenerateJITConfig(context.Background(), ghapi.JITRequest{Name: label, Labels: []string{label}, RunnerGroupID: 1})
		assert.NilError(t, err)
		env[startup.JITConfigEnv] = jit.EncodedConfig
	}
	pod, err := s.rp.CreatePod(context.Background(), runpod.CreatePodRequest{
		Name: tags.PodName(), Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: gpuID, Count: 1, MinCudaVersion: "12.6"}, Env: env,
	})
	assert.NilError(t, err)
	return pod.ID
}

// untagged creates a pod that is not runpod-gpu's.
func (s *scene) untagged(t *testing.T, name string) string {
	t.Helper()
	pod, err := s.rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: name, Image: "ubuntu:24.04", GPU: &runpod.CreateGPU{ID: gpuID}})
	assert.NilError(t, err)
	return pod.ID
}

func (s *scene) deps() Deps {
	return Deps{RunPod: s.rp, Jobs: s.gh, Policy: s.policy, Logf: s.log.logf}
}

func (s *scene) request(podID string) Request {
	return Request{
		PodID: podID,
		Run: cost.Run{Repository: cloud.Repository, ID: s.runID, Attempt: 1, TestedRef: "0123456789abcdef0123456789abcdef01234567",
			Trigger: cost.TriggerAutomatic, PRNumber: 7},
		RunnerLabel: label(1),
	}
}

// status returns the simulated pod's status.
func (s *scene) status(t *testing.T, id string) string {
	t.Helper()
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == id {
			return p.Status
		}
	}
	t.Fatalf("no pod %s", id)
	return ""
}

// gpuJob is a GPU job for runner label whose steps take the given seconds.
func gpuJob(label string, setup, tests, post int) githubsim.JobSpec {
	return githubsim.JobSpec{Name: "gpu-tests", Labels: []string{label}, Steps: []githubsim.StepSpec{
		{Name: "Set up job", Duration: time.Duration(setup) * time.Second},
		{Name: cost.DefaultTestStep, Duration: time.Duration(tests) * time.Second},
		{Name: "Complete job", Duration: time.Duration(post) * time.Second},
	}}
}
