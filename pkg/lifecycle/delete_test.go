package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const deleteRoute = "DELETE /v2/pods/{id}"

// losingTransport forwards requests but loses the answers of the first n DELETEs:
// the server applied them, the client sees a broken connection.
type losingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (l *losingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && req.Method == http.MethodDelete && l.n > 0 {
		l.n--
		resp.Body.Close()
		return nil, errors.New("read: connection reset by peer")
	}
	return resp, err
}

type fixture struct {
	cloud   *cloud.Cloud
	clock   *simclock.Virtual
	policy  *reqpolicy.Policy
	client  *runpod.Client
	deleter *Deleter
	podID   string
	lines   []string
}

func newFixture(t *testing.T, faults runpodsim.Faults, loseDeletes int) *fixture {
	t.Helper()
	c, err := cloud.Start(cloud.Options{Faults: faults})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	f := &fixture{cloud: c, clock: c.Clock.(*simclock.Virtual)}
	f.policy = reqpolicy.New(reqpolicy.WithClock(f.clock), reqpolicy.WithSleeper(f.clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
	transport := &losingTransport{next: http.DefaultTransport, n: loseDeletes}
	f.client = runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(f.policy), runpod.WithHTTPClient(&http.Client{Transport: transport}))
	f.deleter = &Deleter{Pods: f.client, Policy: f.policy, Logf: func(format string, args ...any) {
		f.lines = append(f.lines, format)
	}}
	pod, err := f.client.CreatePod(context.Background(), runpod.CreatePodRequest{
		Name: "rgpu-1-1-c1", Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: "NVIDIA RTX A4000", Count: 1},
		Env: map[string]string{"RUNNER_JIT_CONFIG": "jit"},
	})
	assert.NilError(t, err)
	f.podID = pod.ID
	return f
}

func (f *fixture) count(route string) int {
	n := 0
	for _, r := range f.cloud.RunPod.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

func (f *fixture) gone(t *testing.T) bool {
	_, err := f.client.GetPod(context.Background(), f.podID)
	if errors.Is(err, runpod.ErrNotFound) {
		return true
	}
	assert.NilError(t, err)
	pod, _ := f.client.GetPod(context.Background(), f.podID)
	return pod.Status == runpod.PodTerminated
}

func on(route string, when runpodsim.Trigger, status int) runpodsim.ServerErrorFault {
	return runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: route}, When: when, Status: status}
}

func TestDeleteAlivePod(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{}, 0)
	start := f.clock.Now()
	at, err := f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err)
	assert.Check(t, !at.Before(start))
	assert.Check(t, f.gone(t))
	assert.Equal(t, f.count(deleteRoute), 1)
}

func TestDeleteAlreadyGoneIs404Confirmed(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{}, 0)
	_, err := f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err)
	_, err = f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err, "deletion is idempotent")
	_, err = f.deleter.Delete(context.Background(), "neverexisted01")
	assert.NilError(t, err, "404 confirms")
}

func TestDeleteRetriesAServerError(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{on(deleteRoute, runpodsim.Trigger{First: 2}, 503)}}, 0)
	_, err := f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err)
	assert.Equal(t, f.count(deleteRoute), 3, "5xx, 5xx, then 204")
	assert.Check(t, f.gone(t))
}

func TestDeleteWaitsOutRetryAfterInsideTheBudget(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: deleteRoute}, When: runpodsim.Trigger{First: 1}, RetryAfter: 7 * time.Second}}}, 0)
	start := f.clock.Now()
	at, err := f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err)
	assert.Check(t, at.Sub(start) >= 7*time.Second, "Retry-After honoured: %s", at.Sub(start))
	assert.Equal(t, f.count(deleteRoute), 2)
}

func TestDeletePermanentErrorStopsAfterOneCall(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{on(deleteRoute, runpodsim.Trigger{Every: 1}, 403)}}, 0)
	_, err := f.deleter.Delete(context.Background(), f.podID)
	var ue *UnconfirmedError
	assert.Assert(t, errors.As(err, &ue), "got %v", err)
	assert.Equal(t, ue.Stopped, "permanent error")
	assert.Equal(t, f.count(deleteRoute), 1)
	assert.Check(t, is.Contains(err.Error(), f.podID))
}

func TestDeleteNeverMoreThanFiveDeletes(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 500}}, 0)
	_, err := f.deleter.Delete(context.Background(), f.podID)
	assert.Check(t, errors.Is(err, ErrUnconfirmed))
	assert.Check(t, is.Contains(err.Error(), "pod "+f.podID), "the error names the pod left behind")
	assert.Equal(t, f.count(deleteRoute), 5)
	assert.Check(t, !f.gone(t))
}

func TestDeleteBudgetExhaustedNamesThePod(t *testing.T) {
	// A Retry-After longer than the whole 180 s budget: no early retry, a visible failure.
	f := newFixture(t, runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: deleteRoute}, When: runpodsim.Trigger{Every: 1}, RetryAfter: 200 * time.Second}}}, 0)
	start := f.clock.Now()
	_, err := f.deleter.Delete(context.Background(), f.podID)
	var ue *UnconfirmedError
	assert.Assert(t, errors.As(err, &ue), "got %v", err)
	assert.Equal(t, ue.PodID, f.podID)
	assert.Equal(t, ue.Stopped, "budget exhausted")
	assert.Check(t, errors.Is(err, reqpolicy.ErrWaitExceedsDeadline))
	assert.Equal(t, f.count(deleteRoute), 1)
	assert.Check(t, f.clock.Now().Sub(start) < DefaultDeleteBudget, "no sleeping past the budget")
}

func TestDeleteGoesOutAtOnceUnderACooldownLongerThanTheBudget(t *testing.T) {
	// An observation answered 429 + Retry-After 1000 s just before the
	// rejection: waiting would keep the pod billing for 1000 s, or leave it.
	f := newFixture(t, runpodsim.Faults{}, 0)
	f.policy.Cooldown().Extend(f.clock.Now().Add(1000 * time.Second))
	start := f.clock.Now()

	at, err := f.deleter.Delete(context.Background(), f.podID)

	assert.NilError(t, err)
	assert.Equal(t, at, start, "deleted at once, not after the cooldown")
	assert.Check(t, f.gone(t))
	assert.Equal(t, f.count(deleteRoute), 1)
}

func TestDeleteLostResponseCheckedWithGetAfterCooldown(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{}, 1)
	_, err := f.deleter.Delete(context.Background(), f.podID)
	assert.NilError(t, err)
	assert.Equal(t, f.count(deleteRoute), 1, "the lost DELETE took effect; no second DELETE")
	var deleteAt, getAt time.Time
	for _, r := range f.cloud.RunPod.Requests() {
		switch {
		case r.Route == deleteRoute:
			deleteAt = r.At
		case r.Route == "GET /v2/pods/{id}" && !deleteAt.IsZero() && getAt.IsZero():
			getAt = r.At
		}
	}
	assert.Check(t, !getAt.IsZero(), "a GET checked the lost response")
	assert.Check(t, getAt.Sub(deleteAt) >= reqpolicy.DefaultBaseDelay/2, "the GET waited for the cooldown (%s)", getAt.Sub(deleteAt))
	assert.Check(t, is.Contains(strings.Join(f.lines, "\n"), "response lost"))
}

// A virtual clock far from wall time (the demo's fixed date, or hours of
// simulated advance) must not turn the deletion budget into an expired or
// endless wall-clock deadline.
func TestDeleteOnAVirtualClockAwayFromWallTime(t *testing.T) {
	for name, start := range map[string]time.Time{
		"years behind": time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		"hours ahead":  time.Now().Add(30 * time.Hour),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := cloud.Start(cloud.Options{Start: start, Faults: runpodsim.Faults{
				RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: deleteRoute}, When: runpodsim.Trigger{First: 1}, RetryAfter: 30 * time.Second}},
			}})
			assert.NilError(t, err)
			defer c.Close()
			clock := c.Clock.(*simclock.Virtual)
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
			client := runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy))
			pod, err := client.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "rgpu-1-1-c1", Image: cloud.RunnerImage,
				GPU: &runpod.CreateGPU{ID: "NVIDIA RTX A4000", Count: 1}})
			assert.NilError(t, err)
			at, err := (&Deleter{Pods: client, Policy: policy}).Delete(context.Background(), pod.ID)
			assert.NilError(t, err)
			assert.Check(t, at.Sub(start) >= 30*time.Second, "the Retry-After was waited on the virtual clock")
		})
	}
}
