package ghapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestNewAppClientRefusesBadCredentials(t *testing.T) {
	tests := []struct {
		name string
		app  *AppAuth
		want string
	}{
		{name: "no app", want: "positive AppID"},
		{name: "no id", app: &AppAuth{PrivateKeyPEM: []byte("x")}, want: "positive AppID"},
		{name: "no key", app: &AppAuth{AppID: 1}, want: "PrivateKeyPEM is empty"},
		{name: "not a key", app: &AppAuth{AppID: 1, PrivateKeyPEM: []byte("-----BEGIN RSA PRIVATE KEY-----\nSECRETSTUFF\n-----END RSA PRIVATE KEY-----\n")},
			want: "not a PEM-encoded RSA private key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAppClient(Options{App: tc.app})
			assert.ErrorContains(t, err, tc.want)
			assert.Check(t, !strings.Contains(err.Error(), "SECRETSTUFF"), "the key never appears in an error")
		})
	}
}

// The installation lookup sends the App's JWT (never an installation token)
// and tells "not installed there" (ErrNotFound) from other failures.
func TestRepoInstallation(t *testing.T) {
	f := newFakeGitHub(t)
	f.on("GET", "repos/acme/alpha/installation", func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey"), "an App JWT")
		_, _ = w.Write([]byte(`{"id": 9001, "account": {"login": "acme"}}`))
	})
	f.on("GET", "repos/acme/gamma/installation", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message": "Not Found"}`))
	})
	f.on("GET", "repos/acme/empty/installation", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	})
	app, err := NewAppClient(Options{BaseURL: f.apiURL(), App: &AppAuth{AppID: 5151, PrivateKeyPEM: testAppKey(t)}})
	assert.NilError(t, err)
	ctx := context.Background()

	id, err := app.RepoInstallation(ctx, "acme", "alpha")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(id, int64(9001)))

	_, err = app.RepoInstallation(ctx, "acme", "gamma")
	assert.Check(t, errors.Is(err, ErrNotFound), "got %v", err)

	_, err = app.RepoInstallation(ctx, "acme", "empty")
	assert.Check(t, errors.Is(err, ErrUnusableAnswer), "got %v", err)
	assert.Check(t, !errors.Is(err, ErrNotFound))

	_, err = app.RepoInstallation(ctx, "acme", "../x")
	assert.ErrorContains(t, err, `Repo "../x"`)
}

func TestForRepositorySharesTheClientForAnotherRepository(t *testing.T) {
	c, err := New(context.Background(), Options{Token: "ghs_x", Owner: "acme", Repo: "alpha"})
	assert.NilError(t, err)
	beta, err := c.ForRepository("acme", "beta")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(beta.Owner()+"/"+beta.Repo(), "acme/beta"))
	assert.Check(t, beta.gh == c.gh && beta.Redactor() == c.Redactor(), "one transport and redactor: one token")
	assert.Check(t, is.Equal(c.Repo(), "alpha"), "the original is unchanged")
	_, err = c.ForRepository("acme", "..")
	assert.ErrorContains(t, err, `Repo ".."`)
}
