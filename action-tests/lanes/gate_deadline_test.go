package lanes

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Found by the chaos suite: the gate had no deadline, so a
// Retry-After of an hour on its PR re-read was slept out until the runner's
// step timeout killed it, with "retry 1/4 in 1h0m0s" as its last word. Now a
// wait that cannot fit the gate's budget fails the step at once, saying so.
func TestGateHugeRetryAfterFailsFast(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	s.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultTooManyRequests, Method: "GET", Path: "/repos/*/*/pulls/*", RetryAfter: time.Hour})
	begun := time.Now()
	res := harness.RunStep(t, s.GateStep(pr, map[string]string{"decision": "run", "gpu-job-result": "failure", "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA}))
	assert.Check(t, time.Since(begun) < 30*time.Second, "the gate waited %s", time.Since(begun))
	assert.Check(t, res.ExitCode == 1, "exit %d:\n%s", res.ExitCode, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "::error::"))
	assert.Check(t, is.Contains(res.Stdout, "exceeds the remaining deadline"))
	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 0), "nothing published")
	assertNoSecrets(t, s, res)
}
