package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// playArg makes the test binary play the worker program (an argument: the
// re-exec keeps the arguments, not the environment): ExecClean first, then a
// child reading its parent's initial environment, as the tests could.
const playArg = "play-the-worker-program"

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == playArg {
		playProgram()
		return
	}
	os.Exit(m.Run())
}

// playProgram is main's first lines and then a test command's look at
// /proc/$PPID/environ.
func playProgram() {
	if err := ExecClean("/proc/self/exe", os.Args, os.Environ(), syscall.Exec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out, err := exec.Command("bash", "-c", `tr '\0' '\n' < /proc/$PPID/environ`).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Stdout.Write(out)
	os.Exit(0)
}

// TestTestsFindNoKeyInTheirParentsEnvironment: the worker starts with
// RunPod's key and webhooks and the bootstrap's values in its environment (as
// a handler that passed them would); the tests, its children, read its
// initial environment through /proc/$PPID/environ and find none of them.
func TestTestsFindNoKeyInTheirParentsEnvironment(t *testing.T) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	cmd := exec.Command(os.Args[0], playArg)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CUDA_VISIBLE_DEVICES=0",
		"RUNPOD_AI_API_KEY=rpa_WORKERKEY0123456789ABCDEFGHIJKLMNOP", "RUNPOD_WEBHOOK_GET_JOB=https://api.runpod.ai/v2/x/job-take/y?token=secret",
		"RPG_WORKER_URL=https://example.invalid/worker"}
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	parent := string(out)
	assert.Check(t, is.Contains(parent, "PATH="), "the parent's environment was read: %q", parent)
	assert.Check(t, is.Contains(parent, "CUDA_VISIBLE_DEVICES=0"))
	for _, gone := range []string{"RUNPOD_", "rpa_WORKERKEY", "RPG_"} {
		assert.Check(t, !strings.Contains(parent, gone), "the tests read %s in their parent's environment: %q", gone, parent)
	}
}

func TestExecClean(t *testing.T) {
	var got []string
	record := func(argv0 string, argv, envv []string) error { got = envv; return nil }
	assert.NilError(t, ExecClean("/self", nil, []string{"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=all", "HOME=/root"}, record))
	assert.Check(t, got == nil, "a clean environment is not re-executed")

	assert.NilError(t, ExecClean("/self", []string{"w"}, []string{"PATH=/bin", "RUNPOD_AI_API_KEY=k", "RPG_WORKER_SHA256=x", "TMPDIR=/t"}, record))
	assert.Check(t, is.DeepEqual(got, []string{"PATH=/bin", "TMPDIR=/t"}))

	err := ExecClean("/self", nil, []string{"RUNPOD_AI_API_KEY=k"}, func(string, []string, []string) error { return errors.New("exec format error") })
	assert.ErrorContains(t, err, "re-executing without 1 environment variables (RUNPOD_AI_API_KEY): exec format error")
	assert.Check(t, !strings.Contains(err.Error(), "=k"), "the error names variables, never values")
}
