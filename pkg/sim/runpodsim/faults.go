package runpodsim

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Faults is a scenario's declarative fault plan. Every decision is a function
// of the Server's seed and of counts (the n-th matching request, the n-th
// created pod), so the same seed and the same calls give the same faults.
type Faults struct {
	// RateLimits answer 429 problem+json with Retry-After before the request is handled.
	RateLimits []RateLimitFault
	// ServerErrors answer 5xx before the request is handled (nothing changes).
	ServerErrors []ServerErrorFault
	// Slow responses let time pass before the request is handled: on a
	// simclock.Virtual the clock advances, on a real clock the handler waits.
	Slow []SlowFault
	// LostCreates apply a pod create and then lose its answer.
	LostCreates []LostCreateFault
	// DeleteFailures makes DELETE (and the terminate action) of every pod fail
	// with this status for its first FailFirst attempts; the pod keeps running.
	DeleteFailures DeleteFault
	// ListingDelay hides pods younger than this from GET /v2/pods (eventual
	// listing); GET /v2/pods/{id} sees them at once.
	ListingDelay time.Duration
	// DieDuringBoot selects created pods (counted from 1) whose first boot ends in
	// ERROR halfway through STARTING, whatever their host.
	DieDuringBoot Trigger
	// LoseRuntime selects created pods whose runtime turns null RuntimeLostAfter
	// after their container starts, while they stay RUNNING.
	LoseRuntime      Trigger
	RuntimeLostAfter time.Duration
	// Rewrites replace the answer of handled requests (the request takes
	// effect) with another body: a wrong-but-valid answer, a missing field, a
	// truncated or non-JSON body, as a faulty edge or API would send.
	Rewrites []RewriteFault
	// StockChanges take a data center's free GPUs away after the requests
	// they hit are answered (see stock.go): stock that changes between an
	// offer and the create.
	StockChanges []StockChange
}

// Match selects requests by their route: "METHOD /path/pattern" as the
// simulator routes them, e.g. "POST /v2/pods", "GET /v2/pods/{id}",
// "DELETE /v2/pods/{id}", "GET /v2/catalog/gpus". "" matches every request.
type Match struct {
	Route string
}

func (m Match) matches(route string) bool { return m.Route == "" || m.Route == route }

// Trigger picks which of the matching events (counted from 1) a fault hits.
// The conditions add up: an event is hit if any of them holds.
type Trigger struct {
	First int     // the first First events
	Every int     // every Every-th event (Every, 2×Every, …)
	Nth   []int   // these events
	Rate  float64 // each event with this probability, drawn from the seed
}

func (t Trigger) zero() bool { return t.First == 0 && t.Every == 0 && len(t.Nth) == 0 && t.Rate == 0 }

// hits reports whether event n (from 1) is hit; stream separates the draws of
// different faults so adding one fault does not reshuffle another.
func (t Trigger) hits(seed uint64, stream uint64, n int) bool {
	switch {
	case n <= t.First, t.Every > 0 && n%t.Every == 0, slices.Contains(t.Nth, n):
		return true
	case t.Rate > 0:
		return rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, stream<<32|uint64(n))).Float64() < t.Rate
	}
	return false
}

// RateLimitFault answers 429 to the requests it hits.
type RateLimitFault struct {
	Match
	When Trigger
	// RetryAfter is the Retry-After value, whole seconds (default 1 s).
	RetryAfter time.Duration
	// AsHTTPDate sends Retry-After as an HTTP date (now + RetryAfter) instead of seconds.
	AsHTTPDate bool
}

// ServerErrorFault answers a 5xx to the requests it hits.
type ServerErrorFault struct {
	Match
	When   Trigger
	Status int // default 500
	// RetryAfter, when set, is sent as Retry-After (whole seconds), as a 503
	// of a service pausing its clients does.
	RetryAfter time.Duration
}

// SlowFault delays the requests it hits by Delay.
type SlowFault struct {
	Match
	When  Trigger
	Delay time.Duration
}

// LostCreateFault selects creates (counted from 1 over POST /v2/pods requests
// that got as far as creating a pod) whose pod is created but whose answer is
// lost: a 5xx (Status, default 502), or with DropConnection the connection is
// closed without a response.
type LostCreateFault struct {
	When           Trigger
	Status         int
	DropConnection bool
	// RetryAfter, when set, is sent as Retry-After (whole seconds) with the 5xx.
	RetryAfter time.Duration
}

// RewriteFault rewrites the answers it hits after the request was handled.
// Body receives the status and JSON body the simulator would have sent and
// returns the body to send instead (sent as is, with the same Content-Type);
// Status, when set, replaces the status.
type RewriteFault struct {
	Match
	When   Trigger
	Status int
	Body   func(status int, body []byte) []byte
}

// DeleteFault makes deletion fail for a while.
type DeleteFault struct {
	FailFirst int // failing attempts per pod
	Status    int // default 500
}

// Fault streams: one per kind and index, so each fault draws independently.
const (
	streamRateLimit = iota + 1
	streamServerError
	streamSlow
	streamLostCreate
	streamDieDuringBoot
	streamLoseRuntime
	streamPlacement
	streamPodID
	streamRewrite
)

func stream(kind, index int) uint64 { return uint64(kind)<<16 | uint64(index) }
