package githubsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	installationID = int64(4242)
)

// testKeys are generated once: RSA generation dominates this package's test time otherwise.
var testKeys = sync.OnceValues(func() ([2]*rsa.PrivateKey, error) {
	var keys [2]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return keys, err
		}
		keys[i] = k
	}
	return keys, nil
})

// rsaKey returns test key i (0 or 1) and its PKCS#1 PEM.
func rsaKey(t *testing.T, i int) (*rsa.PrivateKey, []byte) {
	t.Helper()
	keys, err := testKeys()
	assert.NilError(t, err)
	key := keys[i]
	return key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// installationClient is a go-github client whose tokens ghinstallation mints from the server.
func installationClient(t *testing.T, f *fixture, pemBytes []byte) (*github.Client, *ghinstallation.Transport) {
	t.Helper()
	itr, err := ghinstallation.New(http.DefaultTransport, gateAppID, installationID, pemBytes)
	assert.NilError(t, err)
	itr.BaseURL = f.ts.URL
	c := github.NewClient(&http.Client{Transport: itr})
	c.BaseURL, _ = url.Parse(f.ts.URL + "/")
	return c, itr
}

func TestInstallationTokenWithGhinstallation(t *testing.T) {
	key, pemBytes := rsaKey(t, 0)
	// The installation's token lives an hour on the server's clock; run that clock with real
	// time so ghinstallation's own expiry check (real time) agrees and reuses the token.
	clock := simclock.NewVirtual(time.Now())
	f := newFixture(t, WithClock(clock), WithApp(App{ID: gateAppID, Slug: gateAppSlug, PublicKey: &key.PublicKey, InstallationID: installationID}))
	c, itr := installationClient(t, f, pemBytes)

	cr, _, err := c.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.NilError(t, err)
	assert.Equal(t, cr.GetApp().GetID(), gateAppID, "check runs belong to the App the token was minted for")
	_, _, err = c.Checks.GetCheckRun(ctx, "octo", "gpu-lib", cr.GetID())
	assert.NilError(t, err)
	assert.Equal(t, f.srv.CountRequests("POST", "/app/installations/*/access_tokens"), 1, "one mint serves both calls")

	token, err := itr.Token(ctx)
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(token, "ghs_"))

	clock.Advance(time.Hour)
	_, _, err = f.client(token).Checks.GetCheckRun(ctx, "octo", "gpu-lib", cr.GetID())
	assert.Equal(t, statusOf(err), http.StatusUnauthorized, "installation tokens expire after an hour")
}

func TestInstallationTokenRefusals(t *testing.T) {
	key, keyPEM := rsaKey(t, 0)
	_, otherPEM := rsaKey(t, 1)
	tests := []struct {
		name     string
		app      App
		otherKey bool
	}{
		{name: "JWT signed by another key", app: App{ID: gateAppID, PublicKey: &key.PublicKey, InstallationID: installationID},
			otherKey: true},
		{name: "installation of another app", app: App{ID: gateAppID, PublicKey: &key.PublicKey, InstallationID: 1}},
		{name: "app without a key", app: App{ID: gateAppID, InstallationID: installationID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, WithApp(tt.app))
			signWith := keyPEM
			if tt.otherKey {
				signWith = otherPEM
			}
			c, _ := installationClient(t, f, signWith)
			_, _, err := c.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
			var httpErr *ghinstallation.HTTPError
			assert.Assert(t, errors.As(err, &httpErr), "got %v", err)
			assert.Assert(t, httpErr.Response.StatusCode == http.StatusUnauthorized || httpErr.Response.StatusCode == http.StatusNotFound)
			assert.Equal(t, len(f.srv.CheckRuns(repoName, sha('a'))), 0)
		})
	}
}

func TestBadCredentials(t *testing.T) {
	tests := []struct {
		name  string
		token string
	}{{name: "unknown token", token: "ghp_nope"}, {name: "no token", token: ""}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			c := f.client(tt.token)
			if tt.token == "" {
				c = github.NewClient(nil)
				c.BaseURL = f.app.BaseURL
			}
			_, _, err := c.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
			var er *github.ErrorResponse
			assert.Assert(t, errors.As(err, &er))
			assert.Equal(t, er.Response.StatusCode, http.StatusUnauthorized)
			assert.Equal(t, er.Message, "Bad credentials")
			assert.Equal(t, f.srv.Requests()[0].Login, "")
		})
	}
}

func TestPrimaryRateLimitBudget(t *testing.T) {
	f := newFixture(t, WithRateLimit(2))
	c := f.client(userToken)
	for i := range 2 {
		_, resp, err := c.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
		assert.NilError(t, err)
		assert.Equal(t, resp.Rate.Limit, 2)
		assert.Equal(t, resp.Rate.Remaining, 1-i)
	}
	_, _, err := c.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
	var rl *github.RateLimitError
	assert.Assert(t, errors.As(err, &rl), "got %v", err)
	assert.Check(t, rl.Rate.Reset.Time.Equal(start.Add(time.Hour)), "reset %v", rl.Rate.Reset.Time)

	_, _, err = f.app.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
	assert.NilError(t, err, "each token has its own budget")
	f.clock.Advance(time.Hour)
	_, _, err = f.client(userToken).Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
	assert.NilError(t, err, "the budget resets after the hour")
}

func TestVerifyAppJWTRefusesMalformed(t *testing.T) {
	key, _ := rsaKey(t, 0)
	s := New(WithApp(App{ID: 7, PublicKey: &key.PublicKey}))
	for _, token := range []string{"", "a.b", "a.b.c", "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiI3In0.x"} {
		_, err := s.verifyAppJWT(token)
		assert.Check(t, err != nil, "token %q", token)
	}
}
