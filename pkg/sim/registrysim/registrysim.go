// Package registrysim is a minimal OCI registry for the simulated cloud and
// tests: fixed digests for repository:tag behind ghcr.io's anonymous token
// dance, just enough for pkg/registry's resolver. It lives with the other
// simulators so that no action binary carries it.
package registrysim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Registry is what the simulated registry holds.
type Registry struct {
	// Digests maps "repository:tag" to the digest the tag points at; a
	// manifest is also found by that digest ("repository" and "sha256:…").
	Digests map[string]string
	// Private are repositories whose packages are private: ghcr.io refuses
	// them an anonymous pull token (401), so `docker pull` says denied.
	Private []string
}

// Handler serves digests (keyed "repository:tag") with ghcr.io's anonymous
// token dance: 401 with a Bearer challenge until the pull token is presented,
// then the digest in Docker-Content-Digest, or 404 for an unknown tag.
func Handler(digests map[string]string) http.Handler { return Registry{Digests: digests}.Handler() }

// Handler serves the registry.
func (reg Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		scope := r.URL.Query().Get("scope") // repository:<name>:pull
		for _, p := range reg.Private {
			if scope == "repository:"+p+":pull" {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
		}
		_, _ = io.WriteString(w, `{"token":"anonymous-pull-token"}`)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		repo, ref, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/")
		if r.Header.Get("Authorization") != "Bearer anonymous-pull-token" {
			scope := "repository:x:pull"
			if ok {
				scope = "repository:" + repo + ":pull"
			}
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="%s",scope="%s"`, r.Host, r.Host, scope))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		digest, found := reg.lookup(repo, ref)
		if !ok || !found {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Docker-Content-Digest", digest)
		w.WriteHeader(http.StatusOK)
	})
	return mux
}

// lookup finds a manifest by tag or by digest.
func (reg Registry) lookup(repo, ref string) (string, bool) {
	if digest, ok := reg.Digests[repo+":"+ref]; ok {
		return digest, true
	}
	for key, digest := range reg.Digests {
		if strings.HasPrefix(key, repo+":") && digest == ref {
			return digest, true
		}
	}
	return "", false
}
