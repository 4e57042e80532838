package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/version"
)

// DefaultBaseURL is the REST API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.github.com"

// DefaultMaxPages bounds listings that read "all pages" (100 items a page).
const DefaultMaxPages = 50

// DefaultMaxDownloadBytes bounds run-log and artifact downloads when
// Options.MaxDownloadBytes is 0.
const DefaultMaxDownloadBytes int64 = 256 << 20

// perPage is GitHub's largest page size.
const perPage = 100

// Options configures New. Set exactly one of Token and App.
type Options struct {
	// BaseURL is the REST API root (GITHUB_API_URL); default DefaultBaseURL.
	// GitHub Enterprise Server uses https://HOST/api/v3.
	BaseURL string
	// Token is a bearer token (GITHUB_TOKEN, a PAT or an installation token).
	Token string
	// App authenticates as a GitHub App installation.
	App *AppAuth
	// Owner and Repo name the repository every repository call is about.
	Owner, Repo string
	// Org is the organization for org-scope runners; needed only for ScopeOrg.
	Org string
	// Policy is the request policy (retries, backoff, cooldown, redactor);
	// nil builds one with RateLimitClassifier. Give GitHub its own Policy,
	// not RunPod's, so a GitHub rate limit does not pause RunPod calls, and
	// build it WithClassifier(RateLimitClassifier(clock)) so GitHub's 403 rate
	// limits are waited out; every secret this client handles is added to
	// the Policy's redactor.
	Policy *reqpolicy.Policy
	// HTTPClient supplies the bottom transport (its Transport only); nil uses
	// http.DefaultTransport.
	HTTPClient *http.Client
	// MaxDownloadBytes bounds each log or artifact download; 0 means
	// DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
	// OnSecret, when set, is called with each secret the client comes to hold
	// (a minted installation token, a JIT runner config) before the client
	// uses or returns it: an action masks it in the runner's log there
	// (actionio.IO.Mask), so no later line can show it.
	OnSecret func(secret string)
}

// AppAuth holds GitHub App installation credentials.
type AppAuth struct {
	AppID          int64
	InstallationID int64
	// PrivateKeyPEM is the App's RSA private key, PKCS#1 or PKCS#8 PEM.
	PrivateKeyPEM []byte
}

// Client calls the GitHub REST API for one repository. It is safe for
// concurrent use.
type Client struct {
	gh *github.Client
	// apiNoRedirect is the authenticated transport without redirect
	// following: archive endpoints answer 302 to a signed URL that must be
	// fetched without credentials.
	apiNoRedirect *http.Client
	// storage fetches signed archive URLs: request policy, no credentials.
	storage *http.Client

	owner, repo, org string
	policy           *reqpolicy.Policy
	redactor         *redact.Redactor
	onSecret         func(string)
	maxDownload      int64
	// pulls makes PR re-reads conditional (pulls_etag.go).
	pulls pullCache
}

// ownerRepoPattern is what GitHub accepts in an owner or repository name.
var ownerRepoPattern = lazyre.Regexp{Pattern: `^[A-Za-z0-9_.-]+$`}

// New validates opts and returns a Client. It makes no request: an App's
// installation token is minted on first use.
func New(ctx context.Context, opts Options) (*Client, error) {
	_ = ctx // reserved: no request is made here, the first call mints tokens
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if err := validateNames(opts); err != nil {
		return nil, err
	}
	if opts.MaxDownloadBytes < 0 {
		return nil, fmt.Errorf("ghapi: MaxDownloadBytes is %d; want 0 (default) or more", opts.MaxDownloadBytes)
	}

	policy := opts.Policy
	if policy == nil {
		policy = defaultPolicy()
	}
	c := &Client{
		owner:       opts.Owner,
		repo:        opts.Repo,
		org:         opts.Org,
		policy:      policy,
		redactor:    policy.Redactor(),
		onSecret:    opts.OnSecret,
		maxDownload: opts.MaxDownloadBytes,
	}
	if c.maxDownload == 0 {
		c.maxDownload = DefaultMaxDownloadBytes
	}

	bottom := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		bottom = opts.HTTPClient.Transport
	}
	retrying := policy.Transport(bottom)

	// Below the auth layer: no credential leaves the API host, and tokens the
	// App mints are known to the redactor before anyone can log them.
	guarded := &hostGuard{host: base.Host, next: &tokenCapture{learn: c.learnSecret, next: retrying}}
	auth, err := authTransport(opts, base, guarded, c.redactor)
	if err != nil {
		return nil, err
	}

	c.gh = github.NewClient(&http.Client{Transport: auth})
	c.gh.BaseURL = base
	c.gh.UserAgent = version.UserAgent()
	c.apiNoRedirect = &http.Client{
		Transport:     auth,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.storage = &http.Client{Transport: retrying, CheckRedirect: limitRedirects}
	return c, nil
}

// learnSecret registers a secret the client now holds: with the redactor,
// and through OnSecret, before anything can use or print it.
func (c *Client) learnSecret(secret string) {
	c.redactor.Add(secret)
	if c.onSecret != nil {
		c.onSecret(secret)
	}
}

// Redactor returns the redactor holding every secret this client has seen
// (the Policy's).
func (c *Client) Redactor() *redact.Redactor { return c.redactor }

// Owner returns the repository owner the client is bound to.
func (c *Client) Owner() string { return c.owner }

// Repo returns the repository name the client is bound to.
func (c *Client) Repo() string { return c.repo }

func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ghapi: BaseURL %q: want an absolute http(s) URL such as %s", redactURLUser(raw), DefaultBaseURL)
	}
	if u.User != nil {
		// Credentials in the URL would travel in every request line and log.
		return nil, fmt.Errorf("ghapi: BaseURL %s: must not contain credentials; use Token or App", redactURLUser(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("ghapi: BaseURL %q: must not have a query or fragment", raw)
	}
	if u.Scheme == "http" && !inputform.LoopbackHost(u.Hostname()) {
		// The token would travel in the clear; the simulators serve on loopback.
		return nil, fmt.Errorf("ghapi: BaseURL %q: want https (http only on a loopback host), or the token travels in the clear", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		// go-github resolves relative paths against BaseURL; without the slash
		// the last segment (e.g. GHES's "v3") would be dropped.
		u.Path += "/"
	}
	return u, nil
}

// redactURLUser hides userinfo in a URL that failed validation.
func redactURLUser(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	if i := strings.Index(raw, "@"); i >= 0 {
		return "REDACTED" + raw[i:]
	}
	return raw
}

func validateNames(opts Options) error {
	for _, f := range []struct{ key, value string }{{"Owner", opts.Owner}, {"Repo", opts.Repo}} {
		if f.value == "" {
			return fmt.Errorf("ghapi: %s is empty; want the repository %s, as in owner/repo", f.key, strings.ToLower(f.key))
		}
		if !ownerRepoPattern.MatchString(f.value) || f.value == "." || f.value == ".." {
			return fmt.Errorf("ghapi: %s %q: want letters, digits, '-', '_' or '.'", f.key, f.value)
		}
	}
	if opts.Org != "" && (!ownerRepoPattern.MatchString(opts.Org) || opts.Org == "." || opts.Org == "..") {
		return fmt.Errorf("ghapi: Org %q: want letters, digits, '-', '_' or '.'", opts.Org)
	}
	return nil
}

// authTransport builds the credential layer over next.
func authTransport(opts Options, base *url.URL, next http.RoundTripper, red *redact.Redactor) (http.RoundTripper, error) {
	switch {
	case opts.Token != "" && opts.App != nil:
		return nil, errors.New("ghapi: both Token and App are set; want exactly one")
	case opts.Token != "":
		if strings.ContainsAny(opts.Token, " \t\r\n") {
			return nil, errors.New("ghapi: Token contains whitespace; want the bare token")
		}
		red.Add(opts.Token)
		return &bearerTransport{token: opts.Token, next: next}, nil
	case opts.App != nil:
		app := opts.App
		if app.AppID <= 0 {
			return nil, fmt.Errorf("ghapi: App.AppID is %d; want the App's positive id", app.AppID)
		}
		if app.InstallationID <= 0 {
			return nil, fmt.Errorf("ghapi: App.InstallationID is %d; want the installation's positive id", app.InstallationID)
		}
		if len(app.PrivateKeyPEM) == 0 {
			return nil, errors.New("ghapi: App.PrivateKeyPEM is empty; want the App's RSA private key in PEM")
		}
		// Parse here so a bad key fails in New, not on first use. The parser's
		// message is not included: it is generic, and the key must never be.
		key, err := jwt.ParseRSAPrivateKeyFromPEM(app.PrivateKeyPEM)
		if err != nil {
			return nil, errors.New("ghapi: App.PrivateKeyPEM: not a PEM-encoded RSA private key (PKCS#1 or PKCS#8)")
		}
		atr := ghinstallation.NewAppsTransportFromPrivateKey(next, app.AppID, key)
		atr.BaseURL = strings.TrimSuffix(base.String(), "/")
		itr := ghinstallation.NewFromAppsTransport(atr, app.InstallationID)
		return itr, nil
	default:
		return nil, errors.New("ghapi: no credentials; set Token or App")
	}
}

// limitRedirects stops signed-URL downloads after a few hops.
func limitRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	return nil
}

// fail wraps a failed call's error: rate limits become *RateLimitError, and
// the message is redacted. also is a sentinel the failure additionally
// matches (or nil).
func (c *Client) fail(op string, err error, also error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, StatusCode: statusOf(err), Err: err, also: also, redactor: c.redactor}
	if rl := classifyRateLimit(err, c.policy.Now()); rl != nil {
		e.Err = rl
	}
	return e
}
