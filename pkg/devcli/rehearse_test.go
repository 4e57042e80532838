package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
)

// rehearsalRepo is a checkout with a CI workflow and what init writes, edited by edit.
func rehearsalRepo(t *testing.T, edit func(lane string) string) string {
	t.Helper()
	files, err := callers.Render(callers.Options{Suite: "org/runpod-gpu@v1", Workflows: []string{"CI"}, TestCommand: "make test-gpu",
		Tiers: []config.GPUTier{{Name: "ampere", GPUIDs: []string{"NVIDIA RTX A4000"}}}})
	assert.NilError(t, err)
	dir := t.TempDir()
	files = append(files, callers.File{Path: ".github/workflows/ci.yml", Text: "name: CI\non: pull_request\njobs: {test: {runs-on: ubuntu-latest, steps: [{run: make}]}}\n"})
	for _, f := range files {
		text := f.Text
		if f.Path == callers.LanePath {
			text = edit(text)
		}
		assert.NilError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(f.Path)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, f.Path), []byte(text), 0o644))
	}
	return dir
}

// runpod-gpu rehearse prints the jobs, the gate and the worst case and
// exits 0 for a right wiring; a mistake is printed with its fix and exits 1;
// --json gives the report to scripts.
func TestRehearseCommand(t *testing.T) {
	same := func(s string) string { return s }
	tests := []struct {
		name     string
		args     func(dir string) []string
		edit     func(string) string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{name: "green", args: func(dir string) []string { return []string{"rehearse", "--dir", dir} }, edit: same, wantCode: ExitOK,
			wantOut: []string{"gpu / authorize", "success", `Gate "CI GPU gate": success`, "Worst-case cost of a run: $", "Wiring: no mistakes"}},
		{name: "mistake", args: func(dir string) []string { return []string{"rehearse", "--dir", dir} },
			edit:     func(s string) string { return strings.Replace(s, `workflows: ["CI"]`, `workflows: ["Tests"]`, 1) },
			wantCode: ExitFailure, wantOut: []string{`names "Tests"`, "fix: write the `name:` of your CI workflow"}, wantErr: "1 wiring mistake(s)"},
		{name: "json", args: func(dir string) []string { return []string{"rehearse", "--dir", dir, "--json"} },
			edit:     func(s string) string { return strings.Replace(s, "secrets.RUNPOD_API_KEY", "secrets.RUNPOD_KEY", 1) },
			wantCode: ExitFailure, wantOut: []string{`"mistakes": [`, `"fix": "write RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}"`}},
		{name: "no checkout", args: func(string) []string { return []string{"rehearse", "--dir", "/nonexistent"} }, edit: same,
			wantCode: ExitFailure, wantErr: "--dir /nonexistent: no .github/workflows/*.yml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), Env{Args: tt.args(rehearsalRepo(t, tt.edit)), Stdout: &stdout, Stderr: &stderr})
			assert.Check(t, is.Equal(code, tt.wantCode), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, want := range tt.wantOut {
				assert.Check(t, is.Contains(stdout.String(), want))
			}
			assert.Check(t, is.Contains(stderr.String(), tt.wantErr))
			if strings.Contains(stdout.String(), `"mistakes"`) {
				var report map[string]any
				assert.Check(t, json.Unmarshal(stdout.Bytes(), &report), "the JSON report parses")
				assert.Check(t, report["mistakes"] != nil, "mistakes is a list, [] for none: %s", stdout.String())
			}
		})
	}
}

// standInNVCC puts on PATH an nvcc whose every output is the test as a script printing
// lines and exiting with exit: the build job's CUDA container is not started with
// --real-steps, and the real test needs a GPU.
func standInNVCC(t *testing.T, exit int, lines ...string) {
	t.Helper()
	bin := t.TempDir()
	test := "#!/bin/sh\n"
	for _, l := range lines {
		test += "echo '" + l + "'\n"
	}
	test += "exit " + strconv.Itoa(exit) + "\n"
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "test.stand-in"), []byte(test), 0o755))
	nvcc := "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=\"$2\"; shift; done\ncp \"$(dirname \"$0\")/test.stand-in\" \"$out\"\n"
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "nvcc"), []byte(nvcc), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runpod-gpu rehearse --real-steps runs the example's own steps: the build job's make
// archive with the nvcc on PATH, the GPU job's download, unpack and run.sh, whose output
// goes to stderr while stdout stays the report; failed GPU tests fail the gate and exit 1.
// Without the flag the steps pass as names and print nothing.
func TestRehearseCommandRealSteps(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		exit       int
		lines      []string
		wantCode   int
		wantOut    []string
		wantErr    []string
		notWantErr string
	}{
		{name: "tests pass", args: []string{"rehearse", "--dir", cudaExample, "--real-steps"}, lines: []string{"ok   n=1", "1 passed, 0 failed"},
			wantCode: ExitOK, wantOut: []string{"build ", `Gate "CI GPU gate": success`},
			wantErr: []string{"nvcc --lib out/vector_add.o", "tar -czf gpu-tests.tar.gz -C out", "Artifact download completed successfully: gpu-tests\n", "ok   n=1\n1 passed, 0 failed\n"}},
		{name: "a test fails", args: []string{"rehearse", "--dir", cudaExample, "--real-steps", "--json"}, exit: 1, lines: []string{"FAIL n=1: 1 element(s) differ", "0 passed, 1 failed"},
			wantCode: ExitFailure, wantOut: []string{`"conclusion": "failure"`},
			wantErr: []string{"0 passed, 1 failed\n", "##[error]Process completed with exit code 1.", "the rehearsed gate is not green"}},
		{name: "without the flag", args: []string{"rehearse", "--dir", cudaExample}, lines: []string{"1 passed, 0 failed"},
			wantCode: ExitOK, wantOut: []string{`Gate "CI GPU gate": success`}, notWantErr: "passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			standInNVCC(t, tt.exit, tt.lines...)
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), Env{Args: tt.args, Stdout: &stdout, Stderr: &stderr})
			assert.Check(t, is.Equal(code, tt.wantCode), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, want := range tt.wantOut {
				assert.Check(t, is.Contains(stdout.String(), want))
			}
			for _, want := range tt.wantErr {
				assert.Check(t, is.Contains(stderr.String(), want))
			}
			if tt.notWantErr != "" {
				assert.Check(t, !strings.Contains(stderr.String(), tt.notWantErr), stderr.String())
			}
			if strings.HasPrefix(stdout.String(), "{") {
				var report map[string]any
				assert.Check(t, json.Unmarshal(stdout.Bytes(), &report), "stdout is the JSON report alone")
			}
		})
	}
}
