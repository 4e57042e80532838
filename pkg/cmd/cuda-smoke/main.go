// Command cuda-smoke proves, on a freshly started GPU pod and before the GitHub runner registers,
// that the host runs CUDA: see smoke.Usage for flags and pkg/smoke for the steps. Build it with
// CGO_ENABLED=0; it loads libcuda.so.1 at run time (see package cudalib for what that links).
// It exits 0 after "SMOKE PASS" and 1 after "SMOKE FAIL: <reason>"; see cudalib.RunCLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cudalib.RunCLI(ctx, os.Args[1:], os.Stdout, os.Getenv)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
