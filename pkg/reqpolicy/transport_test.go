package reqpolicy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// These tests pin how the policy drives go-retryablehttp: each one fails when
// one of the library's defaults leaks through (its error handler, its body
// buffering, its http.Client's redirects, error wrapping and idle-connection
// closing).

func TestExhaustedRetriesReturnTheLastResponseWhole(t *testing.T) {
	h := newHarness(WithMaxAttempts(3))
	next := h.script(step{status: 503, body: "one"}, step{status: 502, body: "two"}, step{status: 500, body: `{"message":"three"}`})

	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.NilError(t, err, "the library's default error handler would turn this into an error")
	assert.Equal(t, resp.StatusCode, 500)
	assert.Equal(t, readAll(resp), `{"message":"three"}`)
	assert.Equal(t, next.count(), 3)
}

func TestRedirectsAreLeftToTheCallersClient(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: http.StatusFound, header: http.Header{"Location": {"https://storage.example.test/blob"}}})

	resp, err := get(context.Background(), h.policy.Transport(next), "/repos/o/r/actions/artifacts/1/zip")

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusFound)
	assert.Equal(t, resp.Header.Get("Location"), "https://storage.example.test/blob")
	assert.Equal(t, next.count(), 1, "one wire attempt; the caller's client decides where to follow")
}

func TestTransportErrorTextIsTheTransportsOwn(t *testing.T) {
	h := newHarness(WithMaxAttempts(1))
	next := h.script(step{err: errConnReset})

	_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.Error(t, err, errConnReset.Error(), "no url.Error wrapping from the library's http.Client: the caller's client adds its own")
}

// oneShotBody is a request body without GetBody, which cannot be replayed.
type oneShotBody struct{ io.Reader }

func (*oneShotBody) Close() error { return nil }

func TestBodyWithoutGetBodyIsSentOnceAsIs(t *testing.T) {
	h := newHarness()
	script := h.script(step{status: 503}, step{status: 200})
	body := &oneShotBody{strings.NewReader("payload")}
	var asIs bool
	next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		asIs = req.Body == io.ReadCloser(body)
		return script.RoundTrip(req)
	})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, "https://api.example.test/v2/blob", body)
	assert.NilError(t, err)
	assert.Check(t, req.GetBody == nil)

	resp, err := h.policy.Transport(next).RoundTrip(req)

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 503, "a body that cannot be replayed makes the request single-shot")
	assert.Equal(t, script.count(), 1)
	assert.Equal(t, script.sent[0].body, "payload")
	assert.Check(t, asIs, "the caller's body reaches the wire unread, not buffered up front by the library")
}

// idleCounter is a transport whose idle-connection pool is shared with other
// clients; it counts how often someone closes it.
type idleCounter struct {
	http.RoundTripper
	closed int
}

func (c *idleCounter) CloseIdleConnections() { c.closed++ }

func TestGivingUpLeavesTheSharedConnectionPoolAlone(t *testing.T) {
	h := newHarness(WithMaxAttempts(2))
	next := &idleCounter{RoundTripper: h.script(step{status: 503}, step{err: errConnReset})}

	_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.ErrorContains(t, err, "connection reset")
	assert.Equal(t, next.closed, 0)
	assert.Check(t, is.Contains(h.log(), "giving up after 2 attempts"))
}

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

// A classifier that names a refusal as unprocessed (GitHub's 403 secondary
// limit) lets a POST be sent again after the wait, as after a 429; a Retry
// verdict alone does not, since the POST may have acted.
func TestPostRefusedUnprocessedIsRetried(t *testing.T) {
	for _, unprocessed := range []bool{true, false} {
		t.Run(fmt.Sprint("unprocessed=", unprocessed), func(t *testing.T) {
			h := newHarness(WithClassifier(func(resp *http.Response) Decision {
				if resp.StatusCode == http.StatusForbidden {
					return Decision{Verdict: Retry, Wait: 30 * time.Second, Unprocessed: unprocessed}
				}
				return Decision{}
			}))
			next := h.script(step{status: 403}, step{status: 201})

			resp, err := send(context.Background(), h.policy.Transport(next), http.MethodPost, "/v2/pods", `{"name":"p"}`)

			assert.NilError(t, err)
			if !unprocessed {
				assert.Equal(t, resp.StatusCode, 403)
				assert.Equal(t, next.count(), 1)
				assert.Check(t, is.Contains(h.log(), "not retried (POST is not idempotent)"))
				return
			}
			assert.Equal(t, resp.StatusCode, 201)
			assert.Equal(t, next.count(), 2)
			assert.Equal(t, next.sent[1].body, `{"name":"p"}`)
			assert.DeepEqual(t, h.sleeps.waits, []time.Duration{30 * time.Second})
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
