package githubsim

import (
	"errors"
	"net/http"
	"path"
	"strconv"
	"time"
)

// FaultKind is the kind of failure a Fault injects.
type FaultKind int

const (
	// FaultTooManyRequests answers 429 with Retry-After.
	FaultTooManyRequests FaultKind = iota + 1
	// FaultPrimaryRateLimit answers 403 with X-RateLimit-Remaining: 0 and a reset time
	// (go-github's *RateLimitError).
	FaultPrimaryRateLimit
	// FaultSecondaryRateLimit answers 403 whose documentation_url ends in
	// secondary-rate-limits, with Retry-After (go-github's *AbuseRateLimitError).
	FaultSecondaryRateLimit
	// FaultServerError answers a 5xx (Status, default 500).
	FaultServerError
)

// Fault is a rule that makes matching requests fail before they reach the simulation, so the
// failed request changes no state.
type Fault struct {
	Kind FaultKind
	// Method matches the request method; empty matches any.
	Method string
	// Path matches the URL path in path.Match syntax ("/repos/*/*/check-runs"); empty matches any.
	Path string
	// Skip lets this many matching requests through before the rule starts failing them.
	Skip int
	// Times is how many requests the rule fails; 0 means every matching request.
	Times int
	// Probability, when strictly between 0 and 1, fails each eligible request with that
	// chance, drawn from the seeded fault stream; otherwise every eligible request fails.
	Probability float64
	// Status is the 5xx of FaultServerError (default 500).
	Status int
	// RetryAfter is the wait the answer asks for (default one minute); for a primary rate
	// limit it sets the reset time.
	RetryAfter time.Duration
}

type faultRule struct {
	Fault
	ruleCount
}

// ruleCount is what a fault or rewrite rule has counted: the requests it
// matched and those it acted on, for its Skip and Times.
type ruleCount struct{ seen, acted int }

// eligible reports whether a rule of method, path pattern, skip and times may
// act on r, counting r when it matches; the caller counts the act.
func (n *ruleCount) eligible(r *http.Request, method, pattern string, skip, times int) bool {
	if method != "" && method != r.Method {
		return false
	}
	if ok, _ := path.Match(pattern, r.URL.Path); pattern != "" && !ok {
		return false
	}
	n.seen++
	return n.seen > skip && (times <= 0 || n.acted < times)
}

// AddFault installs a fault rule; rules are tried in the order they were added.
func (s *Server) AddFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{Fault: f})
}

// ClearFaults removes every fault rule.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// injectFault answers c with the first fault rule that fires, reporting whether one did.
func (s *Server) injectFault(c *call) bool {
	for _, f := range s.faults {
		if !f.eligible(c.r, f.Method, f.Path, f.Skip, f.Times) {
			continue
		}
		if f.Probability > 0 && f.Probability < 1 && s.faultRand.Float64() >= f.Probability {
			continue
		}
		f.acted++
		c.fail(f.answer(c))
		return true
	}
	return false
}

func (f *faultRule) answer(c *call) *Error {
	wait := f.RetryAfter
	if wait <= 0 {
		wait = time.Minute
	}
	seconds := strconv.Itoa(int((wait + time.Second - 1) / time.Second))
	switch f.Kind {
	case FaultTooManyRequests:
		c.header.Set("Retry-After", seconds)
		return newError(http.StatusTooManyRequests, errRateLimited, "API rate limit exceeded")
	case FaultPrimaryRateLimit:
		setRateHeaders(c, 5000, 0, c.now.Add(wait))
		e := newError(http.StatusForbidden, errRateLimited, "API rate limit exceeded for installation.")
		e.docURL = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"
		return e
	case FaultSecondaryRateLimit:
		c.header.Set("Retry-After", seconds)
		e := newError(http.StatusForbidden, errRateLimited, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
		e.docURL = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
		return e
	default:
		status := f.Status
		if status < 500 || status > 599 {
			status = http.StatusInternalServerError
		}
		return newError(status, errInjected, "Server Error")
	}
}

// Kinds of the answers faults inject; callers see only the HTTP status.
var (
	errInjected    = errors.New("injected server error")
	errRateLimited = errors.New("rate limited")
)
