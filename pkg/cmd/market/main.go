// Command market replays the simulated GPU market and prints, per policy, $
// per tested ref, paid pods per ref, wasted $ on rejected hosts per accepted
// pod, p50/p95 time to a runner and runs that ended with no pod, as Markdown
// tables and Mermaid charts: one per bad-machine layout.
//
//	go run ./pkg/cmd/market -seed 1 -prs 1000 -bad 0.2
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/org/runpod-gpu/pkg/sim/market"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "market:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("market", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed every draw comes from")
	prs := fs.Int("prs", 1000, "pull requests to replay")
	bad := fs.Float64("bad", 0.2, "share of bad machines, 0 to 1")
	layouts := fs.String("layouts", "uniform,clustered", "comma-separated bad-machine layouts: uniform, clustered")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prs <= 0 {
		return fmt.Errorf("-prs %d: want a positive number of pull requests", *prs)
	}
	if *bad <= 0 || *bad > 1 {
		return fmt.Errorf("-bad %v: want a share above 0 and at most 1", *bad)
	}
	for _, l := range strings.Split(*layouts, ",") {
		rep, err := market.Run(ctx, market.Scenario{Seed: *seed, PRs: *prs, BadShare: *bad, Layout: market.Layout(strings.TrimSpace(l))}, market.Policies())
		if err != nil {
			return err
		}
		fmt.Fprintln(out, rep.Markdown())
	}
	return nil
}
