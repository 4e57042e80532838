package reqpolicy

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/redact"
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
	// Unprocessed says the server refused the request before acting on it
	// (a rate limit), so a Retry may send even a create again, as after a 429.
	Unprocessed bool
}

// Classifier inspects a response before the built-in rules do, e.g. so that a
// GitHub client can treat a 403 secondary rate limit as retryable with a wait.
type Classifier func(*http.Response) Decision

// Policy is one retry, backoff and cooldown policy; every transport it builds
// shares its cooldown. It is safe for concurrent use.
type Policy struct {
	clock       clock.Clock
	sleep       clock.Sleeper
	jitter      func() float64
	maxAttempts int
	baseDelay   time.Duration
	maxDelay    time.Duration
	classify    Classifier
	redactor    *redact.Redactor
	logf        func(string)
	cooldown    Cooldown
	reserve     *reserve // WithReserve; nil keeps none
}

// Option configures a Policy.
type Option func(*Policy)

// WithClock sets the clock used for Retry-After dates, deadlines and the cooldown.
func WithClock(c clock.Clock) Option { return func(p *Policy) { p.clock = c } }

// WithSleeper sets how the policy waits; the default honours ctx cancellation.
func WithSleeper(s clock.Sleeper) Option { return func(p *Policy) { p.sleep = s } }

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
func WithRedactor(r *redact.Redactor) Option { return func(p *Policy) { p.redactor = r } }

// WithLogger receives one line per retry, give-up or cooldown wait; the lines
// are already redacted.
func WithLogger(logf func(string)) Option { return func(p *Policy) { p.logf = logf } }

// New returns a Policy with the defaults above, changed by opts.
func New(opts ...Option) *Policy {
	p := &Policy{
		clock:       clock.Wall{},
		sleep:       clock.SleepContext,
		jitter:      rand.Float64,
		maxAttempts: DefaultMaxAttempts,
		baseDelay:   DefaultBaseDelay,
		maxDelay:    DefaultMaxDelay,
	}
	for _, opt := range opts {
		opt(p)
	}
	if p.redactor == nil {
		p.redactor = redact.NewRedactor()
	}
	return p
}

// Redactor returns the policy's Redactor; clients register their secrets with it.
func (p *Policy) Redactor() *redact.Redactor { return p.redactor }

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

// AllowRetry marks ctx so that a non-idempotent request (POST, PATCH) made with
// it may be retried like a GET after any transient failure, not only after a
// 429. Use it only where a repeat cannot create a second resource.
func AllowRetry(ctx context.Context) context.Context {
	return markAllowRetry.on(ctx)
}

func retryAllowed(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPatch, "CONNECT":
		return markAllowRetry.in(req.Context())
	}
	return true
}
