package lifecycle

import (
	"context"
	"errors"
	"fmt"
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

// A malformed pod id (a path, a quote) is an error, never "already deleted":
// sent, RunPod would answer 404 for it while the real pod bills on.
func TestDeleteOfAMalformedIDIsAnErrorNotAlreadyGone(t *testing.T) {
	f := newFixture(t, runpodsim.Faults{}, 0)
	for _, id := range []string{f.podID + "/..", "../" + f.podID, f.podID + " ", `"` + f.podID + `"`} {
		_, err := f.deleter.Delete(context.Background(), id)
		var ue *UnconfirmedError
		assert.Assert(t, errors.As(err, &ue), "%q: got %v", id, err)
		assert.Check(t, is.Equal(ue.Stopped, "permanent error"))
		assert.Check(t, errors.Is(err, runpod.ErrInvalidRequest), "%q: got %v", id, err)
	}
	assert.Check(t, is.Equal(f.count(deleteRoute), 0), "nothing was sent")
	assert.Check(t, !f.gone(t), "the real pod is untouched")
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

// step is one scripted answer: it may move the virtual clock (a slow answer)
// or extend the shared cooldown (a Retry-After seen elsewhere) before it
// returns.
type step struct {
	advance  time.Duration
	cooldown time.Duration
	err      error
	pod      *runpod.Pod // GetPod only
}

// scriptedPods answers DeletePod and GetPod from two scripts on a virtual
// clock; an exhausted DELETE script confirms, an exhausted GET script is a
// test bug.
type scriptedPods struct {
	t       *testing.T
	clock   *simclock.Virtual
	policy  *reqpolicy.Policy
	deletes []step
	gets    []step
	nDelete int
	nGet    int
}

func (p *scriptedPods) play(s step) {
	p.clock.Advance(s.advance)
	if s.cooldown > 0 {
		p.policy.Cooldown().Extend(p.clock.Now().Add(s.cooldown))
	}
}

func (p *scriptedPods) DeletePod(context.Context, string) error {
	p.nDelete++
	if len(p.deletes) == 0 {
		return nil
	}
	s := p.deletes[0]
	p.deletes = p.deletes[1:]
	p.play(s)
	return s.err
}

func (p *scriptedPods) GetPod(_ context.Context, id string) (*runpod.Pod, error) {
	p.nGet++
	if len(p.gets) == 0 {
		p.t.Fatalf("unexpected GET %d of pod %s", p.nGet, id)
	}
	s := p.gets[0]
	p.gets = p.gets[1:]
	p.play(s)
	return s.pod, s.err
}

var (
	lostAnswer  = fmt.Errorf("read: connection reset by peer: %w", runpod.ErrTransport)
	serverError = fmt.Errorf("503 Service Unavailable: %w", runpod.ErrServer)
	t0          = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

// TestDeleteExactOutcomes pins, for each way a deletion can go, the number of
// DELETEs and GETs sent, the error's exact text (which names the count, the
// time spent and why it stopped) and the confirmation instant, so that an
// off-by-one in the attempt count, the budget check or a GET's verdict shows.
func TestDeleteExactOutcomes(t *testing.T) {
	running := &runpod.Pod{ID: "pod1", Status: runpod.PodRunning}
	terminated := &runpod.Pod{ID: "pod1", Status: runpod.PodTerminated}
	for _, tc := range []struct {
		name              string
		budget            time.Duration
		deletes, gets     []step
		wantDeletes       int
		wantGets          int
		wantErr           string // exact; "" when confirmed
		wantDeletesInErr  int
		wantAt            time.Duration // confirmation (or failure) instant after t0
		wantUnwrapsServer bool
	}{
		{
			name:        "a slow 5xx that uses the whole budget exactly: no second DELETE with nothing left",
			deletes:     []step{{advance: 180 * time.Second, err: serverError}},
			wantDeletes: 1, wantDeletesInErr: 1, wantAt: 180 * time.Second, wantUnwrapsServer: true,
			wantErr: "deletion of pod pod1 unconfirmed after 1 DELETE(s) in 3m0s (budget exhausted): 503 Service Unavailable: runpod: server error — the pod may still be billing; delete it by hand",
		},
		{
			name:        "a slow 5xx that leaves one second: the second DELETE goes out and confirms",
			deletes:     []step{{advance: 179 * time.Second, err: serverError}},
			wantDeletes: 2, wantAt: 179 * time.Second,
		},
		{
			name:        "a lost answer, then GET shows TERMINATED: confirmed with one DELETE",
			deletes:     []step{{err: lostAnswer}},
			gets:        []step{{pod: terminated}},
			wantDeletes: 1, wantGets: 1,
		},
		{
			name:        "a lost answer, then GET shows the pod running: the DELETE is sent again",
			deletes:     []step{{err: lostAnswer}},
			gets:        []step{{pod: running}},
			wantDeletes: 2, wantGets: 1,
		},
		{
			name:        "a lost answer whose GET fails too: both errors are kept, the DELETE is sent again",
			deletes:     []step{{err: lostAnswer}, {err: lostAnswer}, {err: lostAnswer}, {err: lostAnswer}, {err: lostAnswer}},
			gets:        []step{{err: serverError}, {err: serverError}, {err: serverError}, {err: serverError}, {err: serverError}},
			wantDeletes: 5, wantGets: 5, wantDeletesInErr: 5, wantUnwrapsServer: true,
			wantErr: "deletion of pod pod1 unconfirmed after 5 DELETE(s) in 0s (attempts exhausted): read: connection reset by peer: runpod: transport error\n503 Service Unavailable: runpod: server error — the pod may still be billing; delete it by hand",
		},
		{
			name:        "a lost answer under a cooldown past the budget: no GET, no second DELETE",
			deletes:     []step{{err: lostAnswer, cooldown: 200 * time.Second}},
			wantDeletes: 1, wantDeletesInErr: 1,
			wantErr: "deletion of pod pod1 unconfirmed after 1 DELETE(s) in 0s (budget exhausted): read: connection reset by peer: runpod: transport error\n" +
				"wait 3m20s (shared cooldown) exceeds the remaining deadline 3m0s\n" +
				"wait 3m20s (shared cooldown) exceeds the remaining deadline 3m0s — the pod may still be billing; delete it by hand",
		},
		{
			name:        "a 5xx then a retry cooldown past the budget: one DELETE counted",
			budget:      10 * time.Second,
			deletes:     []step{{err: serverError, cooldown: 10 * time.Second}},
			wantDeletes: 1, wantDeletesInErr: 1, wantUnwrapsServer: true,
			wantErr: "deletion of pod pod1 unconfirmed after 1 DELETE(s) in 0s (budget exhausted): 503 Service Unavailable: runpod: server error\n" +
				"wait 10s (shared cooldown) exceeds the remaining deadline 10s — the pod may still be billing; delete it by hand",
		},
		{
			name:        "a GET answering 404 confirms",
			deletes:     []step{{err: lostAnswer}},
			gets:        []step{{err: fmt.Errorf("get pod pod1: %w", runpod.ErrNotFound)}},
			wantDeletes: 1, wantGets: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := simclock.NewVirtual(t0)
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
			pods := &scriptedPods{t: t, clock: clock, policy: policy, deletes: tc.deletes, gets: tc.gets}
			d := &Deleter{Pods: pods, Policy: policy, Budget: tc.budget}

			at, err := d.Delete(context.Background(), "pod1")

			assert.Check(t, is.Equal(pods.nDelete, tc.wantDeletes), "DELETEs sent")
			assert.Check(t, is.Equal(pods.nGet, tc.wantGets), "GETs sent")
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Check(t, is.Equal(at, t0.Add(tc.wantAt)), "confirmed when the answer came")
				return
			}
			assert.Check(t, at.IsZero(), "an unconfirmed deletion has no confirmation time")
			assert.Check(t, is.Error(err, tc.wantErr))
			var ue *UnconfirmedError
			assert.Assert(t, errors.As(err, &ue))
			assert.Check(t, is.Equal(ue.Deletes, tc.wantDeletesInErr))
			assert.Check(t, is.Equal(ue.Finished, t0.Add(tc.wantAt)))
			assert.Check(t, is.Equal(ue.Elapsed, tc.wantAt))
			assert.Check(t, errors.Is(err, ErrUnconfirmed))
			assert.Check(t, is.Equal(errors.Is(err, runpod.ErrServer), tc.wantUnwrapsServer), "the last API error is exposed")
		})
	}
}

// TestDeleteLogsEachAttemptOfTheBound: the log names the attempt and the
// bound of five, so an operator can tell how close a deletion came to giving up.
func TestDeleteLogsEachAttemptOfTheBound(t *testing.T) {
	clock := simclock.NewVirtual(t0)
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
	pods := &scriptedPods{t: t, clock: clock, policy: policy,
		deletes: []step{{err: serverError}, {err: lostAnswer}, {err: fmt.Errorf("%w", runpod.ErrNotFound)}},
		gets:    []step{{pod: &runpod.Pod{ID: "pod1", Status: runpod.PodRunning}}}}
	var lines []string
	d := &Deleter{Pods: pods, Policy: policy, Logf: func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }}

	_, err := d.Delete(context.Background(), "pod1")

	assert.NilError(t, err)
	assert.DeepEqual(t, lines, []string{
		"pod pod1: DELETE 1/5 failed: 503 Service Unavailable: runpod: server error",
		"pod pod1: DELETE 2/5 response lost: read: connection reset by peer: runpod: transport error; checking with GET after the cooldown",
		"pod pod1: DELETE 3/5 answered 404: already gone",
	})
}

// TestDeletePermanentErrors: each permanent class stops at the first DELETE;
// a conflict or a rate limit is retried.
func TestDeletePermanentErrors(t *testing.T) {
	for _, tc := range []struct {
		err         error
		wantDeletes int
	}{
		{runpod.ErrUnauthorized, 1},
		{runpod.ErrForbidden, 1},
		{runpod.ErrInvalidRequest, 1},
		{runpod.ErrBadRequest, 1},
		{runpod.ErrRateLimited, 2},
		{runpod.ErrConflict, 2},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			clock := simclock.NewVirtual(t0)
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
			pods := &scriptedPods{t: t, clock: clock, policy: policy, deletes: []step{{err: fmt.Errorf("answer: %w", tc.err)}}}
			_, err := (&Deleter{Pods: pods, Policy: policy}).Delete(context.Background(), "pod1")
			assert.Check(t, is.Equal(pods.nDelete, tc.wantDeletes))
			if tc.wantDeletes == 1 {
				var ue *UnconfirmedError
				assert.Assert(t, errors.As(err, &ue))
				assert.Check(t, is.Equal(ue.Stopped, "permanent error"))
				assert.Check(t, is.Equal(ue.Deletes, 1))
				return
			}
			assert.NilError(t, err)
		})
	}
}

// deadlinePods answers each call with the next scripted error and records how
// long the context it was given had left: the bound a stalled request would
// hit. Reading the deadline, not waiting for it, keeps the test instant.
type deadlinePods struct {
	mu             sync.Mutex
	deleteErrs     []error
	deleteLeft     []time.Duration
	getLeft        []time.Duration
	deleteNoBounds int
}

func left(ctx context.Context) (time.Duration, bool) {
	dl, ok := ctx.Deadline()
	return time.Until(dl), ok
}

func (p *deadlinePods) DeletePod(ctx context.Context, _ string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := left(ctx)
	if !ok {
		p.deleteNoBounds++
	}
	p.deleteLeft = append(p.deleteLeft, d)
	if len(p.deleteErrs) == 0 {
		return nil
	}
	err := p.deleteErrs[0]
	p.deleteErrs = p.deleteErrs[1:]
	return err
}

func (p *deadlinePods) GetPod(ctx context.Context, id string) (*runpod.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, _ := left(ctx)
	p.getLeft = append(p.getLeft, d)
	return nil, fmt.Errorf("get pod %s: %w", id, runpod.ErrNotFound)
}

// TestEachDeleteRequestIsBoundedBy20Seconds: every request the deleter sends
// — each DELETE and the GET that checks a lost one — gets its own deadline of
// RequestTimeout (20 s by default), capped by what is left of the budget, so a
// stalled answer cannot eat the whole 180 s budget and its retries.
func TestEachDeleteRequestIsBoundedBy20Seconds(t *testing.T) {
	lostAnswer := fmt.Errorf("read: connection reset by peer: %w", runpod.ErrTransport)
	serverError := fmt.Errorf("503: %w", runpod.ErrServer)
	assert.Check(t, is.Equal(DefaultRequestTimeout, 20*time.Second), "the documented per-request DELETE timeout")
	for _, tc := range []struct {
		name       string
		timeout    time.Duration // Deleter.RequestTimeout; 0 takes the default
		budget     time.Duration // Deleter.Budget; 0 takes the default
		deleteErrs []error
		wantBound  time.Duration
		wantDelete int
		wantGet    int
	}{
		{name: "default is 20 s", wantBound: 20 * time.Second, wantDelete: 1},
		{name: "a retried DELETE gets its own 20 s", deleteErrs: []error{serverError, serverError}, wantBound: 20 * time.Second, wantDelete: 3},
		{name: "the GET after a lost answer too", deleteErrs: []error{lostAnswer}, wantBound: 20 * time.Second, wantDelete: 1, wantGet: 1},
		{name: "configured 5 s", timeout: 5 * time.Second, wantBound: 5 * time.Second, wantDelete: 1},
		{name: "capped by a shorter budget", budget: 8 * time.Second, wantBound: 8 * time.Second, wantDelete: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := simclock.NewVirtual(time.Now())
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
			pods := &deadlinePods{deleteErrs: tc.deleteErrs}
			d := &Deleter{Pods: pods, Policy: policy, RequestTimeout: tc.timeout, Budget: tc.budget}
			_, err := d.Delete(context.Background(), "abcdefghijklmn")
			assert.NilError(t, err)
			assert.Check(t, is.Len(pods.deleteLeft, tc.wantDelete))
			assert.Check(t, is.Len(pods.getLeft, tc.wantGet))
			assert.Check(t, is.Equal(pods.deleteNoBounds, 0), "a DELETE was sent without a deadline")
			for i, got := range append(pods.deleteLeft, pods.getLeft...) {
				// A second of slack for a slow machine; never more than the bound.
				assert.Check(t, got <= tc.wantBound && got > tc.wantBound-time.Second,
					"request %d had %s to answer, want %s", i+1, got.Round(time.Millisecond), tc.wantBound)
			}
		})
	}
}
