package provision

import (
	"context"
	"fmt"
	"github.com/org/runpod-gpu/pkg/reputation"
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

// hostProfile is a healthy host's boot and the CUDA proof's length on it,
// and how its runner comes online after the proof passed: runnerDelay later,
// saying so in its log ("Listening for Jobs") unless quiet.
type hostProfile struct {
	boot, proof, runnerDelay time.Duration
	quiet                    bool
}

func (hp hostProfile) String() string {
	s := fmt.Sprintf("boot %s, proof %s", hp.boot, hp.proof)
	if hp.runnerDelay > 0 {
		s += fmt.Sprintf(", runner %s later", hp.runnerDelay)
	}
	if hp.quiet {
		s += ", quiet runner"
	}
	return s
}

// The sweep of issue 27: boots of 30–300 s and proofs of 5–60 s (the
// boundaries, the old 90 s/25 s point and the seconds on either side of it).
var (
	sweepBoots  = []time.Duration{30 * time.Second, 45 * time.Second, 60 * time.Second, 89 * time.Second, 90 * time.Second, 91 * time.Second, 120 * time.Second, 150 * time.Second, 200 * time.Second, 250 * time.Second, 299 * time.Second, 300 * time.Second}
	sweepProofs = []time.Duration{5 * time.Second, 9 * time.Second, 15 * time.Second, 25 * time.Second, 26 * time.Second, 40 * time.Second, 55 * time.Second, 60 * time.Second}
)

// provisionMany runs provision n times in one model-mode cloud (each with its
// own run id) and returns per-run call statistics. The simulators' request
// logs are read once at the end and split by each run's window of virtual
// time, so measuring does not grow with n.
func provisionMany(tb testing.TB, n int) []callStats {
	tb.Helper()
	return provisionManyOn(tb, n, hostProfile{boot: benchBoot, proof: benchProof})
}

// provisionManyOn is provisionMany on hosts that boot and prove CUDA as hp says.
func provisionManyOn(tb testing.TB, n int, hp hostProfile) []callStats {
	tb.Helper()
	boot := func(h *runpodsim.HostProfile) { h.BootSeconds = int(hp.boot / time.Second) }
	s := newScenario(tb, cloud.Options{Market: market(host("h1", a4000, boot), host("h2", a4000, boot))}, nil)
	s.cloud.Model.ProofTime, s.cloud.Model.RunnerDelay, s.cloud.Model.QuietRunner = hp.proof, hp.runnerDelay, hp.quiet
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	type window struct{ from, to time.Time }
	windows := make([]window, 0, n)
	stats := make([]callStats, 0, n)
	for i := 0; i < n; i++ {
		s.req.Owner.RunID = int64(100000 + i)
		s.req.Reputation = &reputation.Record{} // the shipped lane always gives one (gpu-lane-authorize.yml)
		created := s.clock.Now()
		res, err := Run(context.Background(), s.deps, s.req)
		if err != nil || res.Accepted == nil {
			tb.Fatalf("run %d: %v", i, err)
		}
		accepted := s.clock.Now()
		// The model's runner connects ProofTime (+ RunnerDelay) after the container started.
		online := res.Accepted.StartedAt.Add(s.cloud.Model.ProofTime + s.cloud.Model.RunnerDelay)
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

// maxCallsPerAcceptedPod is the target: RunPod and GitHub requests together
// (every request sent, 304s included) per accepted pod, for boots of 30–300 s
// and proofs of 5–60 s.
const maxCallsPerAcceptedPod = 13

// The startup watch accepts a runner within one poll of it coming online —
// also seconds after its container starts, also when the runner does not say
// in its log that it listens, also when it connects well after the proof —
// reads the pod at most once per poll, re-reads the PR conditionally, and
// spends at most 13 requests (RunPod and GitHub together, 304s included) per
// accepted pod for every boot of 30–300 s and proof of 5–60 s.
func TestCallsPerPodAndDetectionAcrossBootsAndProofs(t *testing.T) {
	poll := 10 * time.Second
	check := func(t *testing.T, hp hostProfile, budget bool) {
		t.Helper()
		st := provisionManyOn(t, 1, hp)[0]
		if st.minReadGap < poll {
			t.Errorf("%s: %d pod reads, shortest gap %s; want reads at least %s apart", hp, st.podReads, st.minReadGap, poll)
		}
		if st.detection < 0 || st.detection > poll {
			t.Errorf("%s: accepted %s after the runner came online, want within one poll (%s)", hp, st.detection, poll)
		}
		if calls := st.runpodCalls + st.githubCalls; budget && calls > maxCallsPerAcceptedPod {
			t.Errorf("%s: %d RunPod + %d GitHub = %d calls for one accepted pod (%s watched); want at most %d",
				hp, st.runpodCalls, st.githubCalls, calls, st.watched, maxCallsPerAcceptedPod)
		}
		if st.watched > 2*time.Minute && st.notModified == 0 {
			t.Errorf("%s: no PR re-read was answered 304: the watch's PR reads are not conditional", hp)
		}
	}
	for _, boot := range sweepBoots {
		for _, proof := range sweepProofs {
			check(t, hostProfile{boot: boot, proof: proof}, true)
		}
	}
	// Detection holds however the runner comes online: a second or nine after
	// its container starts, or seconds after the proof, or without a word in
	// its log (then the registry is read every poll from the proof's end).
	for _, boot := range []time.Duration{30 * time.Second, 150 * time.Second, 300 * time.Second} {
		for _, hp := range []hostProfile{
			{boot: boot, proof: time.Second}, {boot: boot, proof: 9 * time.Second},
			{boot: boot, proof: 5 * time.Second, runnerDelay: 3 * time.Second},
			{boot: boot, proof: 25 * time.Second, quiet: true},
			{boot: boot, proof: 25 * time.Second, runnerDelay: time.Second, quiet: true},
			{boot: boot, proof: 25 * time.Second, runnerDelay: 37 * time.Second, quiet: true},
		} {
			check(t, hp, false)
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

// BenchmarkProvisionSweep provisions one accepted pod for every boot (30–300
// s) and proof (5–60 s) of the sweep per iteration and reports, across the
// sweep, the calls per accepted pod — every request sent (max and mean), and
// those that count against a rate limit (GitHub's 304s do not) — and the
// longest detection delay.
func BenchmarkProvisionSweep(b *testing.B) {
	var worst, worstCounted, sum, pods int
	var worstAt hostProfile
	var detection time.Duration
	for range b.N {
		for _, boot := range sweepBoots {
			for _, proof := range sweepProofs {
				hp := hostProfile{boot: boot, proof: proof}
				st := provisionManyOn(b, 1, hp)[0]
				calls := st.runpodCalls + st.githubCalls
				if calls > worst {
					worst, worstAt = calls, hp
				}
				worstCounted = max(worstCounted, calls-st.notModified)
				sum, pods = sum+calls, pods+1
				detection = max(detection, st.detection)
			}
		}
	}
	b.ReportMetric(float64(worst), "max-calls/pod")
	b.ReportMetric(float64(sum)/float64(pods), "mean-calls/pod")
	b.ReportMetric(float64(worstCounted), "max-rate-limited-calls/pod")
	b.ReportMetric(detection.Seconds(), "max-detection-s")
	if b.N == 1 {
		fmt.Printf("most calls (%d) at %s\n", worst, worstAt)
	}
}
