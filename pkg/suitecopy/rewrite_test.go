package suitecopy

import (
	"bytes"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestRewrite(t *testing.T) {
	tests := []struct {
		name, text, want string
		wantN            int
	}{
		{name: "module path", text: "module github.com/org/runpod-gpu\n", want: "module github.com/acme/runpod-gpu\n", wantN: 1},
		{name: "import", text: "\t\"github.com/org/runpod-gpu/pkg/callers\"\n", want: "\t\"github.com/acme/runpod-gpu/pkg/callers\"\n", wantN: 1},
		{name: "image by tag", text: "image: docker://ghcr.io/org/runpod-gpu:v1", want: "image: docker://ghcr.io/acme/runpod-gpu:v1", wantN: 1},
		{name: "runner image", text: "ghcr.io/org/runpod-gpu-runner-cuda@sha256:ab", want: "ghcr.io/acme/runpod-gpu-runner-cuda@sha256:ab", wantN: 1},
		{name: "uses an action", text: "- uses: org/runpod-gpu/actions/provision@v1", want: "- uses: acme/runpod-gpu/actions/provision@v1", wantN: 1},
		{name: "uses a workflow", text: "uses: org/runpod-gpu/.github/workflows/gpu-lane.yml@v1", want: "uses: acme/runpod-gpu/.github/workflows/gpu-lane.yml@v1", wantN: 1},
		{name: "release URL", text: "https://github.com/org/runpod-gpu/releases/download/v1.0.0/cuda-smoke", want: "https://github.com/acme/runpod-gpu/releases/download/v1.0.0/cuda-smoke", wantN: 1},
		{name: "at the start", text: "org/runpod-gpu@v1", want: "acme/runpod-gpu@v1", wantN: 1},
		{name: "at the end", text: "ARG REPOSITORY=org/runpod-gpu", want: "ARG REPOSITORY=acme/runpod-gpu", wantN: 1},
		{name: "quoted and in a regexp", text: "`^org/runpod-gpu/\\.github` 'org/runpod-gpu' \"org/runpod-gpu\"", want: "`^acme/runpod-gpu/\\.github` 'acme/runpod-gpu' \"acme/runpod-gpu\"", wantN: 3},
		{name: "several on a line", text: "org/runpod-gpu and (org/runpod-gpu) and **org/runpod-gpu**", want: "acme/runpod-gpu and (acme/runpod-gpu) and **acme/runpod-gpu**", wantN: 3},
		// What the old sed broke: an owner that only ends in "org".
		{name: "my-org suite flag", text: `"--suite", "my-org/runpod-gpu@v1"`, want: `"--suite", "my-org/runpod-gpu@v1"`},
		{name: "my-org uses", text: "uses: my-org/runpod-gpu/.github/workflows/", want: "uses: my-org/runpod-gpu/.github/workflows/"},
		{name: "my-org homepage", text: "https://github.com/my-org/runpod-gpu", want: "https://github.com/my-org/runpod-gpu"},
		{name: "my-org image", text: "ghcr.io/my-org/runpod-gpu public", want: "ghcr.io/my-org/runpod-gpu public"},
		{name: "longer owner", text: "bigorg/runpod-gpu myorg/runpod-gpu org2/runpod-gpu", want: "bigorg/runpod-gpu myorg/runpod-gpu org2/runpod-gpu"},
		{name: "host name", text: "example.org/runpod-gpu", want: "example.org/runpod-gpu"},
		{name: "longer repository", text: "org/runpod-gpux org/runpod-gpu_2", want: "org/runpod-gpux org/runpod-gpu_2"},
		{name: "another repository", text: "org/gpu-project org/runpod", want: "org/gpu-project org/runpod"},
		{name: "mixed", text: "my-org/runpod-gpu org/runpod-gpu", want: "my-org/runpod-gpu acme/runpod-gpu", wantN: 1},
		{name: "nothing", text: "", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := Rewrite([]byte(tc.text), "org", "acme")
			assert.Check(t, is.Equal(string(got), tc.want))
			assert.Check(t, is.Equal(n, tc.wantN))
			again, n := Rewrite(got, "org", "acme")
			assert.Check(t, is.Equal(string(again), tc.want), "a second rewrite changes nothing")
			assert.Check(t, is.Equal(n, 0))
		})
	}
}

// A copy moved again (acme to beta) turns only acme's references.
func TestRewriteFromACopy(t *testing.T) {
	got, n := Rewrite([]byte("github.com/acme/runpod-gpu org/runpod-gpu my-acme/runpod-gpu"), "acme", "beta")
	assert.Check(t, is.Equal(string(got), "github.com/beta/runpod-gpu org/runpod-gpu my-acme/runpod-gpu"))
	assert.Check(t, is.Equal(n, 1))
}

// An owner that ends in the old one (to "my-org" from "org") is still idempotent:
// the new references are whole owners of their own.
func TestRewriteToALongerOwner(t *testing.T) {
	once, n := Rewrite([]byte("uses: org/runpod-gpu/actions/gate@v1"), "org", "my-org")
	assert.Check(t, is.Equal(string(once), "uses: my-org/runpod-gpu/actions/gate@v1"))
	assert.Check(t, is.Equal(n, 1))
	twice, n := Rewrite(once, "org", "my-org")
	assert.Check(t, is.Equal(string(twice), string(once)))
	assert.Check(t, is.Equal(n, 0))
}

// FuzzRewrite: on any text the rewrite turns exactly the counted references,
// leaves the rest byte for byte, and a second pass finds nothing.
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{"github.com/org/runpod-gpu", "my-org/runpod-gpu org/runpod-gpu-x", "org/runpod-gpuorg/runpod-gpu", "\x00org/runpod-gpu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, n := Rewrite([]byte(text), "org", "acme")
		if n == 0 && !bytes.Equal(got, []byte(text)) {
			t.Fatalf("no reference counted, yet the text changed: %q -> %q", text, got)
		}
		if len(got) != len(text)+n*(len("acme")-len("org")) {
			t.Fatalf("%d references turned, yet the length went from %d to %d", n, len(text), len(got))
		}
		if strings.Count(string(got), "acme/runpod-gpu") < n {
			t.Fatalf("%d references turned, fewer in the result: %q", n, got)
		}
		if _, again := Rewrite(got, "org", "acme"); again != 0 {
			t.Fatalf("a second rewrite turned %d more in %q (from %q)", again, got, text)
		}
		_, m := Rewrite(got, "acme", "org")
		if m < n {
			t.Fatalf("turning back found %d of the %d references in %q", m, n, got)
		}
	})
}
