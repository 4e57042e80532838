package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// provisionLog is the Observer of an in-process provision run.
type provisionLog struct {
	mu       sync.Mutex
	lines    []string
	attempts []cost.Attempt
}

func (l *provisionLog) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *provisionLog) PodCreated(string) {}

func (l *provisionLog) AttemptDone(a cost.Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attempts = append(l.attempts, a)
}

// The whole path with real processes: the provision loop renders the startup
// script, the first pod's real proof refuses its driver's PTX and the pod
// exits; the second pod proves CUDA and its runner registers.
func TestProcessProvisionRejectsThenAccepts(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(
		host("h1", a4000, func(h *runpodsim.HostProfile) { h.MaxPTXISA, h.BootSeconds = "8.5", 1 }),
		host("h2", a5000, func(h *runpodsim.HostProfile) { h.BootSeconds = 1 }),
	)})
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
	cfg.MaxPriceCandidates, cfg.MaxProvisionAttempts = 2, 3
	cfg.StartupPollSeconds, cfg.StartupTimeoutSeconds = 1, 20
	assert.NilError(t, cfg.Validate())
	policy := reqpolicy.New()
	log := &provisionLog{}

	res, err := provision.Run(context.Background(), provision.Deps{
		RunPod: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy)),
		GitHub: c.gh, Images: &registry.Resolver{APIURL: c.RegistryURL}, Policy: policy, Observer: log,
	}, provision.Request{
		Config: cfg, LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		Owner:    ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: 7001, Attempt: 1},
		ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256,
		RunnerDir: c.Processes.RunnerDir(), WorkDir: c.Processes.WorkDir(),
	})

	assert.NilError(t, err, strings.Join(log.lines, "\n"))
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Accepted.GPU, a5000))
	assert.Assert(t, is.Len(log.attempts, 2))
	rejected := log.attempts[0]
	assert.Check(t, is.Equal(rejected.Outcome, cost.OutcomeRejected))
	assert.Check(t, is.Contains(c.Processes.Log(rejected.PodID), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"))
	assert.Check(t, is.Contains(c.Processes.Log(rejected.PodID), "SMOKE FAIL"))
	assert.Check(t, is.Contains(c.Processes.Log(res.Accepted.PodID), "SMOKE PASS"))
	runner, found, err := c.gh.RunnerByName(context.Background(), res.Accepted.RunnerLabel, ghapi.ScopeRepo)
	assert.NilError(t, err)
	assert.Check(t, found && runner.GetStatus() == "online", "the accepted pod's runner is online")
}

// With real processes, a pod whose image has no runner where the script
// looks (runner-dir) passes the real proof and exits 5; provision reads the
// script's line from the pod's log stream, names the cause and pays for no
// second pod; and a pod whose proof fails is rejected for what its log says.
func TestProcessProvisionReadsTheCauseFromThePodsLog(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(
		host("h1", a4000, func(h *runpodsim.HostProfile) { h.MaxPTXISA, h.BootSeconds = "8.5", 1 }),
		host("h2", a5000, func(h *runpodsim.HostProfile) { h.BootSeconds = 1 }),
	)})
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
	cfg.MaxPriceCandidates, cfg.MaxProvisionAttempts = 2, 3
	cfg.StartupPollSeconds, cfg.StartupTimeoutSeconds = 1, 20
	assert.NilError(t, cfg.Validate())
	policy := reqpolicy.New()
	log := &provisionLog{}

	_, err := provision.Run(context.Background(), provision.Deps{
		RunPod: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy)),
		GitHub: c.gh, Images: &registry.Resolver{APIURL: c.RegistryURL}, Policy: policy, Observer: log,
	}, provision.Request{
		Config: cfg, LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		Owner:    ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: 7002, Attempt: 1},
		ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256,
		RunnerDir: c.Processes.WorkDir(), WorkDir: c.Processes.WorkDir(), // no run.sh there
	})

	assert.Check(t, errors.Is(err, provision.ErrImageWithoutRunner), "got %v", err)
	assert.Assert(t, is.Len(log.attempts, 2), strings.Join(log.lines, "\n"))
	assert.Check(t, is.Equal(log.attempts[0].Reason, "the startup script exited with 1: the CUDA smoke proof failed on this host"))
	assert.Check(t, is.Equal(log.attempts[1].Reason, "the startup script exited with 5: the image has no runner (run.sh) at the runner directory"))
	assert.Check(t, is.Equal(log.attempts[1].Host, cost.HostVerdict("")))
	assert.Check(t, is.Len(c.RunPod.Pods(), 2), "no third pod")
}
