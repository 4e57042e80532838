package market

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// RunCLI is the market program (pkg/cmd/market): it replays the scenario the
// flags in args describe once per bad-machine layout, under every policy, and
// prints each report to out as Markdown.
func RunCLI(ctx context.Context, args []string, out io.Writer) error {
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
		rep, err := Run(ctx, Scenario{Seed: *seed, PRs: *prs, BadShare: *bad, Layout: Layout(strings.TrimSpace(l))}, Policies())
		if err != nil {
			return err
		}
		fmt.Fprintln(out, rep.Markdown())
	}
	return nil
}
