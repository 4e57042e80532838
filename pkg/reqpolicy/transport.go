package reqpolicy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/org/runpod-gpu/pkg/version"
)

// Transport returns the retry layer over next (http.DefaultTransport if nil).
// Its retry loop is go-retryablehttp's Client.Do; the policy plugs into the
// library's hooks what the library does not do itself: the shared cooldown,
// waits on the policy's (possibly virtual) clock that must fit the caller's
// deadline, the classifier, per-request attempt limits and redaction.
func (p *Policy) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{policy: p, wire: &http.Client{
		// The client only carries one attempt to next: http.Client layers
		// above this one follow redirects (and decide which to follow).
		Transport:     roundTripperFunc(next.RoundTrip),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// roundTripperFunc hides every method of a transport but RoundTrip: the
// library closes its HTTP client's idle connections whenever it gives up,
// which would reach into the pool of a transport other clients share.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type transport struct {
	policy *Policy
	wire   *http.Client
}

// RoundTrip sends req under the policy. A wait that does not fit the request
// context's deadline ends it with a *WaitError (without a deadline, only
// cancellation bounds a wait); an exhausted or non-retryable request returns
// its last response or error unchanged (error text redacted).
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.policy
	ctx := req.Context()
	r := &exchange{
		policy:     p,
		ctx:        ctx,
		method:     req.Method,
		target:     req.Method + " " + p.redactor.Redact(req.URL.Redacted()),
		idempotent: retryAllowed(req),
		// A body that cannot be replayed (no GetBody) makes the request single-shot.
		replayable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil,
		limit:      p.attemptsFor(ctx),
	}
	// The library has no hook before the first attempt; later attempts wait
	// in PrepareRetry.
	if err := r.awaitCooldown(true); err != nil {
		closeBody(req)
		return nil, err
	}
	client := &retryablehttp.Client{
		HTTPClient: t.wire,
		// Logger stays nil: the policy writes its own, redacted lines.
		RetryMax:     r.limit - 1,
		CheckRetry:   r.checkRetry,
		Backoff:      noLibraryWait,
		PrepareRetry: r.prepareRetry,
		ErrorHandler: r.giveUp,
	}
	// No body reader for the library: it would read the whole body up front
	// (FromRequest) and replace it on the first attempt. The first attempt
	// sends the caller's body; PrepareRetry replays it through GetBody.
	return client.Do(&retryablehttp.Request{Request: withUserAgent(req)})
}

// noLibraryWait is the library's Backoff: the library's own pause is a real
// timer, so it waits nothing and the policy pauses in PrepareRetry instead,
// through its Sleeper on its clock, after checking the pause fits the deadline.
func noLibraryWait(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 }

// exchange is the policy's state for one RoundTrip, which the library's hooks
// share.
type exchange struct {
	policy     *Policy
	ctx        context.Context
	method     string
	target     string // method and redacted URL, for log lines
	idempotent bool   // a repeat cannot act twice (retryAllowed)
	replayable bool   // the body can be sent again
	limit      int    // wire attempts allowed (attemptsFor)
	attempt    int    // attempts judged so far
}

// awaitCooldown waits out the shared cooldown before an attempt. Only the
// first attempt logs the wait (a retry logged its own pause) and may go out
// at once when Urgent.
func (r *exchange) awaitCooldown(first bool) error {
	p := r.policy
	cd := p.cooldown.Remaining(p.clock.Now())
	if cd <= 0 {
		return nil
	}
	if first {
		if remaining, bounded := p.Remaining(r.ctx); urgent(r.ctx) && bounded && cd >= remaining {
			p.log("%s: the shared cooldown (%s) does not fit the deadline; sent at once (urgent)", r.target, cd)
			return nil
		}
		p.log("%s: waiting %s for the shared cooldown", r.target, cd)
	}
	return p.pause(r.ctx, cd, "shared cooldown", 0)
}

// checkRetry is the library's CheckRetry. It judges one outcome by the
// policy's rules, moves the shared cooldown, and refuses a retry whose pause
// does not fit the deadline with a *WaitError. Its error replaces the
// request's (the library's contract), which keeps transport errors redacted.
// On the last allowed attempt it answers true and the library's RetryMax ends
// the loop, handing the outcome to giveUp.
func (r *exchange) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	p := r.policy
	r.attempt++
	if uerr, ok := err.(*url.Error); ok {
		// Added by the library's http.Client; the layers above add their own.
		err = uerr.Err
	}
	retryable, minWait, status, what, unprocessed := p.judge(ctx, resp, err)
	shared := !optional(ctx) // an Optional request's answers move nothing shared
	if shared {
		p.observeReserve(resp) // reserve.go: every answer's rate-limit headers, success or not
	}
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
		if minWait > 0 && shared {
			p.cooldown.Extend(p.clock.Now().Add(minWait))
		}
		return false, err
	}

	wait := max(p.backoff(r.attempt), minWait)
	if shared {
		p.cooldown.Extend(p.clock.Now().Add(wait))
	}
	switch {
	case !r.replayable:
		p.log("%s: %s; not retried (the request body cannot be replayed); cooldown %s", r.target, logged, wait)
		return false, err
	case !r.idempotent && !unprocessed:
		// A 429 (or a limit the classifier names, such as GitHub's 403
		// secondary limit) says the request was refused unprocessed (a rate
		// limit acts before the handler), so even a create may be sent again;
		// after any other failure it may have acted, and only the caller can
		// find out (e.g. by name).
		p.log("%s: %s; not retried (%s is not idempotent); cooldown %s", r.target, logged, r.method, wait)
		return false, err
	case r.attempt >= r.limit:
		p.log("%s: %s; giving up after %d attempts", r.target, logged, r.attempt)
		return true, err
	}
	reason := "backoff after " + what
	if minWait > 0 && minWait >= wait {
		reason = "Retry-After after " + what
	}
	if remaining, ok := p.Remaining(ctx); ok && wait >= remaining {
		p.log("%s: %s; wait %s exceeds the remaining deadline %s", r.target, logged, wait, remaining.Round(time.Millisecond))
		return false, &WaitError{Wait: wait, Remaining: max(remaining, 0), Reason: reason, Status: status}
	}
	p.log("%s: %s; retry %d/%d in %s", r.target, logged, r.attempt, r.limit-1, wait)
	return true, err
}

// prepareRetry is the library's PrepareRetry: the pause before a retry (the
// cooldown, which checkRetry extended by this retry's wait and other requests
// may have extended further), then a fresh copy of the body.
func (r *exchange) prepareRetry(req *http.Request) error {
	if err := r.awaitCooldown(false); err != nil {
		return err
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return fmt.Errorf("replay request body: %w", err)
		}
		req.Body = body
	}
	return nil
}

// giveUp is the library's ErrorHandler, called when the loop ends without
// success. The caller gets the last response unchanged (status and body) when
// there is no error, and otherwise only the error: the library's own
// PassthroughErrorHandler would return a response and an error together,
// which http.Client drops with a warning.
func (r *exchange) giveUp(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil {
		discard(resp)
		return nil, err
	}
	return resp, nil
}

// judge decides whether one outcome is transient and how long it asks to wait.
// what names the outcome (status or redacted transport error) for logs and
// WaitError reasons; unprocessed, that the request certainly did not act (a
// 429, or what the classifier says was refused before it was handled).
func (p *Policy) judge(ctx context.Context, resp *http.Response, err error) (retryable bool, minWait time.Duration, status int, what string, unprocessed bool) {
	if err != nil {
		// A cancelled or expired caller is not a transient failure.
		if ctx.Err() != nil {
			return false, 0, 0, "", false
		}
		return true, 0, 0, "transport error: " + p.redactor.Redact(err.Error()), false
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
	unprocessed = status == http.StatusTooManyRequests || decision.Unprocessed
	switch decision.Verdict {
	case Final:
		return false, decision.Wait, status, what, unprocessed
	case Retry:
		retryable = true
	default:
		retryable = RetryableStatus(status)
	}
	if retryable {
		// Not the library's parser: it reads only 429/503, only RFC 1123
		// dates, and measures them on the wall clock.
		if ra, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), p.clock.Now()); ok {
			minWait = ra
		}
	}
	return retryable, max(minWait, decision.Wait), status, what, unprocessed
}

// RetryableStatus reports whether the built-in rules retry a status: 408, 429
// and every 5xx.
func RetryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || (code >= 500 && code <= 599)
}

// backoff returns the jittered delay after the attempt-th failure: the
// library's exponential step base·2^(attempt-1) capped at maxDelay, then
// d/2 + jitter·d/2 (the library's jittered backoffs are linear and draw from
// their own random source, which tests cannot pin).
func (p *Policy) backoff(attempt int) time.Duration {
	d := retryablehttp.DefaultBackoff(p.baseDelay, p.maxDelay, attempt-1, nil)
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

// withUserAgent returns req, or a copy carrying the suite's User-Agent when
// the caller set none.
func withUserAgent(req *http.Request) *http.Request {
	if req.Header.Get("User-Agent") != "" {
		return req
	}
	out := req.Clone(req.Context())
	out.Header.Set("User-Agent", version.UserAgent())
	return out
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
