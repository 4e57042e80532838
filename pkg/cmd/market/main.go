// Command market replays the simulated GPU market and prints, per policy, $
// per tested ref, paid pods per ref, wasted $ on rejected hosts per accepted
// pod, p50/p95 time to a runner and runs that ended with no pod, as Markdown
// tables and Mermaid charts: one per bad-machine layout, then the secure
// cloud alone; -sweep compares over seeds 1–10; -readme rewrites a page's
// generated market tables (.github/CONTRIBUTING.md). See market.RunCLI.
//
//	go run ./pkg/cmd/market -seed 1 -prs 1000 -bad 0.2
//	go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/org/runpod-gpu/pkg/sim/market"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := market.RunCLI(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "market:", err)
		os.Exit(2)
	}
}
