package actiontests

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

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
		{input: "tested-ref", value: mergeSHA[:12], wantErr: `input tested-ref = "` + mergeSHA[:12] + `": want a full commit SHA`},
	}
	for _, tc := range tests {
		inputs := map[string]string{"kind": "paid", "head-sha": headSHA, "tested-ref": mergeSHA, "gpu-job-result": "success"}
		inputs[tc.input] = tc.value

		res := runStep(t, s.gateStep(pr, inputs))

		assert.Equal(t, res.exitCode, 1, res.stdout)
		assert.Check(t, is.Contains(res.stdout, tc.wantErr))
		assert.Check(t, is.Len(s.gateChecks(t, headSHA), 0), "nothing published")
	}
}

func TestCleanupDeletesDespiteAMalformedTestedRef(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", a4000, false)), runpodsim.Faults{}, fastConfig)
	id := s.cleanupLaunch(t, s.runID, 1, 1)
	st := s.cleanupStep(s.runID, map[string]string{"pod-id": id})
	st.inputs["tested-ref"] = "not-a-sha"

	res := runStep(t, st)

	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Check(t, is.Contains(res.stdout, `::warning::input tested-ref = "not-a-sha": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository); the cost artifact records no tested ref`))
	assert.Equal(t, s.cleanupStatus(t, id), runpodsim.StatusTerminated)
}
