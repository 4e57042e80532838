package lanes

import (
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
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// TestNoGraphQLInTheLane runs a pull request through the shipped lane
// (README caller, gpu-lane.yml's authorize, provision with the reputation
// record where the lane's fetch job leaves it, the gate) and its cleanup, on
// the simulated cloud, with the record holding the only A4000 machine bad:
// the pod RunPod places there is screened by what its own log says (its
// GPU's UUID) and deleted before its proof, the next candidate gets the
// runner, and RunPod never receives a GraphQL request. The source rule beside
// it (action-tests/rules: TestNoGraphQLInTheLane) keeps product code from
// naming one.
func TestNoGraphQLInTheLane(t *testing.T) {
	badHost := testHost("tx-a4000-bad", harness.A4000, false)
	s := startShippedCloud(t, badHost, testHost("tx-a5000-good", harness.A5000, true))
	rec := reputation.Record{}
	now := time.Now().UTC()
	for i := range 5 { // the pair's other machines worked: the data center stays good
		other := testHost("tx-a4000-other-"+harness.Itoa(i), harness.A4000, true)
		rec.Add(reputation.Observation{At: now.Add(-time.Duration(10-i) * time.Hour), GPU: harness.A4000, DataCenter: "US-TX-3",
			Cloud: "SECURE", Machine: other.GPUUUID(0), OK: true, Seconds: 60, PricePerHour: money.PerHour(0.25)})
	}
	rec.Add(reputation.Observation{At: now.Add(-2 * time.Hour), GPU: harness.A4000, DataCenter: "US-TX-3", Cloud: "SECURE",
		Machine: badHost.GPUUUID(0), OK: false, Seconds: 40, PricePerHour: money.PerHour(0.25)})
	recordJSON, err := rec.Marshal()
	assert.NilError(t, err)
	dir := filepath.Join(s.Workspace, "runpod-gpu-reputation") // where gpu-lane.yml's reputation job leaves it
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "reputation.json"), recordJSON, 0o600))
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
		MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)

	r := s.deliver(t, pr, harness.HeadSHA, 9700)

	assert.Assert(t, r.provision != nil && r.provision.ExitCode == 0, r.String())
	prov := r.provision
	assert.Check(t, is.Equal(prov.Outputs["gpu-type"], harness.A5000))
	assert.Check(t, is.Contains(prov.Stdout, "landed on a machine the reputation holds bad: machine "+badHost.GPUUUID(0)))
	assert.Check(t, is.Equal(r.gateKind, "paid"))
	cleanup := harness.RunStep(t, s.cleanupStep(9700, prov.Outputs))
	assert.Check(t, is.Equal(cleanup.ExitCode, 0), cleanup.Stdout)
	pods := s.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2))
	assert.Check(t, is.Equal(pods[0].HostID, badHost.ID))
	var routes []string
	for _, req := range s.RunPod.Requests() {
		routes = append(routes, req.Route)
	}
	assert.Check(t, len(routes) > 0)
	assertNoGraphQL(t, s)
	assert.Check(t, !strings.Contains(strings.Join(routes, " "), "graphql"))
}
