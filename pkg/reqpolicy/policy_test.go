package reqpolicy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/version"
)

func TestStatusClassification(t *testing.T) {
	tests := []struct {
		status       int
		wantAttempts int
	}{
		{status: http.StatusRequestTimeout, wantAttempts: 2},
		{status: http.StatusTooManyRequests, wantAttempts: 2},
		{status: http.StatusInternalServerError, wantAttempts: 2},
		{status: http.StatusNotImplemented, wantAttempts: 2},
		{status: http.StatusBadGateway, wantAttempts: 2},
		{status: http.StatusServiceUnavailable, wantAttempts: 2},
		{status: http.StatusGatewayTimeout, wantAttempts: 2},
		{status: http.StatusOK, wantAttempts: 1},
		{status: http.StatusCreated, wantAttempts: 1},
		{status: http.StatusNoContent, wantAttempts: 1},
		{status: http.StatusBadRequest, wantAttempts: 1},
		{status: http.StatusUnauthorized, wantAttempts: 1},
		{status: http.StatusPaymentRequired, wantAttempts: 1},
		{status: http.StatusForbidden, wantAttempts: 1},
		{status: http.StatusNotFound, wantAttempts: 1},
		{status: http.StatusConflict, wantAttempts: 1},
		{status: http.StatusUnprocessableEntity, wantAttempts: 1},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			h := newHarness()
			next := h.script(step{status: tc.status, body: "first"}, step{status: http.StatusOK, body: "second"})

			resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

			assert.NilError(t, err)
			assert.Equal(t, next.count(), tc.wantAttempts)
			assert.Equal(t, RetryableStatus(tc.status), tc.wantAttempts == 2)
			if tc.wantAttempts == 1 {
				assert.Equal(t, resp.StatusCode, tc.status)
				assert.Equal(t, readAll(resp), "first", "a final response reaches the caller unread")
				assert.Equal(t, len(h.sleeps.waits), 0)
			} else {
				assert.Equal(t, resp.StatusCode, http.StatusOK)
				assert.Equal(t, readAll(resp), "second")
			}
		})
	}
}

func TestTransportErrorsRetried(t *testing.T) {
	h := newHarness(WithMaxAttempts(3))
	next := h.script(step{err: errConnReset}, step{err: errConnReset}, step{err: errConnReset})

	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods/abc")

	assert.Check(t, resp == nil)
	assert.Check(t, errors.Is(err, errConnReset), "the cause stays inspectable: %v", err)
	assert.Equal(t, next.count(), 3)
	assert.DeepEqual(t, h.sleeps.waits, []time.Duration{time.Second, 2 * time.Second})
	assert.Check(t, is.Contains(h.log(), "giving up after 3 attempts"))
}

func TestBackoffSequence(t *testing.T) {
	tests := []struct {
		name      string
		jitter    float64
		base, cap time.Duration
		wantWaits []time.Duration
	}{
		{
			name: "no jitter takes the lower half", jitter: 0, base: time.Second, cap: 60 * time.Second,
			wantWaits: seconds(0.5, 1, 2, 4, 8, 16, 30, 30),
		},
		{
			name: "half jitter", jitter: 0.5, base: time.Second, cap: 60 * time.Second,
			wantWaits: seconds(0.75, 1.5, 3, 6, 12, 24, 45, 45),
		},
		{
			name: "full jitter reaches the cap", jitter: 1, base: time.Second, cap: 60 * time.Second,
			wantWaits: seconds(1, 2, 4, 8, 16, 32, 60, 60),
		},
		{
			name: "small cap", jitter: 1, base: 2 * time.Second, cap: 5 * time.Second,
			wantWaits: seconds(2, 4, 5, 5, 5, 5, 5, 5),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(WithJitter(func() float64 { return tc.jitter }), WithBaseDelay(tc.base), WithMaxDelay(tc.cap), WithMaxAttempts(9))
			steps := make([]step, 9)
			for i := range steps {
				steps[i] = step{status: http.StatusServiceUnavailable}
			}
			next := h.script(steps...)

			resp, err := get(context.Background(), h.policy.Transport(next), "/v2/catalog/gpus")

			assert.NilError(t, err)
			assert.Equal(t, resp.StatusCode, http.StatusServiceUnavailable, "the last response is returned once attempts run out")
			assert.Equal(t, next.count(), 9)
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
			for i := 1; i < len(next.sent); i++ {
				gap := next.sent[i].at.Sub(next.sent[i-1].at)
				assert.Equal(t, gap, tc.wantWaits[i-1], "request %d went out after its wait", i)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	httpDate := func(d time.Duration) string { return epoch.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name       string
		status     int
		retryAfter string
		wantWait   time.Duration
	}{
		{name: "seconds above backoff", status: 429, retryAfter: "7", wantWait: 7 * time.Second},
		{name: "seconds above the cap", status: 429, retryAfter: "120", wantWait: 120 * time.Second},
		{name: "http date", status: 503, retryAfter: httpDate(90 * time.Second), wantWait: 90 * time.Second},
		{name: "http date above the cap", status: 503, retryAfter: httpDate(5 * time.Minute), wantWait: 5 * time.Minute},
		{name: "shorter than backoff keeps backoff", status: 429, retryAfter: "0", wantWait: time.Second},
		{name: "past date keeps backoff", status: 429, retryAfter: httpDate(-time.Minute), wantWait: time.Second},
		{name: "malformed is ignored", status: 429, retryAfter: "soon", wantWait: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			header := http.Header{"Retry-After": {tc.retryAfter}}
			next := h.script(step{status: tc.status, header: header}, step{status: http.StatusOK})

			resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

			assert.NilError(t, err)
			assert.Equal(t, resp.StatusCode, http.StatusOK)
			assert.DeepEqual(t, h.sleeps.waits, []time.Duration{tc.wantWait})
		})
	}
}

func TestWaitExceedingDeadlineFailsAtOnce(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		cooldown   time.Duration
		steps      []step
		dateIn     time.Duration // a Retry-After date this far after the fake now
		remaining  time.Duration
		wantErr    string
		wantStatus int
		wantSent   int
	}{
		{
			name:       "Retry-After seconds",
			steps:      []step{{status: 429, header: http.Header{"Retry-After": {"7"}}}},
			remaining:  5 * time.Second,
			wantErr:    "wait 7s (Retry-After after 429 Too Many Requests) exceeds the remaining deadline 5s",
			wantStatus: 429,
			wantSent:   1,
		},
		{
			name:       "Retry-After date",
			steps:      []step{{status: 503}},
			dateIn:     5 * time.Minute,
			remaining:  time.Minute,
			wantErr:    "wait 5m0s (Retry-After after 503 Service Unavailable) exceeds the remaining deadline 1m0s",
			wantStatus: 503,
			wantSent:   1,
		},
		{
			name:       "backoff",
			opts:       []Option{WithBaseDelay(10 * time.Second)},
			steps:      []step{{status: 502}},
			remaining:  3 * time.Second,
			wantErr:    "wait 10s (backoff after 502 Bad Gateway) exceeds the remaining deadline 3s",
			wantStatus: 502,
			wantSent:   1,
		},
		{
			name:      "shared cooldown before sending",
			cooldown:  30 * time.Second,
			remaining: 10 * time.Second,
			wantErr:   "wait 30s (shared cooldown) exceeds the remaining deadline 10s",
			wantSent:  0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.opts...)
			ctx, cancel := h.withFakeDeadline(tc.remaining)
			defer cancel()
			if tc.dateIn > 0 {
				tc.steps[0].header = http.Header{"Retry-After": {h.clock.Now().Add(tc.dateIn).Format(http.TimeFormat)}}
			}
			next := h.script(tc.steps...)
			if tc.cooldown > 0 {
				h.policy.Cooldown().Extend(h.clock.Now().Add(tc.cooldown))
			}

			resp, err := get(ctx, h.policy.Transport(next), "/v2/pods/abc")

			assert.Check(t, resp == nil)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, ErrWaitExceedsDeadline))
			var waitErr *WaitError
			assert.Assert(t, errors.As(err, &waitErr))
			assert.Equal(t, waitErr.Remaining, tc.remaining)
			assert.Equal(t, waitErr.Status, tc.wantStatus)
			assert.Equal(t, len(h.sleeps.waits), 0, "no sleep before failing")
			assert.Equal(t, next.count(), tc.wantSent)
		})
	}
}

func TestCooldownIsSharedAcrossCalls(t *testing.T) {
	h := newHarness(WithMaxAttempts(1))
	catalog := h.script(step{status: 429, header: http.Header{"Retry-After": {"30"}}})
	pods := h.script(step{status: 200})
	start := h.clock.Now()

	resp, err := get(context.Background(), h.policy.Transport(catalog), "/v2/catalog/gpus")
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 429, "one attempt only: the 429 reaches the caller")
	assert.Equal(t, len(h.sleeps.waits), 0)
	assert.Equal(t, h.policy.Cooldown().NotBefore(), start.Add(30*time.Second))

	resp, err = get(context.Background(), h.policy.Transport(pods), "/v2/pods/abc")

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 200)
	assert.DeepEqual(t, h.sleeps.waits, []time.Duration{30 * time.Second})
	assert.Equal(t, pods.sent[0].at, start.Add(30*time.Second), "the other call went out only after the cooldown")
	assert.Check(t, is.Contains(h.log(), "GET https://api.example.test/v2/pods/abc: waiting 30s for the shared cooldown"))
}

func TestUrgentRequestGoesOutWhenTheCooldownDoesNotFit(t *testing.T) {
	tests := []struct {
		name      string
		urgent    bool
		cooldown  time.Duration
		remaining time.Duration
		wantSent  int
		wantWaits []time.Duration
		wantErr   string
	}{
		{name: "urgent, cooldown past the deadline: sent at once", urgent: true, cooldown: 1000 * time.Second, remaining: 180 * time.Second, wantSent: 1},
		{name: "urgent, cooldown that fits: waited out", urgent: true, cooldown: 30 * time.Second, remaining: 180 * time.Second, wantSent: 1, wantWaits: []time.Duration{30 * time.Second}},
		{name: "not urgent, cooldown past the deadline: fails unsent", cooldown: 1000 * time.Second, remaining: 180 * time.Second, wantErr: "exceeds the remaining deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			ctx, cancel := h.withFakeDeadline(tc.remaining)
			defer cancel()
			if tc.urgent {
				ctx = Urgent(ctx)
			}
			next := h.script(step{status: 204})
			h.policy.Cooldown().Extend(h.clock.Now().Add(tc.cooldown))

			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, "https://api.example.test/v2/pods/abc", nil)
			assert.NilError(t, err)
			resp, err := h.policy.Transport(next).RoundTrip(req)

			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			} else {
				assert.NilError(t, err)
				assert.Equal(t, resp.StatusCode, 204)
			}
			assert.Equal(t, next.count(), tc.wantSent)
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
		})
	}
}

func TestNonIdempotentRequestsAreSentOnce(t *testing.T) {
	tests := []struct {
		name         string
		method       string
		step         step
		wantStatus   int
		wantErr      error
		wantCooldown time.Duration
	}{
		{name: "create answered 503", method: http.MethodPost, step: step{status: 503}, wantStatus: 503, wantCooldown: time.Second},
		{name: "patch answered 502", method: http.MethodPatch, step: step{status: 502}, wantStatus: 502, wantCooldown: time.Second},
		{name: "create with a lost response", method: http.MethodPost, step: step{err: errConnReset}, wantErr: errConnReset, wantCooldown: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			next := h.script(tc.step, step{status: 201})

			resp, err := send(context.Background(), h.policy.Transport(next), tc.method, "/v2/pods", `{"name":"p"}`)

			if tc.wantErr != nil {
				assert.Check(t, errors.Is(err, tc.wantErr))
			} else {
				assert.NilError(t, err)
				assert.Equal(t, resp.StatusCode, tc.wantStatus)
			}
			assert.Equal(t, next.count(), 1, "never re-sent")
			assert.Equal(t, len(h.sleeps.waits), 0)
			assert.Equal(t, h.policy.Cooldown().Remaining(h.clock.Now()), tc.wantCooldown, "the failure still sets the shared cooldown")
			assert.Check(t, is.Contains(h.log(), "not retried ("+tc.method+" is not idempotent)"))
		})
	}
}

func TestAllowRetryReplaysTheBody(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: 503}, step{status: 200})
	ctx := AllowRetry(context.Background())

	resp, err := send(ctx, h.policy.Transport(next), http.MethodPost, "/v2/pods/abc/action", `{"action":"stop"}`)

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 200)
	assert.Equal(t, next.count(), 2)
	assert.Equal(t, next.sent[0].body, `{"action":"stop"}`)
	assert.Equal(t, next.sent[1].body, `{"action":"stop"}`)
}

func TestClassifier(t *testing.T) {
	secondaryLimit := func(resp *http.Response) Decision {
		if resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") == "0" {
			return Decision{Verdict: Retry, Wait: 45 * time.Second}
		}
		if resp.StatusCode == http.StatusBadGateway {
			return Decision{Verdict: Final, Wait: 5 * time.Second}
		}
		return Decision{}
	}
	tests := []struct {
		name         string
		first        step
		wantSent     int
		wantWaits    []time.Duration
		wantCooldown time.Duration
	}{
		{name: "retry with a wait", first: step{status: 403, header: http.Header{"X-Ratelimit-Remaining": {"0"}}}, wantSent: 2, wantWaits: []time.Duration{45 * time.Second}},
		{name: "final with a cooldown", first: step{status: 502}, wantSent: 1, wantCooldown: 5 * time.Second},
		{name: "defer to built-in rules", first: step{status: 503}, wantSent: 2, wantWaits: []time.Duration{time.Second}},
		{name: "defer keeps a plain 403 final", first: step{status: 403}, wantSent: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(WithClassifier(secondaryLimit))
			next := h.script(tc.first, step{status: 200})

			_, err := get(context.Background(), h.policy.Transport(next), "/repos/o/r/check-runs")

			assert.NilError(t, err)
			assert.Equal(t, next.count(), tc.wantSent)
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
			assert.Equal(t, h.policy.Cooldown().Remaining(h.clock.Now()), tc.wantCooldown)
		})
	}
}

func TestSecretsAreRedactedFromLogsAndErrors(t *testing.T) {
	const apiKey = "rpa_SECRETKEY0123456789"
	const jitConfig = `{"runner":"gpu-c1","token":"AAAJIT-secret-token"}`
	encodedJIT := base64.StdEncoding.EncodeToString([]byte(jitConfig))
	h := newHarness(WithRedactor(redact.NewRedactor(apiKey, encodedJIT)), WithMaxAttempts(2))
	echo := `{"title":"Internal","status":500,"detail":"bad key ` + apiKey + `","config":"` + encodedJIT + `"}`
	next := h.script(step{status: 500, body: echo}, step{err: errors.New("proxy refused Bearer " + apiKey)})

	_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.Assert(t, err != nil)
	for _, text := range []string{err.Error(), h.log()} {
		assert.Check(t, !strings.Contains(text, apiKey), text)
		assert.Check(t, !strings.Contains(text, encodedJIT), text)
		assert.Check(t, !strings.Contains(text, "AAAJIT"), text)
		assert.Check(t, is.Contains(text, redact.Redacted))
	}
	assert.Check(t, is.Contains(h.log(), `500 Internal Server Error: {"title":"Internal","status":500,"detail":"bad key ***","config":"***"}`))
}

func TestRetriedResponseBodyStaysWholeForTheCaller(t *testing.T) {
	h := newHarness(WithMaxAttempts(1))
	long := strings.Repeat("x", 100_000)
	next := h.script(step{status: 503, body: long})

	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.NilError(t, err)
	assert.Equal(t, readAll(resp), long)
	assert.Check(t, len(h.log()) < 1000, "the log carries a short excerpt only")
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	h := newHarness()
	ctx, cancel := context.WithCancel(context.Background())
	h.sleeps = &sleepRecorder{clock: h.clock}
	h.policy.sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return h.sleeps.sleep(ctx, d)
	}
	next := h.script(step{status: 503}, step{status: 200})

	_, err := get(ctx, h.policy.Transport(next), "/v2/pods")

	assert.Check(t, errors.Is(err, context.Canceled))
	assert.Equal(t, next.count(), 1)
}

func TestUserAgent(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: 200}, step{status: 200})
	rt := h.policy.Transport(next)

	_, err := get(context.Background(), rt, "/a")
	assert.NilError(t, err)
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.test/b", nil)
	req.Header.Set("User-Agent", "custom/1")
	_, err = rt.RoundTrip(req)
	assert.NilError(t, err)

	assert.Equal(t, version.UserAgent(), "runpod-gpu/dev")
	assert.Equal(t, next.sent[0].userAgent, "runpod-gpu/dev")
	assert.Equal(t, next.sent[1].userAgent, "custom/1", "a caller's User-Agent is kept")
	assert.Equal(t, req.Header.Get("User-Agent"), "custom/1", "the caller's request is not modified")
}

func TestPolicyWait(t *testing.T) {
	tests := []struct {
		name      string
		cooldown  time.Duration
		wait      time.Duration
		remaining time.Duration
		wantWaits []time.Duration
		wantErr   string
	}{
		{name: "fits", wait: 10 * time.Second, remaining: time.Minute, wantWaits: []time.Duration{10 * time.Second}},
		{name: "cooldown is longer", cooldown: 20 * time.Second, wait: 10 * time.Second, remaining: time.Minute, wantWaits: []time.Duration{20 * time.Second}},
		{name: "does not fit", wait: 10 * time.Second, remaining: 9 * time.Second, wantErr: "wait 10s (poll) exceeds the remaining deadline 9s"},
		{name: "cooldown does not fit", cooldown: time.Minute, wait: time.Second, remaining: 30 * time.Second, wantErr: "wait 1m0s (shared cooldown)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			ctx, cancel := h.withFakeDeadline(tc.remaining)
			defer cancel()
			h.policy.Cooldown().Extend(h.clock.Now().Add(tc.cooldown))

			err := h.policy.Wait(ctx, tc.wait, "poll")

			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrWaitExceedsDeadline))
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, h.sleeps.waits, tc.wantWaits)
		})
	}
}

// TestOverRealHTTP runs the policy under a real http.Client against a loopback
// server with the real clock, sleeping only a millisecond-scale backoff.
func TestOverRealHTTP(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(body))
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	policy := New(WithBaseDelay(time.Millisecond), WithMaxDelay(time.Millisecond))
	client := &http.Client{Transport: policy.Transport(nil)}
	req, err := http.NewRequestWithContext(AllowRetry(context.Background()), http.MethodPost, srv.URL, strings.NewReader(`{"action":"stop"}`))
	assert.NilError(t, err)

	resp, err := client.Do(req)

	assert.NilError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	assert.DeepEqual(t, bodies, []string{`{"action":"stop"}`, `{"action":"stop"}`})
}

func seconds(values ...float64) []time.Duration {
	out := make([]time.Duration, len(values))
	for i, v := range values {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

func TestWithAttemptLimitCapsWireAttempts(t *testing.T) {
	var calls int
	p := New(WithSleeper(func(context.Context, time.Duration) error { return nil }), WithMaxAttempts(5))
	next := attemptCounter{calls: &calls}
	req, _ := http.NewRequestWithContext(WithAttemptLimit(context.Background(), 1), http.MethodDelete, "http://x/v2/pods/a", nil)
	resp, err := p.Transport(next).RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || calls != 1 {
		t.Fatalf("got %v, %v after %d calls; want one 503 attempt", resp, err, calls)
	}
	if p.Cooldown().Remaining(p.Now()) <= 0 {
		t.Fatal("a capped request must still extend the shared cooldown")
	}
	calls = 0
	req, _ = http.NewRequest(http.MethodDelete, "http://x/v2/pods/a", nil)
	_, _ = p.Transport(next).RoundTrip(req)
	if calls != 5 {
		t.Fatalf("without a limit the policy's 5 attempts apply; got %d", calls)
	}
}

// attemptCounter answers every request with 503 and counts them.
type attemptCounter struct{ calls *int }

func (a attemptCounter) RoundTrip(*http.Request) (*http.Response, error) {
	*a.calls++
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Header: http.Header{}}, nil
}

func TestRemainingMeasuresEachDeadlineOnItsOwnClock(t *testing.T) {
	fake := &fakeClock{now: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := New(WithClock(fake))
	if _, ok := p.Remaining(context.Background()); ok {
		t.Fatal("no deadline, none remaining")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if left, _ := p.Remaining(ctx); left < 59*time.Minute || left > time.Hour {
		t.Fatalf("a wall-clock deadline is measured on the wall clock; got %s", left)
	}
	ctx = WithDeadline(ctx, fake.now.Add(3*time.Minute))
	if left, _ := p.Remaining(ctx); left != 3*time.Minute {
		t.Fatalf("a policy deadline is measured on the policy's clock; got %s", left)
	}
	if left, _ := p.Remaining(WithDeadline(ctx, fake.now.Add(time.Minute))); left != time.Minute {
		t.Fatalf("the earlier policy deadline wins; got %s", left)
	}
	if left, _ := p.Remaining(WithDeadline(ctx, fake.now.Add(time.Hour*5))); left != 3*time.Minute {
		t.Fatalf("a later policy deadline does not extend an earlier one; got %s", left)
	}
}

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

// A request marked Optional (a read whose failure costs nothing) is sent
// once and gives up on a 429, but its answer never moves the shared
// cooldown the policy's other requests wait on.
func TestOptionalRequestNeverMovesTheSharedCooldown(t *testing.T) {
	for _, optional := range []bool{false, true} {
		t.Run(fmt.Sprint("optional=", optional), func(t *testing.T) {
			h := newHarness()
			ctx, cancel := h.withFakeDeadline(10 * time.Second)
			defer cancel()
			if optional {
				ctx = Optional(ctx)
			}
			next := h.script(step{status: 429, header: http.Header{"Retry-After": {"1000"}}})
			resp, err := get(ctx, h.policy.Transport(next), "/graphql")
			assert.Check(t, err != nil || resp.StatusCode == http.StatusTooManyRequests, "given up: %v", err)
			assert.Check(t, is.Len(next.sent, 1), "sent once")
			assert.Check(t, is.Equal(h.policy.Cooldown().NotBefore().IsZero(), optional), "cooldown until %v", h.policy.Cooldown().NotBefore())
		})
	}
}
