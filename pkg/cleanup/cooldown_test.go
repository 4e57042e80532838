package cleanup

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A shared cooldown longer than the listing's bound — RunPod answered an
// earlier read 429 with an hour's Retry-After — must not keep the tag sweep
// unsent: that listing is the only way cleanup finds a pod whose create
// answer was lost, which bills until someone deletes it. It goes out once, at
// once, as the deletion itself does (chaos seed 769 left such a pod alive).
func TestRunUntrackedListingGoesOutUnderACooldownThatDoesNotFit(t *testing.T) {
	s := newScene(t, runpodsim.Faults{})
	lost := s.launch(t, s.tags(2), false)
	s.policy.Cooldown().Extend(s.clock.Now().Add(time.Hour))

	res, err := Run(context.Background(), s.deps(), s.request(""))
	assert.NilError(t, err)
	assert.DeepEqual(t, res.Deleted(), []string{lost})
	assert.Equal(t, s.status(t, lost), runpodsim.StatusTerminated)
}
