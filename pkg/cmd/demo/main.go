// Command demo runs the whole runpod-gpu pipeline once on the embedded
// simulated cloud and prints each job's summary. No accounts, no network.
// With --markdown FILE it also writes them to FILE as one Markdown page,
// which any Markdown renderer (GitHub's draws the Mermaid charts) shows.
//
//	go run ./pkg/cmd/demo [-seed N] [--markdown demo.md]
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/demo"
)

func main() {
	seed := flag.Uint64("seed", 1, demo.SeedHelp)
	markdown := flag.String("markdown", "", "also write every job's summary to this file, as one Markdown page")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := demo.RunCLI(ctx, os.Stdout, os.Stderr, *seed, *markdown)
	stop()
	os.Exit(cmdline.ExitCode("demo", err, os.Stderr))
}
