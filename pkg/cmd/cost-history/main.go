// Command cost-history reports what the GPU workflow's pods cost across runs.
//
//	cost-history --since 2026-10-06 --until 2026-10-09 --repo owner/name --directory /tmp/runpod-gpu-history
//	cost-history --directory /tmp/runpod-gpu-history
//
// With dates it collects every attempt of the workflow created in that
// inclusive UTC range — logs and the small cost artifacts — into the
// directory, which must lie outside any git repository, and writes
// report.json and report.md there, with reputation.json, the record provision's
// reputation-file input reads (it prints the three paths). Without dates it regenerates the reports
// from the saved evidence with no network access. Collecting reads the token
// from GH_TOKEN or GITHUB_TOKEN; it needs read access to Actions. With RUNPOD_API_KEY
// it also reads RunPod's billing for those days and reconciles. See history.RunCLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/history"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := history.RunCLI(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(cmdline.ExitCode("cost-history", err, os.Stderr))
}
