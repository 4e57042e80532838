package ghapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// bearerTransport authenticates every request with a fixed token.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // RoundTrippers must not modify the caller's request
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(req)
}

// hostGuard removes credentials from any request for another host. The auth
// layers above add them to every request they see, including redirects
// http.Client follows, which may lead off the API host.
type hostGuard struct {
	host string
	next http.RoundTripper
}

func (t *hostGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Host, t.host) && req.Header.Get("Authorization") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return t.next.RoundTrip(req)
}

// maxTokenResponse bounds how much of an access-token answer is read.
const maxTokenResponse = 1 << 20

// tokenCapture hands each installation token GitHub mints to learn (the
// redactor and the runner's mask) before ghinstallation can use it, and lets
// the request policy retry the mint: a repeated token POST only mints
// another short-lived token, unlike other POSTs.
type tokenCapture struct {
	learn func(secret string)
	next  http.RoundTripper
}

func (t *tokenCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isTokenMint(req) {
		return t.next.RoundTrip(req)
	}
	req = req.WithContext(reqpolicy.AllowRetry(req.Context()))
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if readErr != nil {
		return nil, readErr
	}
	var minted struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(body, &minted) == nil && minted.Token != "" {
		t.learn(minted.Token)
	}
	return resp, nil
}

// isTokenMint reports whether req is POST …/app/installations/{id}/access_tokens.
func isTokenMint(req *http.Request) bool {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/access_tokens") {
		return false
	}
	return strings.Contains(req.URL.Path, "/app/installations/")
}
