package reap

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/wire"
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
// runs, not with pods: 20 listing pages, 100 run reads and one listing of the
// repository's retention artifacts.
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

// pageServer is a RunPod API that serves a large account's pod list from
// pages rendered once, so a benchmark measures the sweep (the client's
// streaming decode, the lookups, the decisions), not the simulator's
// per-request bookkeeping, which grows with the pods it holds.
type pageServer struct {
	pages [][]byte
	calls atomic.Int64
}

func (p *pageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2/pods" {
		http.NotFound(w, r)
		return
	}
	p.calls.Add(1)
	n, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	if n < 0 || n >= len(p.pages) {
		http.Error(w, `{"error":"unknown cursor"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(p.pages[n])
}

// bigAccount renders pods RUNNING pods of runs (every other run completed an
// hour ago, every fourth keeps failed pods) in pages of pageSize, and adds
// the runs to the simulated GitHub.
func bigAccount(tb testing.TB, w *world, pods, runs, pageSize int) *pageServer {
	tb.Helper()
	ids := make([]int64, runs)
	for r := range ids {
		ids[r] = w.addRun(tb)
	}
	for r, id := range ids {
		if r%2 == 0 {
			w.complete(tb, id)
		}
	}
	created := w.clock.Now().Add(-time.Minute)
	w.advance(time.Hour)
	srv := &pageServer{}
	var page struct {
		Pods       []runpod.Pod `json:"pods"`
		NextCursor *string      `json:"nextCursor"`
	}
	for n := 0; n < pods; n++ {
		r := n % runs
		tags := tagsFor(ids[r], 1, n/runs+1)
		tags.KeepFailed = r%4 == 0
		page.Pods = append(page.Pods, runpod.Pod{ID: fmt.Sprintf("pod%07d", n), Name: tags.PodName(), Status: runpod.PodRunning,
			Env: tags.Env(), GPU: &runpod.PodGPU{ID: worldGPU, Count: 1}, Cost: 0.25, Runtime: &runpod.PodRuntime{},
			CreatedAt: wire.KnownTime(created), StartedAt: wire.KnownTime(created)})
		if len(page.Pods) == pageSize || n == pods-1 {
			page.NextCursor = nil
			if n < pods-1 {
				next := strconv.Itoa(len(srv.pages) + 1)
				page.NextCursor = &next
			}
			b, err := json.Marshal(page)
			assert.NilError(tb, err)
			srv.pages = append(srv.pages, b)
			page.Pods = page.Pods[:0]
		}
	}
	return srv
}

// BenchmarkSweepLargeAccount sweeps accounts of 10,000 to 100,000 pods over
// 100 runs in pages of 500 (the old client stopped with an error past 50
// pages: 25,000 pods). It reports CPU per pod — flat across sizes means
// linear in pods — and calls per sweep, which must be exactly the pod-list
// pages, one read per run in scope and the pages of one listing of the
// repository's retention artifacts.
func BenchmarkSweepLargeAccount(b *testing.B) {
	for _, pods := range []int{10000, 50000, 100000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			const runs, pageSize = 100, 500
			w := newWorld(b, worldOptions{})
			srv := bigAccount(b, w, pods, runs, pageSize)
			ts := httptest.NewServer(srv)
			b.Cleanup(ts.Close)
			w.sweeper.Pods = runpod.New(ts.URL, cloud.RunPodKey)
			w.sweeper.Logf = nil
			req := Request{Scope: Scope{Repository: cloud.Repository}}
			githubBefore := w.githubCalls()

			sweeps := 0
			b.ResetTimer()
			for b.Loop() {
				rec, err := w.sweeper.Sweep(context.Background(), req)
				assert.NilError(b, err)
				assert.Equal(b, len(rec.Pods), pods)
				sweeps++
			}
			b.StopTimer()
			pages := float64(srv.calls.Load()) / float64(sweeps)
			github := float64(w.githubCalls()-githubBefore) / float64(sweeps)
			// Every run is in scope and read once; runs 0, 4, 8… (completed, keep-failed) share one artifact listing page.
			want := float64(len(srv.pages) + runs + 1)
			if pages+github != want {
				b.Fatalf("%.1f calls per sweep (%.1f pod-list pages + %.1f GitHub); want pages + runs + 1 = %.0f", pages+github, pages, github, want)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sweeps)/float64(pods), "ns/pod")
			b.ReportMetric(pages, "pod-list-pages/sweep")
			b.ReportMetric(github, "github-calls/sweep")
			b.ReportMetric(pages+github, "calls/sweep")
		})
	}
}
