package market

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Pull-time model: log-normal around the machine's median, and now and then
// a pull that crawls (a cold layer cache, a throttled registry) for minutes.
const (
	pullSigma    = 0.45
	slowPullRate = 0.03
	maxPull      = 15 * time.Minute
)

// hosts is the HostRunner of the market: each pod first pulls its image for
// a drawn time, then the model-mode proof decides it from the machine's
// profile, with flaky machines (and, rarely, good ones) failing a drawn share
// of pods. Draws are keyed by the pod id, which the simulated RunPod derives
// from its seed, so a run is repeatable.
type hosts struct {
	clock    simclock.Clock
	seed     uint64
	machines map[string]Machine // by host id
	proof    *cloud.ProofModel  // set once the cloud is up, before any pod

	mu    sync.Mutex
	pulls map[string]simclock.Timer
}

func newHosts(clock simclock.Clock, seed uint64, f Fleet) *hosts {
	h := &hosts{clock: clock, seed: seed, machines: map[string]Machine{}, pulls: map[string]simclock.Timer{}}
	for _, m := range f.Machines {
		h.machines[m.Profile.ID] = m
	}
	return h
}

// Start pulls the image, then hands the pod to the proof model.
func (h *hosts) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	m := h.machines[l.Host.ID]
	r := h.draws(l.PodID)
	fail := BackgroundFailure
	if m.Fault == FaultFlaky {
		fail = FlakyFailure
	}
	if r.Float64() < fail {
		l.Host.Healthy = false
	}
	pull := pullTime(r, m.PullMedian)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pulls[l.PodID] = h.clock.AfterFunc(pull, func() {
		h.mu.Lock()
		_, live := h.pulls[l.PodID]
		delete(h.pulls, l.PodID)
		h.mu.Unlock()
		if live {
			_ = h.proof.Start(l, exited)
		}
	})
	return nil
}

// Stop ends the pull or the proof, whichever the pod is in.
func (h *hosts) Stop(podID string) {
	h.mu.Lock()
	if t := h.pulls[podID]; t != nil {
		t.Stop()
		delete(h.pulls, podID)
	}
	h.mu.Unlock()
	h.proof.Stop(podID)
}

// RuntimeLost cuts off the pod's runner, as the proof's host does.
func (h *hosts) RuntimeLost(podID string) { h.proof.RuntimeLost(podID) }

func (h *hosts) draws(podID string) *rand.Rand {
	sum := fnv.New64a()
	_, _ = sum.Write([]byte(podID))
	return rand.New(rand.NewPCG(h.seed, sum.Sum64()))
}

// pullTime draws one image pull.
func pullTime(r *rand.Rand, median time.Duration) time.Duration {
	if median <= 0 {
		median = time.Minute
	}
	d := time.Duration(float64(median) * math.Exp(pullSigma*r.NormFloat64()))
	if r.Float64() < slowPullRate {
		d += time.Duration(3+r.IntN(10)) * time.Minute
	}
	return min(d, maxPull).Round(time.Second)
}
