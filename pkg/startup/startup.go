// Package startup renders the script a candidate pod runs before its runner
// registers: log the machine, fetch the CUDA smoke proof without credentials,
// verify its SHA-256, run it with the JIT config stripped from its environment,
// and only on SMOKE PASS exec the preinstalled runner, as the image's non-root
// user without a way to raise its privileges, with the JIT config handed over
// in a 0600 file, never on a command line.
//
// Every value that reaches the script is validated against a strict pattern
// first and then single-quoted, so no input can be interpreted by the shell.
package startup

import (
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/lazyre"
)

// Default values for the official runner image (ghcr.io/actions/actions-runner).
const (
	DefaultRunnerDir = "/home/runner"
	DefaultWorkDir   = "/tmp"
	// DefaultImageProof is where an image may carry the proof (the suite's
	// CUDA runner image does): a copy there whose SHA-256 is the expected one
	// is used instead of downloading it in the paid window.
	DefaultImageProof = "/opt/runpod-gpu/cuda-smoke"
	// JITConfigEnv is the pod environment variable carrying the runner's JIT config,
	// the one credential that reaches the pod.
	JITConfigEnv = "RUNNER_JIT_CONFIG"
	// RunnerUser is the image's non-root user the runner (and so the job's
	// code) runs as when the image has it; the official runner image does.
	RunnerUser = "runner"
)

// Exit codes of the script, so a pod's exit tells the provisioner (and a human
// reading the pod log) which stage stopped it.
const (
	ExitProofFailed   = 1
	ExitDownload      = 2
	ExitChecksum      = 3
	ExitNoJITConfig   = 4
	ExitRunnerMissing = 5
	// ExitPrivileges: the runner's user could still raise its privileges
	// (no setpriv to drop them, or sudo still works), so the runner was not started.
	ExitPrivileges = 6
)

// NVRTCPin is a pinned NVRTC package for one runtime tier.
type NVRTCPin struct {
	Tier   string // "full" or "baseline"
	URL    string
	SHA256 string
}

// Params are the values a script is rendered from. Render validates all of them.
type Params struct {
	ProofURL     string     // where the proof binary is fetched, with no credentials
	ProofSHA256  string     // expected SHA-256 of the proof binary (lowercase hex)
	MinCUDA      string     // driver CUDA floor, "major.minor" in pkg/cudaver's grammar
	FullTier     string     // CUDA version of the full runtime tier
	BaselineTier string     // CUDA version of the baseline runtime tier
	MinVRAMGB    int        // VRAM floor
	NVRTC        []NVRTCPin // optional NVRTC pins, at most one per tier
	RunnerDir    string     // directory holding the preinstalled runner's run.sh; default DefaultRunnerDir
	WorkDir      string     // parent of the script's private temporary directory; default DefaultWorkDir
	ImageProof   string     // where the image may carry the proof; default DefaultImageProof
}

// FieldError names the parameter that failed validation and what was expected.
// The value is included only when it is safe to print (it never holds secrets).
type FieldError struct {
	Field    string
	Value    string
	Expected string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("startup script: %s = %q: want %s", e.Field, e.Value, e.Expected)
}

var (
	sha256RE   = lazyre.Regexp{Pattern: `^[0-9a-f]{64}$`}
	pathRE     = lazyre.Regexp{Pattern: `^/[A-Za-z0-9._/-]*$`}
	urlCharsRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9._~:/?=&%+@-]+$`}
)

// Validate checks every parameter; the error joins one *FieldError per problem.
func (p Params) Validate() error {
	var errs []error
	bad := func(field, value, expected string) {
		errs = append(errs, &FieldError{Field: field, Value: value, Expected: expected})
	}
	if err := checkURL(p.ProofURL); err != "" {
		bad("proof_url", p.ProofURL, err)
	}
	if !sha256RE.MatchString(p.ProofSHA256) {
		bad("proof_sha256", p.ProofSHA256, "64 lowercase hex digits")
	}
	for _, v := range []struct{ field, value string }{
		{"min_cuda_version", p.MinCUDA}, {"runtime_tiers.full", p.FullTier}, {"runtime_tiers.baseline", p.BaselineTier},
	} {
		// The proof parses these with the same grammar, so a value that renders is one it accepts.
		if _, err := cudaver.Parse(v.value); err != nil {
			bad(v.field, v.value, `a CUDA version "major.minor", e.g. "12.6"`)
		}
	}
	if p.MinVRAMGB < 0 || p.MinVRAMGB > 4096 {
		bad("min_vram_gb", strconv.Itoa(p.MinVRAMGB), "an integer from 0 to 4096")
	}
	seen := map[string]bool{}
	for i, pin := range p.NVRTC {
		prefix := fmt.Sprintf("nvrtc[%d]", i)
		if pin.Tier != "full" && pin.Tier != "baseline" {
			bad(prefix+".tier", pin.Tier, `"full" or "baseline"`)
		} else if seen[pin.Tier] {
			bad(prefix+".tier", pin.Tier, "at most one pin per tier")
		}
		seen[pin.Tier] = true
		if err := checkURL(pin.URL); err != "" {
			bad(prefix+".url", pin.URL, err)
		}
		if !sha256RE.MatchString(pin.SHA256) {
			bad(prefix+".sha256", pin.SHA256, "64 lowercase hex digits")
		}
	}
	for _, v := range []struct{ field, value string }{{"runner_dir", p.RunnerDir}, {"work_dir", p.WorkDir}, {"image_proof", p.ImageProof}} {
		if v.value != "" && (!pathRE.MatchString(v.value) || strings.Contains(v.value, "..")) {
			bad(v.field, v.value, "an absolute path of letters, digits, '.', '_', '-' and '/' without '..'")
		}
	}
	return errors.Join(errs...)
}

// checkURL returns "" for an acceptable download URL, else what is expected.
// Plain http is allowed only on loopback, where the simulated cloud serves the proof.
func checkURL(raw string) string {
	const want = "an https:// URL (http:// only on loopback) without credentials, spaces or quotes"
	if !urlCharsRE.MatchString(raw) {
		return want
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return want
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return ""
		}
	}
	return want
}

// scriptTemplate is the script with {{…}} placeholders, each replaced by
// Render with a validated value ({{q .X}}: single-quoted). It is not a
// text/template on purpose: executing one makes the linker keep every
// exported method of every type in the image's program (template calls
// methods by name), 3.6 MB of go-github alone.
//
//go:embed script.sh.tmpl
var scriptTemplate string

// Render validates p and returns the bash script. The script expects the JIT
// config in the JITConfigEnv environment variable and nothing else secret.
func Render(p Params) (string, error) {
	if p.RunnerDir == "" {
		p.RunnerDir = DefaultRunnerDir
	}
	if p.WorkDir == "" {
		p.WorkDir = DefaultWorkDir
	}
	if p.ImageProof == "" {
		p.ImageProof = DefaultImageProof
	}
	if err := p.Validate(); err != nil {
		return "", err
	}
	pins := append([]NVRTCPin(nil), p.NVRTC...)
	sort.Slice(pins, func(i, j int) bool { return pins[i].Tier < pins[j].Tier })
	var pinFlags strings.Builder
	for _, pin := range pins {
		fmt.Fprintf(&pinFlags, "\n  --nvrtc-url-%s %s \\\n  --nvrtc-sha256-%s %s \\", pin.Tier, Quote(pin.URL), pin.Tier, Quote(pin.SHA256))
	}
	script := strings.NewReplacer(
		"{{q .ProofURL}}", Quote(p.ProofURL), "{{q .ProofSHA256}}", Quote(p.ProofSHA256),
		"{{q .RunnerDir}}", Quote(p.RunnerDir), "{{q .WorkDir}}", Quote(p.WorkDir), "{{q .ImageProof}}", Quote(p.ImageProof),
		"{{q .MinCUDA}}", Quote(p.MinCUDA), "{{q .FullTier}}", Quote(p.FullTier), "{{q .BaselineTier}}", Quote(p.BaselineTier),
		"{{q .MinVRAMGB}}", Quote(strconv.Itoa(p.MinVRAMGB)), "{{.PinFlags}}", pinFlags.String(),
		"{{.JITEnv}}", JITConfigEnv, "{{.RunnerUser}}", RunnerUser,
		"{{.ExitDownload}}", strconv.Itoa(ExitDownload), "{{.ExitChecksum}}", strconv.Itoa(ExitChecksum),
		"{{.ExitProof}}", strconv.Itoa(ExitProofFailed), "{{.ExitNoJIT}}", strconv.Itoa(ExitNoJITConfig),
		"{{.ExitRunnerMissing}}", strconv.Itoa(ExitRunnerMissing), "{{.ExitPrivileges}}", strconv.Itoa(ExitPrivileges),
	).Replace(scriptTemplate)
	if i := strings.Index(script, "{{"); i >= 0 {
		return "", fmt.Errorf("startup script: render: placeholder left at byte %d: %.40q", i, script[i:])
	}
	return script, nil
}

// Quote single-quotes s for bash so it is always one literal word.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Entrypoint and Cmd are the pod create fields that run a rendered script: the
// container runs `/bin/bash -c <script>`.
func Entrypoint() []string { return []string{"/bin/bash", "-c"} }

// Cmd returns the container command carrying the script.
func Cmd(script string) []string { return []string{script} }

// PodEnv returns the non-secret environment a candidate pod needs besides the
// JIT config: NVIDIA capabilities (the runner image is not a CUDA base image, so
// they must be requested explicitly) and the proof's parameters for the record.
func PodEnv(p Params) map[string]string {
	return map[string]string{
		"NVIDIA_VISIBLE_DEVICES":       "all",
		"NVIDIA_DRIVER_CAPABILITIES":   "compute,utility",
		"RUNPOD_GPU_SMOKE_MIN_CUDA":    p.MinCUDA,
		"RUNPOD_GPU_SMOKE_FULL_TIER":   p.FullTier,
		"RUNPOD_GPU_SMOKE_BASE_TIER":   p.BaselineTier,
		"RUNPOD_GPU_SMOKE_MIN_VRAM_GB": strconv.Itoa(p.MinVRAMGB),
		"RUNPOD_GPU_SMOKE_SHA256":      p.ProofSHA256,
	}
}
