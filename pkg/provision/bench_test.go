package provision

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// callStats is what one accepted provision cost in API calls and time.
type callStats struct {
	runpodCalls, githubCalls, podReads int
	minReadGap                         time.Duration // shortest gap between two reads of the pod
	detection                          time.Duration // runner online → accepted
	watched                            time.Duration // pod creation → acceptance
}

// provisionMany runs provision n times in one model-mode cloud (each with its
// own run id) and returns per-run call statistics. The simulators' request
// logs are read once at the end and split by each run's window of virtual
// time, so measuring does not grow with n.
func provisionMany(tb testing.TB, n int) []callStats {
	tb.Helper()
	s := newScenario(tb, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000))}, nil)
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	type window struct{ from, to time.Time }
	windows := make([]window, 0, n)
	stats := make([]callStats, 0, n)
	for i := 0; i < n; i++ {
		s.req.Owner.RunID = int64(100000 + i)
		created := s.clock.Now()
		res, err := Run(context.Background(), s.deps, s.req)
		if err != nil || res.Accepted == nil {
			tb.Fatalf("run %d: %v", i, err)
		}
		accepted := s.clock.Now()
		// The model's runner connects ProofTime after the container started.
		online := res.Accepted.StartedAt.Add(s.cloud.Model.ProofTime)
		stats = append(stats, callStats{detection: accepted.Sub(online), watched: accepted.Sub(created), minReadGap: time.Hour})
		windows = append(windows, window{created, accepted})
		s.clock.Advance(time.Second) // the cleanup job's delete falls outside the run's window
		if err := rp.DeletePod(context.Background(), res.Accepted.PodID); err != nil {
			tb.Fatal(err)
		}
		s.clock.Advance(time.Second) // and outside the next run's window
		s.obs.lines = s.obs.lines[:0]
	}
	// Requests arrive in time order; walk them once alongside the windows.
	in := func(at time.Time, w int) int {
		for w < len(windows) && at.After(windows[w].to) {
			w++
		}
		if w < len(windows) && !at.Before(windows[w].from) {
			return w
		}
		return -1
	}
	last := make([]time.Time, n)
	w := 0
	for _, r := range s.cloud.RunPod.Requests() {
		k := in(r.At, w)
		if k < 0 {
			continue
		}
		w = k
		st := &stats[k]
		st.runpodCalls++
		if r.Route != "GET /v2/pods/{id}" {
			continue
		}
		if st.podReads++; !last[k].IsZero() {
			st.minReadGap = min(st.minReadGap, r.At.Sub(last[k]))
		}
		last[k] = r.At
	}
	w = 0
	for _, r := range s.cloud.GitHub.Requests() {
		if k := in(r.At, w); k >= 0 {
			w = k
			stats[k].githubCalls++
		}
	}
	return stats
}

// The startup watch reads the pod at most once per 10 s poll (so at most six
// times in any minute) and accepts a runner within one poll of it coming online.
func TestPollBudgetAndDetectionDelay(t *testing.T) {
	poll := 10 * time.Second
	for i, st := range provisionMany(t, 5) {
		if st.podReads < 2 || st.minReadGap < poll {
			t.Errorf("run %d: %d pod reads, shortest gap %s; want reads at least %s apart", i, st.podReads, st.minReadGap, poll)
		}
		if st.detection < 0 || st.detection > poll {
			t.Errorf("run %d: accepted %s after the runner came online, want within one poll (%s)", i, st.detection, poll)
		}
	}
}

// BenchmarkProvision provisions one accepted pod per iteration on the
// model-mode simulated cloud and reports API calls per accepted pod, pod reads
// per minute and the detection delay. With -benchtime=1000x it is the
// "1,000 simulated provisions" figure of the simulated cloud.
func BenchmarkProvision(b *testing.B) {
	start := time.Now()
	stats := provisionMany(b, b.N)
	elapsed := time.Since(start)
	var rp, gh, reads int
	var detection, watched time.Duration
	for _, st := range stats {
		rp, gh, reads = rp+st.runpodCalls, gh+st.githubCalls, reads+st.podReads
		detection, watched = detection+st.detection, watched+st.watched
	}
	n := float64(len(stats))
	b.ReportMetric(float64(rp)/n, "runpod-calls/pod")
	b.ReportMetric(float64(gh)/n, "github-calls/pod")
	b.ReportMetric(float64(reads-len(stats))/watched.Minutes(), "pod-reads/min") // reads after the first, per watched minute
	b.ReportMetric(detection.Seconds()/n, "detection-s")
	if b.N >= 100 {
		fmt.Printf("%d simulated provisions in %s (%.2f ms each)\n", b.N, elapsed.Round(time.Millisecond), float64(elapsed.Milliseconds())/n)
	}
}
