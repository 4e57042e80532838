package provision

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestAcceptedPodsStartupSeconds: the accepted pod's startup seconds are
// whole seconds from the provider's start to acceptance — more than none and
// at most the startup budget — and the same figure the attempt record carries.
func TestAcceptedPodsStartupSeconds(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	secs := res.Accepted.StartupSeconds
	assert.Check(t, secs > 0 && secs <= 420, "startup seconds %d", secs)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].Seconds, cost.KnownSeconds(secs)))
}

// removalGitHub fails every runner removal with err.
type removalGitHub struct {
	GitHub
	err error

	mu      sync.Mutex
	removed int
}

func (g *removalGitHub) DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error {
	g.mu.Lock()
	g.removed++
	g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	return g.GitHub.DeleteRunner(ctx, id, scope)
}

// TestUnusedRunnerRemoval: the registration of a rejected pod's runner is
// removed once; a removal that fails is logged with its error and never
// stops the run, and one that succeeds logs nothing.
func TestUnusedRunnerRemoval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantLog bool
	}{
		{name: "removed"},
		{name: "removal fails", err: errors.New("GitHub 502"), wantLog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
			gh := &removalGitHub{GitHub: s.deps.GitHub, err: tc.err}
			s.deps.GitHub = gh

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
			assert.Check(t, is.Equal(gh.removed, 1), "the rejected attempt's runner only")
			logged := strings.Contains(s.obs.log(), ": could not remove its registration (GitHub drops it within a day): GitHub 502")
			assert.Check(t, is.Equal(logged, tc.wantLog), "log:\n%s", s.obs.log())
		})
	}
}

// TestRejectedPodsDeletionWaitsOutALongRetryAfter: the deletion of a
// rejected pod has its whole budget (180 s) on the policy's clock; its wall
// clock backstop is longer, never shorter, so a 429 whose Retry-After takes
// most of that budget is waited out and the pod is deleted, not reported
// unconfirmed.
func TestRejectedPodsDeletionWaitsOutALongRetryAfter(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)), Faults: runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "DELETE /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 175 * time.Second}},
	}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 2))
	assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
}
