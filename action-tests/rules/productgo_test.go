package rules

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// walkProductGo calls visit with each product Go file under pkg/ and actions/
// (no test file, nothing under testdata/, vendor/ or a dot directory) and its
// source, rel slash-separated from the repository root; skipTree names the
// further directories a rule leaves out.
func walkProductGo(t *testing.T, skipTree func(rel string) bool, visit func(rel string, src []byte) error) {
	t.Helper()
	root := funcLenRepoRoot(t)
	for _, top := range []string{"pkg", "actions"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				name := d.Name()
				if strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || skipTree(rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return visit(rel, src)
		})
		assert.NilError(t, err)
	}
}
