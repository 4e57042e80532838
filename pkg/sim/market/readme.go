package market

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// The README's market section holds two generated blocks, each between
// <!-- name:start --> and <!-- name:end -->: the seed-1 tables (TablesBlock),
// which TestREADMEMarketTables regenerates and compares, and the sweep over
// seeds 1–10 (SweepBlock), which BenchmarkMarketSweep regenerates and
// compares (about 28 minutes of CPU with the cold-start replays when the replay polled, not measured since it follows the log stream: too slow for every test run). One command
// rewrites both: go run ./pkg/cmd/market -readme.
const (
	TablesBlock = "market-tables"
	SweepBlock  = "market-sweep"
)

// TablesScenarios are the README's detailed scenarios: seed 1, both layouts.
func TablesScenarios() []Scenario {
	return []Scenario{{Seed: 1, Layout: Uniform}, {Seed: 1, Layout: Clustered}}
}

// readmePolicies are the detailed tables' runs per scenario: every policy,
// then the reputation policy on the secure cloud alone.
func readmePolicies() []Policy {
	ps := Policies()
	for _, p := range SecurePolicies() {
		if p.Name == "reputation" {
			ps = append(ps, p)
		}
	}
	return ps
}

// Tables renders the README's detailed block: per scenario, every policy
// with both clouds, then the seed's and the reputation policy with the
// secure cloud alone (the seed's policy rents secure only, so its row is the
// same run).
func Tables(ctx context.Context, workers int) (string, error) {
	reps, err := RunAll(ctx, TablesScenarios(), readmePolicies(), workers)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, rep := range reps {
		all, secure := split(rep)
		fmt.Fprintf(&b, "%s, %d tested refs, %d machines:\n\n", rep.Title(), rep.Refs, rep.Machines)
		b.WriteString(all.Table())
		b.WriteString("\nThe same, secure cloud only (every policy restricted to it):\n\n")
		b.WriteString(secure.Table())
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// split parts a report of readmePolicies into every policy with both clouds
// and the secure-cloud comparison: the seed's run (secure only already) and
// the reputation policy's restricted run.
func split(rep Report) (all, secure Report) {
	n := len(rep.Results)
	all, secure = rep, rep
	all.Results = rep.Results[:n-1]
	seed, _ := rep.Result("seed")
	secure.Results = []Result{seed, rep.Results[n-1]}
	return all, secure
}

// SweepMarkdown renders the README's sweep block: the default scenario
// (1,000 pull requests, 20 % bad machines, 72 h warm-up) over SweepSeeds
// and SweepLayouts.
func SweepMarkdown(ctx context.Context, workers int) (string, error) {
	return sweepMarkdown(ctx, Scenario{}, workers)
}

func sweepMarkdown(ctx context.Context, base Scenario, workers int) (string, error) {
	cs, err := Sweep(ctx, base, SweepSeeds, SweepLayouts, workers)
	if err != nil {
		return "", err
	}
	return SweepTable(cs), nil
}

// Block returns the text of the named generated block of a README.
func Block(readme, name string) (string, error) {
	start, end := "<!-- "+name+":start -->\n", "<!-- "+name+":end -->"
	_, rest, ok := strings.Cut(readme, start)
	if !ok {
		return "", fmt.Errorf("README has no %q line", strings.TrimSpace(start))
	}
	block, _, ok := strings.Cut(rest, end)
	if !ok {
		return "", fmt.Errorf("README's %s block has no %q line", name, end)
	}
	return block, nil
}

// Splice replaces the named block of a README with text.
func Splice(readme, name, text string) (string, error) {
	old, err := Block(readme, name)
	if err != nil {
		return "", err
	}
	start := "<!-- " + name + ":start -->\n"
	return strings.Replace(readme, start+old, start+strings.TrimSuffix(text, "\n")+"\n", 1), nil
}

// WriteREADME regenerates both blocks of the README at path.
func WriteREADME(ctx context.Context, path string, workers int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	readme := string(b)
	for _, block := range []struct {
		name string
		gen  func(context.Context, int) (string, error)
	}{{TablesBlock, Tables}, {SweepBlock, SweepMarkdown}} {
		text, err := block.gen(ctx, workers)
		if err != nil {
			return err
		}
		if readme, err = Splice(readme, block.name, text); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(readme), 0o644)
}
