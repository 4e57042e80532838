package localgate

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Command is one external program to run.
type Command struct {
	Dir  string // working directory; empty is the current one
	Name string // program, looked up on PATH
	Args []string
	// Env is the program's whole environment; nil inherits this process's.
	Env []string
	// Stdout and Stderr receive the output; pass the same writer to both to
	// keep the two streams interleaved as the program wrote them.
	Stdout, Stderr io.Writer
}

// credentialVars are the local command's own GitHub credentials: the lane
// runs the PR's code (a fork's, with -allow-fork), which must not read them.
var credentialVars = map[string]bool{"GH_TOKEN": true, "GITHUB_TOKEN": true, "GH_ENTERPRISE_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true}

// LaneEnv is environ without the GitHub credentials the local command reads.
func LaneEnv(environ []string) []string {
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !credentialVars[name] {
			env = append(env, kv)
		}
	}
	return env
}

// Exec runs external programs: git, nvidia-smi and the lane command. It is a
// seam so tests can stand in for any of them; OSExec is the real one.
type Exec interface {
	// Run runs cmd to completion. A non-zero exit is an error (*exec.ExitError
	// for OSExec); ctx's end stops the program and everything it started.
	Run(ctx context.Context, cmd Command) error
}

// OSExec runs real processes.
type OSExec struct {
	// WaitDelay bounds how long Run waits for output pipes after the program
	// was stopped (a grandchild may hold them open); 0 means 10 seconds.
	WaitDelay time.Duration
}

// Run starts cmd in its own process group, so cancelling ctx stops the
// program's children too (a test runner's workers keep the GPU busy otherwise).
func (o OSExec) Run(ctx context.Context, cmd Command) error {
	c := exec.CommandContext(ctx, cmd.Name, cmd.Args...)
	c.Dir = cmd.Dir
	c.Env = cmd.Env
	c.Stdout, c.Stderr = cmd.Stdout, cmd.Stderr
	c.WaitDelay = o.WaitDelay
	if c.WaitDelay == 0 {
		c.WaitDelay = 10 * time.Second
	}
	killGroupOnCancel(c)
	return c.Run()
}
