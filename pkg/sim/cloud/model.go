package cloud

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/startup"
)

// ProofModel is the model-mode host: no processes, but the same decision the
// real startup script and CUDA smoke proof make, computed from the host
// profile and the pod's smoke parameters: driver below the floor → fail; tier
// by driver version; the tier's PTX ISA above what the driver loads → fail;
// VRAM below the minimum → fail; an unhealthy GPU → fail. A passing pod's
// runner connects to the simulated GitHub with the pod's JIT config.
//
// Each container writes the lines the real script and runner print at each
// stage (pkg/startup reads them back) to the pod's log: started, then the
// verdict — the proof's failure, the image's missing runner, or the proof
// passed and the runner listening for jobs.
type ProofModel struct {
	clock  simclock.Clock
	github *githubsim.Server
	// ProofTime is how long the script takes to reach its verdict (default 25 s).
	ProofTime time.Duration
	// RunnerDelay is how long the runner takes, after the proof passed, to
	// connect (default 0: at once).
	RunnerDelay time.Duration
	// QuietRunner leaves out the runner's "Listening for Jobs" line, as a
	// runner whose output goes elsewhere would.
	QuietRunner bool
	// ImagesWithoutRunner are images (as the pod was created with them) that
	// have no runner: the script exits with startup.ExitRunnerMissing after
	// the proof passed.
	ImagesWithoutRunner []string

	mu      sync.Mutex
	timers  map[string]simclock.Timer
	verdict map[string]string // pod id → "" (passed) or the failure reason
	jit     map[string]string // pod id → its runner's JIT config, to take it offline on Stop
}

// NewProofModel returns a model-mode host runner.
func NewProofModel(clock simclock.Clock, gh *githubsim.Server) *ProofModel {
	return &ProofModel{clock: clock, github: gh, ProofTime: 25 * time.Second,
		timers: map[string]simclock.Timer{}, verdict: map[string]string{}, jit: map[string]string{}}
}

// Start writes the script's first lines and schedules the pod's verdict.
func (m *ProofModel) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	l.Env = maps.Clone(l.Env)
	log := l.Log
	if log == nil {
		log = func(...string) {}
	}
	log(ModelStartLines(l)...)
	if startup.ServesSSH(l.Cmd) && l.Env[startup.DebugKeyEnv] != "" {
		// The debug shell's wrapper outlives its script: where the script
		// would exit, it prints its line and sshd keeps the container up.
		exited = func(code int) { log(fmt.Sprintf(startup.DebugShellLine, code)) }
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jit[l.PodID] = l.Env[startup.JITConfigEnv]
	m.timers[l.PodID] = m.clock.AfterFunc(m.ProofTime, func() { m.verdictOf(l, log, exited) })
	return nil
}

// ModelStartLines are the first lines the startup script prints on a
// model-mode host: started, the machine report's line for each GPU (its UUID,
// name, driver and memory, as nvidia-smi prints them) and the proof running.
func ModelStartLines(l runpodsim.Launch) []string {
	lines := []string{startup.LogPrefix + startup.LineStarted}
	for i := range max(l.GPUCount, 1) {
		lines = append(lines, fmt.Sprintf("%s%s%s, %s, %s, %d MiB", startup.LogPrefix, startup.LineGPU,
			l.Host.GPUUUID(i), l.Host.GPUTypeID, KernelDriverVersion(l.Host.DriverCUDA), l.Host.VRAMGB*1024))
	}
	return append(lines, startup.LogPrefix+"running the CUDA smoke proof")
}

// verdictOf ends the proof: an exit with the script's line for its cause, or
// the runner starting and connecting (after RunnerDelay). What one moment
// prints goes to the log as one write.
func (m *ProofModel) verdictOf(l runpodsim.Launch, log runpodsim.LogFunc, exited runpodsim.ExitFunc) {
	reason, code := ProofVerdict(l.Host, l.Env), startup.ExitProofFailed
	var lines []string
	switch {
	case reason == noJITConfig:
		code = startup.ExitNoJITConfig
		lines = []string{"SMOKE PASS", startup.ExitLine(code, "")}
	case reason != "":
		lines = []string{"SMOKE FAIL: " + reason, startup.ExitLine(code, "") + ": not registering the runner"}
	case slices.Contains(m.ImagesWithoutRunner, l.Image):
		reason, code = "the image has no runner at "+startup.DefaultRunnerDir+"/run.sh", startup.ExitRunnerMissing
		lines = []string{"SMOKE PASS", startup.ExitLine(code, startup.DefaultRunnerDir)}
	default:
		lines = []string{"SMOKE PASS", startup.LogPrefix + startup.LineProofPassed + " as user " + startup.RunnerUser}
	}
	m.mu.Lock()
	delete(m.timers, l.PodID)
	m.verdict[l.PodID] = reason
	if reason == "" && m.RunnerDelay > 0 {
		m.timers[l.PodID] = m.clock.AfterFunc(m.RunnerDelay, func() { log(m.connect(l, exited)...) })
	}
	m.mu.Unlock()
	switch {
	case reason != "":
		log(lines...)
		exited(code)
	case m.RunnerDelay > 0:
		log(lines...)
	default:
		log(append(lines, m.connect(l, exited)...)...)
	}
}

// connect registers the pod's runner with the simulated GitHub and returns
// what the runner prints; a runner that cannot connect exits.
func (m *ProofModel) connect(l runpodsim.Launch, exited runpodsim.ExitFunc) []string {
	m.mu.Lock()
	delete(m.timers, l.PodID)
	m.mu.Unlock()
	if _, err := m.github.RunnerConnect(l.Env[startup.JITConfigEnv]); err != nil {
		m.mu.Lock()
		m.verdict[l.PodID] = "runner could not connect: " + err.Error()
		m.mu.Unlock()
		defer exited(1)
		return []string{"run.sh: could not connect to GitHub"}
	}
	if m.QuietRunner {
		return []string{"√ Connected to GitHub"}
	}
	return []string{"√ Connected to GitHub", startup.LineRunnerListening}
}

// Stop ends the pod's container: a pending verdict is cancelled and a runner that
// connected goes offline with it, without a word to GitHub (which fails the job it ran
// once the job's lock expires, githubsim.RunnerLostTimeout).
func (m *ProofModel) Stop(podID string) {
	m.mu.Lock()
	if t := m.timers[podID]; t != nil {
		t.Stop()
		delete(m.timers, podID)
	}
	jit := m.jit[podID]
	delete(m.jit, podID)
	m.mu.Unlock()
	if jit != "" {
		_ = m.github.RunnerDisconnect(jit) // a runner that never connected has nothing to lose
	}
}

var _ runpodsim.RuntimeLoser = (*ProofModel)(nil)

// RuntimeLost cuts off the runner of a pod whose runtime is lost, once it connected: it goes
// offline without a word to GitHub, which fails the job it ran once the job's lock expires.
// A runner not yet connected is left to its verdict, as a container on a host that lost
// touch with the API may still be running.
func (m *ProofModel) RuntimeLost(podID string) {
	m.mu.Lock()
	reason, decided := m.verdict[podID]
	_, pending := m.timers[podID]
	jit := m.jit[podID]
	m.mu.Unlock()
	if decided && reason == "" && !pending && jit != "" {
		_ = m.github.RunnerDisconnect(jit)
	}
}

// Verdict returns the recorded proof outcome of a pod ("" passed) and whether there is one.
func (m *ProofModel) Verdict(podID string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.verdict[podID]
	return v, ok
}

// noJITConfig is ProofVerdict's reason for a pod without a runner config.
const noJITConfig = "no JIT runner config in the pod environment"

// ProofVerdict is the model of the startup script plus proof on a host: ""
// when it passes, else the reason the proof would print after SMOKE FAIL.
func ProofVerdict(h runpodsim.HostProfile, env map[string]string) string {
	if env[startup.JITConfigEnv] == "" {
		return noJITConfig
	}
	driver, err := cudaver.Parse(h.DriverCUDA)
	if err != nil {
		return fmt.Sprintf("host %s: driver CUDA %q unreadable", h.ID, h.DriverCUDA)
	}
	param := func(key, def string) string {
		if v := env[key]; v != "" {
			return v
		}
		return def
	}
	floor, err1 := cudaver.Parse(param("RUNPOD_GPU_SMOKE_MIN_CUDA", "12.6"))
	full, err2 := cudaver.Parse(param("RUNPOD_GPU_SMOKE_FULL_TIER", "12.8"))
	base, err3 := cudaver.Parse(param("RUNPOD_GPU_SMOKE_BASE_TIER", "12.6"))
	if err1 != nil || err2 != nil || err3 != nil {
		return "smoke parameters unreadable"
	}
	if !driver.AtLeast(floor) {
		return fmt.Sprintf("driver CUDA %s is below the floor %s", driver, floor)
	}
	tier, err := (smoke.Tiers{Full: full, Baseline: base}).Select(driver)
	if err != nil {
		return err.Error()
	}
	need := tier.PTX
	if h.MaxPTXISA != "" {
		have, err := cudaver.Parse(h.MaxPTXISA)
		if err != nil || have.Compare(smoke.Version{Major: need.Major, Minor: need.Minor}) < 0 {
			return fmt.Sprintf("the driver rejected PTX ISA %s (CUDA_ERROR_UNSUPPORTED_PTX_VERSION): it loads up to %s", need, h.MaxPTXISA)
		}
	}
	if minVRAM, _ := strconv.Atoi(env["RUNPOD_GPU_SMOKE_MIN_VRAM_GB"]); h.VRAMGB > 0 && h.VRAMGB < minVRAM {
		return fmt.Sprintf("VRAM %d GB is below the minimum %d GB", h.VRAMGB, minVRAM)
	}
	if !h.Healthy {
		return fmt.Sprintf("host %s: the kernel read back the wrong value", h.ID)
	}
	return ""
}
