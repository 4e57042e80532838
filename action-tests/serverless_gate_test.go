package actiontests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

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
	assert.NilError(t, os.MkdirAll(filepath.Join(s.workspace, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(s.workspace, ".github", "runpod-gpu.yml"), []byte(fastConfig), 0o644))
	pr := s.openPR(t)

	authorized := gateRunOK(t, s.simulated, s.authorizeStep(pr, "bob"))
	assert.Assert(t, is.Equal(authorized.outputs["decision"], "run"), authorized.stdout)
	st := s.step(t, junitCommand)
	lane := runStep(t, st)
	assert.Assert(t, lane.exitCode == 0, lane.stdout)
	o := lane.outputs
	assert.Check(t, is.Equal(o["payload-sha256"], st.inputs["approved-payload-sha256"]))

	gateInputs := func(result string) map[string]string {
		return map[string]string{
			"decision": authorized.outputs["decision"], "gpu-job-result": result, "lane": "serverless",
			"head-sha": authorized.outputs["head-sha"], "tested-ref": authorized.outputs["tested-ref"],
			"payload-sha256": o["payload-sha256"], "worker-sha256": o["worker-sha256"], "job-id": o["job-id"],
			"job-status": o["job-status"], "cuda-executed": o["cuda-executed"], "gpu-pool": "AMPERE_16",
		}
	}
	published := gateRunOK(t, s.simulated, s.gateStep(pr, gateInputs("success")))
	assert.Check(t, is.Equal(published.outputs["kind"], "serverless"))
	checks := s.gateChecks(t, headSHA)
	assert.Assert(t, is.Len(checks, 1))
	c := checks[0]
	assert.Check(t, is.Equal(c.GetConclusion(), "success"))
	assert.Check(t, is.Equal(c.GetExternalID(), gatecheck.ExternalIDPrefix+authorized.outputs["tested-ref"]+":serverless"))
	assert.Check(t, is.Contains(c.GetOutput().GetSummary(), "Payload SHA-256: `"+o["payload-sha256"]+"`"))
	assert.Check(t, is.Contains(c.GetOutput().GetSummary(), "| `"+o["job-id"]+"` | COMPLETED | AMPERE_16 | true |"))

	// The next trigger for the same tested ref pays nothing: the serverless gate is reusable.
	again := gateRunOK(t, s.simulated, s.authorizeStep(pr, "bob"))
	assert.Check(t, is.Equal(again.outputs["decision"], "reuse"), again.stdout)
	assert.Check(t, strings.HasSuffix(again.outputs["reused-check-url"], "/"+published.outputs["check-run-id"]), again.outputs["reused-check-url"])

	// A success without the CUDA proof, or without the payload, is refused and publishes nothing.
	for name, change := range map[string][2]string{
		"no CUDA proof": {"cuda-executed", "false"},
		"no payload":    {"payload-sha256", ""},
	} {
		in := gateInputs("success")
		in[change[0]] = change[1]
		res := runStep(t, s.gateStep(pr, in))
		assert.Check(t, res.exitCode != 0, name)
		assert.Check(t, is.Contains(res.stdout, "input "+change[0]), name)
	}
	assert.Check(t, is.Len(s.gateChecks(t, headSHA), 1), "a refused gate publishes nothing")
	s.nothingLeft(t)
}
