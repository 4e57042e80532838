package lanes

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Every commit SHA input is a full SHA. The gate refuses a
// malformed one before publishing anything; cleanup, whose deletion must never
// depend on a report input, warns and deletes anyway.

func TestGateRefusesAMalformedSHA(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	tests := []struct{ input, value, wantErr string }{
		{input: "head-sha", value: "feature", wantErr: `input head-sha = "feature": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)`},
		{input: "tested-ref", value: harness.MergeSHA[:12], wantErr: `input tested-ref = "` + harness.MergeSHA[:12] + `": want a full commit SHA`},
	}
	for _, tc := range tests {
		inputs := map[string]string{"kind": "paid", "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA, "gpu-job-result": "success"}
		inputs[tc.input] = tc.value

		res := harness.RunStep(t, s.GateStep(pr, inputs))

		assert.Equal(t, res.ExitCode, 1, res.Stdout)
		assert.Check(t, is.Contains(res.Stdout, tc.wantErr))
		assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 0), "nothing published")
	}
}

func TestCleanupDeletesDespiteAMalformedTestedRef(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false)), runpodsim.Faults{}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)
	st := s.cleanupStep(s.RunID, map[string]string{"pod-id": id})
	st.Inputs["tested-ref"] = "not-a-sha"

	res := harness.RunStep(t, st)

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, `::warning::input tested-ref = "not-a-sha": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository); the cost artifact records no tested ref`))
	assert.Equal(t, s.cleanupStatus(t, id), runpodsim.StatusTerminated)
}
