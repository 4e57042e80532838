package rules

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gotest.tools/v3/assert"
)

// metaDocsExamplesDir holds workflows the pages show for copying (not this
// repository's own): each lints clean with actionlint as the lane's do.
const metaDocsExamplesDir = ".github/docs/examples"

// TestDocsExampleWorkflowsLint: every example workflow under
// .github/docs/examples lints clean as stock actionlint lints it (with
// shellcheck on its run: scripts when shellcheck is on PATH, as the command
// does), and a page links to it.
func TestDocsExampleWorkflowsLint(t *testing.T) {
	root, err := filepath.Abs(metaRepoRoot)
	assert.NilError(t, err)
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: "shellcheck", WorkingDir: root})
	assert.NilError(t, err)
	project, err := actionlint.NewProject(root)
	assert.NilError(t, err)
	paths, err := filepath.Glob(filepath.Join(metaRepoRoot, metaDocsExamplesDir, "*.yml"))
	assert.NilError(t, err)
	assert.Assert(t, len(paths) > 0, "no example workflow")
	pages := ""
	for _, page := range []string{docConfiguration, docWorkflows} {
		pages += docText(t, page)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		assert.NilError(t, err)
		name := filepath.Base(p)
		errs, err := linter.Lint(metaLintPath(name), data, project)
		assert.NilError(t, err)
		assert.Check(t, len(errs) == 0, "%s:\n  %s", name, metaFormatLint(errs))
		assert.Check(t, strings.Contains(pages, "examples/"+name), "no page links to %s", name)
	}
}
