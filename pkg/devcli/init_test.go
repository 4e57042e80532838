package devcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
)

// checkout makes a repository checkout with the given workflows (file → text).
func checkout(t *testing.T, workflows map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755))
	for name, text := range workflows {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, ".github", "workflows", name), []byte(text), 0o644))
	}
	return dir
}

const (
	ciWorkflow      = "name: CI\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: make test}]\n"
	lintWorkflow    = "name: Lint\non:\n  pull_request:\n    branches: [main]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps: [{run: make lint}]\n"
	releaseWorkflow = "name: Release\non: {push: {tags: ['v*']}}\njobs:\n  r:\n    runs-on: ubuntu-latest\n    steps: [{run: make release}]\n"
	unnamedWorkflow = "on: pull_request\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n"
)

// runWithInput runs the command line with stdin, the answers to its questions.
func (w *world) runWithInput(input string, args ...string) result {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := Env{Args: args, Getenv: func(k string) string { return w.env[k] }, Stdout: &stdout, Stderr: &stderr,
		Home: w.home, User: "alice", Clock: w.clock, Sleep: w.clock.Sleep}.withDefaults()
	root := newRoot(ctx, &env)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(input))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	code := ExitOK
	if err := root.ExecuteContext(ctx); err != nil {
		code = ExitUsage
		if ee, ok := err.(*exitError); ok {
			code = ee.code
		}
		stderr.WriteString(err.Error())
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func readFile(t *testing.T, dir, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	assert.NilError(t, err)
	return string(data)
}

// laneWorkflows reads the lane caller's workflow_run names.
func laneWorkflows(t *testing.T, text string) []string {
	t.Helper()
	var doc struct {
		On struct {
			WorkflowRun struct {
				Workflows []string `yaml:"workflows"`
			} `yaml:"workflow_run"`
		} `yaml:"on"`
	}
	assert.NilError(t, yaml.Unmarshal([]byte(text), &doc))
	return doc.On.WorkflowRun.Workflows
}

// init reads the CI workflow's name, resolves the GPU names against the
// catalog and writes callers that lint and grant what the suite needs.
func TestInitWritesCallersAndConfig(t *testing.T) {
	w := newWorld(t)
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow, "release.yaml": releaseWorkflow})
	r := w.run("init", "--no-rehearse", "--dir", dir, "--suite", "my-org/runpod-gpu@v1", "--gpus", "RTX4090,L40S", "--max-run-spend", "5",
		"--test-command", "pytest -q tests/gpu", "--no-input")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	var files []callers.File
	for _, p := range initFiles {
		text := readFile(t, dir, p)
		files = append(files, callers.File{Path: p, Text: text})
		assert.Check(t, is.Contains(r.stdout, "wrote "+p))
		if p != callers.ConfigPath {
			assert.Check(t, is.Len(callers.PermissionProblems(text, callers.SuiteNeedsOf), 0), p)
			assert.Check(t, is.Contains(text, "uses: my-org/runpod-gpu/.github/workflows/"), p)
		}
	}
	findings, err := callers.Lint(files)
	assert.NilError(t, err)
	assert.Check(t, is.Len(findings, 0))
	assert.Check(t, is.DeepEqual(laneWorkflows(t, files[0].Text), []string{"CI"}), "the one workflow run for pull requests")
	assert.Check(t, is.Contains(files[0].Text, `test-command: "pytest -q tests/gpu"`))
	cfg, err := config.Parse([]byte(files[4].Text), callers.ConfigPath)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(cfg.GPUTiers, []config.GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090", "NVIDIA L40S"}}}))
	assert.Check(t, is.Equal(*cfg.MaxRunSpendUSD, 5*money.Dollar))
	assert.Check(t, is.Contains(r.stdout, "runpod-gpu doctor"))
}

// A second init refuses to overwrite anything, and writes nothing; --force does.
func TestInitNeverOverwritesWithoutForce(t *testing.T) {
	w := newWorld(t)
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	args := []string{"init", "--no-rehearse", "--dir", dir, "--gpus", "RTX4090", "--max-run-spend", "3", "--test-command", "make test-gpu", "--no-input"}
	assert.Equal(t, w.run(args...).code, ExitOK)
	edited := "# mine\n"
	assert.NilError(t, os.WriteFile(filepath.Join(dir, ".github", "runpod-gpu.yml"), []byte(edited), 0o644))
	before := readFile(t, dir, callers.LanePath)

	r := w.run(append(args, "--test-command", "make other")...)
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, ".github/workflows/runpod-gpu.yml, .github/runpod-gpu.yml differ(s) from what init writes"))
	assert.Check(t, is.Contains(r.stderr, "pass --force to overwrite"))
	assert.Check(t, is.Contains(r.stderr, "--- .github/runpod-gpu.yml (yours)\n+++ .github/runpod-gpu.yml (what init writes)\n-# mine\n+# yaml-language-server"), "the diff is shown")
	assert.Check(t, is.Contains(r.stderr, "-      test-command: \"make test-gpu\"\n+      test-command: \"make other\"\n"))
	assert.Check(t, is.Equal(readFile(t, dir, callers.ConfigPath), edited), "nothing written")
	assert.Check(t, is.Equal(readFile(t, dir, callers.LanePath), before))

	r = w.run(append(args, "--test-command", "make other", "--force")...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(readFile(t, dir, callers.LanePath), `"make other"`))
	assert.Check(t, readFile(t, dir, callers.ConfigPath) != edited)
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".github", "*", "*.runpod-gpu-init"))
	assert.Check(t, is.Len(leftovers, 0))
}

// What no flag gives is asked for: with two CI workflows, which ones; the
// GPU names; the budget and the test command (whose defaults an empty answer takes).
func TestInitAsksForWhatFlagsDoNotGive(t *testing.T) {
	w := newWorld(t)
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow, "lint.yml": lintWorkflow, "release.yml": releaseWorkflow})
	r := w.runWithInput("CI\nRTX4090, L40S\n\n\n", "init", "--no-rehearse", "--dir", dir)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "CI workflows the lane starts on, comma-separated (CI, Lint) [CI,Lint]: "))
	assert.Check(t, is.DeepEqual(laneWorkflows(t, readFile(t, dir, callers.LanePath)), []string{"CI"}))
	cfg, err := config.Parse([]byte(readFile(t, dir, callers.ConfigPath)), "x")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(*cfg.MaxRunSpendUSD, 5*money.Dollar), "the budget's default")
	assert.Check(t, is.Contains(readFile(t, dir, callers.LanePath), `test-command: "make test-gpu"`))
	assert.Check(t, is.Len(cfg.GPUTiers, 1))
}

func TestInitRefuses(t *testing.T) {
	tests := []struct {
		name      string
		workflows map[string]string
		args      []string
		wantErr   string
	}{
		{name: "a workflow name that does not exist", workflows: map[string]string{"ci.yml": ciWorkflow},
			args: []string{"--workflows", "ci.yml"}, wantErr: `--workflows "ci.yml": no workflow`},
		{name: "CI without a name", workflows: map[string]string{"test.yml": unnamedWorkflow},
			wantErr: "test.yml run(s) for pull requests but have no name"},
		{name: "no workflow at all", workflows: map[string]string{}, wantErr: "no named CI workflow that runs for pull requests"},
		{name: "two CI workflows, no input", workflows: map[string]string{"ci.yml": ciWorkflow, "lint.yml": lintWorkflow},
			args: []string{"--gpus", "RTX4090"}, wantErr: "--workflows is required (--no-input asks nothing)"},
		{name: "no GPU names, no input", workflows: map[string]string{"ci.yml": ciWorkflow}, wantErr: "--gpus is required"},
		{name: "an unknown GPU", workflows: map[string]string{"ci.yml": ciWorkflow}, args: []string{"--gpus", "RTX9999"}, wantErr: `"RTX9999"`},
		{name: "a suite that is no copy of runpod-gpu", workflows: map[string]string{"ci.yml": ciWorkflow},
			args: []string{"--suite", "my-org/other@v1"}, wantErr: "want OWNER/runpod-gpu@REF"},
		{name: "a negative budget", workflows: map[string]string{"ci.yml": ciWorkflow},
			args: []string{"--gpus", "RTX4090", "--max-run-spend", "-1"}, wantErr: "want a positive amount"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := checkout(t, tc.workflows)
			r := w.run(append([]string{"init", "--no-rehearse", "--dir", dir, "--no-input", "--test-command", "make"}, tc.args...)...)
			assert.Equal(t, r.code, ExitUsage, r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			_, err := os.Stat(filepath.Join(dir, ".github", "runpod-gpu.yml"))
			assert.Check(t, os.IsNotExist(err), "nothing written")
		})
	}
	// Without --no-input, a closed standard input is no answer.
	w := newWorld(t)
	r := w.runWithInput("", "init", "--dir", checkout(t, map[string]string{"ci.yml": ciWorkflow}))
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "--gpus is required (no answer on standard input)"))
}
