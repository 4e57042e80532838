package rules

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestMetaProvisionTimeoutsFollowTheConfiguration: a lane provisions its
// tiers in turn inside one job, so no fixed timeout fits every
// configuration (two tiers at the defaults need about 142 minutes).
// gpu-lane.yml's provision jobs, the first and the host-fault re-run's (and
// the provision part, which mirrors provision-again line for line), take
// their job's and their Provision step's timeout-minutes from authorize's
// outputs, which config.ProvisionMinutes computes from the configuration.
func TestMetaProvisionTimeoutsFollowTheConfiguration(t *testing.T) {
	wf := metaParseWorkflow(t, "gpu-lane.yml", metaWorkflowFiles(t)["gpu-lane.yml"])
	auth := wf.Jobs["authorize"]
	for _, out := range []string{"provision-minutes", "provision-job-minutes"} {
		assert.Check(t, is.Equal(auth.Outputs[out], "${{ steps.authorize.outputs."+out+" }}"), "authorize passes %s on", out)
	}
	for _, id := range []string{"provision", "provision-again"} {
		job := wf.Jobs[id]
		assert.Check(t, is.Equal(job.TimeoutMinutes, "${{ fromJSON(needs.authorize.outputs.provision-job-minutes || '75') }}"), "job %s", id)
		found := false
		for _, st := range job.Steps {
			if st.ID != "provision" {
				continue
			}
			found = true
			assert.Check(t, is.Equal(st.TimeoutMinutes, "${{ fromJSON(needs.authorize.outputs.provision-minutes || '70') }}"), "job %s's Provision step", id)
		}
		assert.Check(t, found, "job %s has its Provision step", id)
	}
}
