package smoke_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"

	"github.com/org/runpod-gpu/pkg/smoke"
)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestDownload(t *testing.T) {
	body := []byte("pretend this is an NVRTC package")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("download sent credentials")
		}
		if r.URL.Path != "/pkg.deb" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()

	tests := []struct {
		name     string
		pin      smoke.NVRTCPin
		wantErr  string
		wantKept bool
	}{
		{name: "verified", pin: smoke.NVRTCPin{URL: srv.URL + "/pkg.deb", SHA256: sha256Hex(body)}, wantKept: true},
		{name: "checksum case does not matter", pin: smoke.NVRTCPin{URL: srv.URL + "/pkg.deb", SHA256: strings.ToUpper(sha256Hex(body))}, wantKept: true},
		{name: "mismatch removes the file", pin: smoke.NVRTCPin{URL: srv.URL + "/pkg.deb", SHA256: sha256Hex([]byte("other"))},
			wantErr: "NVRTC package checksum mismatch: " + srv.URL + "/pkg.deb has sha256 " + sha256Hex(body) + ", pinned " + sha256Hex([]byte("other"))},
		{name: "HTTP error", pin: smoke.NVRTCPin{URL: srv.URL + "/missing.deb", SHA256: sha256Hex(body)}, wantErr: "The requested URL returned error: 404 (curl exit 22)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "pkg.deb")
			n, err := smoke.Download(context.Background(), smoke.CurlFetch, tt.pin, dst)
			_, statErr := os.Stat(dst)
			assert.Equal(t, statErr == nil, tt.wantKept, "file kept")
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, n, int64(len(body)))
			got, err := os.ReadFile(dst)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, body)
		})
	}
}

func TestInstallerFor(t *testing.T) {
	tests := []struct {
		url     string
		want    smoke.Installer
		wantErr string
	}{
		{url: "https://h/repos/ubuntu2204/x86_64/cuda-nvrtc-12-8_12.8.93-1_amd64.deb", want: smoke.DebInstaller{}},
		{url: "https://h/cuda_nvrtc-linux-x86_64-12.8.93-archive.tar.gz?x=1", want: smoke.TarInstaller{}},
		{url: "https://h/p.tgz", want: smoke.TarInstaller{}},
		{url: "https://h/p.tar", want: smoke.TarInstaller{}},
		{url: "https://h/p.tar.xz", wantErr: `package "p.tar.xz": want a .deb, .tar, .tar.gz or .tgz file`},
	}
	for _, tt := range tests {
		got, err := smoke.InstallerFor(tt.url)
		if tt.wantErr != "" {
			assert.Error(t, err, tt.wantErr)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, got, tt.want)
	}
}

// tarEntry is one entry of a test archive.
type tarEntry struct {
	name, body, link string
	typ              byte
}

func makeTar(t testing.TB, gz bool, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var out io.Writer = &buf
	zw := gzip.NewWriter(&buf)
	if gz {
		out = zw
	}
	tw := tar.NewWriter(out)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		assert.NilError(t, tw.WriteHeader(hdr))
		_, err := tw.Write([]byte(e.body))
		assert.NilError(t, err)
	}
	assert.NilError(t, tw.Close())
	if gz {
		assert.NilError(t, zw.Close())
	}
	return buf.Bytes()
}

func TestTarInstaller(t *testing.T) {
	lib := "./usr/local/cuda-12.8/targets/x86_64-linux/lib/"
	good := []tarEntry{
		{name: lib, typ: tar.TypeDir},
		{name: lib + "libnvrtc.so.12.8.93", body: "ELF", typ: tar.TypeReg},
		{name: lib + "libnvrtc.so.12", link: "libnvrtc.so.12.8.93", typ: tar.TypeSymlink},
	}
	tests := []struct {
		name    string
		gz      bool
		entries []tarEntry
		wantErr string
	}{
		{name: "gzip with links", gz: true, entries: good},
		{name: "plain tar", entries: good},
		{name: "parent path", entries: []tarEntry{{name: "../evil", body: "x", typ: tar.TypeReg}},
			wantErr: `tar entry "../evil": path leaves the install directory`},
		{name: "absolute path", entries: []tarEntry{{name: "/etc/evil", body: "x", typ: tar.TypeReg}},
			wantErr: `tar entry "/etc/evil": path leaves the install directory`},
		{name: "escaping link", entries: []tarEntry{{name: "lib/x", link: "../../etc/passwd", typ: tar.TypeSymlink}},
			wantErr: `tar entry "lib/x": link to "../../etc/passwd" leaves the install directory`},
		{name: "link through a link", entries: []tarEntry{{name: "d", link: ".", typ: tar.TypeSymlink}, {name: "e", link: "d/..", typ: tar.TypeSymlink}},
			wantErr: `tar entry "e": link to "d/.." leaves the install directory`},
		{name: "absolute link", entries: []tarEntry{{name: "x", link: "/etc/passwd", typ: tar.TypeSymlink}},
			wantErr: `link to "/etc/passwd" leaves the install directory`},
		{name: "device node", entries: []tarEntry{{name: "dev", typ: tar.TypeChar}},
			wantErr: `tar entry "dev": unsupported type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			archive := filepath.Join(base, "p.tar")
			assert.NilError(t, os.WriteFile(archive, makeTar(t, tt.gz, tt.entries...), 0o644))
			dir := filepath.Join(base, "out")
			assert.NilError(t, os.Mkdir(dir, 0o755))
			err := smoke.TarInstaller{}.Install(context.Background(), archive, dir)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			found, err := smoke.FindNVRTCLibrary(dir, 12)
			assert.NilError(t, err)
			body, err := os.ReadFile(found)
			assert.NilError(t, err)
			assert.Equal(t, string(body), "ELF")
		})
	}
}

func TestDebInstaller(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("skipping: dpkg-deb not installed")
	}
	root := fs.NewDir(t, "deb-root",
		fs.WithDir("DEBIAN", fs.WithFile("control", "Package: cuda-nvrtc-standin\nVersion: 12.8.0-1\nArchitecture: amd64\nMaintainer: test <t@example.test>\nDescription: stand-in\n")),
		fs.WithDir("usr", fs.WithDir("local", fs.WithDir("cuda-12.8", fs.WithDir("targets", fs.WithDir("x86_64-linux", fs.WithDir("lib",
			fs.WithFile("libnvrtc.so.12.8.0", "ELF"), fs.WithSymlink("libnvrtc.so.12", "libnvrtc.so.12.8.0"))))))))
	base := t.TempDir()
	deb := filepath.Join(base, "p.deb")
	out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root.Path(), deb).CombinedOutput()
	assert.NilError(t, err, string(out))

	dir := filepath.Join(base, "out")
	assert.NilError(t, os.Mkdir(dir, 0o755))
	assert.NilError(t, smoke.DebInstaller{}.Install(context.Background(), deb, dir))
	found, err := smoke.FindNVRTCLibrary(dir, 12)
	assert.NilError(t, err)
	assert.Equal(t, found, filepath.Join(dir, "usr/local/cuda-12.8/targets/x86_64-linux/lib/libnvrtc.so.12"))

	err = smoke.DebInstaller{}.Install(context.Background(), filepath.Join(base, "missing.deb"), dir)
	assert.ErrorContains(t, err, "dpkg-deb -x missing.deb")
}

func TestFindNVRTCLibraryNeverTakesTheBareName(t *testing.T) {
	dir := fs.NewDir(t, "nvrtc", fs.WithDir("lib", fs.WithFile("libnvrtc.so", "dev symlink stand-in"), fs.WithFile("libnvrtc.so.13", "")))
	_, err := smoke.FindNVRTCLibrary(dir.Path(), 12)
	assert.ErrorIs(t, err, smoke.ErrLibraryMissing)
	assert.ErrorContains(t, err, "the NVRTC package has no libnvrtc.so.12")
}

// FuzzTarInstall unpacks arbitrary archives (a package is outside data, even if checksummed):
// no panic, and nothing is ever written outside the install directory.
func FuzzTarInstall(f *testing.F) {
	f.Add(makeTar(f, true, tarEntry{name: "a/b", body: "x", typ: tar.TypeReg}, tarEntry{name: "a/c", link: "b", typ: tar.TypeSymlink}))
	f.Add(makeTar(f, false, tarEntry{name: "../x", body: "x", typ: tar.TypeReg}))
	f.Add(makeTar(f, false, tarEntry{name: "l", link: "..", typ: tar.TypeSymlink}, tarEntry{name: "l/x", body: "x", typ: tar.TypeReg}))
	f.Add([]byte{0x1f, 0x8b, 0, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		archive := filepath.Join(base, "p.tar")
		assert.NilError(t, os.WriteFile(archive, data, 0o644))
		dir := filepath.Join(base, "out")
		assert.NilError(t, os.Mkdir(dir, 0o755))
		_ = smoke.TarInstaller{}.Install(context.Background(), archive, dir)
		entries, err := os.ReadDir(base)
		assert.NilError(t, err)
		for _, e := range entries {
			assert.Assert(t, e.Name() == "p.tar" || e.Name() == "out", "wrote %q outside the install directory", e.Name())
		}
	})
}
