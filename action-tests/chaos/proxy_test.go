package chaos

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// chaosFault is what the fault proxy does to one request.
type chaosFault int

const (
	faultNone          chaosFault = iota
	fault429Seconds               // 429, Retry-After in seconds (small)
	fault429SecondsBig            // 429, Retry-After an hour: a client must give up at its deadline, not sleep
	fault429Date                  // 429, Retry-After as an HTTP date (small)
	fault429DateBig               // 429, Retry-After as an HTTP date an hour ahead
	fault408                      // 408 Request Timeout, nothing done
	fault5xx                      // 500/502/503/504, nothing done
	faultDropBefore               // the connection is closed before the request reaches the service
	faultDropAfter                // the request takes effect, then the connection is closed unanswered
	faultSlow                     // the answer comes late (the request takes effect)
	faultTruncated                // the request takes effect; the body is cut in half (well framed)
	faultCut                      // the request takes effect; the connection ends mid-body
	faultNotJSON                  // the request takes effect; a 200 HTML page answers
	numChaosFaults
)

var chaosFaultNames = [...]string{"none", "429-seconds", "429-seconds-huge", "429-date", "429-date-huge", "408", "5xx",
	"drop-before", "drop-after", "slow", "truncated", "cut", "not-json"}

func (f chaosFault) String() string { return chaosFaultNames[f] }

// chaosWindow is an outage: every request between From and To after the
// proxy started is answered 503 (or dropped).
type chaosWindow struct {
	From, To time.Duration
	Drop     bool
}

// chaosProxyPlan is the part of a schedule one proxy applies.
type chaosProxyPlan struct {
	Rate   float64      // probability that a request is hit
	Kinds  []chaosFault // the kinds a hit draws from
	Outage *chaosWindow
	Slow   time.Duration // the delay of faultSlow
	// Only, when set, limits the faults to requests whose "METHOD /path" starts with it.
	Only string
}

func (p chaosProxyPlan) String() string {
	var kinds []string
	for _, k := range p.Kinds {
		kinds = append(kinds, k.String())
	}
	s := fmt.Sprintf("rate %.2f of [%s]", p.Rate, strings.Join(kinds, " "))
	if p.Only != "" {
		s += " on " + p.Only
	}
	if p.Outage != nil {
		s += fmt.Sprintf(", outage %s–%s (drop %t)", p.Outage.From, p.Outage.To, p.Outage.Drop)
	}
	return s
}

// chaosProxy stands between the actions and one simulated service and
// breaks requests the way networks, edges and overloaded APIs do. Each
// decision is a function of the seed, the service, the request's route and
// how many requests of that route came before, so a sequential run replays
// the same faults; concurrent steps can interleave differently.
type chaosProxy struct {
	name   string
	target string
	seed   uint64
	plan   chaosProxyPlan
	start  time.Time
	server *httptest.Server
	off    atomic.Bool

	mu     sync.Mutex
	counts map[string]int
	log    []string // what was injected, for the failure report
}

// chaosIDRE finds the variable parts of a path (pod ids, numbers) so the
// route key groups requests by kind.
var chaosIDRE = regexp.MustCompile(`/[a-z0-9]{14}(/|$)|/\d+(/|$)`)

func startChaosProxy(name, target string, seed uint64, plan chaosProxyPlan) *chaosProxy {
	p := &chaosProxy{name: name, target: strings.TrimRight(target, "/"), seed: seed, plan: plan, start: time.Now(), counts: map[string]int{}}
	p.server = httptest.NewServer(p)
	return p
}

func (p *chaosProxy) URL() string { return p.server.URL }

func (p *chaosProxy) Close() { p.server.Close() }

// disable lets every later request through untouched (a calm sweep).
func (p *chaosProxy) disable() { p.off.Store(true) }

func (p *chaosProxy) injected() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// decide draws the fault for r and a variant (which 5xx).
func (p *chaosProxy) decide(r *http.Request) (chaosFault, int) {
	if p.off.Load() {
		return faultNone, 0
	}
	key := r.Method + " " + chaosIDRE.ReplaceAllString(r.URL.Path, "/*$1$2")
	p.mu.Lock()
	defer p.mu.Unlock()
	since := time.Since(p.start)
	if w := p.plan.Outage; w != nil && since >= w.From && since < w.To {
		p.log = append(p.log, fmt.Sprintf("%s +%s %s: outage", p.name, since.Round(time.Millisecond), key))
		if w.Drop {
			return faultDropBefore, 0
		}
		return fault5xx, 3
	}
	p.counts[key]++
	if p.plan.Rate <= 0 || len(p.plan.Kinds) == 0 || !strings.HasPrefix(key, p.plan.Only) {
		return faultNone, 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%d", p.name, key, p.counts[key])
	rng := rand.New(rand.NewPCG(p.seed, h.Sum64()))
	if rng.Float64() >= p.plan.Rate {
		return faultNone, 0
	}
	f := p.plan.Kinds[rng.IntN(len(p.plan.Kinds))]
	p.log = append(p.log, fmt.Sprintf("%s +%s %s #%d: %s", p.name, since.Round(time.Millisecond), key, p.counts[key], f))
	return f, rng.IntN(4)
}

func (p *chaosProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, variant := p.decide(r)
	switch f {
	case fault429Seconds, fault429SecondsBig, fault429Date, fault429DateBig:
		wait := 1 * time.Second
		if f == fault429SecondsBig || f == fault429DateBig {
			wait = time.Hour
		}
		if f == fault429Date || f == fault429DateBig {
			w.Header().Set("Retry-After", time.Now().Add(wait+time.Second).UTC().Format(http.TimeFormat))
		} else {
			w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())))
		}
		p.errorBody(w, http.StatusTooManyRequests, "rate limited")
		return
	case fault408:
		p.errorBody(w, http.StatusRequestTimeout, "request timeout")
		return
	case fault5xx:
		statuses := []int{500, 502, 503, 504}
		p.errorBody(w, statuses[variant%len(statuses)], "upstream unavailable")
		return
	case faultDropBefore:
		drop(w)
		return
	}

	status, header, body, err := p.forward(r)
	if err != nil {
		p.errorBody(w, http.StatusBadGateway, "proxy: "+err.Error())
		return
	}
	switch f {
	case faultDropAfter:
		drop(w)
		return
	case faultSlow:
		time.Sleep(p.plan.Slow) // the injected fault itself: a late answer
	case faultNotJSON:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1>cloudflare</body></html>")
		return
	}
	for k, vs := range header {
		if strings.EqualFold(k, "Content-Length") {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch f {
	case faultTruncated:
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2])
	case faultCut:
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2]) // the server closes the connection short of the declared length
	default:
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func (p *chaosProxy) errorBody(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if p.name == "github" {
		fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, msg)
		return
	}
	fmt.Fprintf(w, `{"error":%q,"status":%d}`, msg, status)
}

// forward sends r to the service and reads the whole answer.
func (p *chaosProxy) forward(r *http.Request) (int, http.Header, []byte, error) {
	in, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(in))
	if err != nil {
		return 0, nil, nil, err
	}
	out.Header = r.Header.Clone()
	// The service answers even if the client has gone: a request that reached it takes effect.
	// A pod's log stream is read whole, as an edge that buffers would: its
	// client gives up and polls, and then the stream upstream ends with it.
	if !strings.HasSuffix(r.URL.Path, "/logs") {
		out = out.WithContext(context.WithoutCancel(r.Context()))
	}
	resp, err := chaosUpstream.Do(out)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body, err
}

// chaosUpstream passes redirects back to the client, as a transparent proxy does.
var chaosUpstream = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// drop closes the client's connection without an answer.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("chaos proxy: the test server does not support hijacking")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
