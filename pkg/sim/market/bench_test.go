package market

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkMarketSweep replays the sweep (seeds 1–10, both layouts, 1,000
// pull requests each after the warm-up; the seed's policy and the reputation
// policy with both clouds and on the secure cloud alone), reports how many
// of the 20 scenarios meet the target (≥ 30 % less waste on rejected hosts
// per accepted pod than the seed's policy, no higher p95 time to a runner,
// no more runs that ended with no pod) and the least waste reduction, and
// fails when the README's sweep block is not what it printed: regenerate it
// with `go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md`. -v prints the table.
// About 13 minutes of CPU; one worker per core (10 minutes on two busy ones).
//
//	go test ./pkg/sim/market -run '^$' -bench MarketSweep -benchtime 1x -v
func BenchmarkMarketSweep(b *testing.B) {
	for b.Loop() {
		cs, err := Sweep(context.Background(), Scenario{}, SweepSeeds, SweepLayouts, runtime.NumCPU())
		if err != nil {
			b.Fatal(err)
		}
		var both, secure [4]int
		leastBoth, leastSecure := 1.0, 1.0
		for _, c := range cs {
			vb, vs := Judge(c.Seed, c.Reputation), Judge(c.Seed, c.Secure)
			tally(&both, vb)
			tally(&secure, vs)
			leastBoth, leastSecure = min(leastBoth, vb.LessWaste), min(leastSecure, vs.LessWaste)
		}
		b.ReportMetric(float64(both[3]), "scenarios-meeting-target")
		b.ReportMetric(float64(secure[3]), "secure-only-meeting-target")
		b.ReportMetric(100*leastBoth, "%least-less-waste")
		b.ReportMetric(100*leastSecure, "%least-less-waste-secure-only")
		table := SweepTable(cs)
		b.Log("\n" + table)
		readme, err := os.ReadFile("../../../.github/CONTRIBUTING.md")
		if err != nil {
			b.Fatal(err)
		}
		block, err := Block(string(readme), SweepBlock)
		if err != nil {
			b.Fatal(err)
		}
		if block != strings.TrimSuffix(table, "\n")+"\n" {
			b.Fatalf("the %s block of .github/CONTRIBUTING.md is stale: regenerate it with `go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md`", SweepBlock)
		}
	}
}
