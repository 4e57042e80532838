package market

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestREADMEMarketTables regenerates the README's detailed market tables
// (seed 1, both layouts, every policy, and the secure cloud alone) and fails
// when the README shows anything else: regenerate them with
// `go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md`. The sweep block is checked by
// BenchmarkMarketSweep (minutes of CPU).
func TestREADMEMarketTables(t *testing.T) {
	readme, err := os.ReadFile("../../../.github/CONTRIBUTING.md")
	assert.NilError(t, err)
	block, err := Block(string(readme), TablesBlock)
	assert.NilError(t, err)
	want, err := Tables(context.Background(), runtime.NumCPU())
	assert.NilError(t, err)
	assert.Equal(t, block, strings.TrimSuffix(want, "\n")+"\n", "the %s block of .github/CONTRIBUTING.md is stale: regenerate it with `go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md`", TablesBlock)
}

// Splice replaces one generated block and leaves the rest; a README without
// the block's markers is an error naming the missing line.
func TestSpliceBlock(t *testing.T) {
	readme := "intro\n<!-- market-tables:start -->\nold\nrows\n<!-- market-tables:end -->\nafter\n"
	got, err := Splice(readme, TablesBlock, "new table\n")
	assert.NilError(t, err)
	assert.Equal(t, got, "intro\n<!-- market-tables:start -->\nnew table\n<!-- market-tables:end -->\nafter\n")
	block, err := Block(got, TablesBlock)
	assert.NilError(t, err)
	assert.Equal(t, block, "new table\n")

	_, err = Splice("no markers\n", SweepBlock, "x")
	assert.Check(t, is.ErrorContains(err, `README has no "<!-- market-sweep:start -->" line`))
	_, err = Block("<!-- market-sweep:start -->\nunclosed\n", SweepBlock)
	assert.Check(t, is.ErrorContains(err, `block has no "<!-- market-sweep:end -->" line`))
}

// The README's sweep block, as last regenerated, keeps the reputation
// policy's p95 time to a runner from a cold start at or below the seed's in
// every scenario: no ✗ in its cold-start column and every scenario counted.
// (BenchmarkMarketSweep checks that the block is what the replay prints.)
func TestREADMESweepColdStartNotAboveTheSeed(t *testing.T) {
	readme, err := os.ReadFile("../../../.github/CONTRIBUTING.md")
	assert.NilError(t, err)
	block, err := Block(string(readme), SweepBlock)
	assert.NilError(t, err)
	n, rows := len(SweepSeeds)*len(SweepLayouts), 0
	for _, line := range strings.Split(block, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 10 || strings.HasPrefix(cells[0], "scenario") {
			continue
		}
		rows++
		assert.Check(t, !strings.Contains(cells[9], "✗"), "%s: p95 from a cold start (seed / reputation) %s", cells[0], cells[9])
	}
	assert.Check(t, rows == n, "%d scenario rows with a cold-start column; want %d", rows, n)
	want := fmt.Sprintf("From a cold start (no warm-up: no record for the first day and a quarter), both clouds: p95 not higher in %d of %d scenarios.", n, n)
	assert.Check(t, strings.Contains(block, want), "the %s block lacks %q", SweepBlock, want)
}
