package ghapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	secondaryLimitBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	primaryLimitBody   = `{"message":"API rate limit exceeded for installation ID 4242.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-rate-limits"}`
	tooManyBody        = `{"message":"Too Many Requests"}`
)

// limited answers like a GitHub rate limit; reset is X-RateLimit-Reset
// (zero: not sent), retryAfter the Retry-After header ("" not sent).
func limited(status int, body string, remaining string, reset time.Time, retryAfter string) http.HandlerFunc {
	var header []string
	if remaining != "" {
		header = append(header, "X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", remaining, "X-RateLimit-Used", "5000", "X-RateLimit-Resource", "core")
	}
	if !reset.IsZero() {
		header = append(header, "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	}
	if retryAfter != "" {
		header = append(header, "Retry-After", retryAfter)
	}
	return respond(status, body, header...)
}

// TestRateLimitsAreWaitedOut shows the request policy retrying a GET after
// each kind of GitHub rate limit, having waited what GitHub asked for.
func TestRateLimitsAreWaitedOut(t *testing.T) {
	tests := []struct {
		name      string
		limit     func(now time.Time) http.HandlerFunc
		wantWaits []time.Duration
	}{
		{
			name:      "429 with Retry-After",
			limit:     func(time.Time) http.HandlerFunc { return limited(429, tooManyBody, "", time.Time{}, "7") },
			wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "429 with the quota spent",
			limit: func(now time.Time) http.HandlerFunc {
				return limited(429, tooManyBody, "0", now.Add(42*time.Second), "")
			},
			wantWaits: []time.Duration{42 * time.Second},
		},
		{
			name:      "429 without hints waits a minute",
			limit:     func(time.Time) http.HandlerFunc { return limited(429, tooManyBody, "", time.Time{}, "") },
			wantWaits: []time.Duration{time.Minute},
		},
		{
			name:      "secondary 403 with Retry-After",
			limit:     func(time.Time) http.HandlerFunc { return limited(403, secondaryLimitBody, "", time.Time{}, "30") },
			wantWaits: []time.Duration{30 * time.Second},
		},
		{
			name:      "secondary 403 without hints waits a minute",
			limit:     func(time.Time) http.HandlerFunc { return limited(403, secondaryLimitBody, "", time.Time{}, "") },
			wantWaits: []time.Duration{time.Minute},
		},
		{
			name: "primary 403 waits for the reset",
			limit: func(now time.Time) http.HandlerFunc {
				return limited(403, primaryLimitBody, "0", now.Add(90*time.Second), "")
			},
			wantWaits: []time.Duration{90 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.on("GET", "repos/acme/widgets/collaborators/octocat/permission", tt.limit(env.clock.Now()))
			env.fake.on("GET", "repos/acme/widgets/collaborators/octocat/permission", respondFile(t, http.StatusOK, "permission_maintain.json"))

			role, err := env.client.PermissionRole(context.Background(), "octocat")
			assert.NilError(t, err)
			assert.Equal(t, role, "maintain")
			assert.DeepEqual(t, env.recordedWaits(), tt.wantWaits)
		})
	}
}

// TestRateLimitsAreTyped shows each limit reaching the caller as a
// *RateLimitError when the policy may not retry (a single attempt).
func TestRateLimitsAreTyped(t *testing.T) {
	tests := []struct {
		name           string
		limit          func(now time.Time) http.HandlerFunc
		wantKind       RateLimitKind
		wantRetryAfter time.Duration
		wantReset      time.Duration // after the clock's start; 0: none
		wantMessage    string
	}{
		{
			name:           "429",
			limit:          func(time.Time) http.HandlerFunc { return limited(429, tooManyBody, "", time.Time{}, "12") },
			wantKind:       TooManyRequests,
			wantRetryAfter: 12 * time.Second,
			wantMessage:    "too many requests: Too Many Requests (retry after 12s)",
		},
		{
			name: "429 with an HTTP-date Retry-After",
			limit: func(now time.Time) http.HandlerFunc {
				return limited(429, tooManyBody, "", time.Time{}, now.Add(2*time.Minute).UTC().Format(http.TimeFormat))
			},
			wantKind:       TooManyRequests,
			wantRetryAfter: 2 * time.Minute,
		},
		{
			name:           "secondary",
			limit:          func(time.Time) http.HandlerFunc { return limited(403, secondaryLimitBody, "", time.Time{}, "30") },
			wantKind:       SecondaryRateLimit,
			wantRetryAfter: 30 * time.Second,
			wantMessage:    "secondary rate limit: You have exceeded a secondary rate limit.",
		},
		{
			name: "primary",
			limit: func(now time.Time) http.HandlerFunc {
				return limited(403, primaryLimitBody, "0", now.Add(time.Hour), "")
			},
			wantKind:    PrimaryRateLimit,
			wantReset:   time.Hour,
			wantMessage: "primary rate limit: API rate limit exceeded for installation ID 4242. (resets at ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			start := env.clock.Now()
			env.fake.on("POST", "repos/acme/widgets/issues/7/comments", tt.limit(start))

			_, err := env.client.CreateIssueComment(reqpolicy.WithAttemptLimit(context.Background(), 1), 7, "hello")
			assert.ErrorIs(t, err, ErrRateLimited)
			assert.ErrorContains(t, err, "comment on #7: ")
			if tt.wantMessage != "" {
				assert.ErrorContains(t, err, tt.wantMessage)
			}
			var rl *RateLimitError
			assert.Assert(t, errors.As(err, &rl))
			assert.Equal(t, rl.Kind, tt.wantKind)
			assert.Equal(t, rl.RetryAfter.Round(time.Second), tt.wantRetryAfter)
			if tt.wantReset != 0 {
				assert.Equal(t, rl.Reset.Sub(start), tt.wantReset)
			}
			assert.Check(t, rl.WaitFrom(start) >= tt.wantRetryAfter)
			// The POST was sent once, and the policy's cooldown still holds
			// every other request back for the wait GitHub asked for.
			assert.Check(t, is.Len(env.recordedWaits(), 0))
			assert.Check(t, env.policy.Cooldown().Remaining(start) >= max(tt.wantRetryAfter, tt.wantReset))
		})
	}
}

// TestRateLimitMemoryShortCircuits shows go-github refusing further calls
// locally after a limit, and those refusals still typed as rate limits.
func TestRateLimitMemoryShortCircuits(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("POST", "repos/acme/widgets/issues/7/comments", limited(403, primaryLimitBody, "0", env.clock.Now().Add(time.Hour), ""))
	// One attempt: a limited POST is otherwise sent again after the wait.
	_, err := env.client.CreateIssueComment(reqpolicy.WithAttemptLimit(context.Background(), 1), 7, "hello")
	assert.ErrorIs(t, err, ErrRateLimited)

	// No stub: a request reaching the fake would fail the test.
	_, err = env.client.GetPullRequest(context.Background(), 7)
	assert.ErrorIs(t, err, ErrRateLimited)
	var rl *RateLimitError
	assert.Assert(t, errors.As(err, &rl))
	assert.Equal(t, rl.Kind, PrimaryRateLimit)
	assert.ErrorContains(t, err, "not making remote request")
}

func TestRateLimitWaitBeyondDeadlineFailsAtOnce(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7", limited(429, tooManyBody, "", time.Time{}, "60"))
	ctx := reqpolicy.WithDeadline(context.Background(), env.clock.Now().Add(10*time.Second))

	_, err := env.client.GetPullRequest(ctx, 7)
	assert.ErrorIs(t, err, reqpolicy.ErrWaitExceedsDeadline)
	assert.ErrorContains(t, err, "get pull request #7: ")
	assert.Check(t, is.Len(env.recordedWaits(), 0))
}

func TestPermissionDenied403IsNotARateLimit(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7", respond(http.StatusForbidden, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/pulls/pulls#get-a-pull-request"}`))
	_, err := env.client.GetPullRequest(context.Background(), 7)
	assert.ErrorContains(t, err, "403 Resource not accessible by integration")
	assert.Check(t, !errors.Is(err, ErrRateLimited))
	var apiErr *Error
	assert.Assert(t, errors.As(err, &apiErr))
	assert.Equal(t, apiErr.StatusCode, http.StatusForbidden)
	assert.Check(t, is.Len(env.recordedWaits(), 0))
}

func TestRateLimitClassifierLeavesBodyReadable(t *testing.T) {
	clock := simclock.NewVirtual(time.Unix(1_800_000_000, 0))
	classify := RateLimitClassifier(clock)
	tests := []struct {
		name        string
		status      int
		header      http.Header
		body        string
		wantVerdict reqpolicy.Verdict
		wantWait    time.Duration
	}{
		{name: "ok", status: 200, body: `{}`, wantVerdict: reqpolicy.Defer},
		{name: "server error", status: 502, body: `{}`, wantVerdict: reqpolicy.Defer},
		{name: "forbidden", status: 403, body: `{"message":"Must have admin rights"}`, wantVerdict: reqpolicy.Defer},
		{name: "forbidden, not JSON", status: 403, body: `<html>`, wantVerdict: reqpolicy.Defer},
		{name: "abuse", status: 403, body: `{"documentation_url":"https://developer.github.com/v3/#abuse-rate-limits"}`, wantVerdict: reqpolicy.Retry, wantWait: time.Minute},
		{name: "primary", status: 403, header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000100"}}, body: primaryLimitBody, wantVerdict: reqpolicy.Retry, wantWait: 100 * time.Second},
		{name: "primary, reset passed", status: 403, header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1799999000"}}, body: primaryLimitBody, wantVerdict: reqpolicy.Retry},
		{name: "429 remaining but no hints", status: 429, header: http.Header{"X-Ratelimit-Remaining": {"12"}}, body: tooManyBody, wantVerdict: reqpolicy.Retry, wantWait: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: tt.header, Body: io.NopCloser(strings.NewReader(tt.body))}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			got := classify(resp)
			assert.Equal(t, got.Verdict, tt.wantVerdict)
			assert.Equal(t, got.Wait, tt.wantWait)
			rest, err := io.ReadAll(resp.Body)
			assert.NilError(t, err)
			assert.Equal(t, string(rest), tt.body)
		})
	}
}

func FuzzRateLimitWait(f *testing.F) {
	f.Add(403, "0", "1800000100", "", primaryLimitBody)
	f.Add(403, "", "", "30", secondaryLimitBody)
	f.Add(429, "", "", "Wed, 21 Oct 2026 07:28:00 GMT", tooManyBody)
	f.Add(429, "1", "99999999999999999999", "-5", "")
	f.Fuzz(func(t *testing.T, status int, remaining, reset, retryAfter, body string) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		resp.Header.Set("X-RateLimit-Remaining", remaining)
		resp.Header.Set("X-RateLimit-Reset", reset)
		resp.Header.Set("Retry-After", retryAfter)
		wait, limited := rateLimitWait(resp, time.Unix(1_800_000_000, 0))
		if wait < 0 {
			t.Fatalf("negative wait %s", wait)
		}
		if limited && status != 403 && status != 429 {
			t.Fatalf("status %d classified as a rate limit", status)
		}
		rest, err := io.ReadAll(resp.Body)
		if err != nil || string(rest) != body {
			t.Fatalf("body not preserved: %q, %v", rest, err)
		}
	})
}

func FuzzParseRateReset(f *testing.F) {
	f.Add("1800000000")
	f.Add("-1")
	f.Add(" 42 ")
	f.Add("1e9")
	f.Fuzz(func(t *testing.T, v string) {
		reset, ok := parseRateReset(v)
		if ok && !reset.After(time.Unix(0, 0)) {
			t.Fatalf("%q parsed to non-positive time %v", v, reset)
		}
	})
}
