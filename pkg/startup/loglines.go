package startup

import "strings"

// What the startup script (and the runner it starts) print at each stage, as
// they appear in the pod's container log. Provision follows that log while a
// pod starts: a stage line says when to look at the runner registry, and a
// failure line says which stage stopped the pod, before its status shows it.
// A line is a hint, never a verdict on its own: acceptance still needs the
// registry, the pod record and the PR; a failure line only ends a pod that
// is then deleted anyway.
const (
	// LogPrefix starts every line the script prints (its log function).
	LogPrefix = "runpod-gpu: "
	// LineStarted is the script's first line: the container runs.
	LineStarted = "fetching the CUDA smoke proof"
	// LineProofPassed starts the line printed as the runner is started.
	LineProofPassed = "proof passed: starting the runner"
	// LineGPU starts the machine report's line for each GPU the pod sees:
	// nvidia-smi's uuid, name, driver_version and memory.total, in that
	// order ("gpu: GPU-5a1c…, NVIDIA RTX A4000, 570.124.06, 16376 MiB"). The
	// first one identifies the machine for the lane's reputation: REST v2's
	// pod record names no machine, and the script prints it before the proof.
	LineGPU = "gpu: "
	// LineRunnerListening is what the GitHub Actions runner prints once it is
	// connected and waits for a job (the official runner and the simulated one).
	LineRunnerListening = "Listening for Jobs"
)

// exitLines are the lines printed right before each failing exit.
var exitLines = []struct {
	text string
	code int
}{
	{"proof download failed", ExitDownload},
	{"proof checksum mismatch", ExitChecksum},
	{"CUDA smoke proof failed", ExitProofFailed},
	{"no JIT runner config in the pod environment", ExitNoJITConfig},
	{"runner not found at ", ExitRunnerMissing},
}

// Stage is what one container log line says about a starting pod.
type Stage int

// Stages a log line can report.
const (
	StageNone        Stage = iota // a line that says nothing the watch uses
	StageStarted                  // the script began: the container runs
	StageProofPassed              // the proof passed; the runner is starting
	StageListening                // the runner is connected and waits for a job
	StageExit                     // the script is about to exit (ExitCode says why)
	StageGPU                      // the machine report named a GPU (GPUUUID, Driver)
)

// LogLine is a container log line read back: its stage, and for StageExit
// the exit code the script is about to return.
type LogLine struct {
	Stage    Stage
	ExitCode int
	// GPUUUID and Driver are a StageGPU line's GPU UUID and kernel driver
	// version, each checked to be one (ValidGPUUUID, a dotted version).
	GPUUUID, Driver string
}

// ReadLogLine reads one container log line (without its newline).
func ReadLogLine(line string) LogLine {
	if strings.Contains(line, LineRunnerListening) && !strings.HasPrefix(line, LogPrefix) {
		return LogLine{Stage: StageListening}
	}
	text, ours := strings.CutPrefix(line, LogPrefix)
	if !ours {
		return LogLine{}
	}
	switch {
	case strings.HasPrefix(text, LineStarted):
		return LogLine{Stage: StageStarted}
	case strings.HasPrefix(text, LineProofPassed):
		return LogLine{Stage: StageProofPassed}
	case strings.HasPrefix(text, LineGPU):
		return readGPULine(strings.TrimPrefix(text, LineGPU))
	}
	for _, e := range exitLines {
		if strings.HasPrefix(text, e.text) {
			return LogLine{Stage: StageExit, ExitCode: e.code}
		}
	}
	return LogLine{}
}

// ExitCause says, for a human, what a failing exit code of the script means.
func ExitCause(code int) string {
	switch code {
	case ExitProofFailed:
		return "the CUDA smoke proof failed on this host"
	case ExitDownload:
		return "the pod could not download the CUDA smoke proof"
	case ExitChecksum:
		return "the downloaded CUDA smoke proof did not match its SHA-256"
	case ExitNoJITConfig:
		return "the pod had no JIT runner config"
	case ExitRunnerMissing:
		return "the image has no runner (run.sh) at the runner directory"
	}
	return "the startup script failed"
}

// ExitLine is the line the script prints before exiting with code: what the
// simulated hosts print for it. It is "" for a code without one.
func ExitLine(code int, runnerDir string) string {
	for _, e := range exitLines {
		if e.code != code {
			continue
		}
		if code == ExitRunnerMissing {
			return LogPrefix + e.text + runnerDir + "/run.sh"
		}
		return LogPrefix + e.text
	}
	return ""
}

// readGPULine reads a machine report's GPU line after its "gpu: ": four
// comma-separated fields, a GPU UUID first and a dotted driver version
// third; anything else (nvidia-smi's own error, a line from the pod's own
// code) reports nothing.
func readGPULine(text string) LogLine {
	fields := strings.Split(text, ",")
	if len(fields) != 4 {
		return LogLine{}
	}
	uuid, driver := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[2])
	if !ValidGPUUUID(uuid) || !validDriverVersion(driver) {
		return LogLine{}
	}
	return LogLine{Stage: StageGPU, GPUUUID: uuid, Driver: driver}
}

// ValidGPUUUID reports whether id is a GPU UUID as nvidia-smi prints it:
// "GPU-" and 8-4-4-4-12 hexadecimal digits (a MIG device's "MIG-" alike).
func ValidGPUUUID(id string) bool {
	rest, ok := strings.CutPrefix(id, "GPU-")
	if !ok {
		rest, ok = strings.CutPrefix(id, "MIG-")
	}
	groups := strings.Split(rest, "-")
	if !ok || len(groups) != 5 {
		return false
	}
	for i, g := range groups {
		if len(g) != []int{8, 4, 4, 4, 12}[i] || strings.Trim(g, "0123456789abcdefABCDEF") != "" {
			return false
		}
	}
	return true
}

// validDriverVersion reports whether v is a kernel driver version: up to
// four dot-separated groups of 1 to 4 digits ("570.124.06").
func validDriverVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 4 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
