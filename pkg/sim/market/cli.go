package market

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
)

// RunCLI is the market program (pkg/cmd/market). By default it replays the
// scenario the flags describe once per bad-machine layout, under every
// policy and then on the secure cloud alone, and prints each report to out
// as Markdown. -sweep prints the sweep over seeds 1–10 instead; -readme
// rewrites the generated market blocks of .github/CONTRIBUTING.md (run from the repository
// root).
func RunCLI(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("market", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed every draw comes from")
	prs := fs.Int("prs", 1000, "pull requests to replay")
	bad := fs.Float64("bad", 0.2, "share of bad machines, 0 to 1")
	layouts := fs.String("layouts", "uniform,clustered", "comma-separated bad-machine layouts: uniform, clustered")
	warm := fs.Duration("warmup", DefaultWarmUp, "how long the market runs, uncounted, before the measured pull requests (0: none)")
	noMachines := fs.Bool("no-machines", false, "leave the machine out of the reputation records: reputation per data center only, as before records carried it")
	workers := fs.Int("workers", runtime.NumCPU(), "policy runs at a time")
	sweep := fs.Bool("sweep", false, "print the sweep of seeds 1-10, both layouts, with -prs, -bad and -warmup (minutes of CPU)")
	readme := fs.String("readme", "", "rewrite the generated market blocks of this Markdown page (.github/CONTRIBUTING.md from the repository root); includes the sweep")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *prs <= 0:
		return fmt.Errorf("-prs %d: want a positive number of pull requests", *prs)
	case *bad <= 0 || *bad > 1:
		return fmt.Errorf("-bad %v: want a share above 0 and at most 1", *bad)
	case *warm < 0:
		return fmt.Errorf("-warmup %v: want 0 or more", *warm)
	case *readme != "":
		return WriteREADME(ctx, *readme, *workers)
	}
	if *warm == 0 {
		*warm = -1 // Scenario's "none"
	}
	if *sweep {
		text, err := sweepMarkdown(ctx, Scenario{PRs: *prs, BadShare: *bad, WarmUp: *warm, NoMachines: *noMachines}, *workers)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(out, text)
		return err
	}
	var scenarios []Scenario
	for _, l := range strings.Split(*layouts, ",") {
		scenarios = append(scenarios, Scenario{Seed: *seed, PRs: *prs, BadShare: *bad, Layout: Layout(strings.TrimSpace(l)), WarmUp: *warm,
			NoMachines: *noMachines})
	}
	reps, err := RunAll(ctx, scenarios, readmePolicies(), *workers)
	if err != nil {
		return err
	}
	for _, rep := range reps {
		all, secure := split(rep)
		fmt.Fprintln(out, all.Markdown())
		fmt.Fprintf(out, "Secure cloud only (every policy restricted to it):\n\n%s\n", secure.Table())
	}
	return nil
}
