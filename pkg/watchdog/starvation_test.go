package watchdog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// prReadsFail makes every pull request read answer 503 for the whole watch.
var prReadsFail = githubsim.Fault{Kind: githubsim.FaultServerError, Status: http.StatusServiceUnavailable, Method: http.MethodGet, Path: "/repos/*/*/pulls/*"}

// Jitters cover the backoff schedules of the GitHub policy: at some of them a
// retried PR read used to leave a cooldown longer than the jobs read's limit.
var jitters = []float64{0, 0.5, 0.9, 1}

func TestSimulatedFailingPullRequestReadsDoNotHideRunningTests(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			// Setup alone outlasts the 900 s budget from the pod's start, but the
			// test step starts in time and runs past the setup deadline.
			s := startSimulatedWatchWithJitter(t, jitter, true,
				githubsim.StepSpec{Name: "Set up job", Duration: 10 * time.Minute},
				githubsim.StepSpec{Name: "Run GPU tests", Duration: 20 * time.Minute},
				githubsim.StepSpec{Name: "Complete job", Duration: 30 * time.Second})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.NilError(t, err)
			assert.Equal(t, res.Outcome, OutcomeJobFinished)
			assert.Check(t, res.TestsStarted)
			_, started, ended := s.pod(t)
			assert.Check(t, ended.Sub(started) > 900*time.Second, "the pod lived on after the tests started; lived %s", ended.Sub(started))
			assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 0))
			assert.Check(t, s.cloud.GitHub.CountRequests(http.MethodGet, "/repos/*/*/pulls/*") > 0, "the PR was read (and failed)")
			checkJobsReadEveryPoll(t, s)
		})
	}
}

func TestSimulatedLifetimeFiresWithinOnePollWhilePullRequestReadsFail(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			s := startSimulatedWatchWithJitter(t, jitter, true,
				githubsim.StepSpec{Name: "Set up job", Duration: 5 * time.Minute},
				githubsim.StepSpec{Name: "Run GPU tests", Duration: 2 * time.Hour})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.Check(t, errors.Is(err, ErrDeadline), "%v", err)
			assert.Equal(t, res.Outcome, OutcomeLifetimeExpired)
			assert.Check(t, res.TestsStarted)
			_, started, ended := s.pod(t)
			lived := ended.Sub(started)
			assert.Check(t, lived >= s.req.Lifetime && lived <= s.req.Lifetime+s.req.Poll,
				"deleted within one poll (%s) of the lifetime deadline; lived %s", s.req.Poll, lived)
		})
	}
}

// checkJobsReadEveryPoll asserts that the GPU job was read at least once per
// poll throughout the watch: no failing read in between held it back.
func checkJobsReadEveryPoll(t *testing.T, s *simulatedWatch) {
	t.Helper()
	var last time.Time
	reads := 0
	for _, r := range s.cloud.GitHub.Requests() {
		if ok, _ := path.Match("/repos/*/*/actions/runs/*/attempts/*/jobs", r.Path); !ok || r.Method != http.MethodGet {
			continue
		}
		if reads++; reads > 1 {
			assert.Check(t, r.At.Sub(last) <= s.req.Poll, "jobs read %d came %s after the previous one; want at most one poll (%s)", reads, r.At.Sub(last), s.req.Poll)
		}
		last = r.At
	}
	assert.Check(t, reads > 1, "the GPU job was read %d times", reads)
}

func TestSimulatedCancelWaitsOutTheCooldownOfFailingReads(t *testing.T) {
	for _, jitter := range jitters {
		t.Run(fmt.Sprintf("jitter %.1f", jitter), func(t *testing.T) {
			// The job never reaches its tests and every progress read fails: the
			// retried reads leave a long cooldown when the setup deadline comes.
			s := startSimulatedWatchWithJitter(t, jitter, true, githubsim.StepSpec{Name: "Set up job", Duration: time.Hour})
			s.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: http.StatusServiceUnavailable,
				Method: http.MethodGet, Path: "/repos/*/*/actions/runs/*/attempts/*/jobs"})
			s.cloud.GitHub.AddFault(prReadsFail)
			res, err := Run(context.Background(), s.deps, s.req)
			assert.Check(t, errors.Is(err, ErrDeadline), "%v", err)
			assert.Check(t, !errors.Is(err, ErrCancel), "%v", err)
			assert.Equal(t, res.Outcome, OutcomeSetupExpired)
			_, started, ended := s.pod(t)
			assert.Check(t, ended.Sub(started) >= s.req.SetupBudget && ended.Sub(started) <= s.req.SetupBudget+s.req.Poll, "lived %s", ended.Sub(started))
			assert.Check(t, res.Cancel.Requested, "%+v", res.Cancel)
			assert.Check(t, is.Len(s.cloud.GitHub.Cancellations(), 1))
		})
	}
}
