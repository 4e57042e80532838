// Command demo runs the whole runpod-gpu pipeline once on the embedded
// simulated cloud and prints each job's summary. No accounts, no network.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	seed := flag.Uint64("seed", 1, "simulation seed: the same seed plays the same scenario")
	flag.Parse()
	if err := demo.Run(ctx, os.Stdout, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
