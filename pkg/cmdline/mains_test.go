package cmdline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// maxMainLines is how long a program's main.go may be: one screen, so that
// its behaviour lives in a package, with its tests.
const maxMainLines = 40

// TestEveryMainIsAScreen keeps every program under pkg/cmd a thin main: a
// main.go of at most maxMainLines lines (a doc comment saying what the program
// is and how to run it, and main calling the package that does the work with
// a signal.NotifyContext context) and no other source file beside it; tests
// of the built binary may stay.
func TestEveryMainIsAScreen(t *testing.T) {
	files, err := filepath.Glob("../cmd/*/*.go")
	assert.NilError(t, err)
	mains := 0
	for _, f := range files {
		switch name := filepath.Base(f); {
		case strings.HasSuffix(name, "_test.go"):
		case name != "main.go":
			t.Errorf("%s: a program keeps only main.go; move this file's code into a package", f)
		default:
			mains++
			data, err := os.ReadFile(f)
			assert.NilError(t, err)
			if lines := bytes.Count(data, []byte("\n")); lines > maxMainLines {
				t.Errorf("%s is %d lines; want at most %d: move the behaviour into a package", f, lines, maxMainLines)
			}
			if !bytes.Contains(data, []byte("signal.NotifyContext(")) {
				t.Errorf("%s: main takes no signal.NotifyContext context; an interrupt should cancel the work", f)
			}
		}
	}
	assert.Assert(t, mains >= 9, "found only %d programs under pkg/cmd", mains)
}
