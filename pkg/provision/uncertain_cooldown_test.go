package provision

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A lost create whose reconciliation is answered 429 with an hour's
// Retry-After: provision stops rather than risk a second pod, and its last
// look for the uncertain name still goes out under that cooldown (urgent), so
// the pod it created is found and deleted instead of billing untracked until
// the cleanup job (chaos seed 769).
func TestLastLookForAnUncertainCreateGoesOutUnderAnHourCooldown(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods"},
				When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: time.Hour}},
		}}, nil)

	_, err := s.run(t)

	assert.Check(t, err != nil, "a create that cannot be reconciled stops provisioning")
	for _, p := range s.cloud.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "pod %s (%s) left alive", p.ID, p.Name)
	}
	assert.Check(t, is.Contains(s.obs.log(), "of an uncertain create of rgpu-7001-1-c1 was listed late; deleted"))
}
