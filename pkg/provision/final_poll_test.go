package provision

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A runner that comes online in the last poll interval of
// startup_timeout_seconds (420 s; the host boots for 385 s) is accepted by the
// watch's last poll, FinalPollReserve before the deadline: a poll at the
// deadline itself never fits the budget, so the pod used to be rejected at
// 410 s after being paid for nearly all of it.
func TestRunnerOnlineInTheLastIntervalIsAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, func(h *runpodsim.HostProfile) { h.BootSeconds = 385 }))}, onlyA4000)
	start := s.clock.Now()

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(s.clock.Now().Sub(start), 420*time.Second-FinalPollReserve))
}
