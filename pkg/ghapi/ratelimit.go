package ghapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// secondaryLimitWait is GitHub's advice when a secondary limit names no
// wait: "wait for at least one minute before retrying".
const secondaryLimitWait = time.Minute

// maxErrorPeek bounds how much of a 403 body the classifier reads.
const maxErrorPeek = 16 << 10

// RateLimitClassifier returns a reqpolicy.Classifier for GitHub responses,
// reading the time from clock. It marks as retryable, with the least wait
// GitHub asks for:
//   - a primary limit (403 or 429 with X-RateLimit-Remaining: 0): until X-RateLimit-Reset;
//   - a secondary limit (403 whose documentation_url names secondary or abuse
//     limits, or any other 429): Retry-After, else until the reset when
//     nothing remains, else one minute.
//
// A limit refuses the request before GitHub acts on it, so even a create
// POST (a runner's JIT config, a check run) is sent again after the wait.
// Everything else is left to the policy's built-in rules.
func RateLimitClassifier(c clock.Clock) reqpolicy.Classifier {
	return func(resp *http.Response) reqpolicy.Decision {
		wait, limited := rateLimitWait(resp, c.Now())
		if !limited {
			return reqpolicy.Decision{Verdict: reqpolicy.Defer}
		}
		return reqpolicy.Decision{Verdict: reqpolicy.Retry, Wait: wait, Unprocessed: true}
	}
}

// defaultPolicy is the Policy used when Options.Policy is nil.
func defaultPolicy() *reqpolicy.Policy {
	var p *reqpolicy.Policy
	p = reqpolicy.New(reqpolicy.WithClassifier(RateLimitClassifier(clock.Func(func() time.Time { return p.Now() }))))
	return p
}

// rateLimitWait reports whether resp is a GitHub rate limit and the least
// wait before the next request. It leaves resp.Body readable in full.
func rateLimitWait(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	var primary, secondary bool
	exhausted := resp.Header.Get("X-RateLimit-Remaining") == "0"
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		primary, secondary = exhausted, !exhausted
	case http.StatusForbidden:
		// A 403 is a limit only when GitHub says so; otherwise it is a
		// permission problem that no wait will fix.
		primary = exhausted
		secondary = !primary && isSecondaryLimitBody(resp)
	}
	if !primary && !secondary {
		return 0, false
	}
	if wait, ok := reqpolicy.ParseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
		return wait, true
	}
	if reset, ok := parseRateReset(resp.Header.Get("X-RateLimit-Reset")); ok && exhausted {
		return max(reset.Sub(now), 0), true
	}
	if secondary {
		return secondaryLimitWait, true
	}
	return 0, true
}

// isSecondaryLimitBody reports whether an error body's documentation_url
// names secondary (formerly abuse) rate limits, as go-github checks. The
// bytes read are put back in front of the rest of the body.
func isSecondaryLimitBody(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorPeek))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	var body struct {
		DocumentationURL string `json:"documentation_url"`
	}
	if json.Unmarshal(head, &body) != nil {
		return false
	}
	return strings.HasSuffix(body.DocumentationURL, "secondary-rate-limits") ||
		strings.HasSuffix(body.DocumentationURL, "#abuse-rate-limits")
}
