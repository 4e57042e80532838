package githubsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Identities and tokens the fixtures configure.
const (
	appToken    = "ghs_testapp"
	actionsTok  = "ghs_actions"
	userToken   = "ghp_maintainer"
	otherApp    = "ghs_otherapp"
	gateAppID   = int64(901)
	gateAppSlug = "runpod-gpu-gate"
	repoName    = "octo/gpu-lib"
)

var start = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

type fixture struct {
	srv   *Server
	clock *simclock.Virtual
	ts    *httptest.Server
	// app is a client authenticated as the gate's GitHub App.
	app *github.Client
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	clock := simclock.NewVirtual(start)
	base := []Option{
		WithClock(clock),
		WithSeed(42),
		WithToken(appToken, Identity{AppID: gateAppID, AppSlug: gateAppSlug}),
		WithToken(actionsTok, ActionsIdentity()),
		WithToken(userToken, Identity{Login: "maintainer"}),
		WithToken(otherApp, Identity{AppID: 777, AppSlug: "other-app"}),
	}
	srv := New(append(base, opts...)...)
	assert.NilError(t, srv.AddRepo(Repo{Owner: "octo", Name: "gpu-lib", DefaultBranchSHA: sha('0')}))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	f := &fixture{srv: srv, clock: clock, ts: ts}
	f.app = f.client(appToken)
	return f
}

// client returns a go-github v66 client pointed at the fixture's server with token.
func (f *fixture) client(token string) *github.Client {
	c := github.NewClient(nil).WithAuthToken(token)
	c.BaseURL, _ = url.Parse(f.ts.URL + "/")
	return c
}

// sha makes a recognisable 40-character SHA from one hex digit.
func sha(digit byte) string { return strings.Repeat(string(digit), 40) }

var ctx = context.Background()

// raw sends a hand-built request (for bodies go-github cannot produce) and decodes the reply.
func (f *fixture) raw(t *testing.T, c *github.Client, method, path string, body, out any) (*github.Response, error) {
	t.Helper()
	req, err := c.NewRequest(method, path, body)
	assert.NilError(t, err)
	return c.Do(ctx, req, out)
}

// statusOf returns the HTTP status of a go-github error, or 0 when there is none.
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// serveDirect answers one request in-process with a fixed host, so URLs in bodies are stable
// for golden files.
func serveDirect(t *testing.T, srv *Server, method, target, token string, body any) (*httptest.ResponseRecorder, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		assert.NilError(t, json.NewEncoder(&buf).Encode(body))
	}
	req := httptest.NewRequest(method, "http://api.github.test"+target, &buf)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec, rec.Body.Bytes()
}

// indent pretty-prints JSON for golden files.
func indent(t *testing.T, raw []byte) string {
	t.Helper()
	var buf bytes.Buffer
	assert.NilError(t, json.Indent(&buf, raw, "", "  "))
	return buf.String() + "\n"
}
