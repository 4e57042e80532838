package chaos

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/startup"
)

// chaosHosts runs pod containers as the model does (cloud.ProofModel), with
// the host faults the model lacks: a container that runs but whose runner
// never registers, and one that dies some time after it started. A pod that
// stops or dies takes its runner offline, failing the job it runs, as a real
// runner losing its machine does.
type chaosHosts struct {
	neverRegister map[int]bool          // launches (counted from 1) whose runner never registers
	dieAfter      map[int]time.Duration // launches that die this long after their container starts

	mu     sync.Mutex
	inner  *cloud.ProofModel
	gh     *githubsim.Server
	n      int
	jit    map[string]string
	timers map[string]*time.Timer
}

func newChaosHosts(neverRegister map[int]bool, dieAfter map[int]time.Duration) *chaosHosts {
	return &chaosHosts{neverRegister: neverRegister, dieAfter: dieAfter, jit: map[string]string{}, timers: map[string]*time.Timer{}}
}

// attach wires the model once the simulated cloud (and its GitHub) exists;
// no pod is created before.
func (h *chaosHosts) attach(c *cloud.Cloud, proofTime time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gh = c.GitHub
	h.inner = cloud.NewProofModel(c.Clock, c.GitHub)
	h.inner.ProofTime = proofTime
}

// Start is called with the RunPod simulator's lock held: it only schedules.
func (h *chaosHosts) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	h.jit[l.PodID] = l.Env[startup.JITConfigEnv]
	if d, ok := h.dieAfter[h.n]; ok {
		id := l.PodID
		h.timers[id] = time.AfterFunc(d, func() {
			exited(137)
			h.disconnect(id)
		})
	}
	if h.neverRegister[h.n] {
		return nil // the container runs on, its runner never comes online
	}
	return h.inner.Start(l, func(code int) {
		exited(code)
		h.disconnect(l.PodID)
	})
}

// Stop is called with the RunPod simulator's lock held.
func (h *chaosHosts) Stop(podID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inner.Stop(podID)
	if t := h.timers[podID]; t != nil {
		t.Stop()
		delete(h.timers, podID)
	}
	go h.disconnect(podID)
}

// disconnect takes the pod's runner offline (outside the RunPod lock).
func (h *chaosHosts) disconnect(podID string) {
	h.mu.Lock()
	jit, gh := h.jit[podID], h.gh
	h.mu.Unlock()
	if jit != "" {
		_ = gh.RunnerDisconnect(jit) // a runner never connected or already gone is no error worth seeing
	}
}

// chaosGitHubClock is the simulated GitHub's clock: the real one, shifted on
// demand, so a run can be recorded as completed minutes ago and the real
// reaper, on the wall clock, sees it past its grace period.
type chaosGitHubClock struct{ offset atomic.Int64 }

func (c *chaosGitHubClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *chaosGitHubClock) shift(d time.Duration) { c.offset.Store(int64(d)) }
