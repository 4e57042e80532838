package devcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/callers"
)

// cudaExample is the worked CUDA project whose lane files are init's output.
const cudaExample = "../../examples/cuda-vector-add"

// cudaExampleInitArgs are the flags its README runs init with: the lane in
// four parts around the example's own GPU job, the archive built with nvcc
// in CUDA's devel container.
var cudaExampleInitArgs = []string{
	"--workflows", "CI", "--gpus", "RTX4090,L40S", "--max-run-spend", "2",
	"--build-command", "make archive", "--build-image", "nvidia/cuda:12.6.3-devel-ubuntu22.04",
	"--test-command", "./gpu-tests/run.sh",
}

// shellLine writes args as a shell command line, quoting those with a space.
func shellLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if strings.ContainsAny(a, " \t") {
			quoted[i] = `"` + a + `"`
		}
	}
	return strings.Join(quoted, " ")
}

// TestCUDAExampleIsWhatInitWrites: init, run in a checkout holding the
// example's CI workflow with the flags the example's README gives, writes
// exactly the example's lane caller, reaper, cost history, relay and
// configuration (go test ./pkg/devcli -run TestCUDAExample -update rewrites
// them), and its own rehearsal of them ends at a green gate.
func TestCUDAExampleIsWhatInitWrites(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(cudaExample, ".github", "workflows", "ci.yml"))
	assert.NilError(t, err)
	dir := checkout(t, map[string]string{"ci.yml": string(ci)})
	w := newWorld(t)
	args := append([]string{"init", "--no-input", "--dir", dir, "--suite", "org/runpod-gpu@v1"}, cudaExampleInitArgs...)
	r := w.run(args...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, `Gate "CI GPU gate": success`))
	assert.Check(t, is.Contains(r.stdout, "Wiring: no mistakes"))
	for _, p := range initFiles {
		got := readFile(t, dir, p)
		path := filepath.Join(cudaExample, filepath.FromSlash(p))
		if golden.FlagUpdate() { // -update, gotest.tools' flag
			assert.NilError(t, os.WriteFile(path, []byte(got), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		assert.NilError(t, err, "the example lacks %s: go test ./pkg/devcli -run TestCUDAExample -update", p)
		assert.Check(t, is.Equal(string(want), got), "%s is not what init writes: go test ./pkg/devcli -run TestCUDAExample -update", p)
	}
	readme, err := os.ReadFile(filepath.Join(cudaExample, "README.md"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(readme), "runpod-gpu init "+shellLine(cudaExampleInitArgs)),
		"the example's README runs init with other flags than the files were written with")
}

// init writes the own-job shape for a repository that names its archive's
// build: the hosted build job (in the image, when given) runs the command
// and uploads the archive, and the GPU job unpacks it and runs the test
// command as its last step.
func TestInitWritesOwnJobWithBuildCommand(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      []string
		wantNot   []string
		wantShape bool
	}{
		{name: "a Makefile target in CUDA's devel container",
			args: []string{"--build-command", "make archive", "--build-image", "nvidia/cuda:12.6.3-devel-ubuntu22.04", "--test-command", "./gpu-tests/run.sh"},
			want: []string{`run: "make archive"`, "container: nvidia/cuda:12.6.3-devel-ubuntu22.04", `run: "./gpu-tests/run.sh"`,
				"uses: org/runpod-gpu/.github/workflows/gpu-lane-authorize.yml@v1", "test-archive-artifact: gpu-tests"},
			wantNot: []string{"gpu-lane.yml@"}},
		{name: "a script on the hosted runner itself",
			args:    []string{"--build-command", "./scripts/build-gpu-tests.sh", "--test-command", "./gpu-tests/run.sh"},
			want:    []string{`run: "./scripts/build-gpu-tests.sh"`, "runs-on: ${{ needs.provision.outputs.runner-label }}"},
			wantNot: []string{"container:", "gpu-lane.yml@"}},
		{name: "without a build command, the one-command lane",
			args:    []string{"--test-command", "make test-gpu"},
			want:    []string{"uses: org/runpod-gpu/.github/workflows/gpu-lane.yml@v1", `test-command: "make test-gpu"`},
			wantNot: []string{"gpu-lane-authorize.yml", "container:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
			args := append([]string{"init", "--no-rehearse", "--no-input", "--dir", dir, "--suite", "org/runpod-gpu@v1", "--gpus", "RTX4090", "--max-run-spend", "3"}, tc.args...)
			r := w.run(args...)
			assert.Equal(t, r.code, ExitOK, r.stderr)
			var files []callers.File
			for _, p := range initFiles {
				files = append(files, callers.File{Path: p, Text: readFile(t, dir, p)})
			}
			lane := files[0].Text
			for _, s := range tc.want {
				assert.Check(t, is.Contains(lane, s))
			}
			for _, s := range tc.wantNot {
				assert.Check(t, !strings.Contains(lane, s), "the lane holds %q:\n%s", s, lane)
			}
			findings, err := callers.Lint(files)
			assert.NilError(t, err)
			assert.Check(t, is.Len(findings, 0))
			assert.Check(t, is.Len(callers.PermissionProblems(lane, callers.SuiteNeedsOf), 0))
		})
	}
}

// init refuses build flags it could not write honestly, naming the flag,
// before anything is written.
func TestInitRefusesBadBuildFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "an image without a command", args: []string{"--build-image", "nvidia/cuda:12.6.3-devel-ubuntu22.04"},
			wantErr: `--build-image "nvidia/cuda:12.6.3-devel-ubuntu22.04" without --build-command`},
		{name: "a blank command", args: []string{"--build-command", "  "}, wantErr: `--build-command "  ": want the command that writes gpu-tests.tar.gz`},
		{name: "an image without a tag", args: []string{"--build-command", "make archive", "--build-image", "nvidia/cuda"},
			wantErr: `--build-image: build image "nvidia/cuda": want an exact tag`},
		{name: "an image at latest", args: []string{"--build-command", "make archive", "--build-image", "nvidia/cuda:latest"},
			wantErr: "not latest or none"},
		{name: "not an image", args: []string{"--build-command", "make archive", "--build-image", "nvidia/cuda:12.6 ; rm -rf /"},
			wantErr: "want a container image reference"},
		{name: "an expression in the command", args: []string{"--build-command", "make ${{ github.event.pull_request.title }}"},
			wantErr: "--build-command \"make ${{ github.event.pull_request.title }}\": want a value without \"${{\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
			args := append([]string{"init", "--no-rehearse", "--no-input", "--dir", dir, "--gpus", "RTX4090", "--max-run-spend", "3", "--test-command", "./gpu-tests/run.sh"}, tc.args...)
			r := w.run(args...)
			assert.Equal(t, r.code, ExitUsage, r.stdout)
			assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(callers.LanePath)))
			assert.Check(t, os.IsNotExist(err), "a refused init wrote the lane")
		})
	}
}

// makefileArchiveTarget finds the rule that builds a test archive, and
// nothing that only looks like one.
func TestMakefileArchiveTarget(t *testing.T) {
	tests := []struct {
		name, file, text, want string
	}{
		{name: "archive", file: "Makefile", text: "build:\n\tnvcc x.cu\narchive: build\n\ttar -czf gpu-tests.tar.gz out\n", want: "archive"},
		{name: "gpu-test-archive wins", file: "Makefile", text: "archive:\n\ttar c .\ngpu-test-archive: build\n", want: "gpu-test-archive"},
		{name: "a double-colon rule", file: "makefile", text: "archive::\n\ttar c .\n", want: "archive"},
		{name: "GNUmakefile first", file: "GNUmakefile", text: "gpu-test-archive:\n", want: "gpu-test-archive"},
		{name: "variables only", file: "Makefile", text: "archive := out.tar\narchive:=x\nARCHIVE ?= y\n.PHONY: archive\n"},
		{name: "a recipe line", file: "Makefile", text: "all:\n\tarchive: x\n"},
		{name: "no Makefile", file: "README.md", text: "archive: x\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.text), 0o644))
			assert.Check(t, is.Equal(makefileArchiveTarget(dir), tc.want))
		})
	}
}

// A checkout whose Makefile has an archive target is told the flag that
// writes its own GPU job; one that gives the flag is not.
func TestInitNamesTheMakefileArchiveTarget(t *testing.T) {
	for _, build := range []bool{false, true} {
		w := newWorld(t)
		dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "Makefile"), []byte("archive: build\n\ttar -czf gpu-tests.tar.gz out\n"), 0o644))
		args := []string{"init", "--no-rehearse", "--no-input", "--dir", dir, "--gpus", "RTX4090", "--max-run-spend", "3", "--test-command", "./gpu-tests/run.sh"}
		if build {
			args = append(args, "--build-command", "make archive")
		}
		r := w.run(args...)
		assert.Equal(t, r.code, ExitOK, r.stderr)
		hint := `the Makefile has a target archive: with --build-command "make archive"`
		assert.Check(t, strings.Contains(r.stderr, hint) != build, r.stderr)
	}
}
