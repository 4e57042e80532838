package lanes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The real provision binary with a record that holds one A4000 machine of
// US-TX-3 bad among good ones (by its first GPU's UUID): RunPod places the
// create on it (the only A4000 with stock), the pod's own log names its
// machine (the startup script's GPU line), provision deletes the pod before
// its proof and gets a runner from its next candidate, with
// max_consecutive_startup_failures 1: the deleted pod is no startup failure.
// RunPod is never asked over GraphQL. Without the record the same pod fails
// its proof and the run ends there.
func TestProvisionDeletesAPodOnAHeldMachineBeforeItsProof(t *testing.T) {
	t.Parallel()
	const config = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000"]
max_price_candidates: 2
max_provision_attempts: 3
max_consecutive_startup_failures: 1
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`
	market := func() *runpodsim.Market {
		return testMarket(testHost("tx-a4000-bad", harness.A4000, false), testHost("tx-a5000-good", harness.A5000, true))
	}
	bad := testHost("tx-a4000-bad", harness.A4000, false).GPUUUID(0)
	rec := reputation.Record{}
	now := time.Now().UTC()
	for i := range 5 { // the pair's other machines worked: the data center stays good
		rec.Add(reputation.Observation{At: now.Add(-time.Duration(10-i) * time.Hour), GPU: harness.A4000, DataCenter: "US-TX-3",
			Cloud: "SECURE", Machine: testHost(fmt.Sprintf("tx-a4000-other-%d", i), harness.A4000, true).GPUUUID(0), OK: true, Seconds: 60, PricePerHour: money.PerHour(0.25)})
	}
	rec.Add(reputation.Observation{At: now.Add(-2 * time.Hour), GPU: harness.A4000, DataCenter: "US-TX-3", Cloud: "SECURE",
		Machine: bad, OK: false, Seconds: 40, PricePerHour: money.PerHour(0.25)})
	recordJSON, err := rec.Marshal()
	assert.NilError(t, err)

	t.Run("with the record", func(t *testing.T) {
		t.Parallel()
		s := startCloud(t, market(), runpodsim.Faults{}, config)
		st := s.ProvisionStep(s.openPR(t))
		path := filepath.Join(st.Workspace, "reputation.json") // a path input stays inside the workspace
		assert.NilError(t, os.WriteFile(path, recordJSON, 0o600))
		st.Inputs["reputation-file"] = path
		res := harness.RunStep(t, st)
		assert.Equal(t, res.ExitCode, 0, res.Stdout)
		assert.Equal(t, res.Outputs["gpu-type"], harness.A5000)
		assert.Check(t, is.Contains(res.Stdout, "1 machine(s) held bad"))
		assert.Check(t, is.Contains(res.Stdout, "landed on a machine the reputation holds bad: machine "+bad))
		assert.Check(t, is.Contains(res.Outputs["rejected-attempts"], `"machine":"`+bad+`"`), res.Outputs["rejected-attempts"])
		assertNoGraphQL(t, s)
		pods := s.RunPod.Pods()
		assert.Assert(t, is.Len(pods, 2))
		assert.Check(t, is.Equal(pods[0].HostID, "tx-a4000-bad"))
		secs, _ := pods[0].BilledFromCreation(pods[0].TerminatedAt)
		assert.Check(t, secs <= 10, "deleted as its container named its GPU, before its proof: %d s", secs)
		assert.Check(t, !is.Contains(res.Stdout, "CUDA smoke proof failed")().Success(), "its proof never ran to its verdict")
		assertNoSecrets(t, s, res)
		assertCreatesFollowContract(t, s)
	})
	t.Run("without it", func(t *testing.T) {
		t.Parallel()
		s := startCloud(t, market(), runpodsim.Faults{}, config)
		res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
		assert.Check(t, res.ExitCode != 0, "the pod on the bad machine fails its proof and the run stops:\n%s", res.Stdout)
		assert.Check(t, !is.Contains(res.Outputs["rejected-attempts"], `"machine"`)().Success(), "no reputation, no machine recorded")
		assertNoGraphQL(t, s)
	})
}

// assertNoGraphQL checks that the simulated RunPod received no GraphQL
// request: the lane speaks REST v2 only.
func assertNoGraphQL(t *testing.T, s *simulated) {
	t.Helper()
	for _, r := range s.RunPod.Requests() {
		assert.Check(t, !strings.Contains(strings.ToLower(r.Route), "graphql"), "RunPod got %s at %s", r.Route, r.At)
	}
}
