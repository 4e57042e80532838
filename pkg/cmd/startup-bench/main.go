// Command startup-bench compares the start-up time of the image's one
// multi-call program with the program per action it replaced, role by role,
// including the GODEBUG=inittrace=1 totals; see package startupbench.
//
//	go run ./pkg/cmd/startup-bench [-base REF] [-n 200]
//
// Run it inside this repository's checkout: it builds the working tree's
// program and REF's per-action programs (default: the commit before
// pkg/actions/actions.go was added), the latter from git archive.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/startupbench"
)

func main() {
	base := flag.String("base", "", "git ref of the per-action baseline (default: the parent of the commit that added pkg/actions/actions.go)")
	n := flag.Int("n", 200, "starts per role and program")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := startupbench.Run(ctx, os.Stdout, *base, *n)
	stop()
	os.Exit(cmdline.ExitCode("startup-bench", err, os.Stderr))
}
