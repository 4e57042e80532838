package reap

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const worldGPU = "NVIDIA RTX A4000"

// world is a model-mode simulated cloud on a virtual clock with the clients
// and the Sweeper an action would build.
type world struct {
	cloud   *cloud.Cloud
	clock   *simclock.Virtual
	rp      *runpod.Client
	gh      *ghapi.Client
	sweeper *Sweeper
	logs    *strings.Builder
	// planted are secret-looking env values put on pods; none may leak.
	planted []string
}

type worldOptions struct {
	pageSize int
	faults   runpodsim.Faults
	maxPages int
}

// newWorld starts the simulated cloud. The virtual clock starts at the real
// now, so that deadlines the deletion helper derives from it are real deadlines.
func newWorld(tb testing.TB, o worldOptions) *world {
	tb.Helper()
	clock := simclock.NewVirtual(time.Now().UTC().Truncate(time.Second))
	market := runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{{ID: worldGPU, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17}},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US",
			NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: []runpodsim.HostProfile{{ID: "big", DataCenterID: "US-TX-3", GPUTypeID: worldGPU, GPUCount: 20000,
			DriverCUDA: "12.8", BootSeconds: 2, Healthy: true}},
	}
	c, err := cloud.Start(cloud.Options{
		Clock: clock, Market: &market, Faults: o.faults, PageSize: o.pageSize, Balance: 1e9,
		Hosts: runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{ProofTime: time.Second}),
	})
	assert.NilError(tb, err)
	tb.Cleanup(c.Close)

	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
	opts := []runpod.Option{runpod.WithPolicy(rpPolicy)}
	if o.maxPages > 0 {
		opts = append(opts, runpod.WithMaxListPages(o.maxPages))
	}
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey, opts...)
	// GitHub's policy keeps the real clock (lookup deadlines are real) but never sleeps.
	ghPolicy := reqpolicy.New(reqpolicy.WithSleeper(func(context.Context, time.Duration) error { return nil }),
		reqpolicy.WithClassifier(ghapi.RateLimitClassifier(simclock.Real{})))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken,
		Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(tb, err)

	w := &world{cloud: c, clock: clock, rp: rp, gh: gh, logs: &strings.Builder{}}
	w.sweeper = &Sweeper{
		Pods: rp, GitHub: gh, Clock: clock,
		Deleter: &lifecycle.Deleter{Pods: rp, Policy: rpPolicy, Logf: w.logf},
		Logf:    w.logf,
	}
	return w
}

func (w *world) logf(format string, args ...any) { fmt.Fprintf(w.logs, format+"\n", args...) }

// addRun adds a run of the GPU workflow, in progress.
func (w *world) addRun(tb testing.TB) int64 {
	tb.Helper()
	id, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "pull_request", Status: "in_progress"})
	assert.NilError(tb, err)
	return id
}

// complete marks the run's latest attempt completed now.
func (w *world) complete(tb testing.TB, runID int64) {
	tb.Helper()
	assert.NilError(tb, w.cloud.GitHub.SetRunStatus(cloud.Repository, runID, "completed", "failure"))
}

// rerun completes the run and starts attempt 2, in progress.
func (w *world) rerun(tb testing.TB, runID int64) {
	tb.Helper()
	w.complete(tb, runID)
	_, err := w.cloud.GitHub.RerunWorkflowRun(cloud.Repository, runID, nil)
	assert.NilError(tb, err)
	assert.NilError(tb, w.cloud.GitHub.SetRunStatus(cloud.Repository, runID, "in_progress", ""))
}

// tags are the ownership tags provision gives candidate n of a run attempt.
func tagsFor(runID int64, attempt, candidate int) ownership.Tags {
	return ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: attempt, Candidate: candidate}
}

// createPod creates a pod through the RunPod client as provision would, with
// the ownership env and name, plus a planted secret-looking env value.
func (w *world) createPod(tb testing.TB, name string, env map[string]string) string {
	tb.Helper()
	secret := fmt.Sprintf("hf_PLANTED%dSECRETvalue", len(w.planted))
	w.planted = append(w.planted, secret)
	full := map[string]string{"HF_TOKEN": secret, "RUNNER_JIT_CONFIG": "jit-" + secret}
	for k, v := range env {
		full[k] = v
	}
	pod, err := w.rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: name, Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: worldGPU, MinCudaVersion: "12.6"}, Env: full})
	assert.NilError(tb, err)
	return pod.ID
}

// ownedPod creates the pod provision would for tags.
func (w *world) ownedPod(tb testing.TB, tags ownership.Tags) string {
	tb.Helper()
	return w.createPod(tb, tags.PodName(), tags.Env())
}

// plant records a secret-looking value that a test puts on a pod itself.
func (w *world) plant(value string) string {
	w.planted = append(w.planted, value)
	return value
}

func (w *world) advance(d time.Duration) { w.clock.Advance(d) }

// live returns the ids of pods that are not deleted.
func (w *world) live() map[string]bool {
	live := map[string]bool{}
	for _, p := range w.cloud.RunPod.Pods() {
		if p.TerminatedAt.IsZero() {
			live[p.ID] = true
		}
	}
	return live
}

// decisions maps pod id to "decision reason".
func decisions(rec *Record) map[string]string {
	out := map[string]string{}
	for _, p := range rec.Pods {
		out[p.PodID] = string(p.Decision) + " " + string(p.Reason)
	}
	return out
}

// githubCalls counts GitHub API requests (the simulator's own endpoints aside).
func (w *world) githubCalls() int {
	n := 0
	for _, r := range w.cloud.GitHub.Requests() {
		if !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}
