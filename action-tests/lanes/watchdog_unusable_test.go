package lanes

import (
	"os"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestWatchdogUnusablePullRequestAnswerIsUnknownNotObsolete runs the watchdog
// while every pull request read answers 200 with an empty document: no state,
// no head. That says nothing about the pull request, so the pod must keep
// running and the run must not be cancelled; the watch is then interrupted.
func TestWatchdogUnusablePullRequestAnswerIsUnknownNotObsolete(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{name: "empty document", body: `{}`},
		{name: "no state", body: `{"number": 1, "head": {"sha": "` + harness.HeadSHA + `"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := watchdogProvision(t, fastConfig)
			const prPath = "/repos/*/*/pulls/*"
			readBefore := w.GitHub.CountRequests("GET", prPath) // provision reads it too
			w.GitHub.AddRewrite(githubsim.Rewrite{Method: "GET", Path: prPath, Body: func(int, []byte) []byte { return []byte(tc.body) }})
			st := w.step()
			st.Started = func(p *os.Process) {
				go func() {
					// Three polls of unusable answers, then the job is cancelled.
					poll.WaitOn(t, func(poll.LogT) poll.Result {
						if w.GitHub.CountRequests("GET", prPath) >= readBefore+3 {
							return poll.Success()
						}
						return poll.Continue("the watchdog has read the PR %d times", w.GitHub.CountRequests("GET", prPath)-readBefore)
					}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
					_ = p.Signal(os.Interrupt)
				}()
			}
			res := harness.RunStep(t, st)
			assert.Equal(t, res.Outputs["outcome"], "interrupted", res.Stdout)
			assert.Equal(t, res.Outputs["pod-deleted"], "false")
			assert.Equal(t, res.Outputs["run-cancelled"], "false")
			status, _, _ := w.pod(t)
			assert.Equal(t, status, runpodsim.StatusRunning, "an unusable answer never deletes the pod")
			assert.Check(t, is.Len(w.GitHub.Cancellations(), 0), "an unusable answer never cancels the run")
			assert.Check(t, is.Contains(res.Stdout, "state unknown"))
			assertNoSecrets(t, w.simulated, res)
		})
	}
}
