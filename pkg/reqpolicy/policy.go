package reqpolicy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// Defaults of a Policy built without options.
const (
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = time.Second
	DefaultMaxDelay    = 60 * time.Second
)

// Verdict is a classifier's judgement of one response.
type Verdict int

const (
	// Defer leaves the response to the policy's built-in rules.
	Defer Verdict = iota
	// Final returns the response to the caller as it is.
	Final
	// Retry treats the response as transient: back off and send again
	// (idempotent requests only).
	Retry
)

// Decision is a classifier's answer for one response.
type Decision struct {
	Verdict Verdict
	// Wait is the least pause before any request of the policy goes out
	// again; it extends the shared cooldown even when Verdict is Final.
	Wait time.Duration
}

// Classifier inspects a response before the built-in rules do, e.g. so that a
// GitHub client can treat a 403 secondary rate limit as retryable with a wait.
type Classifier func(*http.Response) Decision

// Policy is one retry, backoff and cooldown policy; every transport it builds
// shares its cooldown. It is safe for concurrent use.
type Policy struct {
	clock       Clock
	sleep       Sleeper
	jitter      func() float64
	maxAttempts int
	baseDelay   time.Duration
	maxDelay    time.Duration
	classify    Classifier
	redactor    *Redactor
	logf        func(string)
	cooldown    Cooldown
}

// Option configures a Policy.
type Option func(*Policy)

// WithClock sets the clock used for Retry-After dates, deadlines and the cooldown.
func WithClock(c Clock) Option { return func(p *Policy) { p.clock = c } }

// WithSleeper sets how the policy waits; the default honours ctx cancellation.
func WithSleeper(s Sleeper) Option { return func(p *Policy) { p.sleep = s } }

// WithJitter sets the jitter source; it must return values in [0, 1]. A backoff
// step d waits d/2 + jitter*d/2, so it never collapses to zero.
func WithJitter(j func() float64) Option { return func(p *Policy) { p.jitter = j } }

// WithMaxAttempts bounds how many times one request is sent (at least 1).
func WithMaxAttempts(n int) Option { return func(p *Policy) { p.maxAttempts = max(n, 1) } }

// WithBaseDelay sets the first backoff step; each retry doubles it.
func WithBaseDelay(d time.Duration) Option { return func(p *Policy) { p.baseDelay = d } }

// WithMaxDelay caps a backoff step; Retry-After may still ask for more.
func WithMaxDelay(d time.Duration) Option { return func(p *Policy) { p.maxDelay = d } }

// WithClassifier adds a classifier consulted before the built-in rules.
func WithClassifier(c Classifier) Option { return func(p *Policy) { p.classify = c } }

// WithRedactor shares a Redactor, so that secrets registered by one client are
// removed from every line the policy writes.
func WithRedactor(r *Redactor) Option { return func(p *Policy) { p.redactor = r } }

// WithLogger receives one line per retry, give-up or cooldown wait; the lines
// are already redacted.
func WithLogger(logf func(string)) Option { return func(p *Policy) { p.logf = logf } }

// New returns a Policy with the defaults above, changed by opts.
func New(opts ...Option) *Policy {
	p := &Policy{
		clock:       realClock{},
		sleep:       SleepContext,
		jitter:      rand.Float64,
		maxAttempts: DefaultMaxAttempts,
		baseDelay:   DefaultBaseDelay,
		maxDelay:    DefaultMaxDelay,
	}
	for _, opt := range opts {
		opt(p)
	}
	if p.redactor == nil {
		p.redactor = NewRedactor()
	}
	return p
}

// Redactor returns the policy's Redactor; clients register their secrets with it.
func (p *Policy) Redactor() *Redactor { return p.redactor }

// Cooldown returns the cooldown shared by every transport of this policy.
func (p *Policy) Cooldown() *Cooldown { return &p.cooldown }

// Now returns the policy clock's time.
func (p *Policy) Now() time.Time { return p.clock.Now() }

// Wait pauses for d, or longer while the shared cooldown lasts, and fails at
// once with a *WaitError when the pause does not fit ctx's deadline. Poll loops
// use it so their sleeps follow the same rule as retries.
func (p *Policy) Wait(ctx context.Context, d time.Duration, reason string) error {
	if cd := p.cooldown.Remaining(p.clock.Now()); cd > d {
		d, reason = cd, "shared cooldown"
	}
	return p.pause(ctx, d, reason, 0)
}

// pause sleeps d after checking that it fits ctx's deadlines (Remaining).
func (p *Policy) pause(ctx context.Context, d time.Duration, reason string, status int) error {
	if d <= 0 {
		return ctx.Err()
	}
	if remaining, ok := p.Remaining(ctx); ok && d >= remaining {
		return &WaitError{Wait: d, Remaining: max(remaining, 0), Reason: reason, Status: status}
	}
	return p.sleep(ctx, d)
}

type allowRetryKey struct{}

// AllowRetry marks ctx so that a non-idempotent request (POST, PATCH) made with
// it may be retried like a GET. Use it only where a repeat cannot create a
// second resource.
func AllowRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, allowRetryKey{}, true)
}

func retryAllowed(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPatch, "CONNECT":
		allowed, _ := req.Context().Value(allowRetryKey{}).(bool)
		return allowed
	}
	return true
}

// Transport returns the retry layer over next (http.DefaultTransport if nil).
func (p *Policy) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{policy: p, next: next}
}

type transport struct {
	policy *Policy
	next   http.RoundTripper
}

// RoundTrip sends req under the policy. A wait that does not fit the request
// context's deadline ends it with a *WaitError (without a deadline, only
// cancellation bounds a wait); an exhausted or non-retryable request returns
// its last response or error unchanged (error text redacted).
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.policy
	ctx := req.Context()
	// A body that cannot be replayed (no GetBody) makes the request single-shot.
	mayRetry := retryAllowed(req) && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
	target := req.Method + " " + p.redactor.Redact(req.URL.Redacted())

	for attempt := 1; ; attempt++ {
		if cd := p.cooldown.Remaining(p.clock.Now()); cd > 0 {
			remaining, bounded := p.Remaining(ctx)
			switch {
			case attempt == 1 && urgent(ctx) && bounded && cd >= remaining:
				p.log("%s: the shared cooldown (%s) does not fit the deadline; sent at once (urgent)", target, cd)
			default:
				if attempt == 1 { // later attempts already logged their own pause
					p.log("%s: waiting %s for the shared cooldown", target, cd)
				}
				if err := p.pause(ctx, cd, "shared cooldown", 0); err != nil {
					closeBody(req)
					return nil, err
				}
			}
		}
		out, err := prepare(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(out)

		retryable, minWait, status, what := p.judge(ctx, resp, err)
		logged := what
		if retryable && resp != nil {
			if excerpt := p.peekBody(resp); excerpt != "" {
				logged += ": " + excerpt
			}
		}
		if err != nil {
			err = &redactedError{msg: p.redactor.Redact(err.Error()), err: err}
		}
		if !retryable {
			if minWait > 0 {
				p.cooldown.Extend(p.clock.Now().Add(minWait))
			}
			return resp, err
		}

		wait := max(p.backoff(attempt), minWait)
		p.cooldown.Extend(p.clock.Now().Add(wait))
		switch {
		case !mayRetry:
			p.log("%s: %s; not retried (%s is not idempotent); cooldown %s", target, logged, req.Method, wait)
			return resp, err
		case attempt >= p.attemptsFor(ctx):
			p.log("%s: %s; giving up after %d attempts", target, logged, attempt)
			return resp, err
		}
		reason := "backoff after " + what
		if minWait > 0 && minWait >= wait {
			reason = "Retry-After after " + what
		}
		if remaining, ok := p.Remaining(ctx); ok && wait >= remaining {
			discard(resp)
			p.log("%s: %s; wait %s exceeds the remaining deadline %s", target, logged, wait, remaining.Round(time.Millisecond))
			return nil, &WaitError{Wait: wait, Remaining: max(remaining, 0), Reason: reason, Status: status}
		}
		p.log("%s: %s; retry %d/%d in %s", target, logged, attempt, p.attemptsFor(ctx)-1, wait)
		discard(resp)
		// The loop's cooldown wait performs the pause (it may have grown
		// meanwhile through another request).
	}
}

// judge decides whether one outcome is transient and how long it asks to wait.
// what names the outcome (status or redacted transport error) for logs and
// WaitError reasons.
func (p *Policy) judge(ctx context.Context, resp *http.Response, err error) (retryable bool, minWait time.Duration, status int, what string) {
	if err != nil {
		// A cancelled or expired caller is not a transient failure.
		if ctx.Err() != nil {
			return false, 0, 0, ""
		}
		return true, 0, 0, "transport error: " + p.redactor.Redact(err.Error())
	}
	status = resp.StatusCode
	what = resp.Status
	if what == "" {
		what = fmt.Sprint(status)
	}
	decision := Decision{}
	if p.classify != nil {
		decision = p.classify(resp)
	}
	switch decision.Verdict {
	case Final:
		return false, decision.Wait, status, what
	case Retry:
		retryable = true
	default:
		retryable = RetryableStatus(status)
	}
	if retryable {
		if ra, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), p.clock.Now()); ok {
			minWait = ra
		}
	}
	return retryable, max(minWait, decision.Wait), status, what
}

// RetryableStatus reports whether the built-in rules retry a status: 408, 429
// and every 5xx.
func RetryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || (code >= 500 && code <= 599)
}

// backoff returns the jittered delay after the attempt-th failure:
// base·2^(attempt-1), capped, then d/2 + jitter·d/2.
func (p *Policy) backoff(attempt int) time.Duration {
	d := p.baseDelay
	for i := 1; i < attempt && d < p.maxDelay; i++ {
		d *= 2
	}
	d = min(d, p.maxDelay)
	j := p.jitter()
	if !(j >= 0) { // also catches NaN
		j = 0
	}
	j = min(j, 1)
	return d/2 + time.Duration(j*float64(d/2))
}

func (p *Policy) log(format string, args ...any) {
	if p.logf == nil {
		return
	}
	p.logf(p.redactor.Redact(fmt.Sprintf(format, args...)))
}

// prepare returns the request to send for this attempt, with a fresh body for
// a repeat and the suite's User-Agent when the caller set none.
func prepare(req *http.Request, attempt int) (*http.Request, error) {
	out := req
	if attempt > 1 || req.Header.Get("User-Agent") == "" {
		out = req.Clone(req.Context())
	}
	if out.Header.Get("User-Agent") == "" {
		out.Header.Set("User-Agent", UserAgent())
	}
	if attempt > 1 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("replay request body: %w", err)
		}
		out.Body = body
	}
	return out, nil
}

// Limits of the body excerpt in log lines. The excerpt is redacted before it is
// cut, and far more is read than shown, so that a secret is never split into a
// shown prefix and a hidden rest.
const (
	snippetRead = 64 << 10
	snippetShow = 256
)

// peekBody returns a redacted one-line excerpt of a retryable response's body
// for the log, leaving the body readable in full for the caller.
func (p *Policy) peekBody(resp *http.Response) string {
	if resp.Body == nil || resp.Body == http.NoBody {
		return ""
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, snippetRead))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	text := strings.Join(strings.Fields(p.redactor.Redact(string(head))), " ")
	if runes := []rune(text); len(runes) > snippetShow {
		text = string(runes[:snippetShow]) + "…"
	}
	return strings.ToValidUTF8(text, "?")
}

// discard drains a little of a response that will not be returned, so the
// connection can be reused, and closes it.
func discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// closeBody closes a request body that will not be sent, as RoundTrip must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
