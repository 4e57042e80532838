package rules

// The worked CUDA project (examples/cuda-vector-add) is the page a CUDA team
// copies: its workflows pass stock actionlint as they are, its lane caller is
// the complete own-job pattern against this tree's reusable workflows, and
// it builds with the compiler its README and configuration name.

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
)

// cudaExampleRoot is the example, a repository of its own.
var cudaExampleRoot = filepath.Join(metaRepoRoot, "examples", "cuda-vector-add")

// cudaExampleWorkflows reads the example's workflows, by file name.
func cudaExampleWorkflows(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(cudaExampleRoot, ".github", "workflows", "*.yml"))
	assert.NilError(t, err)
	files := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		assert.NilError(t, err)
		files[filepath.Base(p)] = string(data)
	}
	for _, want := range []string{"ci.yml", "runpod-gpu.yml", "runpod-gpu-reap.yml", "runpod-gpu-costs.yml", "local-gpu-gate.yml"} {
		_, ok := files[want]
		assert.Assert(t, ok, "the example has no .github/workflows/%s", want)
	}
	return files
}

// TestCUDAExampleWorkflowsLintWithStockActionlint: `actionlint` with no
// flags, at the top of the example (its own repository, with no
// configuration of its own, shellcheck on when installed as .ci/run
// installs it), reports nothing.
func TestCUDAExampleWorkflowsLintWithStockActionlint(t *testing.T) {
	root, err := filepath.Abs(cudaExampleRoot)
	assert.NilError(t, err)
	_, statErr := os.Stat(filepath.Join(root, ".github", "actionlint.yaml"))
	assert.Check(t, os.IsNotExist(statErr), "the example must lint without a configuration that ignores anything")
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		Shellcheck: "shellcheck", Pyflakes: "pyflakes", WorkingDir: root, // the command's defaults
	})
	assert.NilError(t, err)
	project, err := actionlint.NewProject(root)
	assert.NilError(t, err)
	errs, err := linter.LintDir(project.WorkflowsDir(), project)
	assert.NilError(t, err)
	assert.Check(t, len(errs) == 0, "stock actionlint on the CUDA example:\n  %s", metaFormatLint(errs))
	assert.Check(t, len(cudaExampleWorkflows(t)) >= 5)
}

// TestCUDAExampleCallersWorkWithTheseWorkflows holds the example's callers to
// the README callers' rules against this tree's reusable workflows: lint with
// the suite's reference read as the local file (a renamed input or secret
// fails here), the permissions and secrets each part needs, the own-job
// pattern (the archive built beside provision, downloaded with a bounded
// retry, the tests last) and the GPU job's steps.
func TestCUDAExampleCallersWorkWithTheseWorkflows(t *testing.T) {
	linter, project := metaLinter(t)
	files := metaWorkflowFiles(t)
	callersSeen := 0
	for name, text := range cudaExampleWorkflows(t) {
		local := metaSuiteCallRE.ReplaceAllString(text, "uses: ./.github/workflows/$1")
		if local == text {
			continue // the example's own CI
		}
		callersSeen++
		errs, err := linter.Lint(metaLintPath("cuda-example-"+name), []byte(local), project)
		assert.NilError(t, err)
		assert.Check(t, len(errs) == 0, "%s:\n  %s", name, metaFormatLint(errs))
		assert.Check(t, is.Len(metaCallerPermissionProblems(text, files), 0), name)
		assert.Check(t, is.Len(metaCallerProblems(text, files), 0), name)
		assert.Check(t, is.Len(gpuJobStepProblems(name, metaParseWorkflow(t, name, text)), 0), name)
	}
	assert.Check(t, is.Equal(callersSeen, 4), "the lane, the reaper, the cost history and the relay")
	lane := cudaExampleWorkflows(t)["runpod-gpu.yml"]
	assert.Check(t, is.Len(metaOwnJobProblems(t, lane), 0))
}

// cudaDevelImageRE is NVIDIA's CUDA devel image with an exact version.
var cudaDevelImageRE = regexp.MustCompile(`^nvidia/cuda:(\d+)\.(\d+)\.(\d+)-devel-ubuntu(\d+\.\d+)$`)

// cudaExampleContainers returns the container: of every job of the example
// that has one, by "file job".
func cudaExampleContainers(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, text := range cudaExampleWorkflows(t) {
		var doc struct {
			Jobs map[string]struct {
				Container any `yaml:"container"`
			} `yaml:"jobs"`
		}
		assert.NilError(t, yaml.Unmarshal([]byte(text), &doc), name)
		for id, job := range doc.Jobs {
			if job.Container != nil {
				image, ok := job.Container.(string)
				assert.Check(t, ok, "%s job %s: container as an image reference, pinned", name, id)
				out[name+" "+id] = image
			}
		}
	}
	return out
}

// TestCUDAExampleBuildsWithOneCompiler: CI and the lane's build job compile
// in the same CUDA devel image, of an exact version; the configuration's
// host floor is at least that toolkit's version (a host below it could not
// run what it built); the README names that image; the Makefile's archive
// target writes the archive the lane uploads.
func TestCUDAExampleBuildsWithOneCompiler(t *testing.T) {
	containers := cudaExampleContainers(t)
	assert.Check(t, is.DeepEqual(metaSortedKeys(containers), []string{"ci.yml build", "runpod-gpu.yml build"}))
	image := containers["runpod-gpu.yml build"]
	assert.Check(t, is.Equal(containers["ci.yml build"], image), "CI and the lane build with one compiler")
	m := cudaDevelImageRE.FindStringSubmatch(image)
	assert.Assert(t, m != nil, "the build image %q: want nvidia/cuda:X.Y.Z-devel-ubuntuNN.NN, an exact version", image)

	cfgText, err := os.ReadFile(filepath.Join(cudaExampleRoot, ".github", "runpod-gpu.yml"))
	assert.NilError(t, err)
	cfg, err := config.Parse(cfgText, config.DefaultPath)
	assert.NilError(t, err)
	var toolkit config.CUDAVersion
	assert.NilError(t, toolkit.UnmarshalText([]byte(m[1]+"."+m[2])))
	assert.Check(t, cfg.MinCUDAVersion.AtLeast(toolkit), "min_cuda_version %s is below the toolkit's %s", cfg.MinCUDAVersion, toolkit)

	readme := docText(t, "examples/cuda-vector-add/README.md")
	assert.Check(t, is.Contains(readme, image))
	assert.Check(t, is.Contains(readme, "CUDA "+m[1]+"."+m[2]+"."+m[3]+" on Ubuntu "+m[4]))
	assert.Check(t, is.Len(markdownLinkProblems(filepath.Join(cudaExampleRoot, "README.md"), readme), 0))

	makefile := docText(t, "examples/cuda-vector-add/Makefile")
	for _, target := range []string{"build", "test", "archive", "clean"} {
		assert.Check(t, regexp.MustCompile(`(?m)^`+target+`:`).MatchString(makefile), "the Makefile has no target %s", target)
	}
	assert.Check(t, is.Contains(makefile, "ARCHIVE := "+callers.TestArchive))
	assert.Check(t, strings.Contains(cudaExampleWorkflows(t)["runpod-gpu.yml"], `run: "make archive"`))
}
