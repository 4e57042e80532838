package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/contract"
)

const testAPIKey = "rpa_TESTKEY_0123456789abcdef"

// received is one request the fake RunPod saw.
type received struct {
	method, path, escapedPath, query string
	body                             []byte
	authorization, userAgent, accept string
}

// fakeRunPod is a loopback RunPod that checks every request against the
// contract (plus deltas) before its routes answer, and answers a contract
// violation with 422 as the real API does.
type fakeRunPod struct {
	server *httptest.Server
	mux    *http.ServeMux

	mu         sync.Mutex
	requests   []received
	violations []string
}

func newFake(t *testing.T) *fakeRunPod {
	t.Helper()
	f := &fakeRunPod{mux: http.NewServeMux()}
	f.server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.server.Close)
	t.Cleanup(func() {
		if v := f.takeViolations(); len(v) > 0 && !t.Failed() {
			t.Errorf("requests violated the contract:\n%s", strings.Join(v, "\n"))
		}
	})
	return f
}

func (f *fakeRunPod) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, received{
		method: r.Method, path: r.URL.Path, escapedPath: r.URL.EscapedPath(), query: r.URL.RawQuery, body: body,
		authorization: r.Header.Get("Authorization"), userAgent: r.Header.Get("User-Agent"), accept: r.Header.Get("Accept"),
	})
	f.mu.Unlock()
	var sentBody []byte
	if len(body) > 0 {
		sentBody = body
	}
	if err := contract.RunPod().ValidateRequest(r.Method, r.URL.EscapedPath(), sentBody); err != nil {
		f.mu.Lock()
		f.violations = append(f.violations, err.Error())
		f.mu.Unlock()
		var ce *contract.Error
		messages := []string{err.Error()}
		if errors.As(err, &ce) {
			messages = ce.Messages
		}
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"title": "Unprocessable Entity", "status": 422, "detail": "Request validation failed.", "errors": messages,
		})
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	f.mux.ServeHTTP(w, r)
}

// handle registers a route with Go's method-and-path pattern syntax.
func (f *fakeRunPod) handle(pattern string, h http.HandlerFunc) { f.mux.HandleFunc(pattern, h) }

// answer registers a route that always answers status with body.
func (f *fakeRunPod) answer(pattern string, status int, body string) {
	f.handle(pattern, func(w http.ResponseWriter, r *http.Request) { writeRaw(w, status, body) })
}

// sequence registers a route that answers with each handler in turn.
func (f *fakeRunPod) sequence(pattern string, handlers ...http.HandlerFunc) {
	var mu sync.Mutex
	n := 0
	f.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := min(n, len(handlers)-1)
		n++
		mu.Unlock()
		handlers[i](w, r)
	})
}

func (f *fakeRunPod) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.requests...)
}

func (f *fakeRunPod) takeViolations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.violations
	f.violations = nil
	return v
}

// client returns a client of the fake whose policy never really sleeps.
func (f *fakeRunPod) client(opts ...Option) (*Client, *testPolicy) {
	tp := newTestPolicy()
	return New(f.server.URL, testAPIKey, append([]Option{WithPolicy(tp.policy)}, opts...)...), tp
}

// testPolicy is a reqpolicy.Policy on a fake clock with a recording sleeper.
type testPolicy struct {
	mu     sync.Mutex
	now    time.Time
	waits  []time.Duration
	lines  []string
	policy *reqpolicy.Policy
}

func newTestPolicy(opts ...reqpolicy.Option) *testPolicy {
	tp := &testPolicy{now: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	base := []reqpolicy.Option{
		reqpolicy.WithClock(tp),
		reqpolicy.WithSleeper(func(ctx context.Context, d time.Duration) error {
			tp.mu.Lock()
			defer tp.mu.Unlock()
			tp.waits = append(tp.waits, d)
			tp.now = tp.now.Add(d)
			return ctx.Err()
		}),
		reqpolicy.WithJitter(func() float64 { return 1 }),
		reqpolicy.WithLogger(func(line string) {
			tp.mu.Lock()
			defer tp.mu.Unlock()
			tp.lines = append(tp.lines, line)
		}),
	}
	tp.policy = reqpolicy.New(append(base, opts...)...)
	return tp
}

func (tp *testPolicy) Now() time.Time {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.now
}

// deadline returns a context whose deadline is `remaining` after the fake now,
// on the policy's clock; test speed never matters.
func (tp *testPolicy) deadline(remaining time.Duration) (context.Context, context.CancelFunc) {
	at := time.Now().Add(time.Hour)
	tp.mu.Lock()
	tp.now = at.Add(-remaining)
	tp.mu.Unlock()
	return context.WithCancel(reqpolicy.WithDeadline(context.Background(), at))
}

func (tp *testPolicy) log() string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return strings.Join(tp.lines, "\n")
}

func writeRaw(w http.ResponseWriter, status int, body string) {
	if strings.HasPrefix(strings.TrimSpace(body), "{") && status >= 400 {
		w.Header().Set("Content-Type", "application/problem+json")
	} else if body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	writeRaw(w, status, string(b))
}

func problemJSON(status int, detail string) string {
	b, _ := json.Marshal(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
	return string(b)
}

// hangUp closes the connection without an answer: a lost response.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(fmt.Sprintf("hijack: %v", err))
	}
	_ = conn.Close()
}
