package market

import (
	"context"
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
