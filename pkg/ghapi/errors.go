package ghapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrRateLimited matches every *RateLimitError.
	ErrRateLimited = errors.New("github rate limit")
	// ErrRunnerExists matches a *RunnerExistsError: a JIT runner name is taken.
	ErrRunnerExists = errors.New("runner already exists")
	// ErrPageBound matches a *PageBoundError: a listing has more pages than allowed.
	ErrPageBound = errors.New("page bound exceeded")
	// ErrNotFound matches an *Error whose response was 404.
	ErrNotFound = errors.New("not found")
	// ErrRunCompleted matches a cancel refused with 409 because the run already completed.
	ErrRunCompleted = errors.New("workflow run already completed")
	// ErrTooLarge matches a download that exceeded Options.MaxDownloadBytes.
	ErrTooLarge = errors.New("download exceeds size bound")
	// ErrSearchCapped matches a filtered workflow-run listing whose matches exceed
	// the 1,000 results GitHub returns for one filtered search.
	ErrSearchCapped = errors.New("more results than a filtered GitHub search returns")
	// ErrUnusableAnswer matches a success answer that lacks what a decision
	// needs or describes another object (e.g. a pull request with no state).
	ErrUnusableAnswer = errors.New("unusable answer")
)

// Error is the error every Client method returns for a failed API call. Its
// message is redacted; Unwrap gives the underlying go-github, rate-limit or
// transport error.
type Error struct {
	Op         string // what the call was doing, e.g. "generate JIT config"
	StatusCode int    // HTTP status of GitHub's answer; 0 when none arrived
	Err        error

	// also is an extra sentinel this failure matches (e.g. ErrRunCompleted).
	also     error
	redactor *redact.Redactor
}

// Error returns "op: cause" with every known secret redacted.
func (e *Error) Error() string {
	return e.redactor.Redact(e.Op + ": " + e.Err.Error())
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether the failure matches target: ErrNotFound for a 404, and
// the method-specific sentinel, if any.
func (e *Error) Is(target error) bool {
	if target == ErrNotFound && e.StatusCode == http.StatusNotFound {
		return true
	}
	return e.also != nil && target == e.also
}

// RateLimitKind says which GitHub limit refused a request.
type RateLimitKind int

// The kinds of GitHub rate limit.
const (
	// PrimaryRateLimit is a 403 with X-RateLimit-Remaining: 0.
	PrimaryRateLimit RateLimitKind = iota + 1
	// SecondaryRateLimit is a 403 whose documentation_url names secondary (abuse) limits.
	SecondaryRateLimit
	// TooManyRequests is a 429, which GitHub documents for both limits.
	TooManyRequests
)

// String names the kind, e.g. "secondary rate limit".
func (k RateLimitKind) String() string {
	switch k {
	case PrimaryRateLimit:
		return "primary rate limit"
	case SecondaryRateLimit:
		return "secondary rate limit"
	case TooManyRequests:
		return "too many requests"
	}
	return "rate limit kind " + strconv.Itoa(int(k))
}

// RateLimitError reports a request GitHub refused for rate limiting (or that
// go-github refused locally because an earlier one was, until its reset).
type RateLimitError struct {
	Kind RateLimitKind
	// RetryAfter is GitHub's Retry-After (or go-github's remaining wait); 0 when not given.
	RetryAfter time.Duration
	// Reset is when the limit resets (X-RateLimit-Reset); zero when not given.
	Reset   time.Time
	Message string // GitHub's message
	Err     error  // the go-github error this was read from
}

// Error names the kind, GitHub's message and any wait GitHub gave.
func (e *RateLimitError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if !e.Reset.IsZero() {
		fmt.Fprintf(&b, " (resets at %s)", e.Reset.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Is reports whether target is ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap returns the go-github error.
func (e *RateLimitError) Unwrap() error { return e.Err }

// WaitFrom returns how long to wait, from now, before calling GitHub again:
// the longer of RetryAfter and the time left until Reset. Zero means GitHub
// gave no hint; back off on your own schedule.
func (e *RateLimitError) WaitFrom(now time.Time) time.Duration {
	wait := e.RetryAfter
	if !e.Reset.IsZero() {
		if untilReset := e.Reset.Sub(now); untilReset > wait {
			wait = untilReset
		}
	}
	return max(wait, 0)
}

// RunnerExistsError reports a JIT mint refused with 409 because a runner of
// that name exists. Runner is the existing runner, nil when the follow-up
// lookup found none (it was removed meanwhile) or failed (LookupErr).
type RunnerExistsError struct {
	Name      string
	Runner    *github.Runner
	LookupErr error
}

// Error names the runner and what the lookup found.
func (e *RunnerExistsError) Error() string {
	msg := fmt.Sprintf("runner %q already exists", e.Name)
	switch {
	case e.Runner != nil:
		msg += fmt.Sprintf(" (id %d, status %s, busy %t)", e.Runner.GetID(), e.Runner.GetStatus(), e.Runner.GetBusy())
	case e.LookupErr != nil:
		msg += " (looking it up failed: " + e.LookupErr.Error() + ")"
	default:
		msg += " (not found by name afterwards)"
	}
	return msg
}

// Is reports whether target is ErrRunnerExists.
func (e *RunnerExistsError) Is(target error) bool { return target == ErrRunnerExists }

// Unwrap returns the lookup error, if any.
func (e *RunnerExistsError) Unwrap() error { return e.LookupErr }

// PageBoundError reports a listing that still had pages after MaxPages.
type PageBoundError struct {
	What     string // what was being listed
	MaxPages int
}

// Error names the listing and the bound.
func (e *PageBoundError) Error() string {
	return fmt.Sprintf("%s: more than %d pages", e.What, e.MaxPages)
}

// Is reports whether target is ErrPageBound.
func (e *PageBoundError) Is(target error) bool { return target == ErrPageBound }

// classifyRateLimit returns err as a *RateLimitError when go-github reports a
// rate limit (including the 429 it leaves as a plain ErrorResponse), else nil.
func classifyRateLimit(err error, now time.Time) *RateLimitError {
	var primary *github.RateLimitError
	if errors.As(err, &primary) {
		return &RateLimitError{Kind: PrimaryRateLimit, Reset: primary.Rate.Reset.Time, Message: primary.Message, Err: err}
	}
	var secondary *github.AbuseRateLimitError
	if errors.As(err, &secondary) {
		rl := &RateLimitError{Kind: SecondaryRateLimit, Message: secondary.Message, Err: err}
		if secondary.RetryAfter != nil {
			rl.RetryAfter = max(*secondary.RetryAfter, 0)
		}
		return rl
	}
	var resp *github.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil && resp.Response.StatusCode == http.StatusTooManyRequests {
		rl := &RateLimitError{Kind: TooManyRequests, Message: resp.Message, Err: err}
		if d, ok := reqpolicy.ParseRetryAfter(resp.Response.Header.Get("Retry-After"), now); ok {
			rl.RetryAfter = d
		}
		if t, ok := parseRateReset(resp.Response.Header.Get("X-RateLimit-Reset")); ok {
			rl.Reset = t
		}
		return rl
	}
	return nil
}

// statusOf returns the HTTP status behind a go-github error, or 0.
func statusOf(err error) int {
	var primary *github.RateLimitError
	if errors.As(err, &primary) && primary.Response != nil {
		return primary.Response.StatusCode
	}
	var secondary *github.AbuseRateLimitError
	if errors.As(err, &secondary) && secondary.Response != nil {
		return secondary.Response.StatusCode
	}
	var resp *github.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		return resp.Response.StatusCode
	}
	return 0
}

// parseRateReset reads X-RateLimit-Reset: UTC epoch seconds.
func parseRateReset(v string) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 || secs > 1<<40 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}
