package actiontests

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

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
		{name: "one rejected, then accepted", hosts: []runpodsim.HostProfile{testHost("h1", a4000, false), testHost("h2", a5000, true)},
			wantRejected: 1, wantAccepted: true},
		{name: "early stop: none accepted", hosts: []runpodsim.HostProfile{testHost("h1", a4000, false), testHost("h2", a5000, false), testHost("h3", l4, true)},
			provisionRC: 1, wantRejected: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(tc.hosts...), runpodsim.Faults{}, fastConfig)
			provisioned := runStep(t, s.provisionStep(s.openPR(t)))
			assert.Equal(t, provisioned.exitCode, tc.provisionRC, provisioned.stdout)
			rejected, err := cost.ParseAttempts(provisioned.outputs["rejected-attempts"])
			assert.NilError(t, err, "provision's rejected-attempts output")
			assert.Assert(t, is.Len(rejected, tc.wantRejected))

			res := runStep(t, s.cleanupStep(s.runID, provisioned.outputs))
			assert.Equal(t, res.exitCode, 0, res.stdout)
			assert.Check(t, !is.Contains(res.summary, "No rejected candidates")().Success(), "provision rejected some")
			for _, a := range rejected {
				assert.Check(t, is.Contains(res.summary, " | "+a.PodID+" | "), "the rejected pod is in cleanup's table")
			}
			assert.Check(t, is.Contains(res.summary, "**Estimated run total** (accepted pod and every rejected candidate): $"))

			data, err := os.ReadFile(filepath.Join(s.workspace, res.outputs["cost-artifact-path"]))
			assert.NilError(t, err)
			artifact, err := cost.ParseArtifact(data)
			assert.NilError(t, err)
			r := artifact.Report
			assert.Check(t, r.ProvisionRejected)
			assert.Check(t, is.Len(r.Rejected, tc.wantRejected))
			providerRejected, err := strconv.ParseFloat(provisioned.outputs["rejected-cost-usd"], 64)
			assert.NilError(t, err)
			assert.Check(t, r.RejectedDollars().Known && abs(r.RejectedDollars().USD-providerRejected) < 0.00006,
				"cleanup's rejected total %v agrees with provision's %v", r.RejectedDollars(), providerRejected)
			assert.Check(t, r.Total().Known, "the run total is known: %v", r.Total())
			if tc.wantAccepted {
				assert.Equal(t, r.PodID, provisioned.outputs["pod-id"])
				assert.Check(t, abs(r.Total().USD-r.Dollars().USD-providerRejected) < 0.00006, "total = accepted + provision's rejected")
			} else {
				assert.Equal(t, r.PodID, "", "pod-id %s is a rejected candidate", provisioned.outputs["pod-id"])
				assert.Check(t, is.Contains(res.summary, "No pod was accepted."))
				assert.Check(t, is.Contains(res.summary, "not an accepted pod"))
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
