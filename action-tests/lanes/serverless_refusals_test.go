package lanes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

// TestServerlessLaneRefusesADriftedSetting: an endpoint that reads back
// with flashboot on (a setting the lane asked off) fails the step, names the
// setting, runs no job and is removed — the step no longer exits 0.
func TestServerlessLaneRefusesADriftedSetting(t *testing.T) {
	t.Parallel()
	flashboot := func(status int, body []byte) []byte {
		var e map[string]any
		if json.Unmarshal(body, &e) != nil {
			return body
		}
		e["flashboot"] = "FLASHBOOT"
		out, _ := json.Marshal(e)
		return out
	}
	s := startServerlessWith(t, slsOptions{worker: runpodsim.JobWorkerFunc(nil), api: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{
		{Match: runpodsim.Match{Route: "GET /v2/serverless/{id}"}, When: runpodsim.Trigger{Every: 1}, Body: flashboot}}}})
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, `flashboot "FLASHBOOT", want "OFF"`))
	assert.Check(t, is.Len(s.RunPod.Jobs(), 0), "no job on an endpoint whose settings differ")
	assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "true"))
	s.nothingLeft(t)
}

// ampere16 is a market whose AMPERE_16 pool holds the A4000 and two other cards.
func ampere16() *runpodsim.Market {
	m := runpodsim.DefaultMarket()
	m.GPUTypes = append(m.GPUTypes,
		runpodsim.GPUType{ID: "NVIDIA RTX A4500", Name: "RTX A4500", Pool: "AMPERE_16", MemoryGB: 20, SecurePrice: 0.34, CommunityPrice: 0.19, ServerlessPrice: 0.58},
		runpodsim.GPUType{ID: "NVIDIA RTX 4000 Ada Generation", Name: "RTX 4000 Ada", Pool: "AMPERE_16", MemoryGB: 20, SecurePrice: 0.38, CommunityPrice: 0.2, ServerlessPrice: 0.58})
	return &m
}

// TestServerlessLaneRunsOnlyOnTheGPUAskedFor: with the pool's other cards
// excluded, a scheduler that prefers another card can only place the worker
// on the A4000; one that ignores the exclusion meets the worker's own check,
// which fails the job with the device it found before any test runs.
func TestServerlessLaneRunsOnlyOnTheGPUAskedFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		place  func([]string) string
		exit   int
		status string
		want   string
	}{
		{name: "the exclusions leave the A4000", place: func(eligible []string) string { return eligible[len(eligible)-1] }, exit: 0, status: "COMPLETED"},
		{name: "a provider that ignores them", place: func([]string) string { return "NVIDIA RTX A4500" }, exit: 1, status: "FAILED",
			want: `GPU refused: the worker found "NVIDIA RTX A4500", not the "NVIDIA RTX A4000" the endpoint asked for`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServerlessWith(t, slsOptions{market: ampere16(), place: tc.place})
			res := harness.RunStep(t, s.step(t, junitCommand))
			assert.Equal(t, res.ExitCode, tc.exit, res.Stdout)
			assert.Check(t, is.Equal(res.Outputs["job-status"], tc.status))
			assert.Check(t, is.Contains(res.Stdout, tc.want))
			assert.Check(t, is.Contains(res.Stdout, "pool AMPERE_16, 2 other cards excluded"))
			_, err := os.Stat(filepath.Join(s.Workspace, "out", "results", "test.log"))
			assert.Check(t, (err == nil) == (tc.exit == 0), "the tests run only on the card asked for")
			s.nothingLeft(t)
		})
	}
}

// TestServerlessLaneCreatesNothingForAJobThatCannotPass: each refusal names
// the input, before any create (no POST reaches RunPod at all).
func TestServerlessLaneCreatesNothingForAJobThatCannotPass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		inputs  map[string]string
		arrange func(t *testing.T, ws string)
		want    string
	}{
		{name: "no test command", inputs: map[string]string{"test-command": ""}, want: "input test-command: a bash command that runs the GPU tests (an empty one could never pass)"},
		{name: "an invalid min-cuda", inputs: map[string]string{"min-cuda": "12"}, want: `input min-cuda = "12": want major.minor`},
		{name: "a results directory with results in it", arrange: func(t *testing.T, ws string) {
			assert.NilError(t, os.MkdirAll(filepath.Join(ws, "out"), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(ws, "out", "provider-response.json"), []byte("{}"), 0o644))
		}, want: `input output-dir`},
		{name: "a job stage the ledger cannot cover", inputs: map[string]string{"max-stage-cents": "200", "total-cents": "250"}, want: "stage job needs $1.25"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
			if tc.arrange != nil {
				tc.arrange(t, s.Workspace)
			}
			st := s.step(t, junitCommand)
			for k, v := range tc.inputs {
				st.Inputs[k] = v
			}
			res := harness.RunStep(t, st)
			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, tc.want))
			assert.Check(t, is.Len(s.RunPod.ServerlessResources(), 0), "nothing created")
			for _, r := range s.RunPod.Requests() {
				assert.Check(t, r.Method != "POST", "%s %s was sent", r.Method, r.Path)
			}
			assert.Check(t, !strings.Contains(res.Stdout, "setup: reserved"), "nothing reserved")
		})
	}
}
