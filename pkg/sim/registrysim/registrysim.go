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

// Handler serves digests (keyed "repository:tag") with ghcr.io's anonymous
// token dance: 401 with a Bearer challenge until the pull token is presented,
// then the digest in Docker-Content-Digest, or 404 for an unknown tag.
func Handler(digests map[string]string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"token":"anonymous-pull-token"}`)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer anonymous-pull-token" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="%s",scope="repository:x:pull"`, r.Host, r.Host))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		repo, tag, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/")
		digest, found := digests[repo+":"+tag]
		if !ok || !found {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Docker-Content-Digest", digest)
		w.WriteHeader(http.StatusOK)
	})
	return mux
}
