package provision

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A pod that misses the startup timeout blames its host only when the watch
// could see it: if RunPod's answers to the pod reads were failing when the
// time ran out, the API, not the host, may be why, and the attempt gives the
// reputation no verdict.
func TestStartupTimeoutBlamesTheHostOnlyWhenTheWatchCouldSee(t *testing.T) {
	slow := func(h *runpodsim.HostProfile) { h.BootSeconds = 1000 }
	for _, tc := range []struct {
		name   string
		faults runpodsim.Faults
		want   cost.HostVerdict
	}{
		{name: "reads answered: the host was slow", want: cost.HostFailed},
		// An answer that is not a pod record: no backoff, so the watch runs to
		// its timeout without ever seeing the pod.
		{name: "reads unusable at the end: no verdict", faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{
			{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1}, Status: 200,
				Body: func(int, []byte) []byte { return []byte(`<html>gateway</html>`) }}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slow)), Faults: tc.faults}, onlyA4000)

			res, _ := s.run(t)

			assert.Assert(t, is.Len(res.Attempts, 1))
			assert.Check(t, is.Equal(res.Attempts[0].Outcome, cost.OutcomeRejected))
			assert.Check(t, is.Contains(res.Attempts[0].Reason, "not online within startup_timeout_seconds"))
			assert.Check(t, is.Equal(res.Attempts[0].Host, tc.want))
		})
	}
}
