// Command local-gpu-gate validates a pull request on the maintainer's own GPU.
//
//	local-gpu-gate -pr 123 -- make gpu-test
//
// It refuses a checkout with changes or whose HEAD is not the PR's pushed
// head, runs the lane command in a clean detached worktree of that commit,
// posts the SHA-bound evidence comment and dispatches the relay workflow
// (local-gpu-gate.yml) on the default branch, which publishes the CI GPU gate.
// A failing lane posts nothing. The token comes from GH_TOKEN or
// GITHUB_TOKEN; it needs to comment on pull requests and dispatch workflows.
// See localgate.RunCLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/localgate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := localgate.RunCLI(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(cmdline.ExitCode("local-gpu-gate", err, os.Stderr))
}
