package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// chaosConfig is the consumer config every schedule runs: real-time timings
// short enough for a test, prices high enough ($36–54/h, a cent every second
// or so) that the printed worst case, rounded to the cent, bounds something.
const chaosConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000", "NVIDIA L4"]
max_price_candidates: 3
max_provision_attempts: 4
startup_timeout_seconds: 10
startup_poll_seconds: 1
create_deadline_seconds: 8
setup_budget_seconds: 6
lifetime_seconds: 30
`

// The GPU job's steps as the lane's workflow names them; the watchdog and
// cleanup recognise the tests by "Run GPU tests".
const (
	chaosSetupStep = "Set up job"
	chaosTestStep  = "Run GPU tests"
)

// chaosSchedule is everything a seed decides about one lane.
type chaosSchedule struct {
	Seed   uint64
	RunPod chaosProxyPlan // the network and edge in front of RunPod
	GitHub chaosProxyPlan // and in front of GitHub

	Faults        runpodsim.Faults // the RunPod simulator's own faults
	Hosts         []runpodsim.HostProfile
	NeverRegister map[int]bool          // launches whose runner never comes online
	DieAfter      map[int]time.Duration // launches whose container dies this long after starting

	GitHubFaults   []githubsim.Fault   // GitHub's own rate limits and errors
	GitHubRewrites []githubsim.Rewrite // wrong-but-valid GitHub answers

	Kill      string        // the action SIGTERMed (GitHub cancelling the run), "" none
	KillAfter time.Duration // how long after the action started

	JobNeverStarts bool          // the GPU job is never handed to the runner (runner queue)
	JobDelay       time.Duration // the queue's delay before the job is handed out
	TestsFail      bool          // the test step fails

	desc []string
}

func (sc *chaosSchedule) note(format string, args ...any) {
	sc.desc = append(sc.desc, fmt.Sprintf(format, args...))
}

func (sc *chaosSchedule) String() string {
	return fmt.Sprintf("seed %d:\n  runpod network: %s\n  github network: %s\n  %s", sc.Seed, sc.RunPod, sc.GitHub, strings.Join(sc.desc, "\n  "))
}

var chaosGPUs = []runpodsim.GPUType{
	{ID: harness.A4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 36, CommunityPrice: 30},
	{ID: harness.A5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 43.2, CommunityPrice: 36},
	{ID: harness.L4, Name: "L4", MemoryGB: 24, SecurePrice: 54, CommunityPrice: 45},
}

// drawSchedule derives a schedule from seed alone.
func drawSchedule(seed uint64) *chaosSchedule {
	rng := rand.New(rand.NewPCG(seed, 0xC4A05))
	sc := &chaosSchedule{Seed: seed, NeverRegister: map[int]bool{}, DieAfter: map[int]time.Duration{}}
	chance := func(p float64) bool { return rng.Float64() < p }
	between := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)+1))).Round(10 * time.Millisecond)
	}

	// Network faults on every request: a rate and a mix of kinds per service.
	network := func() chaosProxyPlan {
		if chance(0.2) {
			return chaosProxyPlan{}
		}
		all := make([]chaosFault, 0, numChaosFaults)
		for f := faultNone + 1; f < numChaosFaults; f++ {
			all = append(all, f)
		}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		kinds := all[:2+rng.IntN(4)]
		slices.Sort(kinds)
		return chaosProxyPlan{Rate: 0.01 + 0.11*rng.Float64(), Kinds: kinds, Slow: between(300*time.Millisecond, 3*time.Second)}
	}
	sc.RunPod, sc.GitHub = network(), network()
	if len(sc.RunPod.Kinds) > 0 && chance(0.15) {
		// Creates are the money path: sometimes they alone are hit, and often.
		sc.RunPod.Only, sc.RunPod.Rate = "POST /v2/pods", 0.3+0.5*rng.Float64()
	}
	if chance(0.25) {
		from := between(0, 12*time.Second)
		sc.GitHub.Outage = &chaosWindow{From: from, To: from + between(time.Second, 10*time.Second), Drop: chance(0.5)}
	}

	// Hosts: one per GPU type, each healthy or not, booting fast or slowly
	// (past the startup timeout of 10 s).
	for i, g := range chaosGPUs {
		h := runpodsim.HostProfile{ID: fmt.Sprintf("h%d", i+1), DataCenterID: "US-TX-3", GPUTypeID: g.ID, GPUCount: 2,
			DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: !chance(0.2)}
		if chance(0.15) {
			h.BootSeconds = 3 + rng.IntN(12)
		}
		sc.Hosts = append(sc.Hosts, h)
		sc.note("host %s %s: healthy %t, boots in %d s", h.ID, g.Name, h.Healthy, h.BootSeconds)
	}
	if chance(0.15) {
		n := 1 + rng.IntN(2)
		sc.Faults.DieDuringBoot = runpodsim.Trigger{Nth: []int{n}}
		sc.note("pod %d dies while booting", n)
	}
	if chance(0.15) {
		n := 1 + rng.IntN(2)
		sc.Faults.LoseRuntime, sc.Faults.RuntimeLostAfter = runpodsim.Trigger{Nth: []int{n}}, between(500*time.Millisecond, 4*time.Second)
		sc.note("pod %d loses its runtime %s after starting", n, sc.Faults.RuntimeLostAfter)
	}
	if chance(0.15) {
		n := 1 + rng.IntN(2)
		sc.NeverRegister[n] = true
		sc.note("launch %d: the runner never registers", n)
	}
	if chance(0.15) {
		n := 1 + rng.IntN(2)
		sc.DieAfter[n] = between(time.Second, 8*time.Second)
		sc.note("launch %d: the container dies %s after starting", n, sc.DieAfter[n])
	}
	if chance(0.2) {
		lc := runpodsim.LostCreateFault{When: runpodsim.Trigger{Nth: []int{1 + rng.IntN(2)}}, DropConnection: chance(0.5)}
		if chance(0.3) {
			lc.When = runpodsim.Trigger{Rate: 0.4}
		}
		sc.Faults.LostCreates = []runpodsim.LostCreateFault{lc}
		sc.note("lost creates %+v", lc)
	}
	if chance(0.25) {
		statuses := []int{500, 403, 429, 502}
		sc.Faults.DeleteFailures = runpodsim.DeleteFault{FailFirst: 1 + rng.IntN(4), Status: statuses[rng.IntN(len(statuses))]}
		sc.note("deletes fail %d times per pod with %d", sc.Faults.DeleteFailures.FailFirst, sc.Faults.DeleteFailures.Status)
	}
	if chance(0.25) {
		sc.Faults.ListingDelay = between(500*time.Millisecond, 5*time.Second)
		sc.note("pod listing lags %s", sc.Faults.ListingDelay)
	}
	if chance(0.15) {
		sc.Faults.Rewrites = append(sc.Faults.Rewrites, runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"},
			When: runpodsim.Trigger{Rate: 0.15}, Body: otherPodsRecord()})
		sc.note("GET /v2/pods/{id} answers another pod's record 15%% of the time")
	}
	if chance(0.15) {
		field := []string{"status", "startedAt", "runtime", "id", "env"}[rng.IntN(5)]
		route := []string{"GET /v2/pods/{id}", "GET /v2/pods", "POST /v2/pods"}[rng.IntN(3)]
		sc.Faults.Rewrites = append(sc.Faults.Rewrites, runpodsim.RewriteFault{Match: runpodsim.Match{Route: route},
			When: runpodsim.Trigger{Rate: 0.2}, Body: withoutField(field)})
		sc.note("%s answers without %q 20%% of the time", route, field)
	}

	if chance(0.15) {
		kinds := []githubsim.FaultKind{githubsim.FaultPrimaryRateLimit, githubsim.FaultSecondaryRateLimit, githubsim.FaultTooManyRequests, githubsim.FaultServerError}
		f := githubsim.Fault{Kind: kinds[rng.IntN(len(kinds))], Probability: 0.1, RetryAfter: time.Second, Status: 503}
		if chance(0.3) {
			f.RetryAfter = time.Hour
		}
		sc.GitHubFaults = append(sc.GitHubFaults, f)
		sc.note("GitHub's own fault %d (retry after %s) on 10%% of requests", f.Kind, f.RetryAfter)
	}
	if chance(0.1) {
		rw := githubsim.Rewrite{Method: "GET", Path: "/repos/*/*/pulls/*", Skip: rng.IntN(4), Times: 1, Body: withoutField("state")}
		sc.GitHubRewrites = append(sc.GitHubRewrites, rw)
		sc.note("GitHub answers pull request read %d without its state", rw.Skip+1)
	}
	if chance(0.1) {
		rw := githubsim.Rewrite{Method: "GET", Path: "/repos/*/*/actions/runs/*/attempts/*/jobs", Skip: rng.IntN(6), Times: 1 + rng.IntN(3), Body: jobsWithoutSteps}
		sc.GitHubRewrites = append(sc.GitHubRewrites, rw)
		sc.note("GitHub answers jobs reads %d–%d without steps", rw.Skip+1, rw.Skip+rw.Times)
	}

	if chance(0.3) {
		targets := []string{"authorize", "provision", "provision", "provision", "watchdog", "gate", "cleanup", "cleanup", "reap"}
		sc.Kill = targets[rng.IntN(len(targets))]
		sc.KillAfter = between(0, 4*time.Second)
		sc.note("SIGTERM to %s %s after it starts (GitHub cancels the run)", sc.Kill, sc.KillAfter)
	}
	switch {
	case chance(0.1):
		sc.JobNeverStarts = true
		sc.note("the GPU job never leaves the queue")
	case chance(0.3):
		sc.JobDelay = between(500*time.Millisecond, 3*time.Second)
		sc.note("the GPU job waits %s in the queue", sc.JobDelay)
	}
	if chance(0.2) {
		sc.TestsFail = true
		sc.note("the tests fail")
	}
	return sc
}

// otherPodsRecord answers a pod read with the record of another pod seen
// earlier (a wrong-but-valid answer), or with its own record under another id.
func otherPodsRecord() func(int, []byte) []byte {
	var mu sync.Mutex
	seen := map[string][]byte{}
	return func(status int, body []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		var pod map[string]any
		if status != 200 || json.Unmarshal(body, &pod) != nil {
			return body
		}
		id, _ := pod["id"].(string)
		for other, rec := range seen {
			if other != id {
				seen[id] = body
				return rec
			}
		}
		seen[id] = body
		pod["id"] = "zzzzzzzzzzzzzz"
		out, _ := json.Marshal(pod)
		return out
	}
}

// withoutField drops field from a JSON object, or from every object of a JSON array.
func withoutField(field string) func(int, []byte) []byte {
	return func(_ int, body []byte) []byte {
		var v any
		if json.Unmarshal(body, &v) != nil {
			return body
		}
		switch x := v.(type) {
		case map[string]any:
			delete(x, field)
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok {
					delete(m, field)
				}
			}
		}
		out, _ := json.Marshal(v)
		return out
	}
}

// jobsWithoutSteps drops the steps of every job in a jobs listing.
func jobsWithoutSteps(_ int, body []byte) []byte {
	var v map[string]any
	if json.Unmarshal(body, &v) != nil {
		return body
	}
	if jobs, ok := v["jobs"].([]any); ok {
		for _, j := range jobs {
			if m, ok := j.(map[string]any); ok {
				delete(m, "steps")
			}
		}
	}
	out, _ := json.Marshal(v)
	return out
}
