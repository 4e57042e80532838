package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

var digest = "sha256:" + strings.Repeat("ab", 32)

func TestResolve(t *testing.T) {
	srv := httptest.NewServer(Handler(map[string]string{"actions/actions-runner:latest": digest}))
	defer srv.Close()
	r := &Resolver{APIURL: srv.URL}
	got, err := r.Resolve(context.Background(), "ghcr.io/actions/actions-runner:latest")
	assert.NilError(t, err)
	assert.Equal(t, got, "ghcr.io/actions/actions-runner:latest@"+digest)

	pinned := "ghcr.io/actions/actions-runner@" + digest
	got, err = (&Resolver{APIURL: "http://127.0.0.1:1"}).Resolve(context.Background(), pinned)
	assert.NilError(t, err, "a pinned image needs no request")
	assert.Equal(t, got, pinned)

	_, err = r.Resolve(context.Background(), "ghcr.io/actions/missing:latest")
	assert.ErrorContains(t, err, "registry answered 404")
	_, err = (&Resolver{APIURL: "http://127.0.0.1:1"}).Resolve(context.Background(), "ghcr.io/actions/actions-runner:latest")
	assert.ErrorContains(t, err, "resolve ghcr.io/actions/actions-runner:latest")
}

func TestResolveRejectsDigestlessAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Docker-Content-Digest", "md5:x") }))
	defer srv.Close()
	_, err := (&Resolver{APIURL: srv.URL}).Resolve(context.Background(), "ghcr.io/a/b:1")
	assert.ErrorContains(t, err, "no usable Docker-Content-Digest")
}

func TestParse(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "ghcr.io/actions/actions-runner:latest", want: "ghcr.io/actions/actions-runner:latest"},
		{in: "ghcr.io/actions/actions-runner", want: "ghcr.io/actions/actions-runner:latest"},
		{in: "localhost:5000/a/b:v1.2", want: "localhost:5000/a/b:v1.2"},
		{in: "ghcr.io/a/b:1@" + digest, want: "ghcr.io/a/b:1@" + digest},
		{in: "ubuntu:22.04", wantErr: "no registry host"},
		{in: "ghcr.io/a/b@sha256:xyz", wantErr: "malformed digest"},
		{in: "ghcr.io/a/b:$(id)", wantErr: "malformed tag"},
		{in: "ghcr.io/A;B/c:1", wantErr: "malformed host or repository"},
		{in: "ghcr.io/a b/c", wantErr: "malformed host or repository"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			r, err := Parse(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, r.String(), tc.want)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("ghcr.io/actions/actions-runner:latest")
	f.Add("h.io/a@" + digest)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("%q parses to %+v, which does not round-trip", s, r)
		}
		if strings.ContainsAny(r.String(), " ;$`'\"\\\n") {
			t.Fatalf("%q accepted with shell metacharacters", s)
		}
	})
}
