package registry

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/registrysim"
)

// An image GitHub's runner pulls anonymously: a public package answers its
// manifest by digest or tag; a private one is refused the pull token.
func TestPullable(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	srv := httptest.NewServer(registrysim.Registry{
		Digests: map[string]string{"org/runpod-gpu:v1.0.0": digest, "other/runpod-gpu:v1.0.0": digest},
		Private: []string{"other/runpod-gpu"},
	}.Handler())
	defer srv.Close()
	r := &Resolver{APIURL: srv.URL}
	ctx := context.Background()
	assert.NilError(t, r.Pullable(ctx, "ghcr.io/org/runpod-gpu@"+digest))
	assert.NilError(t, r.Pullable(ctx, "ghcr.io/org/runpod-gpu:v1.0.0"))
	err := r.Pullable(ctx, "ghcr.io/org/runpod-gpu@sha256:"+strings.Repeat("cd", 32))
	assert.Check(t, is.ErrorContains(err, "404"))
	err = r.Pullable(ctx, "ghcr.io/other/runpod-gpu@"+digest)
	assert.Check(t, is.ErrorContains(err, "registry token: 401"))
}
