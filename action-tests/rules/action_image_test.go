package rules

// The action image is built here, without a Docker daemon, from the same
// build outputs the Dockerfile's stages produce and from its final stage's
// own lines (pkg/actionimage, the builder the release verifies its pushed
// image with), then checked: size, every file, entrypoint and user.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionimage"
)

// TestActionImageBuilt builds every file of the action image's final stage
// as the Dockerfile does, builds the image from them as an OCI layout, and
// checks it against the Dockerfile: every file (path, mode, owner, size,
// SHA-256), the entrypoint (also every action.yml's), the user (root: the
// final stage sets no USER, as GitHub's Docker actions need) and at most
// 20,000,000 bytes unpacked. The action program must be static (the image is
// FROM scratch) and carry the release defaults: -X on a name that does not
// exist is silently ignored, so a moved variable would ship without its
// proof URL. Then it plants a difference on each side: the Dockerfile
// changed without the builder, and the builder's output changed without the
// Dockerfile; each must fail.
func TestActionImageBuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every program of the image with -trimpath (full compiles)")
	}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skip("no CA bundle on this machine to stand in for the build image's")
	}
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	real := string(data)
	files, b, err := metaFinalStageContent(t, real, true)
	assert.NilError(t, err)
	locate := func(_, p string) string { return b.local(p) }
	amd64 := actionimage.Platform{OS: "linux", Architecture: "amd64"}

	img, m, err := actionimage.BuildChecked(b.def, locate, amd64, actionimage.MaxBytes)
	assert.NilError(t, err, "the image built from the Dockerfile's outputs")
	var lines []string
	for _, f := range files {
		lines = append(lines, fmt.Sprintf("%10d %s", f.size, f.path))
	}
	t.Logf("the action image: %d files, %d bytes of content, %d bytes unpacked, %d bytes compressed:\n%s",
		m.Files, m.ContentBytes, m.UnpackedBytes, m.CompressedBytes, strings.Join(lines, "\n"))
	assert.Check(t, m.UnpackedBytes <= actionimage.MaxBytes && actionimage.MaxBytes == 20_000_000)

	// Written as an OCI layout and read back by the command the release verifies with.
	layoutDir := filepath.Join(t.TempDir(), "action-image")
	_, err = actionimage.WriteLayout(layoutDir, img, amd64)
	assert.NilError(t, err)
	var out bytes.Buffer
	assert.NilError(t, actionimage.RunCLI(context.Background(),
		[]string{"verify", "--dockerfile", filepath.Join(metaRepoRoot, "Dockerfile"), "--layout", layoutDir}, &out))
	assert.Check(t, is.Contains(out.String(), "linux/amd64: sha256:"))

	cfg, err := img.ConfigFile()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(cfg.Config.Entrypoint, []string{"/" + metaActionsBinary}))
	assert.Check(t, is.Equal(cfg.Config.User, ""), "GitHub runs Docker actions as root: the final stage sets no USER")
	assert.Check(t, slices.Contains(cfg.Config.Env, "ZONEINFO=/zoneinfo.zip"))
	actionYMLs, err := filepath.Glob(filepath.Join(metaRepoRoot, "actions", "*", "action.yml"))
	assert.NilError(t, err)
	assert.Assert(t, len(actionYMLs) > 5)
	for _, file := range actionYMLs {
		text, err := os.ReadFile(file)
		assert.NilError(t, err)
		var a struct {
			Runs struct{ Entrypoint string } `yaml:"runs"`
		}
		assert.NilError(t, yaml.Unmarshal(text, &a))
		assert.Check(t, is.Equal(a.Runs.Entrypoint, cfg.Config.Entrypoint[0]), "%s: runs.entrypoint is not the image's", file)
	}
	for _, want := range []string{"/" + metaActionsBinary, "/cuda-smoke", "/cuda-smoke.sha256", "/serverless-worker",
		"/serverless-worker.sha256", "/etc/ssl/certs/ca-certificates.crt", "/zoneinfo.zip"} {
		assert.Check(t, slices.ContainsFunc(files, func(f metaImageFile) bool { return f.path == want }), "the image has no %s", want)
	}
	tmp := slices.IndexFunc(b.entries, func(e actionimage.Entry) bool { return e.Path == "/tmp" })
	assert.Check(t, tmp >= 0 && b.entries[tmp].Mode.String() == "dtrwxrwxrwx", "/tmp must be 1777 in the image")

	program := b.local("/out/" + metaActionsBinary)
	assert.Assert(t, b.built["/out/"+metaActionsBinary] != nil, "the Dockerfile does not build /out/%s", metaActionsBinary)
	assert.Check(t, is.Contains(strings.Join(b.built["/out/"+metaActionsBinary], " "), "-trimpath"))
	interp, needed := metaLinking(t, program)
	assert.Check(t, interp == "", "%s asks for the loader %s: the image is FROM scratch", metaActionsBinary, interp)
	assert.Check(t, is.Len(needed, 0), "%s needs shared libraries", metaActionsBinary)
	bin, err := os.ReadFile(program)
	assert.NilError(t, err)
	for _, k := range []string{"VERSION", "PROOF_URL", "proof_sha256", "WORKER_URL", "worker_sha256", "CUDA_RUNNER_IMAGE", "POD_IMAGE"} {
		assert.Check(t, strings.Contains(string(bin), b.vars[k]), "the Dockerfile's -X for %s did not reach the binary", k)
	}

	t.Run("the Dockerfile changed without the builder", func(t *testing.T) {
		tests := []struct{ name, old, new, want string }{
			{name: "one more file", old: "COPY --from=build /out/ /\n", new: "COPY --from=build /out/ /\nCOPY --from=build /out/cuda-smoke /opt/cuda-smoke\n",
				want: "/opt/cuda-smoke is missing: the Dockerfile copies it"},
			{name: "one file fewer", old: "COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n", new: "",
				want: "/etc/ssl/certs/ca-certificates.crt (file -rw-r--r-- 0:0"},
			{name: "another entrypoint", old: `ENTRYPOINT ["/runpod-gpu-actions"]`, new: `ENTRYPOINT ["/cuda-smoke"]`,
				want: `entrypoint ["/runpod-gpu-actions"]: the Dockerfile says ["/cuda-smoke"]`},
			{name: "a non-root user", old: "\nENV ZONEINFO=/zoneinfo.zip", new: "\nENV ZONEINFO=/zoneinfo.zip\nUSER 65532",
				want: `user "": the Dockerfile says "65532"`},
			{name: "another environment", old: "\nENV ZONEINFO=/zoneinfo.zip", new: "\nENV ZONEINFO=/usr/share/zoneinfo",
				want: "environment has no ZONEINFO=/usr/share/zoneinfo"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				assert.Assert(t, strings.Contains(real, tc.old), "the Dockerfile no longer contains %q; update this case", tc.old)
				def, err := actionimage.ParseDockerfile(strings.Replace(real, tc.old, tc.new, 1))
				assert.NilError(t, err)
				want, err := actionimage.Entries(def, locate)
				assert.NilError(t, err)
				_, err = actionimage.Verify(img, def, want, actionimage.MaxBytes)
				assert.Check(t, is.ErrorContains(err, tc.want))
			})
		}
	})

	t.Run("the builder changed without the Dockerfile", func(t *testing.T) {
		tests := []struct {
			name   string
			change func([]actionimage.Entry) []actionimage.Entry
			want   string
		}{
			{name: "a file left out", want: "/cuda-smoke.sha256 is missing: the Dockerfile copies it",
				change: func(es []actionimage.Entry) []actionimage.Entry {
					return slices.DeleteFunc(es, func(e actionimage.Entry) bool { return e.Path == "/cuda-smoke.sha256" })
				}},
			{name: "a file added", want: "/zoneinfo.zip.bak (file -rw-r--r-- 0:0",
				change: func(es []actionimage.Entry) []actionimage.Entry {
					i := slices.IndexFunc(es, func(e actionimage.Entry) bool { return e.Path == "/zoneinfo.zip" })
					extra := es[i]
					extra.Path = "/zoneinfo.zip.bak"
					return append(es, extra)
				}},
			{name: "a file owned by another user", want: "/cuda-smoke is file -rwxr-xr-x 1001:1001",
				change: func(es []actionimage.Entry) []actionimage.Entry {
					i := slices.IndexFunc(es, func(e actionimage.Entry) bool { return e.Path == "/cuda-smoke" })
					es[i].UID, es[i].GID = 1001, 1001
					return es
				}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				changed, err := actionimage.Build(b.def, tc.change(slices.Clone(b.entries)), amd64)
				assert.NilError(t, err)
				_, err = actionimage.Verify(changed, b.def, b.entries, actionimage.MaxBytes)
				assert.Check(t, is.ErrorContains(err, tc.want))
			})
		}
	})
}
