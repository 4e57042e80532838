package market

import (
	"context"
	"testing"
)

// BenchmarkMarket replays the default scenario (1,000 pull requests, 20 %
// bad machines) in both layouts and reports, per layout, how much less
// reputation wastes on rejected hosts per accepted pod than the seed's
// policy, its $ per tested ref and p95 time to a runner relative to the
// seed's, and its share of runs that ended with no pod. -v prints the tables.
//
//	go test ./pkg/sim/market -run '^$' -bench Market -benchtime 1x -v
func BenchmarkMarket(b *testing.B) {
	for _, layout := range []Layout{Uniform, Clustered} {
		b.Run(string(layout), func(b *testing.B) {
			for b.Loop() {
				rep, err := Run(context.Background(), Scenario{Seed: 1, Layout: layout}, Policies())
				if err != nil {
					b.Fatal(err)
				}
				seed, _ := rep.Result("seed")
				rp, _ := rep.Result("reputation")
				b.ReportMetric(100*(1-rp.WastePerAccepted()/seed.WastePerAccepted()), "%less-waste")
				b.ReportMetric(rp.DollarsPerRef()/seed.DollarsPerRef(), "$/ref-vs-seed")
				b.ReportMetric(rp.TimeToRunner(0.95).Seconds()/seed.TimeToRunner(0.95).Seconds(), "p95-vs-seed")
				b.ReportMetric(100*rp.NoPodShare(), "%runs-no-pod")
				b.Log("\n" + rep.Markdown())
			}
		})
	}
}
