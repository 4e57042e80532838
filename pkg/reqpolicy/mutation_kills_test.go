package reqpolicy

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// Exact edges of Policy.Wait: a pause equal to what is left does not fit, a
// zero pause never sleeps (not even past the deadline), and a cooldown only
// replaces the caller's wait (and its reason) when it is longer.
func TestPolicyWaitEdges(t *testing.T) {
	tests := []struct {
		name      string
		cooldown  time.Duration
		wait      time.Duration
		remaining time.Duration
		wantWaits []time.Duration
		wantErr   string
	}{
		{name: "a wait equal to what is left does not fit", wait: 10 * time.Second, remaining: 10 * time.Second,
			wantErr: "wait 10s (poll) exceeds the remaining deadline 10s"},
		{name: "a cooldown equal to the wait keeps the caller's reason", cooldown: 10 * time.Second, wait: 10 * time.Second, remaining: 5 * time.Second,
			wantErr: "wait 10s (poll) exceeds the remaining deadline 5s"},
		{name: "a zero wait does not sleep", wait: 0, remaining: time.Minute},
		{name: "a zero wait past the deadline is not an error", wait: 0, remaining: -time.Second},
		{name: "a wait past the deadline reports 0 left", wait: time.Second, remaining: -time.Second,
			wantErr: "wait 1s (poll) exceeds the remaining deadline 0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			ctx, cancel := h.withFakeDeadline(tc.remaining)
			defer cancel()
			if tc.cooldown > 0 {
				h.policy.Cooldown().Extend(h.clock.Now().Add(tc.cooldown))
			}

			err := h.policy.Wait(ctx, tc.wait, "poll")

			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
		})
	}
}

// The largest delay-seconds a time.Duration holds is read exactly; one more
// saturates.
func TestParseRetryAfterSaturationEdge(t *testing.T) {
	const most = math.MaxInt64 / int64(time.Second) // 9223372036
	wait, ok := ParseRetryAfter("9223372036", epoch)
	assert.Check(t, ok)
	assert.Equal(t, wait, time.Duration(most)*time.Second)

	wait, ok = ParseRetryAfter("9223372037", epoch)
	assert.Check(t, ok)
	assert.Equal(t, wait, time.Duration(math.MaxInt64))
}

// A request without a cooldown goes out at once and quietly: no wait, no
// log line (a zero cooldown is no cooldown).
func TestNoCooldownNoWaitNoLog(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: 200})

	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 200)
	assert.Equal(t, h.log(), "")
	assert.Equal(t, len(h.sleeps.waits), 0)
}

// The edges of one retry decision, each pinned by the exact error, waits and
// cooldown it must leave.
func TestRetryDecisionEdges(t *testing.T) {
	tests := []struct {
		name         string
		opts         []Option
		urgent       bool
		cooldown     time.Duration // set before the request
		remaining    time.Duration // 0: no deadline
		steps        []step
		wantSent     int
		wantWaits    []time.Duration
		wantErr      string
		wantLog      string
		wantNoCooldn bool // NotBefore stays the zero time
	}{
		{
			name: "urgent with a cooldown exactly the deadline: sent at once", urgent: true,
			cooldown: 30 * time.Second, remaining: 30 * time.Second, steps: []step{{status: 204}}, wantSent: 1,
			wantLog: "does not fit the deadline; sent at once (urgent)",
		},
		{
			name:      "a backoff exactly the deadline does not fit",
			remaining: time.Second, steps: []step{{status: 503}, {status: 204}}, wantSent: 1,
			wantErr: "wait 1s (backoff after 503 Service Unavailable) exceeds the remaining deadline 1s",
		},
		{
			name:      "a Retry-After equal to the backoff is named as Retry-After",
			remaining: time.Second, steps: []step{{status: 503, header: http.Header{"Retry-After": {"1"}}}, {status: 204}}, wantSent: 1,
			wantErr: "wait 1s (Retry-After after 503 Service Unavailable) exceeds the remaining deadline 1s",
		},
		{
			name: "a zero backoff is never named Retry-After", opts: []Option{WithBaseDelay(0)},
			remaining: -time.Second, steps: []step{{status: 503}, {status: 204}}, wantSent: 1,
			wantErr: "wait 0s (backoff after 503 Service Unavailable) exceeds the remaining deadline 0s",
		},
		{
			name:  "a final answer with no wait sets no cooldown",
			steps: []step{{status: 404}}, wantSent: 1, wantNoCooldn: true,
		},
		{
			name:  "the last allowed attempt gives up",
			opts:  []Option{WithMaxAttempts(2)},
			steps: []step{{status: 500}, {status: 502}}, wantSent: 2, wantWaits: []time.Duration{time.Second},
			wantLog: "GET https://api.example.test/v2/pods: 502 Bad Gateway; giving up after 2 attempts",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.opts...)
			ctx := context.Background()
			if tc.remaining != 0 {
				var cancel context.CancelFunc
				ctx, cancel = h.withFakeDeadline(tc.remaining)
				defer cancel()
			}
			if tc.urgent {
				ctx = Urgent(ctx)
			}
			if tc.cooldown > 0 {
				h.policy.Cooldown().Extend(h.clock.Now().Add(tc.cooldown))
			}
			next := h.script(tc.steps...)

			resp, err := get(ctx, h.policy.Transport(next), "/v2/pods")

			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
			} else {
				assert.NilError(t, err)
				assert.Equal(t, resp.StatusCode, tc.steps[len(tc.steps)-1].status)
			}
			assert.Equal(t, next.count(), tc.wantSent)
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
			assert.Check(t, strings.Contains(h.log(), tc.wantLog), "log: %s", h.log())
			if tc.wantNoCooldn {
				assert.Check(t, h.policy.Cooldown().NotBefore().IsZero())
			}
		})
	}
}

// Every 5xx is transient, and nothing outside 408, 429 and 500–599 is.
func TestRetryableStatusEdges(t *testing.T) {
	for code, want := range map[int]bool{407: false, 408: true, 409: false, 428: false, 429: true, 430: false, 499: false, 500: true, 599: true, 600: false} {
		assert.Check(t, RetryableStatus(code) == want, "status %d", code)
	}
}

// The jittered backoff is d/2 + jitter·d/2 of the capped step: exact for a
// quarter jitter, and clamped for jitter outside [0, 1].
func TestBackoffJitterArithmetic(t *testing.T) {
	for _, tc := range []struct {
		jitter  float64
		attempt int
		want    time.Duration
	}{
		{jitter: 0.25, attempt: 1, want: 625 * time.Millisecond},
		{jitter: 0.25, attempt: 3, want: 2500 * time.Millisecond},
		{jitter: 0, attempt: 2, want: time.Second},
		{jitter: -3, attempt: 2, want: time.Second},
		{jitter: math.NaN(), attempt: 2, want: time.Second},
		{jitter: 7, attempt: 2, want: 2 * time.Second},
		{jitter: 1, attempt: 10, want: 60 * time.Second}, // DefaultMaxDelay
	} {
		j := tc.jitter
		p := New(WithJitter(func() float64 { return j }))
		assert.Equal(t, p.backoff(tc.attempt), tc.want, "jitter %v attempt %d", tc.jitter, tc.attempt)
	}
}

// The log excerpt of a body shows at most 256 characters; a body of exactly
// that length is shown whole, without an ellipsis.
func TestBodyExcerptLengthEdge(t *testing.T) {
	for _, tc := range []struct {
		n        int
		wantTail string
	}{
		{n: 256, wantTail: strings.Repeat("é", 4) + "; retry 1/4 in 1s"},
		{n: 257, wantTail: strings.Repeat("é", 4) + "…; retry 1/4 in 1s"},
	} {
		h := newHarness()
		next := h.script(step{status: 503, body: strings.Repeat("é", tc.n)}, step{status: 200})

		_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

		assert.NilError(t, err)
		assert.Check(t, strings.HasSuffix(h.log(), tc.wantTail), "n=%d: %s", tc.n, h.log())
		assert.Check(t, strings.Contains(h.log(), "503 Service Unavailable: "+strings.Repeat("é", 256)), "n=%d", tc.n)
		assert.Check(t, !strings.Contains(h.log(), strings.Repeat("é", 257)), "n=%d", tc.n)
	}
}

// closeRecorder is a response body that records whether it was closed.
type closeRecorder struct {
	*strings.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// A response the caller never gets (its retry did not fit the deadline) is
// closed by the policy, so its connection is not leaked.
func TestResponseOfARefusedRetryIsClosed(t *testing.T) {
	h := newHarness()
	ctx, cancel := h.withFakeDeadline(500 * time.Millisecond)
	defer cancel()
	body := &closeRecorder{Reader: strings.NewReader("busy")}
	next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Header: http.Header{}, Body: body, Request: req}, nil
	})

	resp, err := get(ctx, h.policy.Transport(next), "/v2/pods")

	assert.Check(t, resp == nil)
	assert.Check(t, errors.Is(err, ErrWaitExceedsDeadline), "%v", err)
	assert.Check(t, body.closed, "the undelivered response body was not closed")
}
