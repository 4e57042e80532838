package provision

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// callStats is what one accepted provision cost in API calls and time.
type callStats struct {
	runpodCalls, githubCalls, podReads int
	notModified                        int           // GitHub's 304s among githubCalls: they cost no rate limit
	minReadGap                         time.Duration // shortest gap between two reads of the pod
	detection                          time.Duration // runner online → accepted
	watched                            time.Duration // pod creation → acceptance
}

// Boot and proof of the benchmark's healthy host: a realistic 90 s boot (image
// pull and container start) and the model's 25 s CUDA proof. A faster host
// hides what the watch costs while a pod boots.
const (
	benchBoot  = 90 * time.Second
	benchProof = 25 * time.Second
)

// benchHost boots in benchBoot.
func benchHost(h *runpodsim.HostProfile) { h.BootSeconds = int(benchBoot / time.Second) }

// hostProfile is a healthy host's boot and the CUDA proof's length on it.
type hostProfile struct{ boot, proof time.Duration }

// provisionMany runs provision n times in one model-mode cloud (each with its
// own run id) and returns per-run call statistics. The simulators' request
// logs are read once at the end and split by each run's window of virtual
// time, so measuring does not grow with n.
func provisionMany(tb testing.TB, n int) []callStats {
	tb.Helper()
	return provisionManyOn(tb, n, hostProfile{benchBoot, benchProof})
}

// provisionManyOn is provisionMany on hosts that boot and prove CUDA as hp says.
func provisionManyOn(tb testing.TB, n int, hp hostProfile) []callStats {
	tb.Helper()
	boot := func(h *runpodsim.HostProfile) { h.BootSeconds = int(hp.boot / time.Second) }
	s := newScenario(tb, cloud.Options{Market: market(host("h1", a4000, boot), host("h2", a4000, boot))}, nil)
	s.cloud.Model.ProofTime = hp.proof
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
			if r.Status == http.StatusNotModified {
				stats[k].notModified++
			}
		}
	}
	return stats
}

// MaxCallsPerAcceptedPod is the target: RunPod and GitHub calls
// together per accepted pod, with a 90 s boot and a 25 s proof.
const maxCallsPerAcceptedPod = 15

// The startup watch reads the pod at most once per 10 s poll (so at most six
// times in any minute), accepts a runner within one poll of it coming online,
// reads the PR at most once a minute while watching, and spends at most 15
// calls (RunPod and GitHub together) per accepted pod on a 90 s boot.
func TestPollBudgetAndDetectionDelay(t *testing.T) {
	poll := 10 * time.Second
	for i, st := range provisionMany(t, 5) {
		if st.podReads < 2 || st.minReadGap < poll {
			t.Errorf("run %d: %d pod reads, shortest gap %s; want reads at least %s apart", i, st.podReads, st.minReadGap, poll)
		}
		if st.detection < 0 || st.detection > poll {
			t.Errorf("run %d: accepted %s after the runner came online, want within one poll (%s)", i, st.detection, poll)
		}
		if calls := st.runpodCalls + st.githubCalls; calls > maxCallsPerAcceptedPod {
			t.Errorf("run %d: %d RunPod + %d GitHub = %d calls for one accepted pod (%s watched); want at most %d",
				i, st.runpodCalls, st.githubCalls, calls, st.watched, maxCallsPerAcceptedPod)
		}
		if st.notModified == 0 {
			t.Errorf("run %d: no PR re-read was answered 304: the watch's PR reads are not conditional", i)
		}
	}
}

// BenchmarkProvision provisions one accepted pod per iteration on the
// model-mode simulated cloud (hosts boot in 90 s, the proof takes 25 s) and
// reports API calls per accepted pod (RunPod, GitHub, their sum, and the
// GitHub calls answered 304, which cost no rate limit), pod reads per minute
// and the detection delay. With -benchtime=1000x it is the "1,000 simulated
// provisions" figure of the simulated cloud.
func BenchmarkProvision(b *testing.B) {
	start := time.Now()
	stats := provisionMany(b, b.N)
	elapsed := time.Since(start)
	var rp, gh, notModified, reads int
	var detection, watched time.Duration
	for _, st := range stats {
		rp, gh, notModified, reads = rp+st.runpodCalls, gh+st.githubCalls, notModified+st.notModified, reads+st.podReads
		detection, watched = detection+st.detection, watched+st.watched
	}
	n := float64(len(stats))
	b.ReportMetric(float64(rp)/n, "runpod-calls/pod")
	b.ReportMetric(float64(gh)/n, "github-calls/pod")
	b.ReportMetric(float64(rp+gh)/n, "calls/pod")
	b.ReportMetric(float64(notModified)/n, "github-304/pod")
	b.ReportMetric(float64(reads)/watched.Minutes(), "pod-reads/min")
	b.ReportMetric(detection.Seconds()/n, "detection-s")
	if b.N >= 100 {
		fmt.Printf("%d simulated provisions in %s (%.2f ms each)\n", b.N, elapsed.Round(time.Millisecond), float64(elapsed.Milliseconds())/n)
	}
}
