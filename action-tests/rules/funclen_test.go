package rules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// maxFuncLines is the longest a function of product code may be, counted from
// its func line to its closing brace, unless a `// Long:` line ends its doc
// comment and says why it reads best whole.
const maxFuncLines = 60

// longFuncSkipped are the trees the rule does not read, relative to the
// repository root.
var longFuncSkipped = []string{
	"pkg/sim", // the simulators are test fixtures, not product code
}

// TestFunctionsFitOnAScreen keeps issue 25's rule: no function of product code
// (the non-test Go files under pkg/ and actions/) is longer than maxFuncLines
// unless a `// Long:` comment line right above it says why it reads best
// whole. Programs' main packages (*/cmd/*) are left to their own rule: each is
// one screen of wiring.
func TestFunctionsFitOnAScreen(t *testing.T) {
	var long []string
	walkProductGo(t, funcLenSkippedTree, func(rel string, src []byte) error {
		found, err := longFuncs(rel, src, maxFuncLines)
		long = append(long, found...)
		return err
	})
	assert.Check(t, len(long) == 0,
		"functions longer than %d lines: split them, or say in a `// Long:` line right above the func why one reads best whole:\n  %s",
		maxFuncLines, strings.Join(long, "\n  "))
}

// funcLenSkippedTree reports whether rel (slash-separated) is a tree the rule skips.
func funcLenSkippedTree(rel string) bool {
	for _, skip := range longFuncSkipped {
		if rel == skip {
			return true
		}
	}
	return false
}

// longFuncs returns "file:line: name is N lines" for each function or method
// in src longer than limit lines whose doc comment does not end in a
// `// Long:` line. A program's main package under a cmd/ directory is not
// read.
func longFuncs(name string, src []byte, limit int) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if file.Name.Name == "main" && strings.Contains("/"+filepath.ToSlash(name), "/cmd/") {
		return nil, nil
	}
	var found []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start := fset.Position(fn.Pos())
		lines := fset.Position(fn.End()).Line - start.Line + 1
		if lines <= limit || saysWhyLong(fn.Doc) {
			continue
		}
		found = append(found, fmt.Sprintf("%s: %s is %d lines", start, funcLenName(fn), lines))
	}
	return found, nil
}

// saysWhyLong reports whether a doc comment's last line starts with "// Long:".
func saysWhyLong(doc *ast.CommentGroup) bool {
	if doc == nil || len(doc.List) == 0 {
		return false
	}
	return strings.HasPrefix(doc.List[len(doc.List)-1].Text, "// Long:")
}

// funcLenName is a function's name, "(T).M" for a method.
func funcLenName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if index, ok := recv.(*ast.IndexExpr); ok { // a generic receiver, T[P]
		recv = index.X
	}
	if index, ok := recv.(*ast.IndexListExpr); ok {
		recv = index.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// funcLenRepoRoot is the module root: the nearest directory up from here that
// holds go.mod, wherever this file is moved to.
func funcLenRepoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	assert.NilError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		assert.Assert(t, parent != dir, "no go.mod above the test's directory")
		dir = parent
	}
}

func TestLongFuncsNeedsALongLineRightAboveThem(t *testing.T) {
	// body is a function body of n lines in all, braces included.
	body := func(n int) string { return "{\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n" }
	tests := []struct {
		name string
		file string
		src  string
		want []string
	}{
		{name: "at the limit", src: "package p\n\nfunc f() " + body(5)},
		{name: "over the limit", src: "package p\n\nfunc f() " + body(6), want: []string{"x.go:3:1: f is 6 lines"}},
		{name: "a method on a pointer", src: "package p\n\ntype T struct{}\n\nfunc (*T) m() " + body(6),
			want: []string{"x.go:5:1: (T).m is 6 lines"}},
		{name: "a method on a generic type", src: "package p\n\ntype T[P any] struct{}\n\nfunc (T[P]) m() " + body(6),
			want: []string{"x.go:5:1: (T).m is 6 lines"}},
		{name: "a Long line ends the doc", src: "package p\n\n// f does it.\n// Long: a flat table.\nfunc f() " + body(6)},
		{name: "a lone Long line", src: "package p\n\n// Long: a linear protocol.\nfunc f() " + body(6)},
		{name: "Long not last", src: "package p\n\n// Long: a flat table.\n// f does it.\nfunc f() " + body(6),
			want: []string{"x.go:5:1: f is 6 lines"}},
		{name: "Long not right above", src: "package p\n\n// Long: a flat table.\n\nfunc f() " + body(6),
			want: []string{"x.go:5:1: f is 6 lines"}},
		{name: "Long in the body only", src: "package p\n\nfunc f() {\n\t// Long: no.\n\t_ = 0\n\t_ = 0\n\t_ = 0\n}\n",
			want: []string{"x.go:3:1: f is 6 lines"}},
		{name: "a program's main", file: "pkg/x/cmd/x/main.go", src: "package main\n\nfunc main() " + body(6)},
		{name: "a main outside cmd", src: "package main\n\nfunc main() " + body(6), want: []string{"x.go:3:1: main is 6 lines"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "x.go"
			}
			got, err := longFuncs(file, []byte(tc.src), 5)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, tc.want))
		})
	}
}
