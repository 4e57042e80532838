package rules

// Stock actionlint, run at the top of this repository or of a copy of it,
// must exit 0: .github/actionlint.yaml ignores its two known false positives
// for this suite, and nothing else.

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaActionlintConfig is the configuration stock actionlint reads.
var metaActionlintConfig = filepath.Join(metaRepoRoot, ".github", "actionlint.yaml")

// metaStockLint lints every workflow as the actionlint command does by
// default (shellcheck and pyflakes when they are on PATH), with configFile
// ("" reads .github/actionlint.yaml as the command does).
func metaStockLint(t *testing.T, configFile string) []*actionlint.Error {
	t.Helper()
	root, err := filepath.Abs(metaRepoRoot)
	assert.NilError(t, err)
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		Shellcheck: "shellcheck", Pyflakes: "pyflakes", // the command's defaults
		WorkingDir: root, ConfigFile: configFile,
	})
	assert.NilError(t, err)
	project, err := actionlint.NewProject(root)
	assert.NilError(t, err)
	errs, err := linter.LintDir(project.WorkflowsDir(), project)
	assert.NilError(t, err)
	return errs
}

// TestStockActionlintIsCleanOnTheRepository: `actionlint` with no flags, at
// the top of the repository, reports nothing.
func TestStockActionlintIsCleanOnTheRepository(t *testing.T) {
	cfg, err := actionlint.ReadConfigFile(metaActionlintConfig)
	assert.NilError(t, err)
	assert.Assert(t, len(cfg.Paths) > 0, "%s ignores nothing", metaActionlintConfig)
	errs := metaStockLint(t, "")
	assert.Check(t, len(errs) == 0, "stock actionlint:\n  %s", metaFormatLint(errs))
}

// TestActionlintConfigIgnoresOnlyKnownFalsePositives lints without the
// configuration: every error it then reports is one the configuration
// ignores, and every pattern it has still ignores something (a pattern left
// over is removed, not kept).
func TestActionlintConfigIgnoresOnlyKnownFalsePositives(t *testing.T) {
	cfg, err := actionlint.ReadConfigFile(metaActionlintConfig)
	assert.NilError(t, err)
	var patterns actionlint.IgnorePatterns
	for _, pc := range cfg.Paths {
		patterns = append(patterns, pc.Ignore...)
	}
	assert.Check(t, is.Len(patterns, 1), "the entrypoint of an image action")

	empty := filepath.Join(t.TempDir(), "actionlint.yaml")
	assert.NilError(t, os.WriteFile(empty, []byte("paths: {}\n"), 0o644))
	errs := metaStockLint(t, empty)
	used := make([]bool, len(patterns))
	var unexpected []*actionlint.Error
	for _, e := range errs {
		matched := false
		for i, p := range patterns {
			if p.MatchString(e.Message) {
				used[i], matched = true, true
			}
		}
		if !matched {
			unexpected = append(unexpected, e)
		}
	}
	assert.Check(t, len(unexpected) == 0, "errors the configuration does not cover:\n  %s", metaFormatLint(unexpected))
	for i, p := range patterns {
		assert.Check(t, used[i], "pattern %q ignores nothing: remove it", p)
	}
}
