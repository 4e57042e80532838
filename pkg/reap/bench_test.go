package reap

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// fleet fills w with pods spread evenly over runs: every other run completed
// an hour ago, every fourth keeps failed pods (so its artifacts are read).
func fleet(tb testing.TB, w *world, pods, runs int) {
	tb.Helper()
	ids := make([]int64, runs)
	for r := range ids {
		ids[r] = w.addRun(tb)
	}
	for n := range pods {
		r := n % runs
		tags := tagsFor(ids[r], 1, n/runs+1)
		tags.KeepFailed = r%4 == 0
		w.ownedPod(tb, tags)
	}
	for r, id := range ids {
		if r%2 == 0 {
			w.complete(tb, id)
		}
	}
	w.advance(time.Hour)
}

// BenchmarkSweep10000PodsOver100Runs measures one dry-run sweep (the same
// listing, lookups and decisions as an executing one, without the DELETEs)
// of 10,000 model-mode pods on a virtual clock. API calls grow with pages and
// runs, not with pods: 20 listing pages, 100 run reads and 25 artifact listings.
func BenchmarkSweep10000PodsOver100Runs(b *testing.B) {
	const pods, runs = 10000, 100
	w := newWorld(b, worldOptions{pageSize: 500})
	fleet(b, w, pods, runs)
	req := Request{Scope: Scope{Repository: cloud.Repository}}
	runpodBefore, githubBefore := len(w.cloud.RunPod.Requests()), w.githubCalls()
	w.sweeper.Logf = nil

	sweeps := 0
	for b.Loop() {
		rec, err := w.sweeper.Sweep(context.Background(), req)
		assert.NilError(b, err)
		assert.Equal(b, len(rec.Pods), pods)
		sweeps++
	}
	runpodCalls := float64(len(w.cloud.RunPod.Requests())-runpodBefore) / float64(sweeps)
	githubCalls := float64(w.githubCalls()-githubBefore) / float64(sweeps)
	b.ReportMetric(runpodCalls+githubCalls, "calls/sweep")
	b.ReportMetric(runpodCalls, "runpod-calls/sweep")
	b.ReportMetric(githubCalls, "github-calls/sweep")
	b.ReportMetric(float64(pods), "pods/sweep")
}
