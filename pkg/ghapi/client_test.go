package ghapi

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestNewRejectsBadOptions(t *testing.T) {
	const secretKey = "-----BEGIN RSA PRIVATE KEY-----\nTOP-SECRET-KEY-MATERIAL\n-----END RSA PRIVATE KEY-----\n"
	valid := func() Options {
		return Options{Token: testToken, Owner: "acme", Repo: "widgets"}
	}
	app := func(appID, installationID int64, key string) *AppAuth {
		return &AppAuth{AppID: appID, InstallationID: installationID, PrivateKeyPEM: []byte(key)}
	}
	tests := []struct {
		name    string
		edit    func(*Options)
		wantErr string
	}{
		{name: "no credentials", edit: func(o *Options) { o.Token = "" }, wantErr: "no credentials; set Token or App"},
		{name: "token and app", edit: func(o *Options) { o.App = app(1, 2, secretKey) }, wantErr: "both Token and App are set"},
		{name: "token with newline", edit: func(o *Options) { o.Token = testToken + "\n" }, wantErr: "Token contains whitespace"},
		{name: "app id", edit: func(o *Options) { o.Token, o.App = "", app(0, 2, secretKey) }, wantErr: "App.AppID is 0"},
		{name: "installation id", edit: func(o *Options) { o.Token, o.App = "", app(1, 0, secretKey) }, wantErr: "App.InstallationID is 0"},
		{name: "empty key", edit: func(o *Options) { o.Token, o.App = "", app(1, 2, "") }, wantErr: "App.PrivateKeyPEM is empty"},
		{name: "bad key", edit: func(o *Options) { o.Token, o.App = "", app(1, 2, secretKey) }, wantErr: "not a PEM-encoded RSA private key"},
		{name: "relative base URL", edit: func(o *Options) { o.BaseURL = "api.github.com" }, wantErr: `BaseURL "api.github.com": want an absolute http(s) URL`},
		{name: "credentials in base URL", edit: func(o *Options) { o.BaseURL = "https://x:" + testToken + "@ghe.example/api/v3" }, wantErr: "must not contain credentials"},
		{name: "query in base URL", edit: func(o *Options) { o.BaseURL = "https://ghe.example/api/v3?x=1" }, wantErr: "must not have a query"},
		{name: "plain http off loopback", edit: func(o *Options) { o.BaseURL = "http://ghe.example/api/v3" }, wantErr: `BaseURL "http://ghe.example/api/v3": want https (http only on a loopback host)`},
		{name: "empty owner", edit: func(o *Options) { o.Owner = "" }, wantErr: "Owner is empty"},
		{name: "repo with slash", edit: func(o *Options) { o.Repo = "acme/widgets" }, wantErr: `Repo "acme/widgets": want letters`},
		{name: "repo dot-dot", edit: func(o *Options) { o.Repo = ".." }, wantErr: `Repo "..": want letters`},
		{name: "org with space", edit: func(o *Options) { o.Org = "ac me" }, wantErr: `Org "ac me": want letters`},
		{name: "negative download bound", edit: func(o *Options) { o.MaxDownloadBytes = -1 }, wantErr: "MaxDownloadBytes is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := valid()
			tt.edit(&opts)
			_, err := New(context.Background(), opts)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Check(t, !strings.Contains(err.Error(), testToken), "error leaks the token: %v", err)
			assert.Check(t, !strings.Contains(err.Error(), "TOP-SECRET"), "error leaks the key: %v", err)
		})
	}
}

func TestNewDefaultsToPublicGitHub(t *testing.T) {
	c, err := New(context.Background(), Options{Token: testToken, Owner: "acme", Repo: "widgets"})
	assert.NilError(t, err)
	assert.Equal(t, c.gh.BaseURL.String(), "https://api.github.com/")
	assert.Equal(t, c.maxDownload, DefaultMaxDownloadBytes)
	assert.Equal(t, c.Owner()+"/"+c.Repo(), "acme/widgets")
	assert.Equal(t, c.Redactor().Redact("token "+testToken), "token ***")
}

func TestNewKeepsEnterprisePath(t *testing.T) {
	c, err := New(context.Background(), Options{BaseURL: "https://ghe.example/api/v3", Token: testToken, Owner: "acme", Repo: "widgets"})
	assert.NilError(t, err)
	// Without the trailing slash go-github would resolve paths against /api/.
	assert.Equal(t, c.gh.BaseURL.String(), "https://ghe.example/api/v3/")
}

func TestTokenAuthSendsBearer(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7", func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, is.Equal(r.Header.Get("Authorization"), "Bearer "+testToken))
		assert.Check(t, is.Equal(r.Header.Get("X-GitHub-Api-Version"), "2022-11-28"))
		assert.Check(t, strings.HasPrefix(r.Header.Get("User-Agent"), "runpod-gpu/"), "User-Agent %q", r.Header.Get("User-Agent"))
		respondFile(t, http.StatusOK, "pull_request.json")(w, r)
	})
	pr, err := env.client.GetPullRequest(context.Background(), 7)
	assert.NilError(t, err)
	assert.Equal(t, pr.GetHead().GetSHA(), "ce587453ced02b1526dfb4cb910479d431683101")
}

// testAppKey returns a fresh RSA key as PKCS#1 PEM.
func testAppKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func TestAppAuthMintsOneTokenForTwoCalls(t *testing.T) {
	const installationToken = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	keyPEM := testAppKey(t)
	env := newTestEnv(t, func(o *Options) {
		o.Token = ""
		o.App = &AppAuth{AppID: 901, InstallationID: 4242, PrivateKeyPEM: keyPEM}
	})
	env.fake.on("POST", "app/installations/4242/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		assert.Check(t, ok, "token request authorization %q", r.Header.Get("Authorization"))
		assert.Check(t, is.Len(strings.Split(jwt, "."), 3), "not a JWT: %q", jwt)
		respond(http.StatusCreated, `{"token":"`+installationToken+`","expires_at":"`+
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`","permissions":{"checks":"write","actions":"write"},"repository_selection":"selected"}`)(w, r)
	})
	env.fake.on("GET", "repos/acme/widgets/pulls/7", func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, is.Equal(r.Header.Get("Authorization"), "token "+installationToken))
		respondFile(t, http.StatusOK, "pull_request.json")(w, r)
	}).times(2)

	for range 2 {
		_, err := env.client.GetPullRequest(context.Background(), 7)
		assert.NilError(t, err)
	}
	assert.Equal(t, env.client.Redactor().Redact("x "+installationToken), "x ***")
}

func TestAppAuthMintFailureIsReported(t *testing.T) {
	env := newTestEnv(t, func(o *Options) {
		o.Token = ""
		o.App = &AppAuth{AppID: 901, InstallationID: 4242, PrivateKeyPEM: testAppKey(t)}
	})
	env.fake.on("POST", "app/installations/4242/access_tokens",
		respond(http.StatusNotFound, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"}`))
	_, err := env.client.GetPullRequest(context.Background(), 7)
	assert.ErrorContains(t, err, "get pull request #7: ")
	assert.ErrorContains(t, err, "installation id 4242")
}

func TestSecretsNeverAppearInErrors(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("POST", "repos/acme/widgets/actions/runners/generate-jitconfig", respondFile(t, http.StatusCreated, "jit_config_created.json"))
	cfg, err := env.client.GenerateJITConfig(context.Background(), JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1})
	assert.NilError(t, err)

	// A server that echoes secrets back, raw and encoded, in its error.
	echo := strings.Join([]string{
		cfg.EncodedConfig,
		base64.StdEncoding.EncodeToString([]byte(cfg.EncodedConfig)),
		testToken,
		base64.StdEncoding.EncodeToString([]byte("x-access-token:" + testToken)),
	}, " | ")
	env.fake.on("POST", "repos/acme/widgets/issues/7/comments", respond(http.StatusUnprocessableEntity, `{"message":"Validation Failed: `+echo+`"}`))
	_, err = env.client.CreateIssueComment(context.Background(), 7, "hello")
	assert.ErrorContains(t, err, "comment on #7: ")
	assert.ErrorContains(t, err, "Validation Failed")
	for _, secret := range []string{cfg.EncodedConfig, testToken} {
		assert.Check(t, !strings.Contains(err.Error(), secret), "error leaks a secret: %v", err)
	}
	assert.Check(t, !strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(cfg.EncodedConfig))), "error leaks an encoded secret: %v", err)

	for _, shown := range []string{cfg.String(), cfg.GoString()} {
		assert.Check(t, !strings.Contains(shown, cfg.EncodedConfig), "JITConfig printing leaks: %s", shown)
	}
}

func TestHostGuardDropsCredentialsOffHost(t *testing.T) {
	var seen http.Header
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Header
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	guard := &hostGuard{host: "api.github.com", next: next}
	tests := []struct {
		url      string
		wantAuth string
	}{
		{url: "https://api.github.com/repos/a/b", wantAuth: "token x"},
		{url: "https://API.github.com/repos/a/b", wantAuth: "token x"},
		{url: "https://results-receiver.actions.githubusercontent.com/logs.zip", wantAuth: ""},
		{url: "https://api.github.com.evil.example/x", wantAuth: ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest("GET", tt.url, nil)
		assert.NilError(t, err)
		req.Header.Set("Authorization", "token x")
		_, err = guard.RoundTrip(req)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(seen.Get("Authorization"), tt.wantAuth), tt.url)
		assert.Check(t, is.Equal(req.Header.Get("Authorization"), "token x"), "caller's request modified")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
