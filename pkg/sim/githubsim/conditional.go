package githubsim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// conditional gives every successful GET answer GitHub's ETag (a digest of
// the body served) and answers a request whose If-None-Match names it with
// 304 Not Modified and no body. Like GitHub's, a 304 costs no rate limit: the
// request's charge is given back.
func (s *Server) conditional(c *call) {
	if c.r.Method != http.MethodGet || c.status != http.StatusOK || c.out == nil {
		return
	}
	sum := sha256.Sum256(c.out)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	c.header.Set("ETag", etag)
	if !etagMatches(c.r.Header.Get("If-None-Match"), etag) {
		return
	}
	c.status, c.out = http.StatusNotModified, nil
	c.header.Del("Content-Type")
	// Only a request that was charged carries the rate headers.
	if w := s.rate[c.who.Login]; w != nil && c.header.Get("X-RateLimit-Remaining") != "" && w.used > 0 {
		w.used--
		setRateHeaders(c, s.rateLimit, s.rateLimit-w.used, w.reset)
	}
}

// etagMatches reports whether an If-None-Match header names etag (a list,
// weak tags included, or "*").
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// RateUsed returns how many requests login has charged to its current hourly
// rate-limit window (0 when it made none).
func (s *Server) RateUsed(login string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.rate[login]; w != nil {
		return w.used
	}
	return 0
}
