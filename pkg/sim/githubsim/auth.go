package githubsim

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// App is a GitHub App registered with the simulation. Its JWTs (RS256, signed with the key
// whose public half is PublicKey, iss = ID) mint installation tokens for InstallationID.
type App struct {
	ID             int64
	Slug           string
	PublicKey      *rsa.PublicKey
	InstallationID int64
}

// installationTokenLifetime is GitHub's: installation tokens expire after one hour.
const installationTokenLifetime = time.Hour

// maxJWTLifetime is GitHub's limit on exp - iat for App JWTs.
const maxJWTLifetime = 10 * time.Minute

type credential struct {
	who Identity
	// scope limits a minted installation token's repositories; nil: all.
	scope repoScope
	// expires is zero for tokens that never expire (configured with WithToken).
	expires time.Time
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var errBadCredentials = newError(http.StatusUnauthorized, ErrUnauthorized, "Bad credentials")

// bearer returns the credential in an Authorization header: "token X" or "Bearer X".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, scheme := range []string{"token ", "bearer "} {
		if len(h) > len(scheme) && strings.EqualFold(h[:len(scheme)], scheme) {
			return strings.TrimSpace(h[len(scheme):])
		}
	}
	return ""
}

func (s *Server) authenticate(c *call) error {
	cred, ok := s.tokens[bearer(c.r)]
	if !ok || (!cred.expires.IsZero() && !c.now.Before(cred.expires)) {
		return errBadCredentials
	}
	c.who, c.scope = cred.who, cred.scope
	s.scopeHeader(c)
	return nil
}

// authenticateApp accepts an App JWT and sets c.who to the App it names.
func (s *Server) authenticateApp(c *call) error {
	appID, err := s.verifyAppJWT(bearer(c.r))
	if err != nil {
		return newError(http.StatusUnauthorized, ErrUnauthorized, "%s", err.Error())
	}
	app := s.apps[appID]
	c.who = Identity{AppID: app.ID, AppSlug: app.Slug}.normalized()
	return nil
}

type jwtHeader struct {
	Alg string `json:"alg"`
}

type jwtClaims struct {
	Issuer   json.RawMessage `json:"iss"`
	IssuedAt int64           `json:"iat"`
	Expires  int64           `json:"exp"`
}

// verifyAppJWT checks an App JWT's signature against the registered key of the App it names.
// Its times are checked only against each other: ghinstallation stamps them from the real
// clock, which a simulation on a virtual clock cannot compare with.
func (s *Server) verifyAppJWT(token string) (int64, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0, fmt.Errorf("A JSON web token could not be decoded")
	}
	var hdr jwtHeader
	var claims jwtClaims
	if err := decodeJWTPart(parts[0], &hdr); err != nil {
		return 0, err
	}
	if err := decodeJWTPart(parts[1], &claims); err != nil {
		return 0, err
	}
	if hdr.Alg != "RS256" {
		return 0, fmt.Errorf("'Expiration time' claim ('exp') is invalid: alg %q is not RS256", hdr.Alg)
	}
	appID, err := strconv.ParseInt(strings.Trim(string(claims.Issuer), `"`), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("'Issuer' claim ('iss') must be an Integer")
	}
	app, ok := s.apps[appID]
	if !ok || app.PublicKey == nil {
		return 0, fmt.Errorf("Integration not found")
	}
	if claims.Expires <= claims.IssuedAt || time.Duration(claims.Expires-claims.IssuedAt)*time.Second > maxJWTLifetime {
		return 0, fmt.Errorf("'Expiration time' claim ('exp') is too far in the future")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return 0, fmt.Errorf("A JSON web token could not be decoded")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(app.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
		return 0, fmt.Errorf("A JSON web token could not be decoded")
	}
	return appID, nil
}

func decodeJWTPart(part string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil || json.Unmarshal(raw, v) != nil {
		return fmt.Errorf("A JSON web token could not be decoded")
	}
	return nil
}

type installationToken struct {
	Token               string            `json:"token"`
	ExpiresAt           string            `json:"expires_at"`
	Permissions         map[string]string `json:"permissions"`
	RepositorySelection string            `json:"repository_selection"`
}

func (s *Server) createInstallationToken(c *call) error {
	id, err := pathInt(c, "installation_id")
	if err != nil {
		return err
	}
	app := s.apps[c.who.AppID]
	scope, ok := s.installationScope(app, id)
	if !ok {
		return notFound("installation %d of app %d", id, app.ID)
	}
	token := "ghs_" + s.randomString(36)
	expires := c.now.Add(installationTokenLifetime)
	s.tokens[token] = &credential{who: c.who, scope: scope, expires: expires}
	c.writeJSON(http.StatusCreated, installationToken{
		Token:               token,
		ExpiresAt:           stamp(expires),
		Permissions:         map[string]string{"actions": "write", "checks": "write", "pull_requests": "read", "issues": "write", "administration": "write"},
		RepositorySelection: "all",
	})
	return nil
}

const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomString draws from the seeded secret stream: unguessable without the seed, repeatable with it.
func (s *Server) randomString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphanumeric[s.secrets.IntN(len(alphanumeric))]
	}
	return string(b)
}

// rateWindow counts one token's requests in the current hour.
type rateWindow struct {
	reset time.Time
	used  int
}

// countRate charges the request to its caller's hourly budget and answers GitHub's primary
// rate-limit 403 once the budget is spent.
func (s *Server) countRate(c *call) error {
	w := s.rate[c.who.Login]
	if w == nil || !c.now.Before(w.reset) {
		w = &rateWindow{reset: c.now.Add(time.Hour).Truncate(time.Second)}
		s.rate[c.who.Login] = w
	}
	if w.used >= s.rateLimit {
		setRateHeaders(c, s.rateLimit, 0, w.reset)
		return newError(http.StatusForbidden, errRateLimited, "API rate limit exceeded for %s.", c.who.Login)
	}
	w.used++
	setRateHeaders(c, s.rateLimit, s.rateLimit-w.used, w.reset)
	return nil
}

func setRateHeaders(c *call, limit, remaining int, reset time.Time) {
	c.header.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	c.header.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	c.header.Set("X-RateLimit-Used", strconv.Itoa(limit-remaining))
	c.header.Set("X-RateLimit-Reset", itoa(reset.Unix()))
	c.header.Set("X-RateLimit-Resource", "core")
}
