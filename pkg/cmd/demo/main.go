// Command demo runs the whole runpod-gpu pipeline once on the embedded
// simulated cloud and prints each job's summary. No accounts, no network.
// With --markdown FILE it also writes them to FILE as one Markdown page,
// which any Markdown renderer (GitHub's draws the Mermaid charts) shows.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	seed := flag.Uint64("seed", 1, "simulation seed: the same seed plays the same scenario")
	markdown := flag.String("markdown", "", "also write every job's summary to this file, as one Markdown page")
	flag.Parse()
	if err := run(ctx, os.Stdout, *seed, *markdown); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run plays the demo onto stdout and, when markdown names a file, into it.
func run(ctx context.Context, stdout io.Writer, seed uint64, markdown string) error {
	var page bytes.Buffer
	if err := demo.Run(ctx, io.MultiWriter(stdout, &page), seed); err != nil {
		return err
	}
	if markdown == "" {
		return nil
	}
	if err := os.WriteFile(markdown, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--markdown %s: %w", markdown, err)
	}
	fmt.Fprintf(os.Stderr, "demo: wrote the job summaries to %s\n", markdown)
	return nil
}
