// Command cuda-smoke proves, on a freshly started GPU pod and before the GitHub runner registers,
// that the host runs CUDA: see smoke.Usage for flags and pkg/smoke for the steps. Build it with
// CGO_ENABLED=0; it loads libcuda.so.1 at run time (see package cudalib for what that links).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Getenv)
	stop()
	if err != nil {
		os.Exit(1)
	}
}

// run parses the configuration and runs the proof. Every failure, a bad flag included, ends the
// output with a "SMOKE FAIL: <reason>" line.
func run(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	cfg, err := smoke.ParseConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, smoke.Usage)
		return nil
	}
	if err != nil {
		smoke.WriteVerdict(stdout, fmt.Errorf("config: %w", err))
		return err
	}
	_, err = cudalib.NewProof(cfg, stdout, getenv).Run(ctx)
	return err
}
