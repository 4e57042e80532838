package lanes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

// TestServerlessLaneGate runs the reusable workflow's chain with the real
// binaries: authorize → serverless → gate (lane serverless). The gate records
// the payload's SHA-256, and a later authorize for the same tested ref reuses it.
func TestServerlessLaneGate(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	assert.NilError(t, os.MkdirAll(filepath.Join(s.Workspace, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, ".github", "runpod-gpu.yml"), []byte(fastConfig), 0o644))
	pr := s.openPR(t)

	authorized := gateRunOK(t, s.simulated, s.AuthorizeStep(pr, "bob"))
	assert.Assert(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	st := s.step(t, junitCommand)
	lane := harness.RunStep(t, st)
	assert.Assert(t, lane.ExitCode == 0, lane.Stdout)
	o := lane.Outputs
	assert.Check(t, is.Equal(o["payload-sha256"], st.Inputs["approved-payload-sha256"]))

	gateInputs := func(result string) map[string]string {
		return map[string]string{
			"decision": authorized.Outputs["decision"], "gpu-job-result": result, "lane": "serverless",
			"head-sha": authorized.Outputs["head-sha"], "tested-ref": authorized.Outputs["tested-ref"],
			"payload-sha256": o["payload-sha256"], "worker-sha256": o["worker-sha256"], "job-id": o["job-id"],
			"job-status": o["job-status"], "cuda-executed": o["cuda-executed"], "gpu-pool": "AMPERE_16",
		}
	}
	published := gateRunOK(t, s.simulated, s.GateStep(pr, gateInputs("success")))
	assert.Check(t, is.Equal(published.Outputs["kind"], "serverless"))
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	c := checks[0]
	assert.Check(t, is.Equal(c.GetConclusion(), "success"))
	assert.Check(t, is.Equal(c.GetExternalID(), gatecheck.ExternalIDPrefix+authorized.Outputs["tested-ref"]+":serverless"))
	assert.Check(t, is.Contains(c.GetOutput().GetSummary(), "Payload SHA-256: `"+o["payload-sha256"]+"`"))
	assert.Check(t, is.Contains(c.GetOutput().GetSummary(), "| `"+o["job-id"]+"` | COMPLETED | AMPERE_16 | true |"))

	// The next trigger for the same tested ref pays nothing: the serverless gate is reusable.
	again := gateRunOK(t, s.simulated, s.AuthorizeStep(pr, "bob"))
	assert.Check(t, is.Equal(again.Outputs["decision"], "reuse"), again.Stdout)
	assert.Check(t, strings.HasSuffix(again.Outputs["reused-check-url"], "/"+published.Outputs["check-run-id"]), again.Outputs["reused-check-url"])

	// A success without the CUDA proof, or without the payload, is refused and publishes nothing.
	for name, change := range map[string][2]string{
		"no CUDA proof": {"cuda-executed", "false"},
		"no payload":    {"payload-sha256", ""},
	} {
		in := gateInputs("success")
		in[change[0]] = change[1]
		res := harness.RunStep(t, s.GateStep(pr, in))
		assert.Check(t, res.ExitCode != 0, name)
		assert.Check(t, is.Contains(res.Stdout, "input "+change[0]), name)
	}
	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 1), "a refused gate publishes nothing")
	s.nothingLeft(t)
}
