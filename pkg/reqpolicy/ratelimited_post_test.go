package reqpolicy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A 429 refuses a request before it is processed, so a create (JIT config,
// check run, pod) answered 429 is sent again after its Retry-After instead of
// failing the lane on a transient limit; any other failure of a POST may
// have acted and is still left to the caller.
func TestRateLimitedPostIsRetriedAfterItsRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		steps      []step
		remaining  time.Duration // 0: no deadline
		limit      int           // WithAttemptLimit; 0: the policy's
		wantSent   int
		wantStatus int
		wantWaits  []time.Duration
		wantErr    string
		wantLog    string
	}{
		{
			name: "POST 429 then created", method: http.MethodPost,
			steps:    []step{{status: 429, header: http.Header{"Retry-After": {"10"}}}, {status: 201}},
			wantSent: 2, wantStatus: 201, wantWaits: []time.Duration{10 * time.Second},
			wantLog: "POST https://api.example.test/v2/pods: 429 Too Many Requests; retry 1/4 in 10s",
		},
		{
			name: "PATCH 429 without Retry-After backs off", method: http.MethodPatch,
			steps:    []step{{status: 429}, {status: 429}, {status: 200}},
			wantSent: 3, wantStatus: 200, wantWaits: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name: "POST 429 then 503 is not sent a third time", method: http.MethodPost,
			steps:    []step{{status: 429, header: http.Header{"Retry-After": {"3"}}}, {status: 503}, {status: 201}},
			wantSent: 2, wantStatus: 503, wantWaits: []time.Duration{3 * time.Second},
			wantLog: "503 Service Unavailable; not retried (POST is not idempotent); cooldown 2s",
		},
		{
			name: "POST 429 whose Retry-After does not fit the deadline", method: http.MethodPost,
			steps: []step{{status: 429, header: http.Header{"Retry-After": {"30"}}}, {status: 201}}, remaining: 30 * time.Second,
			wantSent: 1, wantErr: "wait 30s (Retry-After after 429 Too Many Requests) exceeds the remaining deadline 30s",
		},
		{
			name: "POST 429 with an attempt limit of 1", method: http.MethodPost, limit: 1,
			steps:    []step{{status: 429, header: http.Header{"Retry-After": {"5"}}}, {status: 201}},
			wantSent: 1, wantStatus: 429, wantLog: "giving up after 1 attempts",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			ctx := context.Background()
			if tc.remaining > 0 {
				var cancel context.CancelFunc
				ctx, cancel = h.withFakeDeadline(tc.remaining)
				defer cancel()
			}
			if tc.limit > 0 {
				ctx = WithAttemptLimit(ctx, tc.limit)
			}
			next := h.script(tc.steps...)

			resp, err := send(ctx, h.policy.Transport(next), tc.method, "/v2/pods", `{"name":"p"}`)

			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
			} else {
				assert.NilError(t, err)
				assert.Equal(t, resp.StatusCode, tc.wantStatus)
			}
			assert.Equal(t, next.count(), tc.wantSent)
			for i := 1; i < next.count(); i++ {
				assert.Equal(t, next.sent[i].body, `{"name":"p"}`, "attempt %d replays the body", i+1)
			}
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
			assert.Check(t, is.Contains(h.log(), tc.wantLog))
		})
	}
}

// A 429'd request whose body cannot be replayed is still sent once: the
// policy cannot send the same bytes again.
func TestRateLimitedPostWithoutGetBodyIsSentOnce(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: 429, header: http.Header{"Retry-After": {"4"}}}, step{status: 201})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://api.example.test/v2/pods", &oneShotBody{strings.NewReader("payload")})
	assert.NilError(t, err)

	resp, err := h.policy.Transport(next).RoundTrip(req)

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 429)
	assert.Equal(t, next.count(), 1)
	assert.Equal(t, h.policy.Cooldown().Remaining(h.clock.Now()), 4*time.Second, "the 429 still sets the shared cooldown")
	assert.Check(t, is.Contains(h.log(), "429 Too Many Requests; not retried (the request body cannot be replayed); cooldown 4s"))
	_, _ = io.Copy(io.Discard, resp.Body)
}
