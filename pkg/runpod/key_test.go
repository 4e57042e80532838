package runpod

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestKeyFromEnv(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		fallbacks []string
		want      string
	}{
		{name: "the variable, trimmed", env: "  rpa_KEY\n", want: "rpa_KEY"},
		{name: "the variable before a fallback", env: "rpa_ENV", fallbacks: []string{"rpa_FILE"}, want: "rpa_ENV"},
		{name: "a blank variable falls back", env: " \t\n", fallbacks: []string{"", " rpa_FILE "}, want: "rpa_FILE"},
		{name: "the first fallback that is set", fallbacks: []string{"rpa_RUNPOD", "rpa_DEFAULT"}, want: "rpa_RUNPOD"},
		{name: "none", env: "", fallbacks: []string{" "}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(name string) string {
				if name != KeyEnv {
					t.Errorf("read %s, want %s", name, KeyEnv)
				}
				return tc.env
			}
			assert.Equal(t, KeyFromEnv(getenv, tc.fallbacks...), tc.want)
		})
	}
}

func TestKeyTrimsOnePastedLine(t *testing.T) {
	assert.Equal(t, Key("rpa_KEY\r\n"), "rpa_KEY")
	assert.Equal(t, Key(), "")
}

// TestKeyIsReadOnlyByKeyFromEnv keeps one reading of the key: no product
// file outside this one reads RUNPOD_API_KEY from the environment itself (a
// reader that skipped the trim would send an echoed key's newline).
func TestKeyIsReadOnlyByKeyFromEnv(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	assert.NilError(t, err)
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 || !strings.Contains(strings.ToLower(types.ExprString(call.Fun)), "env") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Value == strconv.Quote(KeyEnv) {
				rel, _ := filepath.Rel(root, path)
				found = append(found, rel+": "+types.ExprString(call))
			}
			return true
		})
		return nil
	})
	assert.NilError(t, err)
	assert.Assert(t, len(found) == 0, "read the key with runpod.KeyFromEnv instead of:\n%s", strings.Join(found, "\n"))
}
