package actionimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// smallDockerfile is the action image's shape in miniature.
const smallDockerfile = `FROM docker.io/library/golang@sha256:00 AS build
RUN go build -o /out/prog ./cmd/prog
# The image.
FROM scratch
COPY --from=build /etc/ssl/certs/ca.crt /etc/ssl/certs/ca.crt
COPY --from=build /out/ /
ENV ZONEINFO=/zoneinfo.zip
ENTRYPOINT ["/prog"]
`

// stageRoot lays out a build stage's outputs: /out/prog, /out/zoneinfo.zip,
// /out/tmp (1777) and the CA bundle.
func stageRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range map[string]string{"out/prog": "#!prog", "out/zoneinfo.zip": "zones", "etc/ssl/certs/ca.crt": "certs"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(root, p), []byte(data), 0o644))
	}
	assert.NilError(t, os.Chmod(filepath.Join(root, "out/prog"), 0o755))
	assert.NilError(t, os.Mkdir(filepath.Join(root, "out/tmp"), 0o755))
	assert.NilError(t, os.Chmod(filepath.Join(root, "out/tmp"), fs.ModeSticky|0o777))
	return root
}

func TestParseDockerfile(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    *Definition
		wantErr string
	}{
		{name: "the action image's shape", text: smallDockerfile, want: &Definition{
			Copies: []Copy{
				{From: "build", Sources: []string{"/etc/ssl/certs/ca.crt"}, Dest: "/etc/ssl/certs/ca.crt", Mode: -1, Line: 5},
				{From: "build", Sources: []string{"/out/"}, Dest: "/", Mode: -1, Line: 6},
			},
			Env: []string{"ZONEINFO=/zoneinfo.zip"}, Entrypoint: []string{"/prog"},
		}},
		{name: "user, workdir, chown, chmod, continuation",
			text: "FROM x AS b\nFROM scratch\nCOPY --from=b --chown=65532:65532 --chmod=0755 \\\n  /a /c /d/\nUSER 65532\nWORKDIR /d\nCMD [\"-v\"]\nENV A 1 2\n",
			want: &Definition{Copies: []Copy{{From: "b", Sources: []string{"/a", "/c"}, Dest: "/d/", UID: 65532, GID: 65532, Mode: 0o755, Line: 3}},
				User: "65532", WorkDir: "/d", Cmd: []string{"-v"}, Env: []string{"A=1 2"}}},
		{name: "a final stage on a base", text: "FROM x AS b\nFROM alpine\nCOPY --from=b /a /a\n", wantErr: "line 2: \"FROM alpine\": want a final stage FROM scratch"},
		{name: "a RUN in the final stage", text: "FROM x AS b\nFROM scratch\nCOPY --from=b /a /a\nRUN true\n", wantErr: "line 4: \"RUN true\": want only COPY --from"},
		{name: "a copy from the context", text: "FROM x AS b\nFROM scratch\nCOPY a /a\n", wantErr: "want --from=<a build stage"},
		{name: "a copy from an unknown stage", text: "FROM x AS b\nFROM scratch\nCOPY --from=c /a /a\n", wantErr: "want --from=<a build stage"},
		{name: "a wildcard", text: "FROM x AS b\nFROM scratch\nCOPY --from=b /out/* /\n", wantErr: "without wildcards"},
		{name: "shell-form entrypoint", text: "FROM x AS b\nFROM scratch\nCOPY --from=b /a /a\nENTRYPOINT /a\n", wantErr: "the exec form"},
		{name: "chown by name", text: "FROM x AS b\nFROM scratch\nCOPY --from=b --chown=runner /a /a\n", wantErr: "--chown=<uid>:<gid> in numbers"},
		{name: "nothing copied", text: "FROM x AS b\nFROM scratch\nENV A=1\n", wantErr: "a final stage that copies something"},
		{name: "no FROM", text: "RUN true\n", wantErr: "a Dockerfile with a FROM line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, err := ParseDockerfile(tc.text)
			if tc.wantErr != "" {
				var se *SyntaxError
				assert.Check(t, errors.As(err, &se), "got %v", err)
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, def, tc.want)
		})
	}
}

// FuzzParseDockerfile: any text gives a definition or a *SyntaxError, never a panic.
func FuzzParseDockerfile(f *testing.F) {
	f.Add(smallDockerfile)
	f.Add("FROM scratch\nCOPY --from=b --chmod=9 /a\\\n")
	f.Fuzz(func(t *testing.T, text string) {
		def, err := ParseDockerfile(text)
		var se *SyntaxError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("%q: error %v is not a *SyntaxError", text, err)
		}
		if err == nil && len(def.Copies) == 0 {
			t.Fatalf("%q: a definition that copies nothing", text)
		}
	})
}

// TestBuildFollowsTheDefinition builds from a stage's outputs and verifies
// the image: the files COPY lays out with their modes (the sticky /tmp
// included), the configuration, and the sizes.
func TestBuildFollowsTheDefinition(t *testing.T) {
	def, err := ParseDockerfile(smallDockerfile)
	assert.NilError(t, err)
	root := stageRoot(t)
	img, m, err := BuildChecked(def, StageRoots{"build": root}.Locate, Platform{"linux", "arm64"}, MaxBytes)
	assert.NilError(t, err)
	entries, err := Entries(def, StageRoots{"build": root}.Locate)
	assert.NilError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Path+" "+e.Mode.String())
	}
	assert.DeepEqual(t, got, []string{"/etc drwxr-xr-x", "/etc/ssl drwxr-xr-x", "/etc/ssl/certs drwxr-xr-x",
		"/etc/ssl/certs/ca.crt -rw-r--r--", "/prog -rwxr-xr-x", "/tmp dtrwxrwxrwx", "/zoneinfo.zip -rw-r--r--"})
	assert.Check(t, is.Equal(m.Files, 3))
	assert.Check(t, is.Equal(m.ContentBytes, int64(len("#!prog")+len("zones")+len("certs"))))
	assert.Check(t, m.UnpackedBytes > m.ContentBytes && m.CompressedBytes > 0)
	cfg, err := img.ConfigFile()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(cfg.Config.Entrypoint, []string{"/prog"}))
	assert.Check(t, is.Equal(cfg.Config.User, ""))
	assert.Check(t, is.Equal(cfg.Architecture, "arm64"))

	// The same outputs give the same image.
	again, _, err := BuildChecked(def, StageRoots{"build": root}.Locate, Platform{"linux", "arm64"}, MaxBytes)
	assert.NilError(t, err)
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	assert.Check(t, is.Equal(d1, d2))
}

// TestVerifyFindsEveryDifference builds one image and checks it against a
// definition changed in one way each: the Dockerfile and the image must
// agree, file by file and setting by setting.
func TestVerifyFindsEveryDifference(t *testing.T) {
	def, err := ParseDockerfile(smallDockerfile)
	assert.NilError(t, err)
	root := stageRoot(t)
	locate := StageRoots{"build": root}.Locate
	img, _, err := BuildChecked(def, locate, Platform{"linux", "amd64"}, MaxBytes)
	assert.NilError(t, err)
	tests := []struct {
		name    string
		change  func(string) string // applied to the Dockerfile
		stage   func(root string)   // applied to the build outputs after the image was built
		limit   int64
		wantErr []string
	}{
		{name: "as built"},
		{name: "the Dockerfile copies one more file", change: func(s string) string {
			return s + "COPY --from=build /etc/ssl/certs/ca.crt /ca.crt\n"
		}, wantErr: []string{"/ca.crt is missing: the Dockerfile copies it"}},
		{name: "the Dockerfile copies one file fewer", change: func(s string) string {
			return strings.Replace(s, "COPY --from=build /etc/ssl/certs/ca.crt /etc/ssl/certs/ca.crt\n", "", 1)
		}, wantErr: []string{"/etc (directory drwxr-xr-x 0:0) is not copied", "/etc/ssl/certs/ca.crt (file -rw-r--r-- 0:0 5 bytes"}},
		{name: "another entrypoint", change: func(s string) string { return strings.Replace(s, `["/prog"]`, `["/other"]`, 1) },
			wantErr: []string{`entrypoint ["/prog"]: the Dockerfile says ["/other"]`}},
		{name: "a non-root user", change: func(s string) string { return s + "USER 65532\n" },
			wantErr: []string{`user "": the Dockerfile says "65532"`}},
		{name: "a changed build output", stage: func(root string) {
			assert.NilError(t, os.WriteFile(filepath.Join(root, "out/prog"), []byte("#!PROG"), 0o755))
		}, wantErr: []string{"/prog is file -rwxr-xr-x 0:0 6 bytes sha256:"}},
		{name: "over the size limit", limit: 100, wantErr: []string{"bytes unpacked: want at most 100"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := smallDockerfile
			if tc.change != nil {
				text = tc.change(text)
			}
			d, err := ParseDockerfile(text)
			assert.NilError(t, err)
			r := stageRoot(t)
			if tc.stage != nil {
				tc.stage(r)
			}
			want, err := Entries(d, StageRoots{"build": r}.Locate)
			assert.NilError(t, err)
			limit := tc.limit
			if limit == 0 {
				limit = MaxBytes
			}
			_, err = Verify(img, d, want, limit)
			if len(tc.wantErr) == 0 {
				assert.NilError(t, err)
				return
			}
			var me *MismatchError
			assert.Assert(t, errors.As(err, &me), "got %v", err)
			for _, w := range tc.wantErr {
				assert.Check(t, is.ErrorContains(err, w))
			}
		})
	}
}

// TestVerifyPushedImage pushes a two-platform index to a registry on
// loopback, as the release does, and verifies it by reference without the
// build outputs: an extra file or a missing one is found.
func TestVerifyPushedImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	def, err := ParseDockerfile(smallDockerfile)
	assert.NilError(t, err)
	locate := StageRoots{"build": stageRoot(t)}.Locate
	push := func(t *testing.T, repo string, imgs ...v1.Image) string {
		var adds []mutate.IndexAddendum
		for i, img := range imgs {
			arch := []string{"amd64", "arm64"}[i]
			adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
		}
		idx := mutate.AppendManifests(empty.Index, adds...)
		ref, err := name.ParseReference(host + "/" + repo + ":v1")
		assert.NilError(t, err)
		assert.NilError(t, remote.WriteIndex(ref, idx))
		d, err := idx.Digest()
		assert.NilError(t, err)
		return host + "/" + repo + "@" + d.String()
	}
	good, _, err := BuildChecked(def, locate, Platform{"linux", "amd64"}, MaxBytes)
	assert.NilError(t, err)
	goodArm, _, err := BuildChecked(def, locate, Platform{"linux", "arm64"}, MaxBytes)
	assert.NilError(t, err)
	lessDef, err := ParseDockerfile(strings.Replace(smallDockerfile, "COPY --from=build /etc/ssl/certs/ca.crt /etc/ssl/certs/ca.crt\n", "", 1))
	assert.NilError(t, err)
	less, _, err := BuildChecked(lessDef, locate, Platform{"linux", "arm64"}, MaxBytes)
	assert.NilError(t, err)
	rootDef, err := ParseDockerfile(smallDockerfile + "USER 0\n")
	assert.NilError(t, err)
	asRoot, _, err := BuildChecked(rootDef, locate, Platform{"linux", "arm64"}, MaxBytes)
	assert.NilError(t, err)

	dockerfile := filepath.Join(t.TempDir(), "Dockerfile")
	assert.NilError(t, os.WriteFile(dockerfile, []byte(smallDockerfile), 0o644))
	tests := []struct {
		name    string
		imgs    []v1.Image
		wantOut []string
		wantErr string
	}{
		{name: "both platforms as the Dockerfile says", imgs: []v1.Image{good, goodArm}, wantOut: []string{"linux/amd64: sha256:", "linux/arm64: sha256:", "3 files"}},
		{name: "a file the Dockerfile copies is missing", imgs: []v1.Image{good, less},
			wantErr: "linux/arm64: the image does not match the Dockerfile's final stage:\n  /etc/ssl/certs/ca.crt is missing"},
		{name: "another user", imgs: []v1.Image{asRoot, good}, wantErr: "linux/amd64: the image does not match the Dockerfile's final stage:\n  user \"0\""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := push(t, "org/runpod-gpu"+string(rune('a'+i)), tc.imgs...)
			var out bytes.Buffer
			err := RunCLI(context.Background(), []string{"verify", "--dockerfile", dockerfile, "--image", ref}, &out)
			if tc.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				return
			}
			assert.NilError(t, err)
			for _, w := range tc.wantOut {
				assert.Check(t, is.Contains(out.String(), w))
			}
		})
	}
}

// TestCLIBuildWritesALayout: build writes an OCI layout that verify reads back.
func TestCLIBuildWritesALayout(t *testing.T) {
	dir := t.TempDir()
	dockerfile := filepath.Join(dir, "Dockerfile")
	assert.NilError(t, os.WriteFile(dockerfile, []byte(smallDockerfile), 0o644))
	out := filepath.Join(dir, "oci")
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{name: "build", args: []string{"build", "--dockerfile", dockerfile, "--stage", "build=" + stageRoot(t), "--platform", "linux/amd64", "--layout", out},
			wantOut: "linux/amd64: sha256:"},
		{name: "verify the layout", args: []string{"verify", "--dockerfile", dockerfile, "--layout", out}, wantOut: "linux/amd64: sha256:"},
		{name: "no command", args: nil, wantErr: `command "": want build, verify or measure`},
		{name: "a bad platform", args: []string{"build", "--dockerfile", dockerfile, "--stage", "build=/x", "--platform", "amd64", "--layout", out},
			wantErr: `--platform "amd64": want os/architecture`},
		{name: "both sources", args: []string{"verify", "--dockerfile", dockerfile, "--layout", out, "--image", "ghcr.io/a/b:v1"},
			wantErr: "want exactly one of --layout DIR and --image REF"},
		{name: "a stage without outputs", args: []string{"build", "--dockerfile", dockerfile, "--stage", "other=/x", "--layout", out},
			wantErr: "no outputs of stage build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := RunCLI(context.Background(), tc.args, &buf)
			if tc.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Contains(buf.String(), tc.wantOut))
		})
	}
}

// TestMeasureRecordsTheSizesPage pushes images to a registry on loopback and
// records them as the release does: verify writes the action image's row,
// measure a pod image's with its last layer; the other rows stay "not yet
// measured", and a row the page lacks is refused.
func TestMeasureRecordsTheSizesPage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	def, err := ParseDockerfile(smallDockerfile)
	assert.NilError(t, err)
	img, m, err := BuildChecked(def, StageRoots{"build": stageRoot(t)}.Locate, Platform{"linux", "amd64"}, MaxBytes)
	assert.NilError(t, err)
	push := func(repo string, img v1.Image) string {
		ref, err := name.ParseReference(host + "/" + repo + ":v1")
		assert.NilError(t, err)
		assert.NilError(t, remote.Write(ref, img))
		d, err := img.Digest()
		assert.NilError(t, err)
		return host + "/" + repo + "@" + d.String()
	}
	actionRef := push("org/runpod-gpu", img)
	// A pod image: a base layer and the proof layer on top.
	proofDef, err := ParseDockerfile("FROM x AS proof\nFROM scratch\nCOPY --from=proof /out/prog /opt/runpod-gpu/cuda-smoke\n")
	assert.NilError(t, err)
	proofImg, _, err := BuildChecked(proofDef, StageRoots{"proof": stageRoot(t)}.Locate, Platform{"linux", "amd64"}, MaxBytes)
	assert.NilError(t, err)
	proofLayers, err := proofImg.Layers()
	assert.NilError(t, err)
	podImg, err := mutate.AppendLayers(img, proofLayers...)
	assert.NilError(t, err)
	podRef := push("org/runpod-gpu-runner", podImg)
	proofSize, err := proofLayers[0].Size()
	assert.NilError(t, err)

	dir := t.TempDir()
	dockerfile := filepath.Join(dir, "Dockerfile")
	assert.NilError(t, os.WriteFile(dockerfile, []byte(smallDockerfile), 0o644))
	real, err := os.ReadFile(filepath.Join("..", "..", SizesPage))
	assert.NilError(t, err)
	page := filepath.Join(dir, "image-sizes.md")
	assert.NilError(t, os.WriteFile(page, real, 0o644))

	var out bytes.Buffer
	assert.NilError(t, RunCLI(context.Background(), []string{"verify", "--dockerfile", dockerfile, "--image", actionRef, "--doc", page, "--row", RowActionImage}, &out))
	assert.NilError(t, RunCLI(context.Background(), []string{"measure", "--image", podRef, "--doc", page, "--row", RowPodImage, "--last-layer"}, &out))
	err = RunCLI(context.Background(), []string{"measure", "--image", podRef, "--doc", page, "--row", "another image"}, &out)
	assert.Check(t, is.ErrorContains(err, `the sizes page has no row "another image"`))
	err = RunCLI(context.Background(), []string{"measure", "--image", podRef, "--doc", page}, &out)
	assert.Check(t, is.ErrorContains(err, `--doc/--row`))

	got, err := os.ReadFile(page)
	assert.NilError(t, err)
	lines := strings.Split(string(got), "\n")
	row := func(name string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, "| "+name+" |") {
				return l
			}
		}
		return ""
	}
	assert.Check(t, is.Equal(row(RowActionImage), fmt.Sprintf("| action image | `%s` | %s | linux/amd64; %s unpacked, 3 files |",
		actionRef, formatBytes(m.CompressedBytes), formatBytes(m.UnpackedBytes))))
	assert.Check(t, is.Contains(row(RowPodImage), "| default pod image | `"+podRef+"` | "))
	assert.Check(t, is.Contains(row(RowPodImage), "its last layer, what the suite adds: "+formatBytes(proofSize)+" |"))
	assert.Check(t, is.Equal(row(RowCUDAImage), "| CUDA runner image | not yet measured | not yet measured | not yet measured |"))
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes (0.00 MB)", 999: "999 bytes (0.00 MB)", 1000: "1,000 bytes (0.00 MB)",
		8356842: "8,356,842 bytes (8.36 MB)", 2961673: "2,961,673 bytes (2.96 MB)"} {
		assert.Check(t, is.Equal(formatBytes(n), want))
	}
}
