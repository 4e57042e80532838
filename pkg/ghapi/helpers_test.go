package ghapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// baseURLPath prefixes every API path of the fake, as in go-github's own
// tests, so a request built from an absolute path instead of BaseURL misses.
const baseURLPath = "/api-v3"

// fakeGitHub is an httptest GitHub whose every expected request is a stub:
// a request no stub expects fails the test, and so does a stub left unused
// (cli/cli's httpmock registry, served over real HTTP).
type fakeGitHub struct {
	t      *testing.T
	server *httptest.Server

	mu    sync.Mutex
	stubs []*stub
}

type stub struct {
	method string
	path   string     // relative to the API root, e.g. "repos/o/r/pulls/1"
	query  url.Values // each listed key must have exactly these values
	want   int
	calls  int
	handle http.HandlerFunc
}

// times sets how often the stub must be called (default once).
func (s *stub) times(n int) *stub {
	s.want = n
	return s
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t}
	f.server = httptest.NewServer(f)
	t.Cleanup(func() {
		f.server.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, s := range f.stubs {
			if s.calls != s.want {
				t.Errorf("stub %s %s?%s: called %d times, want %d", s.method, s.path, s.query.Encode(), s.calls, s.want)
			}
		}
	})
	return f
}

// apiURL is the BaseURL clients of the fake use.
func (f *fakeGitHub) apiURL() string { return f.server.URL + baseURLPath + "/" }

// on expects one request: method and target, e.g.
// "repos/o/r/actions/runners?name=x&page=2" (query keys listed must match).
func (f *fakeGitHub) on(method, target string, handle http.HandlerFunc) *stub {
	path, rawQuery, _ := strings.Cut(target, "?")
	query, err := url.ParseQuery(rawQuery)
	assert.NilError(f.t, err)
	s := &stub{method: method, path: path, query: query, want: 1, handle: handle}
	f.mu.Lock()
	f.stubs = append(f.stubs, s)
	f.mu.Unlock()
	return s
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rel, ok := strings.CutPrefix(r.URL.Path, baseURLPath+"/")
	if !ok {
		f.t.Errorf("request %s %s is outside the API base path %s", r.Method, r.URL.Path, baseURLPath)
		http.NotFound(w, r)
		return
	}
	if s := f.match(r.Method, rel, r.URL.Query()); s != nil {
		s.handle(w, r)
		return
	}
	f.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
	writeJSON(w, http.StatusNotImplemented, `{"message":"no stub"}`)
}

func (f *fakeGitHub) match(method, path string, query url.Values) *stub {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.stubs {
		if s.method != method || s.path != path || s.calls >= s.want || !queryHas(query, s.query) {
			continue
		}
		s.calls++
		return s
	}
	return nil
}

func queryHas(got, want url.Values) bool {
	for key, values := range want {
		if strings.Join(got[key], "\x00") != strings.Join(values, "\x00") {
			return false
		}
	}
	return true
}

// respond answers with status, a JSON body and header pairs ("Key", "value", …).
func respond(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		writeJSON(w, status, body)
	}
}

// respondFile answers with status and testdata/name as the JSON body.
func respondFile(t *testing.T, status int, name string, header ...string) http.HandlerFunc {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	assert.NilError(t, err)
	return respond(status, string(body), header...)
}

// withNextPage adds GitHub's Link header pointing at page next of the same
// listing (and at last).
func withNextPage(next, last int, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		link := func(page int) string {
			u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
			q := r.URL.Query()
			q.Set("page", fmt.Sprint(page))
			u.RawQuery = q.Encode()
			return u.String()
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, link(next), link(last)))
		h(w, r)
	}
}

// expectJSONBody checks the request body against want (compared as JSON
// values) before answering with h.
func expectJSONBody(t *testing.T, want string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		assert.Check(t, err)
		var gotValue, wantValue any
		assert.Check(t, json.Unmarshal(got, &gotValue), "body %s", got)
		assert.Check(t, json.Unmarshal([]byte(want), &wantValue))
		assert.Check(t, is.DeepEqual(gotValue, wantValue), "request body %s", got)
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// testEnv is a client of a fake GitHub under a policy that never sleeps.
type testEnv struct {
	fake   *fakeGitHub
	client *Client
	clock  *simclock.Virtual
	policy *reqpolicy.Policy

	mu    sync.Mutex
	waits []time.Duration // every pause the policy asked for
}

func (e *testEnv) recordedWaits() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Duration(nil), e.waits...)
}

const testToken = "ghp_testTOKEN0123456789abcdefABCDEF"

// newTestEnv returns a repository client for acme/widgets with org acme,
// authenticated with testToken unless edit changes the options. The clock
// starts at the real time (go-github's rate-limit memory reads the real
// clock), truncated so that header values are exact.
func newTestEnv(t *testing.T, edit ...func(*Options)) *testEnv {
	t.Helper()
	env := &testEnv{fake: newFakeGitHub(t), clock: simclock.NewVirtual(time.Now().Truncate(time.Second))}
	env.policy = reqpolicy.New(
		reqpolicy.WithClock(env.clock),
		reqpolicy.WithSleeper(func(ctx context.Context, d time.Duration) error {
			env.mu.Lock()
			env.waits = append(env.waits, d)
			env.mu.Unlock()
			env.clock.Advance(d)
			return ctx.Err()
		}),
		reqpolicy.WithJitter(func() float64 { return 0 }),
		reqpolicy.WithMaxAttempts(3),
		reqpolicy.WithClassifier(RateLimitClassifier(env.clock)),
	)
	opts := Options{
		BaseURL: env.fake.apiURL(),
		Token:   testToken,
		Owner:   "acme",
		Repo:    "widgets",
		Org:     "acme",
		Policy:  env.policy,
	}
	for _, e := range edit {
		e(&opts)
	}
	client, err := New(context.Background(), opts)
	assert.NilError(t, err)
	env.client = client
	return env
}
