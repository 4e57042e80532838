// Package registry resolves a container image tag to the digest it points at
// now, through the OCI distribution API with an anonymous pull token, so every
// candidate of a run boots exactly the same runner image.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// manifestAccept lists the manifest kinds a multi-arch runner image may have.
var manifestAccept = strings.Join([]string{
	"application/vnd.oci.image.index.v1+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.docker.distribution.manifest.v2+json",
}, ", ")

// Reference is a parsed image reference host/repository[:tag][@digest].
type Reference struct {
	Host, Repository, Tag, Digest string
}

var (
	hostRE   = lazyre.Regexp{Pattern: `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?$`}
	repoRE   = lazyre.Regexp{Pattern: `^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$`}
	tagRE    = lazyre.Regexp{Pattern: `^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`}
	digestRE = lazyre.Regexp{Pattern: `^sha256:[0-9a-f]{64}$`}
)

// Parse reads an image reference; the registry host must be explicit (no Docker Hub shorthand).
func Parse(ref string) (Reference, error) {
	bad := func(why string) (Reference, error) {
		return Reference{}, fmt.Errorf("image %q: %s; want host/repository:tag or host/repository@sha256:<64 hex>", ref, why)
	}
	rest := ref
	var r Reference
	if i := strings.Index(rest, "@"); i >= 0 {
		r.Digest, rest = rest[i+1:], rest[:i]
		if !digestRE.MatchString(r.Digest) {
			return bad("malformed digest")
		}
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok || !strings.ContainsAny(host, ".:") {
		return bad("no registry host")
	}
	if i := strings.LastIndex(path, ":"); i >= 0 {
		r.Tag, path = path[i+1:], path[:i]
		if !tagRE.MatchString(r.Tag) {
			return bad("malformed tag")
		}
	}
	if !hostRE.MatchString(host) || !repoRE.MatchString(path) {
		return bad("malformed host or repository")
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	r.Host, r.Repository = host, path
	return r, nil
}

// String formats the reference; a resolved one reads host/repo:tag@sha256:….
func (r Reference) String() string {
	s := r.Host + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// Defaults of a Resolver whose bounds are zero.
const (
	// DefaultTimeout bounds one resolution in all: token and manifest reads,
	// retries and every wait between them. Provision holds no pod yet, but it
	// holds the run's place in line for a GPU; a registry that does not answer
	// must end the run with a clear error, not at the step timeout.
	DefaultTimeout = 60 * time.Second
	// DefaultAttemptTimeout bounds the wait for one answer, so that one
	// stalled connection is retried inside the resolution's deadline instead
	// of using all of it.
	DefaultAttemptTimeout = 20 * time.Second
)

// Resolver resolves tags to digests. The zero value (with APIURL set or not)
// is ready to use: it builds its own request policy on first use.
type Resolver struct {
	// APIURL overrides https://<host> (tests, mirrors); empty uses the image's host.
	APIURL string
	// Transport is the bottom transport under the policy; nil uses
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Policy is the request policy (backoff, Retry-After, cooldown, bounded
	// attempts, clock). nil builds one for this Resolver that logs to Logf.
	// Give the registry its own Policy, not RunPod's: a registry 429 must not
	// pause RunPod calls.
	Policy *reqpolicy.Policy
	// Timeout bounds one Resolve, measured on the Policy's clock and in wall
	// time (reqpolicy.Bound); 0 means DefaultTimeout.
	Timeout time.Duration
	// AttemptTimeout bounds one request's wait for its answer (wall time);
	// 0 means DefaultAttemptTimeout.
	AttemptTimeout time.Duration
	// Logf receives the default Policy's retry and give-up lines; unused when
	// Policy is set (that Policy has its own logger).
	Logf func(string)

	once   sync.Once
	client *http.Client
	policy *reqpolicy.Policy
}

// setup builds the client once: attempt bound → policy → bottom transport.
func (r *Resolver) setup() {
	r.once.Do(func() {
		r.policy = r.Policy
		if r.policy == nil {
			opts := []reqpolicy.Option{}
			if r.Logf != nil {
				opts = append(opts, reqpolicy.WithLogger(r.Logf))
			}
			r.policy = reqpolicy.New(opts...)
		}
		bottom := r.Transport
		if bottom == nil {
			bottom = http.DefaultTransport
		}
		attempt := r.AttemptTimeout
		if attempt <= 0 {
			attempt = DefaultAttemptTimeout
		}
		r.client = &http.Client{Transport: r.policy.Transport(&attemptBound{next: bottom, d: attempt})}
	})
}

func (r *Resolver) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// Resolve returns ref pinned to its current digest. An already pinned reference
// is returned as is, without a request. Every error names the image and the
// registry; a registry that does not answer within Timeout (or asks, through
// Retry-After, for a pause that does not fit it) fails the resolution at once.
func (r *Resolver) Resolve(ctx context.Context, image string) (string, error) {
	ref, err := Parse(image)
	if err != nil {
		return "", err
	}
	if ref.Digest != "" {
		return ref.String(), nil
	}
	digest, err := r.resolveBounded(ctx, image, ref)
	if err != nil {
		return "", err
	}
	ref.Digest = digest
	return ref.String(), nil
}

// dockerHubHosts are the names Docker Hub images are written with; its
// registry API answers at registry-1.docker.io, not at these.
var dockerHubHosts = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true}

// apiEndpoint is where ref's registry API answers and the repository it
// knows ref by: its own host, except Docker Hub's, whose official images
// (one path part) live under library/.
func apiEndpoint(ref Reference) (string, Reference) {
	if !dockerHubHosts[ref.Host] {
		return "https://" + ref.Host, ref
	}
	if !strings.Contains(ref.Repository, "/") {
		ref.Repository = "library/" + ref.Repository
	}
	return "https://registry-1.docker.io", ref
}

// resolveBounded asks ref's registry (APIURL, else the image's own host) for
// its digest within Timeout; an error names the image and the registry.
func (r *Resolver) resolveBounded(ctx context.Context, image string, ref Reference) (string, error) {
	r.setup()
	base := r.APIURL
	if base == "" {
		base, ref = apiEndpoint(ref)
	}
	base = strings.TrimRight(base, "/")
	limit := r.timeout()
	rctx, cancel := reqpolicy.Bound(ctx, r.policy, limit)
	defer cancel()
	digest, err := r.resolve(rctx, base, ref)
	if err != nil {
		return "", r.explain(ctx, rctx, image, base, limit, err)
	}
	return digest, nil
}

// explain names the image and registry in err and says, for a deadline,
// which bound ended the resolution.
func (r *Resolver) explain(parent, bounded context.Context, image, base string, limit time.Duration, err error) error {
	shown := base
	if u, perr := url.Parse(base); perr == nil {
		shown = u.Redacted() // a mirror URL may carry user:password
	}
	prefix := fmt.Sprintf("resolve %s at registry %s", image, r.policy.Redactor().Redact(shown))
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s: cancelled: %w", prefix, err)
	case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		return fmt.Errorf("%s: the registry asks for a pause that does not fit the %s resolution deadline: %w", prefix, limit, err)
	case bounded.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within the %s resolution deadline: %w", prefix, limit, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func (r *Resolver) resolve(ctx context.Context, base string, ref Reference) (string, error) {
	target := ref.Tag
	if ref.Digest != "" {
		target = ref.Digest
	}
	manifest := base + "/v2/" + ref.Repository + "/manifests/" + target
	resp, err := r.head(ctx, manifest, "")
	if err != nil {
		return "", err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		token, terr := r.token(ctx, resp.Header.Get("WWW-Authenticate"), ref)
		if terr != nil {
			return "", terr
		}
		if resp, err = r.head(ctx, manifest, token); err != nil {
			return "", err
		}
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("registry answered %s", resp.Status)
	}
	digest := resp.Header.Get("Docker-Content-Digest")
	if !digestRE.MatchString(digest) {
		return "", fmt.Errorf("registry sent no usable Docker-Content-Digest (%q)", digest)
	}
	return digest, nil
}

func (r *Resolver) head(ctx context.Context, target, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", manifestAccept)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// token fetches an anonymous pull token from the realm the registry named.
func (r *Resolver) token(ctx context.Context, challenge string, ref Reference) (string, error) {
	params := parseChallenge(challenge)
	realm := params["realm"]
	if realm == "" {
		return "", errors.New("registry wants authentication but names no token realm")
	}
	u, err := url.Parse(realm)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("registry token realm %q is not an http(s) URL", realm)
	}
	q := u.Query()
	if s := params["service"]; s != "" {
		q.Set("service", s)
	}
	scope := params["scope"]
	if scope == "" {
		scope = "repository:" + ref.Repository + ":pull"
	}
	q.Set("scope", scope)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("registry token: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("registry token: %s", resp.Status)
	}
	var body struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", fmt.Errorf("registry token: %w", err)
	}
	if body.Token == "" {
		body.Token = body.AccessToken
	}
	if body.Token == "" {
		return "", errors.New("registry token: empty token")
	}
	return body.Token, nil
}

// parseChallenge reads `Bearer realm="…",service="…",scope="…"`.
func parseChallenge(h string) map[string]string {
	out := map[string]string{}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return out
	}
	for _, part := range splitParams(rest) {
		k, v, ok := strings.Cut(part, "=")
		if ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return out
}

// splitParams splits on commas outside quotes (scopes may contain commas).
func splitParams(s string) []string {
	var parts []string
	var cur strings.Builder
	quoted := false
	for _, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
			cur.WriteRune(c)
		case c == ',' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	return append(parts, cur.String())
}
