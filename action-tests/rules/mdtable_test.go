package rules

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// separatorRE matches a Markdown table's separator row, or a piece of one
// ("|---", "---|", "|--:", "| --- |"), in a string literal.
var separatorRE = regexp.MustCompile(`\|\s*:?-{2,}|-{2,}:?\s*\|`)

// TestMarkdownTablesAreWrittenByMdtable keeps issue 15's rule: every Markdown
// table of a summary, check run or report is built with pkg/mdtable, so the
// cells share one escaper and the rows one layout. A string literal holding a
// separator row outside pkg/mdtable (tests aside) is a table built by hand.
func TestMarkdownTablesAreWrittenByMdtable(t *testing.T) {
	var byHand []string
	root := metaRepoRoot
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "pkg/mdtable" || (rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, lit := range tableLiterals(rel, src) {
			byHand = append(byHand, lit)
		}
		return nil
	})
	assert.NilError(t, err)
	assert.Check(t, len(byHand) == 0, "Markdown tables built by hand; use mdtable.New/Row/String:\n  %s", strings.Join(byHand, "\n  "))
}

// tableLiterals returns "file:line: literal" for each string literal in src
// that holds a table separator; comments are not read.
func tableLiterals(name string, src []byte) []string {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var found []string
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return found
		}
		if tok == token.STRING && separatorRE.MatchString(lit) {
			found = append(found, fset.Position(pos).String()+": "+lit)
		}
	}
}

func TestTableLiteralsFindsHandBuiltSeparators(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{src: "package p\nvar s = \"| a | b |\\n|---|---|\\n\"\n", want: 1},
		{src: "package p\nvar s = `|---:|`\n", want: 1},
		{src: "package p\nvar s = \"| --- | --- |\"\n", want: 1},
		{src: "package p\nvar s = \"|--:|\"\n", want: 1},
		{src: "package p\n// a comment |---|\nvar s = \"a | b\"\n", want: 0},
		{src: "package p\nvar s = \"--flag\"\n", want: 0},
	}
	for _, tc := range tests {
		assert.Equal(t, len(tableLiterals("p.go", []byte(tc.src))), tc.want, "%s", tc.src)
	}
}
