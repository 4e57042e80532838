package rules

// What `runpod-gpu init` writes into a repository is held to the README
// callers' rules, against this tree's reusable workflows: actionlint with
// the published reference read as the local file (so a renamed input or
// secret fails here), the permission check and the secrets check; the
// own-job lane (--build-command) also the own-job pattern.

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
)

func TestInitCallersWorkWithTheseWorkflows(t *testing.T) {
	linter, project := metaLinter(t)
	files := metaWorkflowFiles(t)
	for _, c := range []struct {
		runnerApp    bool
		buildCommand string // set: the lane in four parts around the repository's own GPU job
	}{{false, ""}, {true, ""}, {false, "make archive"}, {true, "make archive"}} {
		runnerApp := c.runnerApp
		rendered, err := callers.Render(callers.Options{
			Suite: "org/runpod-gpu@v1", Workflows: []string{"CI"}, TestCommand: "make test-gpu", RunnerApp: runnerApp,
			Tiers:        []config.GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090"}}},
			BuildCommand: c.buildCommand, BuildImage: map[bool]string{true: "nvidia/cuda:12.6.3-devel-ubuntu22.04"}[c.buildCommand != ""],
		})
		assert.NilError(t, err)
		if c.buildCommand != "" {
			assert.Check(t, is.Len(metaOwnJobProblems(t, rendered[0].Text), 0), "the own-job lane (runner App %v)", runnerApp)
		}
		for _, f := range rendered {
			if f.Path == callers.ConfigPath {
				continue
			}
			local := metaSuiteCallRE.ReplaceAllString(f.Text, "uses: ./.github/workflows/$1")
			assert.Assert(t, local != f.Text, "%s calls no reusable workflow of this repository", f.Path)
			errs, err := linter.Lint(metaLintPath("init-caller.yml"), []byte(local), project)
			assert.NilError(t, err)
			assert.Check(t, len(errs) == 0, "%s (runner App %v):\n  %s", f.Path, runnerApp, metaFormatLint(errs))
			assert.Check(t, is.Len(metaCallerPermissionProblems(f.Text, files), 0), f.Path)
			assert.Check(t, is.Len(metaCallerProblems(f.Text, files), 0), f.Path)
		}
	}
}
