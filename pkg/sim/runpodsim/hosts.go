package runpodsim

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// HostRunner runs pod containers on simulated hosts. The Server calls Start
// when a pod's container starts (the pod turns RUNNING) and Stop when the pod
// is stopped, restarted or deleted. Both are called with the Server's lock
// held: they must return promptly and must not call back into the Server.
//
// Container exit semantics (chosen to match RunPod, whose status does not
// depend on the exit code): a container that exits, with any code, leaves the
// pod EXITED; a container that cannot start (Start returns an error) leaves it
// ERROR, as do host failures during boot.
type HostRunner interface {
	// Start launches the container described by l. It must not wait for the
	// container: its end is reported later, from any goroutine, through exited.
	Start(l Launch, exited ExitFunc) error
	// Stop kills the pod's container if it runs; no exit report is expected
	// after it, and one that still arrives is ignored.
	Stop(podID string)
}

// RuntimeLoser is a HostRunner that hears of a pod whose runtime is lost (Faults.LoseRuntime):
// the host is unreachable, so what runs there and talks to the outside (a connected runner)
// is cut off, while the API shows the pod RUNNING with a null runtime. It is called with the
// simulator's lock held.
type RuntimeLoser interface {
	RuntimeLost(podID string)
}

// ExitFunc reports that a container exited with code. It never blocks and is
// safe from any goroutine; the pod shows EXITED from the clock's time of the call.
type ExitFunc func(code int)

// Launch is everything a host needs to run one pod's container.
type Launch struct {
	PodID      string
	PodName    string
	Image      string
	Entrypoint []string
	Cmd        []string
	Args       string
	Env        map[string]string
	GPUCount   int
	// MinCudaVersion and AllowedCudaVersions are the pod's gpu constraints as
	// created; placement already honoured them.
	MinCudaVersion      string
	AllowedCudaVersions []string
	Host                HostProfile
	StartedAt           time.Time
	// Log appends lines to the pod's container log (GET /v2/pods/{id}/logs)
	// at the clock's time; lines of one call show together. Safe from any
	// goroutine; nil in a Launch not made by the Server.
	Log LogFunc
}

// ModelConfig tunes a ModelRunner.
type ModelConfig struct {
	// ProofTime is how long after the container starts the startup script
	// reaches its verdict (default 20 s).
	ProofTime time.Duration
	// MinCUDAEnv names the env variable holding the CUDA floor the proof checks
	// ("12.6"); the check is skipped when the name or the pod's value is empty.
	MinCUDAEnv string
	// PTXISAEnv names the env variable holding the PTX ISA the proof's kernel
	// needs ("8.7"); the check is skipped when the name or the pod's value is empty.
	PTXISAEnv string
	// RunFor is how long a container that passed keeps running before it exits
	// with 0 (a finished job); 0 keeps it running until the pod is stopped.
	RunFor time.Duration
	// OnReady, if set, is called at the verdict of a passing proof: the place to
	// register the pod's runner with a simulated GitHub. Called from a clock timer.
	OnReady func(Launch)
	// OnFail, if set, is called with the reason when the proof fails.
	OnFail func(l Launch, reason string)
}

// ModelRunner is the HostRunner of model mode: no processes, only the outcome
// the host profile implies, at times set by the clock. After ProofTime a
// container on an unhealthy host, or on a driver below the pod's CUDA floor or
// PTX ISA (read from the env variables ModelConfig names), exits with 1;
// otherwise it passes and keeps running (or exits 0 after RunFor).
type ModelRunner struct {
	clock simclock.Clock
	cfg   ModelConfig

	mu     sync.Mutex
	timers map[string]simclock.Timer
}

// NewModelRunner returns a ModelRunner timed by clock.
func NewModelRunner(clock simclock.Clock, cfg ModelConfig) *ModelRunner {
	if cfg.ProofTime <= 0 {
		cfg.ProofTime = 20 * time.Second
	}
	return &ModelRunner{clock: clock, cfg: cfg, timers: map[string]simclock.Timer{}}
}

// Start schedules the container's verdict.
func (r *ModelRunner) Start(l Launch, exited ExitFunc) error {
	l.Env = maps.Clone(l.Env)
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timers[l.PodID]; t != nil {
		t.Stop()
	}
	r.timers[l.PodID] = r.clock.AfterFunc(r.cfg.ProofTime, func() { r.verdict(l, exited) })
	return nil
}

func (r *ModelRunner) verdict(l Launch, exited ExitFunc) {
	if reason := r.failure(l); reason != "" {
		r.forget(l.PodID)
		if r.cfg.OnFail != nil {
			r.cfg.OnFail(l, reason)
		}
		exited(1)
		return
	}
	if r.cfg.OnReady != nil {
		r.cfg.OnReady(l)
	}
	if r.cfg.RunFor <= 0 {
		r.forget(l.PodID)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, running := r.timers[l.PodID]; running {
		r.timers[l.PodID] = r.clock.AfterFunc(r.cfg.RunFor, func() {
			r.forget(l.PodID)
			exited(0)
		})
	}
}

// failure returns why the CUDA proof fails on l's host, or "" when it passes.
func (r *ModelRunner) failure(l Launch) string {
	h := l.Host
	if !h.Healthy {
		return fmt.Sprintf("host %s: the GPU does not run kernels", h.ID)
	}
	driver, _ := parseVersion(h.DriverCUDA, false)
	if key := r.cfg.MinCUDAEnv; l.Env[key] != "" {
		floor, err := parseVersion(l.Env[key], true)
		if err != nil {
			return fmt.Sprintf("env %s: %v", key, err)
		}
		if driver.less(floor) {
			return fmt.Sprintf("host %s: driver CUDA %s is below the floor %s", h.ID, h.DriverCUDA, floor)
		}
	}
	if key := r.cfg.PTXISAEnv; l.Env[key] != "" {
		need, err := parseVersion(l.Env[key], false)
		if err != nil {
			return fmt.Sprintf("env %s: %v", key, err)
		}
		have, _ := parseVersion(h.MaxPTXISA, false)
		if have.less(need) {
			return fmt.Sprintf("host %s: driver loads PTX ISA up to %s, the kernel needs %s", h.ID, h.MaxPTXISA, need)
		}
	}
	return ""
}

// Stop cancels whatever the container still had to do.
func (r *ModelRunner) Stop(podID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.timers[podID]; t != nil {
		t.Stop()
	}
	delete(r.timers, podID)
}

func (r *ModelRunner) forget(podID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.timers, podID)
}
