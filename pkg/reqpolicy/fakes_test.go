package reqpolicy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// fakeClock is a Clock that moves only when the fake sleeper sleeps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// sleepRecorder is a Sleeper that records each wait and advances the clock
// instead of sleeping.
type sleepRecorder struct {
	clock *fakeClock
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clock.advance(d)
	return ctx.Err()
}

// step is one scripted outcome of the next transport.
type step struct {
	status int
	header http.Header
	body   string
	err    error
}

// sent is what the scripted transport received.
type sent struct {
	method, path, body, userAgent string
	at                            time.Time
}

// script is an http.RoundTripper that answers with its steps in order.
type script struct {
	clock *fakeClock
	steps []step
	mu    sync.Mutex
	sent  []sent
}

func (s *script) RoundTrip(req *http.Request) (*http.Response, error) {
	var body string
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		_ = req.Body.Close()
		body = string(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, sent{method: req.Method, path: req.URL.Path, body: body, userAgent: req.Header.Get("User-Agent"), at: s.clock.Now()})
	if len(s.sent) > len(s.steps) {
		return nil, fmt.Errorf("unscripted request %d: %s %s", len(s.sent), req.Method, req.URL)
	}
	st := s.steps[len(s.sent)-1]
	if st.err != nil {
		return nil, st.err
	}
	header := st.header
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{
		StatusCode: st.status,
		Status:     fmt.Sprintf("%d %s", st.status, http.StatusText(st.status)),
		Header:     header,
		Body:       io.NopCloser(strings.NewReader(st.body)),
		Request:    req,
	}, nil
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// harness wires a policy to a fake clock, a recording sleeper and log capture.
type harness struct {
	clock  *fakeClock
	sleeps *sleepRecorder
	policy *Policy
	mu     sync.Mutex
	lines  []string
}

var epoch = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

func newHarness(opts ...Option) *harness {
	h := &harness{clock: &fakeClock{now: epoch}}
	h.sleeps = &sleepRecorder{clock: h.clock}
	base := []Option{
		WithClock(h.clock),
		WithSleeper(h.sleeps.sleep),
		WithJitter(func() float64 { return 1 }),
		WithLogger(func(line string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.lines = append(h.lines, line)
		}),
	}
	h.policy = New(append(base, opts...)...)
	return h
}

func (h *harness) script(steps ...step) *script { return &script{clock: h.clock, steps: steps} }

func (h *harness) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// withFakeDeadline returns a context whose deadline lies `remaining` after the
// fake clock's now, on the policy's clock (WithDeadline); nothing in the test
// depends on how fast it runs.
func (h *harness) withFakeDeadline(remaining time.Duration) (context.Context, context.CancelFunc) {
	// Whole seconds, so that HTTP dates (second precision) compare exactly.
	deadline := time.Now().Add(time.Hour).Truncate(time.Second)
	h.clock.mu.Lock()
	h.clock.now = deadline.Add(-remaining)
	h.clock.mu.Unlock()
	return context.WithCancel(WithDeadline(context.Background(), deadline))
}

func get(ctx context.Context, rt http.RoundTripper, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.example.test"+path, nil)
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

func send(ctx context.Context, rt http.RoundTripper, method, path, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "https://api.example.test"+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

func readAll(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return string(b)
}

var errConnReset = errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer")
