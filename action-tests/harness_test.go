// Package actiontests runs each action's real binary exactly as the GitHub
// Actions runner does — inputs as INPUT_* variables, outputs, summary and state
// through the file-command files, the event payload at GITHUB_EVENT_PATH, the
// API at GITHUB_API_URL — against the simulated cloud over loopback HTTP.
package actiontests

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

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// binDir holds the action binary built once for the whole package.
var binDir string

// actionsBinary is the image's multi-call binary: /runpod-gpu-actions <role>.
const actionsBinary = "runpod-gpu-actions"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runpod-gpu-actions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// The image's one multi-call binary is built, as the runner runs it: every
	// step starts it with its role (the actions/<role> directory) as the one
	// argument, which is what each action.yml passes in runs.args.
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, actionsBinary), "./pkg/cmd/"+actionsBinary)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", actionsBinary, err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// step is one action invocation, as the runner would run it.
type step struct {
	action    string
	inputs    map[string]string
	env       map[string]string
	workspace string
	event     any
	// started, if set, is called with the running process (for signals).
	started func(p *os.Process)
}

// stepResult is what the runner would see.
type stepResult struct {
	exitCode int
	stdout   string
	outputs  map[string]string
	summary  string
}

var (
	sourcesOnce sync.Once
	sourcesErr  error
)

// touchSources opens every Go source, embedded template and module file below
// root/paths, so the test cache keys on them (see TestMain).
func touchSources(root string, paths ...string) error {
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

// runStep runs the action binary with a runner-shaped environment and a deadline.
func runStep(t *testing.T, s step) stepResult {
	t.Helper()
	// go test caches a passing run by the files the test process opens while
	// tests run; the binaries were built by a subprocess, so their sources are
	// opened here, or a changed action would be answered from the cache.
	sourcesOnce.Do(func() { sourcesErr = touchSources("..", "actions", "pkg", "go.mod", "go.sum") })
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
	event, err := json.Marshal(s.event)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(paths["GITHUB_EVENT_PATH"], event, 0o644))

	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + files, "CI=true", "GITHUB_ACTIONS=true"}
	for k, v := range paths {
		env = append(env, k+"="+v)
	}
	for k, v := range s.env {
		env = append(env, k+"="+v)
	}
	for k, v := range s.inputs {
		// The runner upper-cases input names and keeps their dashes.
		env = append(env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, actionsBinary), s.action)
	cmd.Dir = s.workspace
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	assert.NilError(t, cmd.Start())
	if s.started != nil {
		s.started(cmd.Process)
	}
	err = cmd.Wait()
	res := stepResult{stdout: stdout.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.exitCode = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.exitCode = 128 + int(ws.Signal())
		}
	case err != nil:
		t.Fatalf("%s: %v\n%s", s.action, err, stdout.String())
	}
	assert.Check(t, ctx.Err() == nil, "%s ran past its deadline:\n%s", s.action, stdout.String())
	res.outputs = parseOutputs(t, paths["GITHUB_OUTPUT"])
	summary, _ := os.ReadFile(paths["GITHUB_STEP_SUMMARY"])
	res.summary = string(summary)
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

// simulated is a real-clock simulated cloud with fast timings, plus a consumer
// repository workspace holding the config.
type simulated struct {
	*cloud.Cloud
	workspace string
	runID     int64
}

func startCloud(t *testing.T, market *runpodsim.Market, faults runpodsim.Faults, configYAML string) *simulated {
	t.Helper()
	c, err := cloud.Start(cloud.Options{
		Clock: simclock.Real{}, Market: market, Faults: faults,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)},
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(configYAML), 0o644))
	return &simulated{Cloud: c, workspace: ws, runID: 9100}
}

// runnerEnv is the environment the runner gives every step of the run.
func (s *simulated) runnerEnv() map[string]string {
	return map[string]string{
		"GITHUB_API_URL": s.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
		"GITHUB_RUN_ID": fmt.Sprint(s.runID), "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_WORKFLOW_REF": cloud.Repository + "/" + cloud.Workflow + "@refs/heads/main",
		"GITHUB_WORKSPACE":    s.workspace, "GITHUB_EVENT_NAME": "workflow_dispatch",
	}
}
