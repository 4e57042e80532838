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
				assert.Check(t, is.DeepEqual(stages, []Stage{StageStarted, StageProofPassed}))
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
		"SMOKE FAIL: CUDA smoke proof failed":                             {}, // not the script's own line
		"echo runpod-gpu: proof passed: starting the runner":              {},
		"runpod-gpu: Listening for Jobs":                                  {}, // the script never prints it
		"":                                                                {},
	} {
		assert.Check(t, is.Equal(ReadLogLine(line), want), "%q", line)
	}
}
