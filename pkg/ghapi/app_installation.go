package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/version"
)

// AppClient calls the endpoints a GitHub App answers as itself (its JWT), not
// as one installation: an organization's reaper uses it to find, per
// repository, the installation whose token may read that repository's runs.
type AppClient struct {
	gh       *github.Client
	policy   *reqpolicy.Policy
	redactor *redact.Redactor
}

// NewAppClient returns an AppClient for opts.App (its AppID and key; the
// InstallationID is not used), with opts' BaseURL, Policy and HTTPClient. It
// makes no request.
func NewAppClient(opts Options) (*AppClient, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	app := opts.App
	switch {
	case app == nil || app.AppID <= 0:
		return nil, errors.New("ghapi: NewAppClient needs App with the App's positive AppID")
	case len(app.PrivateKeyPEM) == 0:
		return nil, errors.New("ghapi: App.PrivateKeyPEM is empty; want the App's RSA private key in PEM")
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(app.PrivateKeyPEM)
	if err != nil {
		return nil, errors.New("ghapi: App.PrivateKeyPEM: not a PEM-encoded RSA private key (PKCS#1 or PKCS#8)")
	}
	policy := opts.Policy
	if policy == nil {
		policy = defaultPolicy()
	}
	bottom := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		bottom = opts.HTTPClient.Transport
	}
	atr := ghinstallation.NewAppsTransportFromPrivateKey(&hostGuard{host: base.Host, next: policy.Transport(bottom)}, app.AppID, key)
	atr.BaseURL = strings.TrimSuffix(base.String(), "/")
	gh := github.NewClient(&http.Client{Transport: atr})
	gh.BaseURL = base
	gh.UserAgent = version.UserAgent()
	return &AppClient{gh: gh, policy: policy, redactor: policy.Redactor()}, nil
}

// RepoInstallation returns the id of the App's installation that covers
// owner/repo. An App not installed there, or installed without access to the
// repository, fails with an error matching ErrNotFound.
func (a *AppClient) RepoInstallation(ctx context.Context, owner, repo string) (int64, error) {
	if err := validateNames(Options{Owner: owner, Repo: repo}); err != nil {
		return 0, err
	}
	inst, _, err := a.gh.Apps.FindRepositoryInstallation(ctx, owner, repo)
	if err != nil {
		e := &Error{Op: fmt.Sprintf("find the App's installation on %s/%s", owner, repo), StatusCode: statusOf(err), Err: err, redactor: a.redactor}
		if rl := classifyRateLimit(err, a.policy.Now()); rl != nil {
			e.Err = rl
		}
		return 0, e
	}
	if inst.GetID() <= 0 {
		return 0, &Error{Op: fmt.Sprintf("find the App's installation on %s/%s", owner, repo), StatusCode: http.StatusOK,
			Err: fmt.Errorf("%w: the answer has no installation id", ErrUnusableAnswer), redactor: a.redactor}
	}
	return inst.GetID(), nil
}
