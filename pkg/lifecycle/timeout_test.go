package lifecycle_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

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
	assert.Check(t, is.Equal(lifecycle.DefaultRequestTimeout, 20*time.Second), "the documented per-request DELETE timeout")
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
			d := &lifecycle.Deleter{Pods: pods, Policy: policy, RequestTimeout: tc.timeout, Budget: tc.budget}
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
