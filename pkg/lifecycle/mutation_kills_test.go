package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

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
			d := &lifecycle.Deleter{Pods: pods, Policy: policy, Budget: tc.budget}

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
			var ue *lifecycle.UnconfirmedError
			assert.Assert(t, errors.As(err, &ue))
			assert.Check(t, is.Equal(ue.Deletes, tc.wantDeletesInErr))
			assert.Check(t, is.Equal(ue.Finished, t0.Add(tc.wantAt)))
			assert.Check(t, is.Equal(ue.Elapsed, tc.wantAt))
			assert.Check(t, errors.Is(err, lifecycle.ErrUnconfirmed))
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
	d := &lifecycle.Deleter{Pods: pods, Policy: policy, Logf: func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }}

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
			_, err := (&lifecycle.Deleter{Pods: pods, Policy: policy}).Delete(context.Background(), "pod1")
			assert.Check(t, is.Equal(pods.nDelete, tc.wantDeletes))
			if tc.wantDeletes == 1 {
				var ue *lifecycle.UnconfirmedError
				assert.Assert(t, errors.As(err, &ue))
				assert.Check(t, is.Equal(ue.Stopped, "permanent error"))
				assert.Check(t, is.Equal(ue.Deletes, 1))
				return
			}
			assert.NilError(t, err)
		})
	}
}
