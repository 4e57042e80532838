package market

import (
	"context"
	"fmt"
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
// how many keep the reputation policy's p95 time to a runner from a cold
// start (no warm-up) at or below the seed's; it fails when one does not, and
// when the README's sweep block is not what it printed: regenerate it
// with `go run ./pkg/cmd/market -readme .github/CONTRIBUTING.md`. -v prints the table.
// About 28 minutes of CPU when the replay polled (not measured since it
// follows the log stream); one worker per core.
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
		var coldMisses []string
		for _, c := range cs {
			if !c.ColdP95OK() {
				coldMisses = append(coldMisses, fmt.Sprintf("%s (%s, the seed's %s)", c.Title,
					minutes(c.ColdReputation.TimeToRunner(0.95)), minutes(c.ColdSeed.TimeToRunner(0.95))))
			}
			vb, vs := Judge(c.Seed, c.Reputation), Judge(c.Seed, c.Secure)
			tally(&both, vb)
			tally(&secure, vs)
			leastBoth, leastSecure = min(leastBoth, vb.LessWaste), min(leastSecure, vs.LessWaste)
		}
		b.ReportMetric(float64(both[3]), "scenarios-meeting-target")
		b.ReportMetric(float64(secure[3]), "secure-only-meeting-target")
		b.ReportMetric(100*leastBoth, "%least-less-waste")
		b.ReportMetric(100*leastSecure, "%least-less-waste-secure-only")
		b.ReportMetric(float64(len(cs)-len(coldMisses)), "cold-start-p95-not-higher")
		table := SweepTable(cs)
		b.Log("\n" + table)
		if len(coldMisses) > 0 {
			b.Errorf("from a cold start the reputation policy's p95 time to a runner is higher than the seed's in %d of %d scenarios: %s",
				len(coldMisses), len(cs), strings.Join(coldMisses, "; "))
		}
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
