package workflowplay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A step's file commands (GITHUB_OUTPUT, GITHUB_ENV) are whatever its script wrote: read
// back, they give values or an error naming the line, never a panic.
func FuzzReadFileCommand(f *testing.F) {
	for _, seed := range []string{"a=b\n", "name<<EOF\nline\nEOF\n", "x<<D\nunclosed", "=v\n", "k<<\n\n", "a=b=c\r\n"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "out")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := ReadFileCommand(path)
		if err == nil {
			for k := range out {
				if k == "" || strings.Contains(k, "\n") {
					t.Fatalf("name %q read from %q", k, text)
				}
			}
		}
	})
}

// An artifact's zip comes from outside the job: extracted, every file lands under the
// directory, or the archive is refused.
func FuzzUnzipInto(f *testing.F) {
	good, _, err := zipPaths(f.TempDir(), "")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("PK\x03\x04 not really"))
	f.Fuzz(func(t *testing.T, zipped []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "in")
		_ = unzipInto(zipped, dir)
		_ = filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err == nil && p != root && !strings.HasPrefix(p, dir) {
				t.Fatalf("%s landed outside %s", p, dir)
			}
			return nil
		})
	})
}
