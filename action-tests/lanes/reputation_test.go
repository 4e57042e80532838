package lanes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// reputationMarket has RTX A4000s in two data centers: US-TX-3 holds most of
// the stock on a driver that refuses the proof's PTX, EU-RO-1 one good machine.
func reputationMarket() *runpodsim.Market {
	m := testMarket()
	m.DataCenters = append(m.DataCenters, runpodsim.DataCenter{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO",
		NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}})
	for _, id := range []string{"tx-bad-1", "tx-bad-2", "tx-bad-3"} {
		h := testHost(id, harness.A4000, false)
		h.GPUCount = 8
		m.Hosts = append(m.Hosts, h)
	}
	good := testHost("ro-good-1", harness.A4000, true)
	good.DataCenterID = "EU-RO-1"
	m.Hosts = append(m.Hosts, good)
	return m
}

// Provision reads a reputation record that says the A4000s of US-TX-3
// failed twice in a row an hour ago, pins its create to EU-RO-1 and gets a
// working runner from its first pod; without the record RunPod places the
// same candidate in US-TX-3, where it fails.
func TestProvisionReadsReputationAndAvoidsABadDataCenter(t *testing.T) {
	t.Parallel()
	const config = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000"]
max_price_candidates: 1
max_provision_attempts: 2
max_consecutive_startup_failures: 1
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`
	hourAgo := time.Now().Add(-time.Hour)
	rec := reputation.Record{}
	for i := range 2 {
		rec.Add(reputation.Observation{At: hourAgo.Add(time.Duration(i) * time.Minute), GPU: harness.A4000, DataCenter: "US-TX-3",
			Cloud: "SECURE", Driver: "12.8", OK: false, Seconds: 140, PricePerHour: money.PerHour(0.25)})
	}
	recordJSON, err := rec.Marshal()
	assert.NilError(t, err)

	tests := []struct {
		name   string
		record string // file content; "" writes no file input
		wantDC string
		wantOK bool
	}{
		{name: "without a record RunPod places it in the bad data center", wantDC: "US-TX-3", wantOK: false},
		{name: "with the record the create is pinned to the good one", record: string(recordJSON), wantDC: "EU-RO-1", wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, reputationMarket(), runpodsim.Faults{}, config)
			st := s.ProvisionStep(s.openPR(t))
			if tc.record != "" {
				path := filepath.Join(s.Workspace, "reputation.json") // where the lane's download puts it
				assert.NilError(t, os.WriteFile(path, []byte(tc.record), 0o600))
				st.Inputs["reputation-file"] = path
			}
			res := harness.RunStep(t, st)

			pods := s.RunPod.Pods()
			assert.Assert(t, len(pods) >= 1, res.Stdout)
			assert.Equal(t, pods[0].DataCenterID, tc.wantDC, "the first pod's data center")
			assert.Equal(t, res.ExitCode == 0, tc.wantOK, res.Stdout)
			if tc.wantOK {
				assert.Equal(t, res.Outputs["gpu-type"], harness.A4000)
				assert.Check(t, is.Len(pods, 1), "one pod, no rejected host paid for")
				assert.Check(t, is.Contains(res.Stdout, "quarantined: NVIDIA RTX A4000 secure in US-TX-3 until"))
				assert.Check(t, is.Contains(res.Stdout, "| EU-RO-1 |"), "the plan table shows the pin")
			}
			assertNoSecrets(t, s, res)
			assertCreatesFollowContract(t, s)
		})
	}
}

// A record the lane cannot use is a warning naming the input, the path and
// what is wrong, and the plan is the seed's: the record comes from an artifact,
// and a broken one must not stop every lane. A missing file is a cold start.
func TestProvisionReputationFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string // "" leaves the file missing
		want    []string
	}{
		{name: "invalid record", content: `{"version":1,"observations":[{"gpu":"x"}]}`,
			want: []string{"::warning::input reputation-file: ", `"at" is missing`, "candidates in the seed's order"}},
		{name: "a newer format", content: `{"version":99,"observations":[]}`,
			want: []string{"::warning::input reputation-file: ", "candidates in the seed's order"}},
		{name: "missing file is a cold start", want: []string{"does not exist yet: candidates in the seed's order"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
			path := filepath.Join(s.Workspace, "reputation.json")
			if tc.content != "" {
				assert.NilError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			}
			st := s.ProvisionStep(s.openPR(t))
			st.Inputs["reputation-file"] = path
			res := harness.RunStep(t, st)
			assert.Equal(t, res.ExitCode, 0, res.Stdout)
			for _, w := range tc.want {
				assert.Check(t, is.Contains(res.Stdout, w))
			}
		})
	}
}
