package startup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/smoke"
)

func validParams() Params {
	return Params{
		ProofURL:     "https://github.com/org/runpod-gpu/releases/download/v1.0.0/cuda-smoke",
		ProofSHA256:  strings.Repeat("ab", 32),
		MinCUDA:      "12.6",
		FullTier:     "12.8",
		BaselineTier: "12.6",
		MinVRAMGB:    8,
	}
}

func TestRenderGolden(t *testing.T) {
	p := validParams()
	p.NVRTC = []NVRTCPin{
		{Tier: "full", URL: "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-nvrtc-12-8_12.8.93-1_amd64.deb", SHA256: strings.Repeat("cd", 32)},
		{Tier: "baseline", URL: "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-nvrtc-12-6_12.6.85-1_amd64.deb", SHA256: strings.Repeat("ef", 32)},
	}
	script, err := Render(p)
	assert.NilError(t, err)
	golden.Assert(t, script, "script-nvrtc.golden")

	plain, err := Render(validParams())
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(plain, "nvrtc"), "no NVRTC flags without pins")
	assert.Check(t, is.Contains(plain, "env -u RUNNER_JIT_CONFIG"))
}

// The rendered script must pass shellcheck; CI installs it (.ci/run).
func TestRenderedScriptPassesShellcheck(t *testing.T) {
	bin, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is required in CI (.ci/run installs it)")
		}
		t.Skip("shellcheck not installed")
	}
	withPins := validParams()
	withPins.NVRTC = []NVRTCPin{{Tier: "full", URL: "https://example.com/nvrtc.deb", SHA256: strings.Repeat("0", 64)}}
	for name, p := range map[string]Params{"plain": validParams(), "nvrtc": withPins} {
		t.Run(name, func(t *testing.T) {
			script, err := Render(p)
			assert.NilError(t, err)
			path := filepath.Join(t.TempDir(), "startup.sh")
			assert.NilError(t, os.WriteFile(path, []byte(script), 0o600))
			out, err := exec.Command(bin, "--shell=bash", path).CombinedOutput()
			assert.NilError(t, err, "shellcheck:\n%s", out)
		})
	}
}

// payloads are shell metacharacters and quotes that must never execute.
var payloads = []string{
	`$(touch PWNED)`, "`touch PWNED`", `'; touch PWNED; '`, `"; touch PWNED; "`, "a\ntouch PWNED",
	`${IFS}touch${IFS}PWNED`, `a;touch PWNED`, `a|touch PWNED`, `a&&touch PWNED`, `$((1))`, `\`, `a b`,
}

// Every input is validated: each payload in each field is rejected, naming the field.
func TestValidateRejectsShellMetacharactersInEveryField(t *testing.T) {
	fields := map[string]func(*Params, string){
		"proof_url":              func(p *Params, v string) { p.ProofURL = "https://example.com/" + v },
		"proof_sha256":           func(p *Params, v string) { p.ProofSHA256 = v },
		"min_cuda_version":       func(p *Params, v string) { p.MinCUDA = v },
		"runtime_tiers.full":     func(p *Params, v string) { p.FullTier = "12.8" + v },
		"runtime_tiers.baseline": func(p *Params, v string) { p.BaselineTier = v + "12.6" },
		"runner_dir":             func(p *Params, v string) { p.RunnerDir = "/home/" + v },
		"work_dir":               func(p *Params, v string) { p.WorkDir = "/tmp/" + v },
		"nvrtc[0].url": func(p *Params, v string) {
			p.NVRTC = []NVRTCPin{{Tier: "full", URL: "https://example.com/" + v, SHA256: strings.Repeat("0", 64)}}
		},
		"nvrtc[0].sha256": func(p *Params, v string) {
			p.NVRTC = []NVRTCPin{{Tier: "full", URL: "https://example.com/x.deb", SHA256: v}}
		},
		"nvrtc[0].tier": func(p *Params, v string) {
			p.NVRTC = []NVRTCPin{{Tier: v, URL: "https://example.com/x.deb", SHA256: strings.Repeat("0", 64)}}
		},
	}
	for field, set := range fields {
		for _, payload := range payloads {
			p := validParams()
			set(&p, payload)
			_, err := Render(p)
			var fe *FieldError
			assert.Assert(t, errors.As(err, &fe), "field %s accepted %q", field, payload)
			assert.Check(t, is.Equal(fe.Field, field), "payload %q", payload)
		}
	}
}

func TestValidateTable(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Params)
		wantErr string
	}{
		{name: "valid", mutate: func(*Params) {}},
		{name: "loopback http allowed", mutate: func(p *Params) { p.ProofURL = "http://127.0.0.1:8080/proof" }},
		{name: "localhost http allowed", mutate: func(p *Params) { p.ProofURL = "http://localhost:8080/proof" }},
		{name: "plain http elsewhere", mutate: func(p *Params) { p.ProofURL = "http://example.com/proof" }, wantErr: "proof_url"},
		{name: "credentials in URL", mutate: func(p *Params) { p.ProofURL = "https://user:pw@example.com/proof" }, wantErr: "without credentials"},
		{name: "file URL", mutate: func(p *Params) { p.ProofURL = "file:///etc/passwd" }, wantErr: "proof_url"},
		{name: "uppercase sha", mutate: func(p *Params) { p.ProofSHA256 = strings.Repeat("AB", 32) }, wantErr: "64 lowercase hex"},
		{name: "short sha", mutate: func(p *Params) { p.ProofSHA256 = "abc" }, wantErr: "proof_sha256"},
		{name: "cuda without minor", mutate: func(p *Params) { p.MinCUDA = "12" }, wantErr: `min_cuda_version = "12"`},
		{name: "negative vram", mutate: func(p *Params) { p.MinVRAMGB = -1 }, wantErr: "min_vram_gb"},
		{name: "relative runner dir", mutate: func(p *Params) { p.RunnerDir = "home/runner" }, wantErr: "runner_dir"},
		{name: "dotdot work dir", mutate: func(p *Params) { p.WorkDir = "/tmp/../etc" }, wantErr: "work_dir"},
		{name: "two pins one tier", mutate: func(p *Params) {
			pin := NVRTCPin{Tier: "full", URL: "https://example.com/x.deb", SHA256: strings.Repeat("0", 64)}
			p.NVRTC = []NVRTCPin{pin, pin}
		}, wantErr: "at most one pin per tier"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validParams()
			tc.mutate(&p)
			err := p.Validate()
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// Quote must produce one literal word for anything, even input validation would refuse.
func TestQuoteNeverExecutes(t *testing.T) {
	dir := t.TempDir()
	for _, payload := range append(payloads, `'`, `''`, `'\''`, "\x00x") {
		payload = strings.ReplaceAll(payload, "\x00", "")
		cmd := exec.Command("bash", "-c", "printf %s "+Quote(payload))
		cmd.Dir = dir
		out, err := cmd.Output()
		assert.NilError(t, err, "payload %q", payload)
		assert.Equal(t, string(out), payload)
	}
	_, err := os.Stat(filepath.Join(dir, "PWNED"))
	assert.Check(t, errors.Is(err, os.ErrNotExist), "a payload executed")
}

// host is a private directory laid out like a pod: stand-ins for nvidia-smi, the
// proof (served over loopback HTTP) and the runner's run.sh, each recording what
// it saw.
type host struct {
	dir, runnerDir, records string
	server                  *httptest.Server
	proof                   []byte
}

// newHost builds a host whose stand-in proof exits with proofExit.
func newHost(t *testing.T, proofExit int) *host {
	t.Helper()
	h := &host{dir: t.TempDir()}
	h.runnerDir = filepath.Join(h.dir, "runner")
	h.records = filepath.Join(h.dir, "records")
	bin := filepath.Join(h.dir, "bin")
	for _, d := range []string{h.runnerDir, h.records, bin, filepath.Join(h.dir, "tmp")} {
		assert.NilError(t, os.MkdirAll(d, 0o755))
	}
	write := func(path, body string) {
		assert.NilError(t, os.WriteFile(path, []byte(body), 0o755))
	}
	write(filepath.Join(bin, "nvidia-smi"), "#!/bin/sh\necho 'GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA GeForce RTX 4090, 570.86.15, 24564 MiB'\n")
	// The runner records its arguments, its environment, whether it can sudo,
	// and every command line of the machine that holds the JIT config (the
	// pattern comes from a file, so the search's own command line holds none).
	assert.NilError(t, os.WriteFile(filepath.Join(h.dir, "jit-pattern"), []byte(jitConfig+"\n"), 0o600))
	write(filepath.Join(h.runnerDir, "run.sh"), "#!/bin/bash\nprintf '%s\\n' \"$@\" > "+h.records+"/runner-args\nenv > "+h.records+"/runner-env\n"+
		"if sudo -n true >/dev/null 2>&1; then echo allowed; else echo refused; fi > "+h.records+"/runner-sudo\n"+
		"for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < \"$f\" 2>/dev/null; echo; done | grep -F -f "+h.dir+"/jit-pattern > "+h.records+"/cmdlines || true\n")
	h.proof = []byte("#!/bin/sh\nenv > " + h.records + "/proof-env\nprintf '%s\\n' \"$@\" > " + h.records + "/proof-args\n" +
		"if [ " + strconv.Itoa(proofExit) + " -eq 0 ]; then echo 'SMOKE PASS'; else echo 'SMOKE FAIL: stand-in told to fail'; fi\nexit " + strconv.Itoa(proofExit) + "\n")
	mux := http.NewServeMux()
	mux.HandleFunc("/cuda-smoke", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "the proof must be fetched without credentials", http.StatusBadRequest)
			return
		}
		_, _ = w.Write(h.proof)
	})
	h.server = httptest.NewServer(mux)
	t.Cleanup(h.server.Close)
	return h
}

func (h *host) params() Params {
	sum := sha256.Sum256(h.proof)
	p := validParams()
	p.ProofURL = h.server.URL + "/cuda-smoke"
	p.ProofSHA256 = hex.EncodeToString(sum[:])
	p.RunnerDir = h.runnerDir
	p.WorkDir = filepath.Join(h.dir, "tmp")
	return p
}

// run executes the script the way a pod does (bash -c) with the pod's environment.
func (h *host) run(t *testing.T, script string, env map[string]string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(Entrypoint()[1:], Cmd(script)...)
	cmd := exec.CommandContext(ctx, Entrypoint()[0], args...)
	cmd.Env = []string{"PATH=" + filepath.Join(h.dir, "bin") + ":/usr/bin:/bin", "HOME=" + h.dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	assert.NilError(t, err, "script output:\n%s", out)
	return 0, string(out)
}

func (h *host) recorded(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(h.records, name))
	return string(b), err == nil
}

const jitConfig = "eyJqaXQiOiJzZWNyZXQtc2luZ2xlLXVzZSJ9"

func TestScriptRunsOnAHost(t *testing.T) {
	tests := []struct {
		name       string
		proofExit  int
		mutate     func(h *host, p *Params)
		env        map[string]string
		wantExit   int
		wantProof  bool
		wantRunner bool
		wantOut    string
	}{
		{name: "proof passes and the runner starts with the JIT config", wantExit: 0, wantProof: true, wantRunner: true, wantOut: "proof passed: starting the runner"},
		{name: "proof fails and the runner never starts", proofExit: 1, wantExit: ExitProofFailed, wantProof: true, wantOut: "CUDA smoke proof failed"},
		{name: "checksum mismatch stops before the proof", mutate: func(h *host, p *Params) { p.ProofSHA256 = strings.Repeat("0", 64) },
			wantExit: ExitChecksum, wantOut: "proof checksum mismatch"},
		{name: "download failure stops before the proof", mutate: func(h *host, p *Params) { p.ProofURL = h.server.URL + "/missing" },
			wantExit: ExitDownload, wantOut: "proof download failed"},
		{name: "no JIT config", env: map[string]string{}, wantExit: ExitNoJITConfig, wantProof: true, wantOut: "no JIT runner config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, tc.proofExit)
			p := h.params()
			if tc.mutate != nil {
				tc.mutate(h, &p)
			}
			script, err := Render(p)
			assert.NilError(t, err)
			env := tc.env
			if env == nil {
				env = map[string]string{JITConfigEnv: jitConfig}
			}
			for k, v := range PodEnv(p) {
				env[k] = v
			}
			code, out := h.run(t, script, env)
			assert.Equal(t, code, tc.wantExit, "output:\n%s", out)
			assert.Check(t, is.Contains(out, tc.wantOut))
			assert.Check(t, !strings.Contains(out, jitConfig), "the script printed the JIT config")

			proofEnv, proofRan := h.recorded("proof-env")
			assert.Equal(t, proofRan, tc.wantProof, "proof ran")
			if proofRan {
				assert.Check(t, !strings.Contains(proofEnv, JITConfigEnv), "the proof saw the JIT config:\n%s", proofEnv)
				assert.Check(t, !strings.Contains(proofEnv, jitConfig))
				args, _ := h.recorded("proof-args")
				assert.Check(t, is.Contains(args, "--min-cuda\n12.6\n--full-tier\n12.8\n--baseline-tier\n12.6\n--min-vram-gb\n8\n"))
			}
			runnerArgs, runnerRan := h.recorded("runner-args")
			assert.Equal(t, runnerRan, tc.wantRunner, "runner ran")
			if runnerRan {
				assertJITHandedOver(t, h, runnerArgs)
				runnerEnv, _ := h.recorded("runner-env")
				assert.Check(t, is.Contains(runnerEnv, "RUNNER_ALLOW_RUNASROOT=1"))
			}
		})
	}
}

func TestPodEnvHasNoSecrets(t *testing.T) {
	env := PodEnv(validParams())
	assert.Equal(t, env["NVIDIA_DRIVER_CAPABILITIES"], "compute,utility")
	_, hasJIT := env[JITConfigEnv]
	assert.Check(t, !hasJIT, "PodEnv must not carry the JIT config; provision adds it")
}

// assertJITHandedOver checks how the runner got its JIT config: in
// ACTIONS_RUNNER_INPUT_JITCONFIG (which the runner drops from its
// environment), not in arguments, not on any command line of the machine, and
// with the file that carried it gone.
func assertJITHandedOver(t *testing.T, h *host, runnerArgs string) {
	t.Helper()
	assert.Check(t, is.Equal(runnerArgs, "\n"), "run.sh got arguments")
	runnerEnv, _ := h.recorded("runner-env")
	assert.Check(t, is.Contains(runnerEnv, "ACTIONS_RUNNER_INPUT_JITCONFIG="+jitConfig+"\n"))
	assert.Check(t, !strings.Contains(runnerEnv, JITConfigEnv+"="), "the pod's JIT config variable reached the runner")
	cmdlines, _ := h.recorded("cmdlines")
	assert.Check(t, is.Equal(cmdlines, ""), "the JIT config is on a command line every process can read")
	left, err := filepath.Glob(filepath.Join(h.dir, "tmp", "runpod-gpu-jit.*"))
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "the JIT config's file is left on the pod")
}

// The runner, and so the job's code, runs as the image's non-root user when
// the image has one, unable to raise its privileges (no_new_privs: the image's
// passwordless sudo refuses); root is kept only for the proof. A runner user
// that could still sudo does not get the runner.
func TestRunnerDropsRootWhenTheImageHasARunnerUser(t *testing.T) {
	tests := []struct {
		name       string
		hasUser    bool
		keepsSudo  bool   // setpriv does not set no_new_privs
		wantExit   int    // of the script
		wantUser   string // the user the runner stand-in ran as; "" when it never ran
		wantRoot   bool   // RUNNER_ALLOW_RUNASROOT reaches the runner
		wantLogged string
	}{
		{name: "image with a runner user", hasUser: true, wantUser: "runner", wantLogged: "starting the runner as user runner, without sudo (no_new_privs)"},
		{name: "image without one", hasUser: false, wantUser: "root", wantRoot: true, wantLogged: "starting the runner as root"},
		{name: "the runner user can still sudo", hasUser: true, keepsSudo: true, wantExit: ExitPrivileges,
			wantLogged: "runpod-gpu: user runner can still use sudo: not starting the runner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, 0)
			bin := filepath.Join(h.dir, "bin")
			// id answers for the runner user only when the image has one; the
			// process itself is root (uid 0) until setpriv says otherwise.
			idScript := "#!/bin/bash\nif [ \"$*\" = \"-u runner\" ]; then " +
				map[bool]string{true: "echo 1001; exit 0", false: "echo 'id: runner: no such user' >&2; exit 1"}[tc.hasUser] +
				"; fi\nif [ \"$*\" = \"-u\" ]; then [ \"${SIM_USER:-root}\" = root ] && echo 0 || echo 1001; exit 0; fi\n" +
				"if [ \"$*\" = \"-un\" ]; then echo \"${SIM_USER:-root}\"; exit 0; fi\nexit 1\n"
			assert.NilError(t, os.WriteFile(filepath.Join(bin, "id"), []byte(idScript), 0o755))
			// The image's passwordless sudo, which no_new_privs makes refuse.
			sudo := "#!/bin/bash\n[ -n \"${SIM_NNP:-}\" ] && { echo 'sudo: the no new privileges flag is set' >&2; exit 1; }\n" +
				"while [ $# -gt 0 ]; do case $1 in -u) shift 2 ;; -n|-E|-H) shift ;; --) shift; break ;; *) break ;; esac; done\n" +
				"export SIM_USER=root\nexec \"$@\"\n"
			assert.NilError(t, os.WriteFile(filepath.Join(bin, "sudo"), []byte(sudo), 0o755))
			// setpriv records its options and marks the user and the flag.
			nnp := "SIM_NNP=1"
			if tc.keepsSudo {
				nnp = "SIM_NNP="
			}
			setpriv := "#!/bin/bash\nprintf '%s\\n' \"$@\" > " + h.records + "/setpriv-args\n" +
				"while [ $# -gt 0 ]; do case $1 in --) shift; break ;; *) shift ;; esac; done\n" +
				"export SIM_USER=runner " + nnp + "\nexec \"$@\"\n"
			assert.NilError(t, os.WriteFile(filepath.Join(bin, "setpriv"), []byte(setpriv), 0o755))
			script, err := Render(h.params())
			assert.NilError(t, err)
			code, out := h.run(t, script, map[string]string{JITConfigEnv: jitConfig})
			assert.Equal(t, code, tc.wantExit, out)
			assert.Check(t, is.Contains(out, tc.wantLogged))
			assert.Check(t, !strings.Contains(out, jitConfig), "the script printed the JIT config")
			runnerEnv, ran := h.recorded("runner-env")
			if tc.wantUser == "" {
				assert.Check(t, !ran, "the runner started:\n%s", out)
				left, _ := filepath.Glob(filepath.Join(h.dir, "tmp", "runpod-gpu-jit.*"))
				assert.Check(t, is.Len(left, 0), "the JIT config's file is left on the pod")
				return
			}
			assert.Assert(t, ran, out)
			user := "root"
			for _, line := range strings.Split(runnerEnv, "\n") {
				if v, ok := strings.CutPrefix(line, "SIM_USER="); ok {
					user = v
				}
			}
			assert.Equal(t, user, tc.wantUser)
			assert.Equal(t, strings.Contains(runnerEnv, "RUNNER_ALLOW_RUNASROOT=1"), tc.wantRoot)
			args, _ := h.recorded("runner-args")
			assertJITHandedOver(t, h, args)
			proofEnv, _ := h.recorded("proof-env")
			assert.Check(t, !strings.Contains(proofEnv, "SIM_USER=runner"), "the proof runs as root, before the drop")
			if tc.hasUser {
				sudo, _ := h.recorded("runner-sudo")
				assert.Check(t, is.Equal(sudo, "refused\n"), "the runner's user can sudo")
				setprivArgs, _ := h.recorded("setpriv-args")
				assert.Check(t, is.Contains(setprivArgs, "--reuid=runner\n--regid=runner\n--init-groups\n--no-new-privs\n--\n"))
			}
		})
	}
}

// TestProofDownloadOverlapsTheMachineReport: the proof is fetched in the
// background from the script's first moment, so the download is in flight
// while the rest of the start runs. The server holds the proof's download open
// until the machine report has run, and the stand-in nvidia-smi (part of the
// machine report) asks the server whether the download has begun; only a
// download in flight during the report satisfies both. A script that reported
// first and fetched after fails the report's side, and one that fetched in the
// foreground before reporting fails the download's side (each after waiting
// out a bound only the failing case reaches).
func TestProofDownloadOverlapsTheMachineReport(t *testing.T) {
	h := newHost(t, 0)
	started, reported := make(chan struct{}), make(chan struct{})
	var startOnce, reportOnce sync.Once
	var reportDuringDownload atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/cuda-smoke", func(w http.ResponseWriter, r *http.Request) {
		startOnce.Do(func() { close(started) })
		select {
		case <-reported:
			reportDuringDownload.Store(true)
		case <-time.After(5 * time.Second): // only the failing case waits this out
		}
		_, _ = w.Write(h.proof)
	})
	mux.HandleFunc("/download-started", func(w http.ResponseWriter, r *http.Request) {
		reportOnce.Do(func() { close(reported) })
		select {
		case <-started:
			_, _ = w.Write([]byte("overlapped"))
		case <-time.After(5 * time.Second): // only the failing case waits this out
			_, _ = w.Write([]byte("sequential"))
		}
	})
	h.server.Config.Handler = mux
	smi := "#!/bin/sh\ncurl -fsS " + h.server.URL + "/download-started > " + h.records + "/overlap\n" +
		"echo 'NVIDIA GeForce RTX 4090, 570.86.15, 24564 MiB'\n"
	assert.NilError(t, os.WriteFile(filepath.Join(h.dir, "bin", "nvidia-smi"), []byte(smi), 0o755))

	p := h.params()
	script, err := Render(p)
	assert.NilError(t, err)
	env := map[string]string{JITConfigEnv: jitConfig}
	for k, v := range PodEnv(p) {
		env[k] = v
	}
	code, out := h.run(t, script, env)
	assert.Equal(t, code, 0, "output:\n%s", out)
	assert.Check(t, is.Contains(out, "proof passed: starting the runner"))
	overlap, _ := h.recorded("overlap")
	assert.Check(t, is.Equal(overlap, "overlapped"), "the machine report ran before the proof's download began")
	assert.Check(t, reportDuringDownload.Load(), "the proof's download ended before the machine report ran: it did not overlap")
}

// TestCUDAVersionsAgreeAcrossConfigScriptAndProof feeds edge values through the three
// places a CUDA version is read: loading the config, rendering and running the startup
// script, and the proof's own flag parsing. "12.100" once passed the first two and was
// refused only by the pod's proof, after the pod had been paid for; now all three read
// pkg/cudaver's grammar, and this test holds them to the same answer.
func TestCUDAVersionsAgreeAcrossConfigScriptAndProof(t *testing.T) {
	tests := []struct {
		value string
		valid bool
	}{
		{value: "12.6", valid: true},
		{value: "12.10", valid: true},
		{value: "13.0", valid: true},
		{value: "12.100"},
		{value: "12.06"},
		{value: "012.6"},
		{value: "12"},
		{value: "12.6.1"},
		{value: " 12.6"},
		{value: "99999.1"},
	}
	noEnv := func(string) string { return "" }
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			doc := "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA GeForce RTX 4090\"]\nmin_cuda_version: " + strconv.Quote(tc.value) + "\n"
			cfg, configErr := config.Parse([]byte(doc), "runpod-gpu.yml")

			h := newHost(t, 0)
			p := h.params()
			p.MinCUDA = tc.value
			script, renderErr := Render(p)

			_, proofErr := smoke.ParseConfig([]string{"--min-cuda", tc.value}, noEnv)

			if !tc.valid {
				assert.ErrorContains(t, configErr, "min_cuda_version")
				var fe *FieldError
				assert.Assert(t, errors.As(renderErr, &fe), "the script rendered %q", tc.value)
				assert.Equal(t, fe.Field, "min_cuda_version")
				assert.ErrorContains(t, proofErr, "--min-cuda")
				return
			}
			assert.NilError(t, configErr)
			assert.Equal(t, cfg.MinCUDAVersion.String(), tc.value)
			assert.NilError(t, renderErr)
			assert.NilError(t, proofErr)

			// The value the script hands the proof is one the proof's parser takes, unchanged.
			env := map[string]string{JITConfigEnv: jitConfig}
			code, out := h.run(t, script, env)
			assert.Equal(t, code, 0, "output:\n%s", out)
			args, ran := h.recorded("proof-args")
			assert.Assert(t, ran, "the proof never ran:\n%s", out)
			proofCfg, err := smoke.ParseConfig(strings.Fields(args), noEnv)
			assert.NilError(t, err)
			assert.Equal(t, proofCfg.MinCUDA.String(), tc.value)
		})
	}
}

// An image that carries the proof (the suite's CUDA runner image) saves its
// download in the paid window, but only a copy whose SHA-256 is the one the
// trusted provision step named: a stale or altered copy is ignored and the
// proof is downloaded and checked as before.
func TestScriptUsesTheProofTheImageCarries(t *testing.T) {
	tests := []struct {
		name          string
		imageCopy     func(h *host) []byte // nil: the image carries none
		wantDownloads int
		wantOut       string
	}{
		{name: "the image's copy is the named proof: no download", imageCopy: func(h *host) []byte { return h.proof },
			wantDownloads: 0, wantOut: "using the CUDA smoke proof the image carries"},
		{name: "a stale copy is ignored: downloaded", imageCopy: func(h *host) []byte { return []byte("#!/bin/sh\necho stale; exit 0\n") },
			wantDownloads: 1, wantOut: "fetching the CUDA smoke proof"},
		{name: "no copy: downloaded", wantDownloads: 1, wantOut: "fetching the CUDA smoke proof"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, 0)
			var downloads atomic.Int32
			mux := http.NewServeMux()
			mux.HandleFunc("/cuda-smoke", func(w http.ResponseWriter, r *http.Request) {
				downloads.Add(1)
				_, _ = w.Write(h.proof)
			})
			h.server.Config.Handler = mux
			p := h.params()
			p.ImageProof = filepath.Join(h.dir, "opt", "runpod-gpu", "cuda-smoke")
			if tc.imageCopy != nil {
				assert.NilError(t, os.MkdirAll(filepath.Dir(p.ImageProof), 0o755))
				assert.NilError(t, os.WriteFile(p.ImageProof, tc.imageCopy(h), 0o755))
			}
			script, err := Render(p)
			assert.NilError(t, err)
			env := map[string]string{JITConfigEnv: jitConfig}
			code, out := h.run(t, script, env)
			assert.Equal(t, code, 0, "output:\n%s", out)
			assert.Check(t, is.Contains(out, tc.wantOut))
			assert.Check(t, is.Contains(out, "proof passed: starting the runner"))
			assert.Check(t, is.Equal(int(downloads.Load()), tc.wantDownloads))
			_, proofRan := h.recorded("proof-env")
			assert.Check(t, proofRan, "the named proof ran, never the stale copy")
		})
	}
}
