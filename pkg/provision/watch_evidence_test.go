package provision

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
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

// neverRegistered answers every registry read: the runner was not found.
type neverRegistered struct{ GitHub }

func (neverRegistered) RunnerByName(context.Context, string, ghapi.Scope) (*github.Runner, bool, error) {
	return nil, false, nil
}

// A pod that runs but whose runner the registry, read without fault, never
// shows: the watch saw it all along, so the timeout blames the host.
func TestStartupTimeoutWithARunningPodAndAReadableRegistryBlamesTheHost(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	s.deps.GitHub = neverRegistered{GitHub: s.deps.GitHub}

	res, _ := s.run(t)

	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "not online within startup_timeout_seconds"))
	assert.Check(t, is.Equal(res.Attempts[0].Host, cost.HostFailed))
}

// With a 1 s poll the last poll keeps half a poll, not FinalPollReserve.
func TestFinalPollReserveIsAtMostHalfAPoll(t *testing.T) {
	slow := func(h *runpodsim.HostProfile) { h.BootSeconds = 1000 }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slow))}, func(c *config.Config) {
		onlyA4000(c)
		c.StartupPollSeconds = 1
	})
	start := s.clock.Now()

	_, err := s.run(t)

	assert.Check(t, err != nil)
	assert.Check(t, is.Equal(s.clock.Now().Sub(start), 420*time.Second-500*time.Millisecond))
}

// The create's answer may not yet say where RunPod placed the pod: the
// attempt takes its placement from the records the watch reads later.
func TestAttemptPlacementComesFromTheWatchWhenTheCreateAnswerHasNone(t *testing.T) {
	unplaced := runpodsim.RewriteFault{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Every: 1},
		Body: func(_ int, body []byte) []byte {
			var pod map[string]any
			if json.Unmarshal(body, &pod) != nil {
				return body
			}
			delete(pod, "dataCenterId")
			delete(pod, "cudaVersion")
			b, _ := json.Marshal(pod)
			return b
		}}
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{unplaced}}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].DataCenter, "US-TX-3"))
	assert.Check(t, is.Equal(res.Attempts[0].Driver, "12.8"))
}
