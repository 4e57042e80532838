package jobwire

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// member is one tar entry of a test archive.
type member struct {
	name     string
	typ      byte
	body     string
	size     int64 // header size when it must lie; 0 means len(body)
	linkname string
}

func makeArchive(t testing.TB, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: m.name, Typeflag: typ, Mode: 0o644, Linkname: m.linkname, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			_, err := tw.Write([]byte(m.body))
			assert.NilError(t, err)
		}
	}
	assert.NilError(t, tw.Close())
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}

func TestCheckArchive(t *testing.T) {
	small := Limits{MaxCompressed: 1 << 20, MaxFile: 10, MaxTotal: 15, MaxEntries: 4}
	cases := []struct {
		name    string
		members []member
		lim     Limits
		want    string // "" means accepted
	}{
		{"files and dirs", []member{{name: "logs/", typ: tar.TypeDir}, {name: "logs/test.log", body: "ok"}, {name: "junit.xml", body: "<x/>"}}, small, ""},
		{"absolute path", []member{{name: "/etc/passwd", body: "x"}}, small, "absolute path"},
		{"traversal", []member{{name: "../escape", body: "x"}}, small, "path traversal"},
		{"traversal inside", []member{{name: "a/../../b", body: "x"}}, small, "path traversal"},
		{"not canonical", []member{{name: "./a", body: "x"}}, small, "not canonical"},
		{"double slash", []member{{name: "a//b", body: "x"}}, small, "not canonical"},
		{"backslash", []member{{name: `a\..\b`, body: "x"}}, small, "backslash"},
		{"windows drive", []member{{name: `C:x`, body: "x"}}, small, "absolute path"},
		{"symlink", []member{{name: "link", typ: tar.TypeSymlink, linkname: "/etc/passwd"}}, small, "link"},
		{"hard link", []member{{name: "a", body: "x"}, {name: "b", typ: tar.TypeLink, linkname: "a"}}, small, "link"},
		{"fifo", []member{{name: "p", typ: tar.TypeFifo}}, small, "special file"},
		{"device", []member{{name: "d", typ: tar.TypeChar}}, small, "special file"},
		{"duplicate file", []member{{name: "a", body: "1"}, {name: "a", body: "2"}}, small, "duplicate entry"},
		{"file then dir", []member{{name: "a", body: "1"}, {name: "a/", typ: tar.TypeDir}}, small, "duplicate"},
		{"file used as dir", []member{{name: "a", body: "1"}, {name: "a/b", body: "2"}}, small, "which is a file"},
		{"duplicate dir", []member{{name: "d/", typ: tar.TypeDir}, {name: "d/", typ: tar.TypeDir}}, small, "duplicate directory"},
		{"file too big", []member{{name: "big", body: strings.Repeat("x", 11)}}, small, "per-file limit"},
		{"total too big", []member{{name: "a", body: strings.Repeat("x", 10)}, {name: "b", body: strings.Repeat("x", 6)}}, small, "total content"},
		{"too many entries", []member{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}, {name: "e"}}, small, "more than 4 entries"},
		{"compressed too big", []member{{name: "a", body: "x"}}, Limits{MaxCompressed: 10, MaxFile: 10, MaxTotal: 10, MaxEntries: 4}, "compressed size"},
		{"empty name", []member{{name: "", body: "x"}}, small, "empty name"},
		{"terminal escape in a name", []member{{name: "junit\x1b[2J.xml", body: "x"}}, small, "control character"},
		{"newline in a name", []member{{name: "ok.txt\nPASS all.txt", body: "x"}}, small, "control character"},
		{"delete in a name", []member{{name: "a\x7f", body: "x"}}, small, "control character"},
		{"carriage return in a directory", []member{{name: "logs\r/", typ: tar.TypeDir}}, small, "control character"},
		{"unicode names are fine", []member{{name: "résultats/ß.log", body: "x"}}, small, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckArchive(makeArchive(t, tc.members...), tc.lim)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
			assert.Check(t, errors.Is(err, ErrArchive))
		})
	}
}

func TestCheckArchiveRejectsNonGzipAndTrailingGarbage(t *testing.T) {
	_, err := CheckArchive([]byte("not gzip"), DefaultResultLimits)
	assert.ErrorContains(t, err, "not gzip")
	good := makeArchive(t, member{name: "a", body: "x"})
	_, err = CheckArchive(append(good, []byte("garbage after the stream")...), DefaultResultLimits)
	assert.Check(t, err != nil, "trailing garbage must not pass")
}

// A header that understates its size cannot smuggle more than the cap: the
// reader is bounded by the limits, not by the header.
func TestCheckArchiveBoundsWhatItReads(t *testing.T) {
	bomb := makeArchive(t, member{name: "zeros", body: strings.Repeat("\x00", 1<<20)})
	assert.Check(t, len(bomb) < 4096, "a megabyte of zeros compresses well")
	_, err := CheckArchive(bomb, Limits{MaxCompressed: 1 << 20, MaxFile: 1 << 16, MaxTotal: 1 << 16, MaxEntries: 10})
	assert.ErrorContains(t, err, "per-file limit")
}

func TestExtractWritesOnlyAfterTheWholeArchiveChecks(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	data := makeArchive(t, member{name: "first.txt", body: "written?"}, member{name: "../escape", body: "x"})
	_, err := Extract(data, dest, DefaultResultLimits)
	assert.ErrorContains(t, err, "path traversal")
	_, statErr := os.Stat(filepath.Join(dest, "first.txt"))
	assert.Check(t, os.IsNotExist(statErr), "nothing may be written before the whole archive passed")

	data = makeArchive(t, member{name: "logs/", typ: tar.TypeDir}, member{name: "logs/a.log", body: "hello"}, member{name: "meta/m.json", body: "{}"})
	entries, err := Extract(data, dest, DefaultResultLimits)
	assert.NilError(t, err)
	assert.Check(t, is.Len(entries, 3))
	got, err := os.ReadFile(filepath.Join(dest, "logs", "a.log"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), "hello"))

	_, err = Extract(data, dest, DefaultResultLimits)
	assert.ErrorContains(t, err, "not empty")
}

// FuzzCheckArchive: any bytes are judged without a panic, and whatever is
// accepted extracts inside its directory.
func FuzzCheckArchive(f *testing.F) {
	f.Add(makeArchive(f, member{name: "a", body: "x"}))
	f.Add(makeArchive(f, member{name: "../a", body: "x"}))
	f.Add(makeArchive(f, member{name: "d/", typ: tar.TypeDir}, member{name: "d/f", body: "y"}))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	lim := Limits{MaxCompressed: 1 << 16, MaxFile: 1 << 16, MaxTotal: 1 << 17, MaxEntries: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := CheckArchive(data, lim)
		if err != nil {
			return
		}
		for _, e := range entries {
			if _, err := CheckName(e.Name); err != nil || filepath.IsAbs(e.Name) {
				t.Fatalf("accepted entry %q: %v", e.Name, err)
			}
		}
		dir := t.TempDir()
		if _, err := Extract(data, filepath.Join(dir, "out"), lim); err != nil {
			t.Fatalf("checked archive does not extract: %v", err)
		}
	})
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../a", "/a", "a/../b", "./a", `a\b`, "a/", "", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := CheckName(name)
		if err != nil {
			return
		}
		if strings.HasPrefix(clean, "/") || strings.Contains(clean, "..") && strings.Contains("/"+clean+"/", "/../") || filepath.Clean(clean) != clean {
			t.Fatalf("CheckName(%q) = %q", name, clean)
		}
	})
}
