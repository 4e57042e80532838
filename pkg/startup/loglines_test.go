package startup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The lines the script really prints read back as the stage they report:
// each failing exit's last line names its exit code, a passing run prints
// the started and proof-passed lines, in that order. (The script and
// ReadLogLine change together or this fails.)
func TestScriptLinesReadBackAsTheirStage(t *testing.T) {
	tests := []struct {
		name      string
		proofExit int
		mutate    func(h *host, p *Params)
		env       map[string]string
		wantExit  int
	}{
		{name: "passes", wantExit: 0},
		{name: "proof fails", proofExit: 1, wantExit: ExitProofFailed},
		{name: "checksum", mutate: func(h *host, p *Params) { p.ProofSHA256 = strings.Repeat("0", 64) }, wantExit: ExitChecksum},
		{name: "download", mutate: func(h *host, p *Params) { p.ProofURL = h.server.URL + "/missing" }, wantExit: ExitDownload},
		{name: "no JIT config", env: map[string]string{}, wantExit: ExitNoJITConfig},
		{name: "no runner in the image", mutate: func(h *host, p *Params) { assert.NilError(t, os.Remove(filepath.Join(h.runnerDir, "run.sh"))) },
			wantExit: ExitRunnerMissing},
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

			var stages []Stage
			var last LogLine
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if l := ReadLogLine(line); l.Stage != StageNone {
					stages, last = append(stages, l.Stage), l
				}
			}
			assert.Assert(t, len(stages) > 0 && stages[0] == StageStarted, "stages %v in:\n%s", stages, out)
			if tc.wantExit == 0 {
				assert.Check(t, is.DeepEqual(stages, []Stage{StageStarted, StageGPU, StageProofPassed}))
				return
			}
			assert.Check(t, is.Equal(last, LogLine{Stage: StageExit, ExitCode: tc.wantExit}), "output:\n%s", out)
			assert.Check(t, is.Contains(out, ExitLine(tc.wantExit, p.RunnerDir)))
		})
	}
}

func TestReadLogLine(t *testing.T) {
	for line, want := range map[string]LogLine{
		"runpod-gpu: fetching the CUDA smoke proof":                       {Stage: StageStarted},
		"runpod-gpu: proof passed: starting the runner as user runner":    {Stage: StageProofPassed},
		"2026-12-01 10:00:00Z: Listening for Jobs":                        {Stage: StageListening},
		"runpod-gpu: runner not found at /home/runner/run.sh":             {Stage: StageExit, ExitCode: ExitRunnerMissing},
		"runpod-gpu: CUDA smoke proof failed: not registering the runner": {Stage: StageExit, ExitCode: ExitProofFailed},
		"runpod-gpu: gpu: GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA RTX A4000, 570.124.06, 16376 MiB": {Stage: StageGPU,
			GPUUUID: "GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f", Driver: "570.124.06"},
		"runpod-gpu: gpu: MIG-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA A100, 550.54.15, 40960 MiB": {Stage: StageGPU,
			GPUUUID: "MIG-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f", Driver: "550.54.15"},
		"runpod-gpu: gpu: NVIDIA RTX A4000, 570.124.06, 16376 MiB":                                              {}, // an older script's line: no UUID
		"runpod-gpu: gpu: nvidia-smi not found":                                                                 {},
		"runpod-gpu: gpu: NVIDIA-SMI has failed because it couldn't communicate with the driver.":               {},
		"runpod-gpu: gpu: GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6g, NVIDIA L4, 570.124.06, 1 MiB":               {}, // not hex
		"runpod-gpu: gpu: GPU-5a1c0e8f, NVIDIA L4, 570.124.06, 1 MiB":                                           {}, // too short
		"runpod-gpu: gpu: GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA L4, 570.124.06\n::warning::x, 1 MiB": {},
		"gpu: GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA L4, 570.124.06, 1 MiB":                           {}, // not the script's own line
		"SMOKE FAIL: CUDA smoke proof failed":                                                                   {}, // not the script's own line
		"echo runpod-gpu: proof passed: starting the runner":                                                    {},
		"runpod-gpu: Listening for Jobs":                                                                        {}, // the script never prints it
		"":                                                                                                      {},
	} {
		assert.Check(t, is.Equal(ReadLogLine(line), want), "%q", line)
	}
}

// FuzzReadLogLine: a pod's container log is outside data (the pod's own
// code writes to it once the runner runs). Reading any line never panics,
// and a GPU line read back names a GPU UUID and a driver version of safe
// characters only: they are printed in the lane's log and kept in the
// reputation record.
func FuzzReadLogLine(f *testing.F) {
	for _, seed := range []string{
		"runpod-gpu: gpu: GPU-5a1c0e8f-3b2d-4c6e-9f70-1a2b3c4d5e6f, NVIDIA RTX A4000, 570.124.06, 16376 MiB",
		"runpod-gpu: proof passed: starting the runner", "runpod-gpu: runner not found at /x/run.sh", "Listening for Jobs", "",
		"runpod-gpu: gpu: ,,,", "runpod-gpu: gpu: GPU-0-0-0-0-0, a, 1.2, b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l := ReadLogLine(line)
		if l.Stage != StageGPU {
			if l.GPUUUID != "" || l.Driver != "" {
				t.Fatalf("%q: a %v line carries a GPU (%q, %q)", line, l.Stage, l.GPUUUID, l.Driver)
			}
			return
		}
		if !ValidGPUUUID(l.GPUUUID) || !validDriverVersion(l.Driver) {
			t.Fatalf("%q: read back an invalid GPU %q or driver %q", line, l.GPUUUID, l.Driver)
		}
		if strings.ContainsAny(l.GPUUUID+l.Driver, "\n\r:, ") {
			t.Fatalf("%q: unsafe characters in %q %q", line, l.GPUUUID, l.Driver)
		}
	})
}
