package runpodsim

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/contract"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Epoch is where a default virtual clock starts.
var Epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// maxBody bounds request bodies; the real API's limit is not documented.
const maxBody = 1 << 20

// Server is a simulated RunPod REST v2 API: an http.Handler with in-memory
// state. Safe for concurrent use.
type Server struct {
	cfg       config
	validator *contract.Validator
	mux       *http.ServeMux

	mu          sync.Mutex
	market      *market
	pods        []*pod // creation order
	podByID     map[string]*pod
	requests    []RequestRecord
	faultHits   map[uint64]int // matching requests so far, per fault stream
	creates     int            // creates that placed a pod, for LostCreates
	quotaWindow int64
	quotaUsed   int
	wakeAt      time.Time
	wakeTimer   simclock.Timer

	sshKeys []string // the account's keys; nil until first read (see account.go)

	volumes []*volume // network volumes of every account, creation order (volumes.go)

	inboxMu sync.Mutex
	inbox   []exitReport // container exits not yet applied; see ExitFunc

	slsState *slsState // templates, endpoints and jobs (serverless.go)

	logs logBook // pod logs and their streams (logs.go)
	// handling: a request's handler runs (under mu), so what changes now is
	// its doing, not a clock callback's.
	handling bool
}

type config struct {
	seed         uint64
	clock        simclock.Clock
	market       Market
	marketSet    bool
	balance      float64
	spendLimit   float64
	apiKey       string
	pageSize     int
	faults       Faults
	runner       HostRunner
	provisioning time.Duration
	quota        int
	retention    time.Duration
	sshKeys      []string
	serverless   ServerlessConfig
	billingUnit  time.Duration   // see WithBillingRounding
	billingDelay time.Duration   // see WithBillingDelay
	volumes      []NetworkVolume // see WithNetworkVolumes
}

// Option configures a Server.
type Option func(*config)

// WithSeed sets the seed of every random choice: placement, pod ids, fault draws (default 1).
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithClock sets the clock that drives every state transition (default a
// simclock.Virtual at Epoch).
func WithClock(clock simclock.Clock) Option { return func(c *config) { c.clock = clock } }

// WithMarket sets the catalog and machines (default DefaultMarket()).
func WithMarket(m Market) Option {
	return func(c *config) { c.market, c.marketSet = m, true }
}

// WithBalance sets the account balance in USD (default 500). A create needs at
// least one hour of the new pod's price left after what pods have already spent.
func WithBalance(usd float64) Option { return func(c *config) { c.balance = usd } }

// WithAPIKey sets the only bearer token accepted; by default any non-empty token is.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithPageSize makes GET /v2/pods return pages of at most n pods with a
// nextCursor (default 0: one page unless the client sends limit).
func WithPageSize(n int) Option { return func(c *config) { c.pageSize = n } }

// WithFaults sets the scenario's fault plan.
func WithFaults(f Faults) Option { return func(c *config) { c.faults = f } }

// WithHostRunner sets what runs pod containers (default a ModelRunner on the
// Server's clock with a zero ModelConfig).
func WithHostRunner(r HostRunner) Option { return func(c *config) { c.runner = r } }

// WithProvisioningDelay sets how long a pod stays PROVISIONING before STARTING (default 5 s).
func WithProvisioningDelay(d time.Duration) Option {
	return func(c *config) { c.provisioning = d }
}

// WithQuota enforces perMinute requests per clock minute (fixed windows), with
// RateLimit and RateLimit-Policy headers on every authenticated response and
// 429 + Retry-After beyond it (default 0: no quota).
func WithQuota(perMinute int) Option { return func(c *config) { c.quota = perMinute } }

// WithTerminatedRetention keeps deleted pods readable (status TERMINATED) for d;
// by default a deleted pod is 404 at once.
func WithTerminatedRetention(d time.Duration) Option {
	return func(c *config) { c.retention = d }
}

// New returns a Server. It fails only for a malformed market or option.
func New(opts ...Option) (*Server, error) {
	cfg := config{seed: 1, balance: 500, spendLimit: 80, provisioning: 5 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	if !cfg.marketSet {
		cfg.market = DefaultMarket()
	}
	if cfg.clock == nil {
		cfg.clock = simclock.NewVirtual(Epoch)
	}
	if cfg.runner == nil {
		cfg.runner = NewModelRunner(cfg.clock, ModelConfig{})
	}
	switch {
	case cfg.balance < 0:
		return nil, fmt.Errorf("runpodsim: balance %v must not be negative", cfg.balance)
	case cfg.pageSize < 0:
		return nil, fmt.Errorf("runpodsim: page size %d must not be negative", cfg.pageSize)
	case cfg.quota < 0:
		return nil, fmt.Errorf("runpodsim: quota %d must not be negative", cfg.quota)
	case cfg.billingUnit < 0 || cfg.billingDelay < 0:
		return nil, fmt.Errorf("runpodsim: billing unit %s and delay %s must not be negative", cfg.billingUnit, cfg.billingDelay)
	case cfg.provisioning < 0 || cfg.retention < 0:
		return nil, errors.New("runpodsim: provisioning delay and terminated retention must not be negative")
	}
	m, err := cfg.market.compile()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		validator: contract.RunPod(),
		market:    m,
		podByID:   map[string]*pod{},
		faultHits: map[uint64]int{},
	}
	s.mux = http.NewServeMux()
	s.registerCatalog()
	s.handle("/v2/pods", map[string]handler{http.MethodGet: s.bodiless(s.listPods), http.MethodPost: s.createPod})
	s.handle("/v2/pods/{id}", map[string]handler{http.MethodGet: s.bodiless(s.getPod), http.MethodDelete: s.bodiless(s.deletePod)})
	s.handle("/v2/pods/{id}/action", map[string]handler{http.MethodPost: s.podAction})
	s.mux.HandleFunc("/v2/pods/{id}/logs", s.serveLogs)
	s.handle("/v2/account/ssh-keys", map[string]handler{http.MethodGet: s.bodiless(s.getSSHKeys), http.MethodPut: s.putSSHKeys})
	s.handle("/graphql", map[string]handler{http.MethodPost: s.graphql})
	s.registerServerless()
	s.registerBilling()
	if err := s.registerVolumes(); err != nil {
		return nil, err
	}
	s.handle("/", nil)
	return s, nil
}

// Clock returns the clock that drives the Server.
func (s *Server) Clock() simclock.Clock { return s.cfg.clock }

// ServeHTTP serves the RunPod REST v2 routes the suite uses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// ListenLoopback serves s on an ephemeral 127.0.0.1 port and returns its base
// URL (no trailing slash) and a function that shuts it down.
func (s *Server) ListenLoopback() (baseURL string, shutdown func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("runpodsim: listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after shutdown
	return "http://" + ln.Addr().String(), func() {
		s.Close() // open log streams end, so the shutdown does not wait for them
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// RequestRecord is one request the Server answered.
type RequestRecord struct {
	Method string
	Path   string
	Route  string // "GET /v2/pods/{id}"; "" for paths the API does not have
	// Status is the HTTP status sent, or 0 when the connection was dropped.
	Status int
	At     time.Time // clock time of arrival
}

// Requests returns every request answered so far, in order.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.requests...)
}

// response is what a handler decided; the pipeline writes it.
type response struct {
	status  int
	body    any // marshalled as JSON; nil for no body
	problem *problem
	header  http.Header
	created bool   // a pod was created: LostCreates may apply
	raw     []byte // when set, sent as the body as it is (a rewritten answer)
}

type handler func(r *http.Request, body []byte, now time.Time) response

// problem is an RFC 9457 body as RunPod sends it.
type problem struct {
	Title  string   `json:"title"`
	Status int      `json:"status"`
	Detail string   `json:"detail"`
	Errors []string `json:"errors,omitempty"`
}

func problemResponse(status int, format string, args ...any) response {
	return response{status: status, problem: &problem{Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}}
}

func ok(status int, body any) response { return response{status: status, body: body} }

// handle registers pattern with its handlers by method; nil handlers make a 404 route.
func (s *Server) handle(pattern string, methods map[string]handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, pattern, methods)
	})
}

// decision is the fault plan's verdict on one request, taken before it is handled.
type decision struct {
	early response // a 429 or 5xx that replaces handling; status 0 if none
	delay time.Duration
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, pattern string, methods map[string]handler) {
	arrival := s.cfg.clock.Now()
	route := ""
	if _, known := methods[r.Method]; known {
		route = r.Method + " " + pattern
	}
	resp, answered := s.respond(r, methods, route, arrival)
	status := resp.status
	if !answered {
		status = 0
	}
	s.mu.Lock()
	s.requests = append(s.requests, RequestRecord{r.Method, r.URL.Path, route, status, arrival})
	s.mu.Unlock()
	if answered {
		write(w, resp)
	} else if r.Context().Err() == nil {
		dropConnection(w)
	}
}

// respond runs one request through auth, the fault plan and its handler. It
// reports false when no answer must be sent: a lost create that drops the
// connection, or a client that gave up during a slow response.
func (s *Server) respond(r *http.Request, methods map[string]handler, route string, arrival time.Time) (resp response, answered bool) {
	if resp, ok := s.authorize(r); !ok {
		return resp, true
	}
	if s.cfg.quota > 0 {
		defer func() { s.rateLimitHeaders(&resp, arrival) }()
	}
	h, known := methods[r.Method]
	switch {
	case methods == nil:
		return problemResponse(http.StatusNotFound, "no route for %s %s", r.Method, r.URL.Path), true
	case !known:
		resp = problemResponse(http.StatusMethodNotAllowed, "The requested method is not allowed for this path.")
		resp.header = http.Header{"Allow": {allowed(methods)}}
		return resp, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		return problemResponse(http.StatusBadRequest, "reading the request body: %v", err), true
	case len(body) > maxBody:
		return problemResponse(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBody), true
	}
	d := s.decide(route, arrival)
	if d.delay > 0 {
		if err := s.cfg.clock.Sleep(r.Context(), d.delay); err != nil {
			return response{}, false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.settle(now)
	if d.early.status != 0 {
		return d.early, true
	}
	s.handling = true
	resp = h(r, body, now)
	s.handling = false
	s.changeStock(route)
	if resp.created && s.loseCreate(&resp) {
		return resp, false
	}
	s.rewrite(route, &resp)
	return resp, true
}

// rewrite applies the first Rewrites fault that hits route to a handled answer.
func (s *Server) rewrite(route string, resp *response) {
	for i, rw := range s.cfg.faults.Rewrites {
		if !s.hit(rw.Match, rw.When, stream(streamRewrite, i), route) {
			continue
		}
		status, body := resp.status, encodeBody(*resp)
		if rw.Status != 0 {
			status = rw.Status
		}
		if rw.Body != nil {
			body = rw.Body(resp.status, body)
		}
		resp.status, resp.raw = status, body
		if resp.raw == nil {
			resp.raw = []byte{}
		}
		return
	}
}

// encodeBody is the JSON an answer would carry (nil when it has none).
func encodeBody(resp response) []byte {
	var v any = resp.body
	if resp.problem != nil {
		v = resp.problem
	}
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func allowed(methods map[string]handler) string {
	names := make([]string, 0, len(methods))
	for m := range methods {
		names = append(names, m)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// authorize checks the bearer token; on failure it returns the 401 to send.
func (s *Server) authorize(r *http.Request) (response, bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	switch {
	case !found || token == "":
		return problemResponse(http.StatusUnauthorized, "missing bearer token"), false
	case s.cfg.apiKey != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.apiKey)) != 1:
		return problemResponse(http.StatusUnauthorized, "invalid bearer token"), false
	}
	return response{}, true
}

// decide applies the quota and the request faults to one request, in the
// order a real edge would: rate limits, then latency, then upstream errors.
func (s *Server) decide(route string, now time.Time) decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.cfg.faults
	var d decision
	if s.cfg.quota > 0 {
		window := now.Unix() / 60
		if window != s.quotaWindow {
			s.quotaWindow, s.quotaUsed = window, 0
		}
		if s.quotaUsed >= s.cfg.quota {
			d.early = tooManyRequests(time.Duration(s.windowLeft(now))*time.Second, false, now)
			return d
		}
		s.quotaUsed++
	}
	for i, rl := range f.RateLimits {
		if s.hit(rl.Match, rl.When, stream(streamRateLimit, i), route) && d.early.status == 0 {
			d.early = tooManyRequests(rl.RetryAfter, rl.AsHTTPDate, now)
		}
	}
	for i, sl := range f.Slow {
		if s.hit(sl.Match, sl.When, stream(streamSlow, i), route) && d.early.status == 0 {
			d.delay += sl.Delay
		}
	}
	for i, se := range f.ServerErrors {
		if s.hit(se.Match, se.When, stream(streamServerError, i), route) && d.early.status == 0 {
			status := se.Status
			if status == 0 {
				status = http.StatusInternalServerError
			}
			d.early = problemResponse(status, "upstream service error (simulated)")
			withRetryAfter(&d.early, se.RetryAfter)
		}
	}
	return d
}

// hit counts a request matching m and reports whether trigger selects it.
func (s *Server) hit(m Match, when Trigger, stream uint64, route string) bool {
	if !m.matches(route) || when.zero() {
		return false
	}
	s.faultHits[stream]++
	return when.hits(s.cfg.seed, stream, s.faultHits[stream])
}

func tooManyRequests(after time.Duration, asDate bool, now time.Time) response {
	secs := int((after + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	resp := problemResponse(http.StatusTooManyRequests, "rate limit exceeded for the minute window")
	value := strconv.Itoa(secs)
	if asDate {
		value = now.Add(time.Duration(secs) * time.Second).UTC().Format(http.TimeFormat)
	}
	resp.header = http.Header{"Retry-After": {value}}
	return resp
}

// withRetryAfter adds Retry-After (whole seconds, rounded up) to resp when after is set.
func withRetryAfter(resp *response, after time.Duration) {
	if after <= 0 {
		return
	}
	if resp.header == nil {
		resp.header = http.Header{}
	}
	resp.header.Set("Retry-After", strconv.Itoa(int((after+time.Second-1)/time.Second)))
}

func (s *Server) windowLeft(now time.Time) int64 { return 60 - now.Unix()%60 }

func (s *Server) rateLimitHeaders(resp *response, now time.Time) {
	s.mu.Lock()
	used := s.quotaUsed
	if now.Unix()/60 != s.quotaWindow {
		used = 0
	}
	s.mu.Unlock()
	if resp.header == nil {
		resp.header = http.Header{}
	}
	resp.header.Set("RateLimit", fmt.Sprintf(`"minute";r=%d;t=%d`, max(s.cfg.quota-used, 0), s.windowLeft(now)))
	resp.header.Set("RateLimit-Policy", fmt.Sprintf(`"minute";q=%d;w=60`, s.cfg.quota))
}

// loseCreate applies LostCreates to a successful create. It reports true when
// the connection must be dropped; otherwise resp may have become a 5xx.
func (s *Server) loseCreate(resp *response) bool {
	s.creates++
	for i, lc := range s.cfg.faults.LostCreates {
		if !lc.When.hits(s.cfg.seed, stream(streamLostCreate, i), s.creates) {
			continue
		}
		if lc.DropConnection {
			return true
		}
		status := lc.Status
		if status == 0 {
			status = http.StatusBadGateway
		}
		*resp = problemResponse(status, "upstream service error (simulated) after the pod was created")
		withRetryAfter(resp, lc.RetryAfter)
		return false
	}
	return false
}

// dropConnection closes the connection without an answer, as a lost response
// looks to a client. Where hijacking is impossible it answers 502 instead.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	write(w, problemResponse(http.StatusBadGateway, "connection lost (simulated)"))
}

func write(w http.ResponseWriter, resp response) {
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	contentType, v := "application/json", resp.body
	if resp.problem != nil {
		contentType, v = "application/problem+json", resp.problem
	}
	if resp.raw != nil {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.raw)
		return
	}
	if v == nil {
		w.WriteHeader(resp.status)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Bodies are plain structs, so this is a simulator bug; say so in the contract's shape.
		contentType, resp.status = "application/problem+json", http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(problem{Title: "Internal Server Error", Status: resp.status, Detail: "encoding the response failed"})
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(resp.status)
	_, _ = w.Write(buf.Bytes())
}

// validateBody answers 400 for bodies that are not JSON and 422 for bodies the
// contract rejects, with the contract's messages as RunPod's "errors".
func (s *Server) validateBody(method, path string, body []byte) (response, bool) {
	if !json.Valid(body) {
		return problemResponse(http.StatusBadRequest, "request body is not valid JSON"), false
	}
	if err := s.validator.ValidateRequest(method, path, body); err != nil {
		var ce *contract.Error
		if !errors.As(err, &ce) {
			return problemResponse(http.StatusInternalServerError, "validating the request: %v", err), false
		}
		resp := problemResponse(http.StatusUnprocessableEntity, "Request validation failed.")
		resp.problem.Errors = ce.Messages
		return resp, false
	}
	return response{}, true
}
