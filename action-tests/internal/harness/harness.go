// Package harness runs the image's real binary exactly as the GitHub Actions
// runner does — inputs as INPUT_* variables, outputs, summary and state
// through the file-command files, the event payload at GITHUB_EVENT_PATH, the
// API at GITHUB_API_URL — for the test packages under action-tests: each
// builds the binary once in its TestMain (harness.Main), and the lanes and the
// chaos suite run it against the simulated cloud (Simulated).
package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// binDir holds the binaries built once for the whole test package.
var binDir string

// ActionsBinary is the image's multi-call binary: /runpod-gpu-actions <role>.
const ActionsBinary = "runpod-gpu-actions"

// RepoRoot is the repository's root, relative to a test package's directory
// (action-tests/<folder>), where go test runs its tests.
const RepoRoot = "../.."

// Main builds the image's one multi-call binary, runs the package's tests and
// removes what it built; a package's TestMain is os.Exit(harness.Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runpod-gpu-actions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	defer os.RemoveAll(dir)
	// The image's one multi-call binary is built, as the runner runs it: every
	// step starts it with its role (the actions/<role> directory) as the one
	// argument, which is what each action.yml passes in runs.args.
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, ActionsBinary), "./pkg/cmd/"+ActionsBinary)
	cmd.Dir = RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", ActionsBinary, err, out)
		return 1
	}
	return m.Run()
}

// BinDir is the directory Main built the binaries in; a package builds its
// other programs there too, so they go when Main removes it.
func BinDir() string { return binDir }

// Step is one action invocation, as the runner would run it.
type Step struct {
	Action    string
	Inputs    map[string]string
	Env       map[string]string
	Workspace string
	Event     any
	// Started, if set, is called with the running process (for signals).
	Started func(p *os.Process)
}

// StepResult is what the runner would see.
type StepResult struct {
	ExitCode int
	Stdout   string
	Outputs  map[string]string
	Summary  string
}

var (
	sourcesOnce sync.Once
	sourcesErr  error
)

// TouchSources opens every Go source, embedded template and module file below
// root/paths, so the test cache keys on them (see RunStep).
func TouchSources(root string, paths ...string) error {
	for _, p := range paths {
		err := filepath.WalkDir(filepath.Join(root, p), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			return f.Close()
		})
		if err != nil {
			return fmt.Errorf("open the sources the action binaries are built from: %w", err)
		}
	}
	return nil
}

// RunStep runs the action binary with a runner-shaped environment and a deadline.
func RunStep(t *testing.T, s Step) StepResult {
	t.Helper()
	// go test caches a passing run by the files the test process opens while
	// tests run; the binaries were built by a subprocess, so their sources are
	// opened here, or a changed action would be answered from the cache.
	sourcesOnce.Do(func() { sourcesErr = TouchSources(RepoRoot, "actions", "pkg", "go.mod", "go.sum") })
	assert.NilError(t, sourcesErr)
	files := t.TempDir()
	paths := map[string]string{
		"GITHUB_OUTPUT": filepath.Join(files, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(files, "summary"),
		"GITHUB_STATE": filepath.Join(files, "state"), "GITHUB_ENV": filepath.Join(files, "env"),
		"GITHUB_PATH": filepath.Join(files, "path"), "GITHUB_EVENT_PATH": filepath.Join(files, "event.json"),
	}
	for _, p := range paths {
		assert.NilError(t, os.WriteFile(p, nil, 0o644))
	}
	event, err := json.Marshal(s.Event)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(paths["GITHUB_EVENT_PATH"], event, 0o644))

	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + files, "CI=true", "GITHUB_ACTIONS=true"}
	for k, v := range paths {
		env = append(env, k+"="+v)
	}
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	for k, v := range s.Inputs {
		// The runner upper-cases input names and keeps their dashes.
		env = append(env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, ActionsBinary), s.Action)
	cmd.Dir = s.Workspace
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	assert.NilError(t, cmd.Start())
	if s.Started != nil {
		s.Started(cmd.Process)
	}
	err = cmd.Wait()
	res := StepResult{Stdout: stdout.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
	case err != nil:
		t.Fatalf("%s: %v\n%s", s.Action, err, stdout.String())
	}
	assert.Check(t, ctx.Err() == nil, "%s ran past its deadline:\n%s", s.Action, stdout.String())
	res.Outputs = parseOutputs(t, paths["GITHUB_OUTPUT"])
	summary, _ := os.ReadFile(paths["GITHUB_STEP_SUMMARY"])
	res.Summary = string(summary)
	return res
}

// parseOutputs reads the runner's file-command format: name<<DELIMITER, value lines, DELIMITER.
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	assert.NilError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, delim, ok := strings.Cut(sc.Text(), "<<")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not a heredoc file command", sc.Text())
		}
		var value []string
		for sc.Scan() && sc.Text() != delim {
			value = append(value, sc.Text())
		}
		out[name] = strings.Join(value, "\n")
	}
	return out
}
