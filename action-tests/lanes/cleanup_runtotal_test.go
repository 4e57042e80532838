package lanes

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Provision's rejected candidates reach cleanup through its rejected-attempts
// output, so cleanup's run total is the whole run's and agrees with what
// provision reported; with no pod accepted, the pod-id provision left behind
// (its last rejected pod) is reported as that rejected candidate, not as an
// accepted pod of unknown cost.
func TestCleanupRunTotalIncludesProvisionsRejectedCandidates(t *testing.T) {
	tests := []struct {
		name         string
		hosts        []runpodsim.HostProfile
		provisionRC  int
		wantRejected int
		wantAccepted bool
	}{
		{name: "one rejected, then accepted", hosts: []runpodsim.HostProfile{testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)},
			wantRejected: 1, wantAccepted: true},
		{name: "early stop: none accepted", hosts: []runpodsim.HostProfile{testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, false), testHost("h3", harness.L4, true)},
			provisionRC: 1, wantRejected: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(tc.hosts...), runpodsim.Faults{}, fastConfig)
			provisioned := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
			assert.Equal(t, provisioned.ExitCode, tc.provisionRC, provisioned.Stdout)
			rejected, err := cost.ParseAttempts(provisioned.Outputs["rejected-attempts"])
			assert.NilError(t, err, "provision's rejected-attempts output")
			assert.Assert(t, is.Len(rejected, tc.wantRejected))

			res := harness.RunStep(t, s.cleanupStep(s.RunID, provisioned.Outputs))
			assert.Equal(t, res.ExitCode, 0, res.Stdout)
			assert.Check(t, !is.Contains(res.Summary, "No rejected candidates")().Success(), "provision rejected some")
			for _, a := range rejected {
				assert.Check(t, is.Contains(res.Summary, " | "+a.PodID+" | "), "the rejected pod is in cleanup's table")
			}
			assert.Check(t, is.Contains(res.Summary, "**Estimated run total** (accepted pod and every rejected candidate): $"))

			data, err := os.ReadFile(filepath.Join(s.Workspace, res.Outputs["cost-artifact-path"]))
			assert.NilError(t, err)
			artifact, err := cost.ParseArtifact(data)
			assert.NilError(t, err)
			r := artifact.Report
			assert.Check(t, r.ProvisionRejected)
			assert.Check(t, is.Len(r.Rejected, tc.wantRejected))
			providerRejected, err := strconv.ParseFloat(provisioned.Outputs["rejected-cost-usd"], 64)
			assert.NilError(t, err)
			assert.Check(t, r.RejectedDollars().Known && abs(r.RejectedDollars().USD.Dollars()-providerRejected) < 0.00006,
				"cleanup's rejected total %v agrees with provision's %v", r.RejectedDollars(), providerRejected)
			assert.Check(t, r.Total().Known, "the run total is known: %v", r.Total())
			if tc.wantAccepted {
				assert.Equal(t, r.PodID, provisioned.Outputs["pod-id"])
				assert.Check(t, abs((r.Total().USD-r.Dollars().USD).Dollars()-providerRejected) < 0.00006, "total = accepted + provision's rejected")
			} else {
				assert.Equal(t, r.PodID, "", "pod-id %s is a rejected candidate", provisioned.Outputs["pod-id"])
				assert.Check(t, is.Contains(res.Summary, "No pod was accepted."))
				assert.Check(t, is.Contains(res.Summary, "not an accepted pod"))
			}
			for _, p := range s.RunPod.Pods() {
				assert.Check(t, p.Status == runpodsim.StatusTerminated || p.Status == string(runpod.PodTerminated), "pod %s is gone", p.ID)
			}
		})
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
