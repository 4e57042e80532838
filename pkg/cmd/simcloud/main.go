// Command simcloud serves the simulated cloud (RunPod, GitHub, the image
// registry and the proof download) on loopback for manual use: point the
// actions, curl or gh at the URLs it prints, with the key and token it prints.
// It runs until interrupted.
//
//	go run ./pkg/cmd/simcloud -mode process -seed 7
//
// In model mode pods are decided from their host profiles; in process mode
// each pod runs the real startup script and CUDA smoke proof against stand-ins
// (needs gcc and the go tool, and runs from inside this repository). Both run
// on the real clock. See cloud.RunCLI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cloud.RunCLI(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "simcloud:", err)
		os.Exit(2)
	}
}
