package provision

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestObsolescenceNoticedWithinPRWatchInterval: while a pod boots (90 s,
// then a 25 s proof) the watch re-reads the PR at most once per
// PRWatchInterval (90 s), yet a PR closed or moved at any moment of the
// watch is noticed within it — before the runner could be accepted — and the
// pod is deleted.
func TestObsolescenceNoticedWithinPRWatchInterval(t *testing.T) {
	closePR := func(p *githubsim.PullRequestSpec) { p.State = "closed" }
	moveHead := func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead }
	tests := []struct {
		after  time.Duration // from the create
		change func(*githubsim.PullRequestSpec)
	}{
		{1 * time.Second, closePR},
		{30 * time.Second, moveHead},
		{59 * time.Second, closePR},
		{61 * time.Second, moveHead},
		{89 * time.Second, closePR},  // just before the first interval's read
		{91 * time.Second, moveHead}, // just after it: only the read before acceptance is left
		{110 * time.Second, closePR}, // ten seconds before the runner comes online
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.after), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, benchHost))}, onlyA4000)
			s.cloud.Model.ProofTime = benchProof
			var created, changed time.Time
			s.obs.onCreate = func(string) {
				created = s.clock.Now()
				s.clock.AfterFunc(tc.after, func() {
					changed = s.clock.Now()
					assert.Check(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, tc.change))
				})
			}
			res, err := s.run(t)
			assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
			assert.Check(t, res.Accepted == nil)
			assert.Check(t, is.Len(s.livePods(t), 0), "the obsolete pod is deleted")
			assert.Assert(t, !changed.IsZero(), "the change happened during the watch")

			prPath := fmt.Sprintf("/repos/%s/pulls/%d", cloud.Repository, s.pr)
			var reads []time.Time
			for _, r := range s.cloud.GitHub.Requests() {
				if r.Method == "GET" && r.Path == prPath && !r.At.Before(created) {
					reads = append(reads, r.At)
				}
			}
			// The last read may be the one before an acceptance (a PR read
			// within a poll); every other follows the interval.
			for i := 1; i < len(reads)-1; i++ {
				assert.Check(t, reads[i].Sub(reads[i-1]) >= PRWatchInterval, "PR reads at %v: want at most one per %s", reads, PRWatchInterval)
			}
			assert.Assert(t, len(reads) > 0 && !reads[len(reads)-1].Before(changed), "PR reads at %v, change at %v", reads, changed)
			noticed := reads[len(reads)-1] // the read that saw the change ended the watch
			assert.Check(t, noticed.Sub(changed) <= PRWatchInterval, "the change at +%v was noticed %v later", tc.after, noticed.Sub(changed))
			assert.Check(t, strings.Contains(err.Error(), fmt.Sprintf("PR #%d", s.pr)))
		})
	}
}

// TestAcceptanceRereadsThePR: a pod that comes online before the watch's
// interval PR read is accepted only on a PR read of the same poll, so a head
// moved while it booted is never accepted; an unchanged PR accepts on a 304.
func TestAcceptanceRereadsThePR(t *testing.T) {
	fast := func(h *runpodsim.HostProfile) { h.BootSeconds = 10 } // online 40 s after the create
	for _, moved := range []bool{false, true} {
		t.Run(fmt.Sprint("moved=", moved), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, fast))}, onlyA4000)
			if moved {
				s.obs.onCreate = func(string) {
					s.clock.AfterFunc(5*time.Second, func() {
						assert.Check(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead }))
					})
				}
			}
			res, err := s.run(t)
			if moved {
				assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
				assert.Check(t, res.Accepted == nil)
				assert.Check(t, is.Len(s.livePods(t), 0))
				return
			}
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			last := s.cloud.GitHub.Requests()
			var prStatuses []int
			for _, r := range last {
				if r.Path == fmt.Sprintf("/repos/%s/pulls/%d", cloud.Repository, s.pr) {
					prStatuses = append(prStatuses, r.Status)
				}
			}
			assert.DeepEqual(t, prStatuses, []int{200, 304}) // before the create; at acceptance, unchanged
		})
	}
}

// TestShortPollDetection: with a short startup poll the watch's reliance on
// a runner's start time shrinks with the poll, so a runner that comes online
// seconds after its container starts is still accepted within one poll.
func TestShortPollDetection(t *testing.T) {
	for _, proof := range []time.Duration{time.Second, 2 * time.Second, 7 * time.Second} {
		t.Run(proof.String(), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, func(h *runpodsim.HostProfile) { h.BootSeconds = 3 }))},
				func(c *config.Config) { onlyA4000(c); c.StartupPollSeconds = 1 })
			s.cloud.Model.ProofTime = proof
			res, err := s.run(t)
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			online := res.Accepted.StartedAt.Add(proof)
			assert.Check(t, s.clock.Now().Sub(online) <= time.Second, "accepted %s after the runner came online; want within the 1 s poll", s.clock.Now().Sub(online))
		})
	}
}

// TestRunningPodWithoutACostKeepsTheCatalogPrice: a RUNNING record whose
// cost reads 0 says nothing of the price: the accepted pod keeps the
// catalog's, never a known price of $0.
func TestRunningPodWithoutACostKeepsTheCatalogPrice(t *testing.T) {
	zeroCost := func(status int, body []byte) []byte {
		var pod map[string]any
		if status != http.StatusOK || json.Unmarshal(body, &pod) != nil {
			return body
		}
		pod["cost"] = 0
		out, _ := json.Marshal(pod)
		return out
	}
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{
		{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1}, Body: zeroCost},
		{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Body: zeroCost},
	}}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Accepted.Price, cost.KnownPrice(money.PerHour(0.25), "catalog list price")))
}

// TestPodNeverOnlineEndsAtTheStartupTimeout: a pod whose runner never comes
// online is rejected at startup_timeout_seconds from its create (within its
// last poll), for that reason — not as cancelled, nor as a pause that did
// not fit.
func TestPodNeverOnlineEndsAtTheStartupTimeout(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, func(h *runpodsim.HostProfile) { h.BootSeconds = 1000 }))}, onlyA4000)
	var label string
	s.deps.Observer = &timedObserver{Observer: s.deps.Observer, now: s.clock.Now}
	start := s.clock.Now()

	res, err := s.run(t)

	assert.Check(t, errors.Is(err, ErrExhausted), "got %v", err)
	assert.Assert(t, is.Len(res.Attempts, 1))
	a := res.Attempts[0]
	assert.Check(t, is.Equal(a.Outcome, cost.OutcomeRejected))
	for _, l := range strings.Split(s.obs.log(), "\n") {
		if i := strings.Index(l, "runner runpod-gpu-"); i >= 0 {
			label = strings.Fields(l[i+len("runner "):])[0]
			break
		}
	}
	assert.Check(t, is.Equal(a.Reason, "runner "+label+" not online within startup_timeout_seconds 420"), "label %q", label)
	obs := s.deps.Observer.(*timedObserver)
	assert.Assert(t, is.Len(obs.ends, 1))
	// The last poll goes out FinalPollReserve before the deadline (a pause to
	// the deadline itself would never fit the budget); the candidate ends
	// right after it, never after the timeout.
	took := obs.ends[0].Sub(start)
	assert.Check(t, took >= 420*time.Second-FinalPollReserve && took <= 420*time.Second, "rejected %s after the run began", took)
}

// TestRunningRecordWithoutAGPUIDIsNotCounted: a RUNNING record with a
// runtime but no GPU id is neither health nor death: it is logged as not
// counted, and the pod is never accepted.
func TestRunningRecordWithoutAGPUIDIsNotCounted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{gpuRewrite(map[string]any{"id": "", "count": 1})}}}, onlyA4000)

	res, err := s.run(t)

	assert.Check(t, err != nil, "nothing can be accepted")
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Contains(s.obs.log(), "pod "+res.Attempts[0].PodID+": RUNNING without its GPU id in the record: not counted"))
}

// nullRuntime rewrites a pod answer to carry "runtime": null, keeping the rest.
func nullRuntime(t *testing.T) func(int, []byte) []byte {
	return func(status int, body []byte) []byte {
		var pod map[string]any
		if status != http.StatusOK || json.Unmarshal(body, &pod) != nil {
			return body
		}
		pod["runtime"] = nil
		out, err := json.Marshal(pod)
		assert.Check(t, err)
		return out
	}
}

// TestAcceptanceNeedsAPresentRuntime: acceptance is RUNNING + runtime present +
// the attempt's runner online. A pod whose every answer shows
// RUNNING with a null runtime is never accepted, even though its runner passed
// the proof and came online; a null runtime during boot is not a rejection
// either, so the candidate ends only at the startup timeout.
func TestAcceptanceNeedsAPresentRuntime(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1}, Body: nullRuntime(t)}},
	}}, onlyA4000)
	res, err := s.run(t)
	assert.Check(t, err != nil, "a pod never seen with a runtime must not be accepted")
	assert.Check(t, res.Accepted == nil, "accepted %+v", res.Accepted)
	assert.Assert(t, is.Len(res.Attempts, 1))
	rej := res.Attempts[0]
	assert.Check(t, is.Equal(rej.Outcome, cost.OutcomeRejected))
	verdict, decided := s.cloud.Model.Verdict(rej.PodID)
	assert.Check(t, decided && verdict == "", "the pod passed the proof and its runner came online (verdict %q): only the runtime was missing", verdict)
	assert.Check(t, is.Len(s.livePods(t), 0), "the rejected pod is deleted")
}

// TestRuntimeLostAfterBootRejectsAtOnce: a runtime seen and then lost rejects
// the candidate within a poll of the loss — not at the startup timeout, and
// never by accepting it once its runner comes online.
func TestRuntimeLostAfterBootRejectsAtOnce(t *testing.T) {
	const lostAfter = 12 * time.Second // container start → runtime null; the runner connects only after ProofTime (25 s)
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{
		LoseRuntime: runpodsim.Trigger{First: 1}, RuntimeLostAfter: lostAfter,
	}}, onlyA4000)
	poll := s.req.Config.StartupPoll()
	assert.Assert(t, lostAfter+poll < s.cloud.Model.ProofTime, "the scenario needs the loss seen before the runner connects")
	res, err := s.run(t)
	assert.Check(t, err != nil)
	assert.Check(t, res.Accepted == nil, "a pod whose runtime was lost must not be accepted when its runner comes online")
	assert.Assert(t, is.Len(res.Attempts, 1))
	rej := res.Attempts[0]
	assert.Check(t, is.Equal(rej.Outcome, cost.OutcomeRejected))
	assert.Check(t, is.Contains(strings.ToLower(rej.Reason), "runtime"), "the reason names the lost runtime: %q", rej.Reason)
	// Paid from container start to deletion: the loss plus at most two polls,
	// far below startup_timeout_seconds.
	bound := int64((lostAfter + 2*poll) / time.Second)
	assert.Check(t, rej.Seconds.Known && rej.Seconds.N <= bound, "rejected after %v paid seconds, want at most %d (startup timeout %d s)",
		rej.Seconds, bound, s.req.Config.StartupTimeoutSeconds)
	assert.Check(t, is.Len(s.livePods(t), 0))
}

// rewriteGitHub puts a proxy in front of the simulated GitHub that rewrites
// the answers of GET requests whose path ends in suffix, and points the
// scenario's GitHub client at it.
func rewriteGitHub(t *testing.T, s *scenario, suffix string, rewrite func([]byte) []byte) {
	t.Helper()
	target, err := url.Parse(s.cloud.GitHubURL)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	director := proxy.Director
	proxy.Director = func(r *http.Request) {
		director(r)
		r.Header.Del("Accept-Encoding") // plain bodies, so they can be rewritten
	}
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || !strings.HasSuffix(resp.Request.URL.Path, suffix) || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = rewrite(body)
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	policy := reqpolicy.New(reqpolicy.WithClock(s.clock), reqpolicy.WithSleeper(s.clock.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(s.clock)))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: srv.URL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: policy})
	assert.NilError(t, err)
	s.deps.GitHub = gh
}

// TestRunnerWithoutTheAttemptLabelIsNotAccepted: the runner found under the
// attempt's name counts only when it carries the attempt's label; a record
// with other labels (a stale or foreign registration) never accepts the pod.
func TestRunnerWithoutTheAttemptLabelIsNotAccepted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{name: "another attempt's label", labels: []string{"self-hosted", "runpod-gpu-7001-1-c2"}},
		{name: "no custom label", labels: []string{"self-hosted", "linux", "x64"}},
		{name: "a label that only starts like it", labels: []string{"runpod-gpu-7001-1-c1x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
			var mu sync.Mutex
			rewritten := 0
			rewriteGitHub(t, s, "/actions/runners", func(body []byte) []byte {
				var list map[string]any
				if json.Unmarshal(body, &list) != nil {
					return body
				}
				runners, _ := list["runners"].([]any)
				for _, r := range runners {
					runner, _ := r.(map[string]any)
					var labels []any
					for i, name := range tc.labels {
						labels = append(labels, map[string]any{"id": i + 1, "name": name, "type": "custom"})
					}
					runner["labels"] = labels
					mu.Lock()
					rewritten++
					mu.Unlock()
				}
				out, err := json.Marshal(list)
				assert.Check(t, err)
				return out
			})
			res, err := s.run(t)
			assert.Check(t, err != nil)
			assert.Check(t, res.Accepted == nil, "accepted %+v though its runner lacks the attempt's label", res.Accepted)
			assert.Assert(t, is.Len(res.Attempts, 1))
			assert.Check(t, is.Equal(res.Attempts[0].Outcome, cost.OutcomeRejected))
			verdict, decided := s.cloud.Model.Verdict(res.Attempts[0].PodID)
			assert.Check(t, decided && verdict == "", "the pod passed the proof and its runner connected (verdict %q)", verdict)
			mu.Lock()
			defer mu.Unlock()
			assert.Check(t, rewritten > 0, "the runner was found by name and online, only its labels differed")
		})
	}
}

// TestWrongGPU: a pod is the reviewed GPU only with its id and its count; a
// count RunPod leaves out is its default of one; a GPU not reported yet is
// not judged.
func TestWrongGPU(t *testing.T) {
	c := plan.Candidate{GPUID: a4000}
	for _, tc := range []struct {
		name     string
		gpuCount int
		gpu      *runpod.PodGPU
		want     string
	}{
		{name: "not reported", gpuCount: 1},
		{name: "no id yet", gpuCount: 1, gpu: &runpod.PodGPU{Count: 1}},
		{name: "count left to the default of one", gpuCount: 1, gpu: &runpod.PodGPU{ID: a4000}},
		{name: "the requested GPU and count", gpuCount: 2, gpu: &runpod.PodGPU{ID: a4000, Count: 2}},
		{name: "default count for a request of two", gpuCount: 2, gpu: &runpod.PodGPU{ID: a4000},
			want: "RunPod gave NVIDIA RTX A4000 x1 for a request of NVIDIA RTX A4000 x2: not the reviewed GPU"},
		{name: "another GPU", gpuCount: 1, gpu: &runpod.PodGPU{ID: l4, Count: 1},
			want: "RunPod gave NVIDIA L4 x1 for a request of NVIDIA RTX A4000 x1: not the reviewed GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := unitRun(t, func(cfg *config.Config) { cfg.GPUCount = tc.gpuCount })
			assert.Check(t, is.Equal(r.wrongGPU(&runpod.Pod{GPU: tc.gpu}, c), tc.want))
		})
	}
}

// A pause inside the startup watch that does not fit the
// candidate's remaining budget ends the candidate; it never extends it.
// (The watch's first pod read is answered 429 with a 1000 s pause.)
func TestRetryAfterLongerThanTheStartupBudgetEndsTheCandidate(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{
			Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 1000 * time.Second,
		}}}}, nil)
	start := s.clock.Now()

	res, err := s.run(t)

	assert.Check(t, err != nil, "no pod may be accepted after a 1000 s pause")
	assert.Check(t, res.Accepted == nil)
	assert.Assert(t, len(res.Attempts) >= 1)
	first := res.Attempts[0]
	assert.Equal(t, first.Outcome, cost.OutcomeRejected)
	assert.Check(t, is.Contains(first.Reason, "does not fit the rest of startup_timeout_seconds 420"))
	assert.Check(t, first.Seconds.N < 420, "paid %d s", first.Seconds.N)
	assert.Check(t, s.clock.Now().Sub(start) < 420*time.Second, "the run ended within one startup budget: %s", s.clock.Now().Sub(start))
	assert.Check(t, is.Len(s.livePods(t), 0), "the rejected pod was deleted at once, despite the cooldown")
	// The cooldown still holds every later create: none is sent.
	assert.Equal(t, countRoute(s, "POST /v2/pods"), 1)
}

// The accepted pod is the GPU that was reviewed and requested.
func TestPodWithAnotherGPUIsRejectedAndDeleted(t *testing.T) {
	const h100 = "NVIDIA H100 80GB HBM3"
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1},
			Body: func(status int, body []byte) []byte {
				var pod map[string]any
				if status != http.StatusOK || json.Unmarshal(body, &pod) != nil || pod["name"] != "rgpu-7001-1-c1" {
					return body
				}
				pod["gpu"] = map[string]any{"id": h100, "count": 1}
				out, _ := json.Marshal(pod)
				return out
			},
		}}}}, nil)
	s.req.KeepFailedPods = true // a wrong GPU is deleted even in debug mode

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "RunPod gave "+h100+" x1 for a request of "+a4000+" x1"))
	assert.Check(t, is.Len(res.RetainedPodIDs, 0))
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, live[0].ID, res.Accepted.PodID)
}

// A pod record whose gpu names no id cannot show the pod is the reviewed GPU:
// it is never accepted as one (as with no gpu at all).
func TestPodWithoutAGPUIDIsNeverAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{gpuRewrite(map[string]any{"count": 1})}}}, onlyA4000)

	res, err := s.run(t)

	assert.Check(t, err != nil, "nothing can be accepted")
	assert.Check(t, res.Accepted == nil, "accepted a pod of unknown GPU as %+v", res.Accepted)
	assert.Check(t, is.Len(aliveInSim(s), 0))
}

// The ceiling is checked with the catalog price before the create; once the
// pod runs, RunPod reports the price it really bills. A pod billing far above
// the catalog, whose lifetime at that price could take the run past the
// ceiling, is not accepted (and deleted).
func TestObservedPriceAboveTheCeilingIsNotAccepted(t *testing.T) {
	ceiling := 30 * money.Cent // $0.25/h × (420 + 3600) s = $0.2792 fits; $1.00/h × 4020 s = $1.12 does not
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1},
			Body: func(status int, body []byte) []byte {
				var pod map[string]any
				if status != http.StatusOK || json.Unmarshal(body, &pod) != nil || pod["status"] != "RUNNING" {
					return body
				}
				pod["cost"] = 1.00
				out, _ := json.Marshal(pod)
				return out
			},
		}}}}, func(c *config.Config) { onlyA4000(c); c.MaxRunSpendUSD = &ceiling })

	res, err := s.run(t)

	assert.Check(t, err != nil)
	assert.Check(t, res.Accepted == nil, "accepted at %s under a %s ceiling", acceptedPrice(res), ceiling)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "max_run_spend_usd $0.30: RunPod bills this pod at $1.0000/h (catalog $0.25/h), which could bring the run to $1.1167"))
	assert.Check(t, is.Len(aliveInSim(s), 0))
}

func acceptedPrice(r Result) money.Rate {
	if r.Accepted == nil {
		return 0
	}
	return r.Accepted.Price.PerHour
}

// A runner that comes online in the last poll interval of
// startup_timeout_seconds (420 s; the host boots for 385 s, the proof passes
// at 415 s and the runner is online a second later) is accepted: when its log
// says it listens, or — a runner that does not say so — by the watch's last
// look, FinalPollReserve before the deadline (a look at the deadline itself
// never fits the budget, so the pod used to be rejected after being paid for
// nearly all of it).
func TestRunnerOnlineInTheLastIntervalIsAccepted(t *testing.T) {
	for _, tc := range []struct {
		quiet  bool
		wantAt time.Duration
	}{
		{quiet: false, wantAt: 416 * time.Second},
		{quiet: true, wantAt: 420*time.Second - FinalPollReserve},
	} {
		t.Run(fmt.Sprint("quiet runner=", tc.quiet), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, func(h *runpodsim.HostProfile) { h.BootSeconds = 385 }))}, onlyA4000)
			s.cloud.Model.QuietRunner, s.cloud.Model.RunnerDelay = tc.quiet, time.Second
			start := s.clock.Now()

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			assert.Check(t, is.Len(res.Attempts, 1))
			assert.Check(t, is.Equal(s.clock.Now().Sub(start), tc.wantAt))
		})
	}
}

// A pod that misses the startup timeout blames its host only when the watch
// could see it: if RunPod's answers to the pod reads were failing when the
// time ran out, the API, not the host, may be why, and the attempt gives the
// reputation no verdict.
func TestStartupTimeoutBlamesTheHostOnlyWhenTheWatchCouldSee(t *testing.T) {
	slow := func(h *runpodsim.HostProfile) { h.BootSeconds = 1000 }
	for _, tc := range []struct {
		name   string
		faults runpodsim.Faults
		want   cost.HostVerdict
	}{
		{name: "reads answered: the host was slow", want: cost.HostFailed},
		// An answer that is not a pod record: no backoff, so the watch runs to
		// its timeout without ever seeing the pod.
		{name: "reads unusable at the end: no verdict", faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{
			{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1}, Status: 200,
				Body: func(int, []byte) []byte { return []byte(`<html>gateway</html>`) }}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slow)), Faults: tc.faults}, onlyA4000)

			res, _ := s.run(t)

			assert.Assert(t, is.Len(res.Attempts, 1))
			assert.Check(t, is.Equal(res.Attempts[0].Outcome, cost.OutcomeRejected))
			assert.Check(t, is.Contains(res.Attempts[0].Reason, "not online within startup_timeout_seconds"))
			assert.Check(t, is.Equal(res.Attempts[0].Host, tc.want))
		})
	}
}

// neverRegistered answers every registry read: the runner was not found.
type neverRegistered struct{ GitHub }

func (neverRegistered) RunnerByName(context.Context, string, ghapi.Scope) (*github.Runner, bool, error) {
	return nil, false, nil
}

// A pod that runs but whose runner the registry, read without fault, never
// shows: the watch saw it all along, so the timeout blames the host.
func TestStartupTimeoutWithARunningPodAndAReadableRegistryBlamesTheHost(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	s.deps.GitHub = neverRegistered{GitHub: s.deps.GitHub}

	res, _ := s.run(t)

	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "not online within startup_timeout_seconds"))
	assert.Check(t, is.Equal(res.Attempts[0].Host, cost.HostFailed))
}

// With a 1 s poll the last poll keeps half a poll, not FinalPollReserve.
func TestFinalPollReserveIsAtMostHalfAPoll(t *testing.T) {
	slow := func(h *runpodsim.HostProfile) { h.BootSeconds = 1000 }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slow))}, func(c *config.Config) {
		onlyA4000(c)
		c.StartupPollSeconds = 1
	})
	start := s.clock.Now()

	_, err := s.run(t)

	assert.Check(t, err != nil)
	assert.Check(t, is.Equal(s.clock.Now().Sub(start), 420*time.Second-500*time.Millisecond))
}

// The create's answer may not yet say where RunPod placed the pod: the
// attempt takes its placement from the records the watch reads later.
func TestAttemptPlacementComesFromTheWatchWhenTheCreateAnswerHasNone(t *testing.T) {
	unplaced := runpodsim.RewriteFault{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Every: 1},
		Body: func(_ int, body []byte) []byte {
			var pod map[string]any
			if json.Unmarshal(body, &pod) != nil {
				return body
			}
			delete(pod, "dataCenterId")
			delete(pod, "cudaVersion")
			b, _ := json.Marshal(pod)
			return b
		}}
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{unplaced}}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].DataCenter, "US-TX-3"))
	assert.Check(t, is.Equal(res.Attempts[0].Driver, "12.8"))
}

// gpuRewrite replaces the gpu object of candidate 1's pod answers.
func gpuRewrite(gpu any) runpodsim.RewriteFault {
	return runpodsim.RewriteFault{
		Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1},
		Body: func(status int, body []byte) []byte {
			var pod map[string]any
			if status != http.StatusOK || json.Unmarshal(body, &pod) != nil || pod["name"] != "rgpu-7001-1-c1" {
				return body
			}
			pod["gpu"] = gpu
			out, _ := json.Marshal(pod)
			return out
		},
	}
}

// A pod whose proof failed is deleted within a second of the failure
// becoming visible — its script's failure line in the pod's log, written as
// the container exits — whatever its boot and proof take, and the rejection
// names the cause.
func TestProofFailedPodIsDeletedWithinASecond(t *testing.T) {
	for _, boot := range []int{30, 90, 91, 300} {
		for _, proof := range []time.Duration{5 * time.Second, 25 * time.Second, 26 * time.Second, time.Minute} {
			t.Run(fmt.Sprintf("boot %ds proof %s", boot, proof), func(t *testing.T) {
				s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX, func(h *runpodsim.HostProfile) { h.BootSeconds = boot }))}, onlyA4000)
				s.cloud.Model.ProofTime = proof

				res, err := s.run(t)

				assert.Check(t, err != nil)
				assert.Assert(t, is.Len(res.Attempts, 1))
				a := res.Attempts[0]
				assert.Check(t, is.Equal(a.Reason, "the startup script exited with 1: the CUDA smoke proof failed on this host"))
				assert.Check(t, is.Equal(a.Host, cost.HostFailed))
				pods := s.cloud.RunPod.Pods()
				assert.Assert(t, is.Len(pods, 1))
				failed := pods[0].StartedAt.Add(proof) // the script's failure line and exit
				deleted := pods[0].TerminatedAt
				assert.Check(t, !deleted.IsZero() && deleted.Sub(failed) <= time.Second, "deleted %s after the proof failed", deleted.Sub(failed))
			})
		}
	}
}

// A pod whose image has no runner ends after its proof passed (exit 5): the
// rejection says so, the host is not blamed (no verdict for the reputation),
// and no second pod is paid for the same image — the run stops with an error
// naming the image and what it must contain.
func TestImageWithoutRunnerCostsOnePodAndNamesTheCause(t *testing.T) {
	const image = "ghcr.io/acme/cuda-tests@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, func(c *config.Config) { c.Image = image })
	s.cloud.Model.ImagesWithoutRunner = []string{image}

	res, err := s.run(t)

	assert.Check(t, errors.Is(err, ErrImageWithoutRunner), "got %v", err)
	assert.Check(t, is.ErrorContains(err, "image "+image+" passed the CUDA proof but has no runner at /home/runner/run.sh"))
	assert.Check(t, is.ErrorContains(err, "no further pod is paid for this image"))
	assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 1), "one pod")
	assert.Assert(t, is.Len(res.Attempts, 1))
	a := res.Attempts[0]
	assert.Check(t, is.Equal(a.Outcome, cost.OutcomeRejected))
	assert.Check(t, is.Equal(a.Reason, "the startup script exited with 5: the image has no runner (run.sh) at the runner directory"))
	assert.Check(t, is.Equal(a.Host, cost.HostVerdict("")), "the image's fault, not the host's")
	assert.Check(t, is.Len(s.livePods(t), 0))
}

// noLogStream is a RunPod whose log streams cannot be opened.
type noLogStream struct{ RunPod }

func (noLogStream) StreamPodLogs(context.Context, string, runpod.LogQuery) (*runpod.LogStream, error) {
	return nil, fmt.Errorf("stream logs: 404 Not Found: %w", runpod.ErrNotFound)
}

// Without the pod's log stream the watch still works, by polling: the pod
// every poll, the registry every poll once the pod runs — so a runner online
// a second after its container starts is accepted within one poll — and a
// pod that exits is rejected at the read that shows it.
func TestWatchWithoutALogStreamPolls(t *testing.T) {
	for _, proof := range []time.Duration{time.Second, 9 * time.Second, 25 * time.Second} {
		t.Run(fmt.Sprint("proof ", proof), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, benchHost))}, onlyA4000)
			s.cloud.Model.ProofTime = proof
			s.deps.RunPod = noLogStream{s.deps.RunPod}

			res, err := s.run(t)

			assert.NilError(t, err)
			online := res.Accepted.StartedAt.Add(proof)
			assert.Check(t, s.clock.Now().Sub(online) <= 10*time.Second, "accepted %s after the runner came online", s.clock.Now().Sub(online))
			assert.Check(t, is.Contains(s.obs.log(), "its log stream could not be opened"))
		})
	}
	t.Run("proof fails", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX))}, onlyA4000)
		s.deps.RunPod = noLogStream{s.deps.RunPod}

		res, err := s.run(t)

		assert.Check(t, err != nil)
		assert.Assert(t, is.Len(res.Attempts, 1))
		assert.Check(t, is.Contains(res.Attempts[0].Reason, "pod EXITED while starting"))
		assert.Check(t, is.Equal(res.Attempts[0].Host, cost.HostFailed))
		assert.Check(t, is.Len(s.livePods(t), 0))
	})
}

// edgeRunPod puts an edge in front of the simulated RunPod that holds back
// pod log streams: it either never answers them (it would buffer them whole)
// or answers their headers and then nothing.
func edgeRunPod(t *testing.T, s *scenario, headersOnly bool) {
	t.Helper()
	target, err := url.Parse(s.cloud.RunPodURL)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/logs") {
			proxy.ServeHTTP(w, r)
			return
		}
		if headersOnly {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	s.deps.RunPod = runpod.New(srv.URL, cloud.RunPodKey, runpod.WithPolicy(s.deps.Policy))
}

// A log stream an edge holds back does not cost the pod: a stream that never
// opens is given up after a poll, and one that opens but shows nothing of a
// container the pod record says runs is dropped; either way the watch polls
// and the pod is accepted.
func TestLogStreamHeldBackByAnEdgeFallsBackToPolling(t *testing.T) {
	for _, tc := range []struct {
		name        string
		headersOnly bool
		wantLog     string
	}{
		{name: "never answered", wantLog: "its log stream could not be opened"},
		{name: "answered, then silent", headersOnly: true, wantLog: "runs but its log stream shows nothing: watching by polling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, func(c *config.Config) { onlyA4000(c); c.StartupPollSeconds = 1 })
			edgeRunPod(t, s, tc.headersOnly)

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			assert.Check(t, is.Contains(s.obs.log(), tc.wantLog))
		})
	}
}

// A log stream that ends while the pod still runs (an edge cut it) is read
// again from where it stopped (Last-Event-ID), after one look at the pod, and
// the runner is accepted; a stream cut every time is opened maxStreamOpens
// times, then the watch polls.
func TestLogStreamCutOffIsResumed(t *testing.T) {
	t.Run("cut once", func(t *testing.T) { testLogStreamCutOff(t, false) })
	t.Run("cut every time", func(t *testing.T) { testLogStreamCutOff(t, true) })
}

func testLogStreamCutOff(t *testing.T, everyTime bool) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	target, err := url.Parse(s.cloud.RunPodURL)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var resumes []string
	opens := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := strings.HasSuffix(r.URL.Path, "/logs") && (opens == 0 || everyTime)
		if strings.HasSuffix(r.URL.Path, "/logs") {
			opens++
			resumes = append(resumes, r.Header.Get("Last-Event-ID"))
		}
		mu.Unlock()
		if !first {
			proxy.ServeHTTP(w, r)
			return
		}
		// The first stream ends after its first event.
		up, err := http.NewRequestWithContext(r.Context(), r.Method, s.cloud.RunPodURL+r.URL.RequestURI(), nil)
		assert.Check(t, err)
		up.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(up)
		if !assert.Check(t, err) {
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			_, _ = io.WriteString(w, line)
			if err != nil || line == "\n" {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	s.deps.RunPod = runpod.New(srv.URL, cloud.RunPodKey, runpod.WithPolicy(s.deps.Policy))

	res, err := s.run(t)

	assert.NilError(t, err, s.obs.log())
	assert.Assert(t, res.Accepted != nil)
	mu.Lock()
	defer mu.Unlock()
	if everyTime {
		assert.Check(t, is.Len(resumes, maxStreamOpens), "%q", resumes)
		return
	}
	assert.Check(t, is.Len(resumes, 2))
	assert.Check(t, len(resumes) == 2 && resumes[0] == "" && strings.HasSuffix(resumes[1], "/000000000001"), "resumed after the first line: %q", resumes)
}

// A pod's log stream that is refused every time is opened at most
// maxStreamOpens times; the watch polls and accepts the runner all the same.
func TestRefusedLogStreamIsOpenedAFewTimesAtMost(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
		{Match: runpodsim.Match{Route: "GET /v2/pods/{id}/logs"}, When: runpodsim.Trigger{Every: 1}, Status: 503}}}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Contains(s.obs.log(), "its log stream could not be opened"))
	opens := countRoute(s, "GET /v2/pods/{id}/logs")
	assert.Check(t, opens >= 1 && opens <= maxStreamOpens, "%d opens", opens)
}

// A pod that exits while the watch polls (its log stream refused) is
// explained by its log's last lines, read once: the exit the startup script
// logged (here the proof's failure on a driver too old for the kernel),
// not only "exited".
func TestExitedPodWithoutAStreamIsExplainedByItsLogTail(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX)), Faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
		{Match: runpodsim.Match{Route: "GET /v2/pods/{id}/logs"}, When: runpodsim.Trigger{Nth: []int{1, 2}}, Status: 503}}}}, onlyA4000)

	res, err := s.run(t)

	assert.Check(t, err != nil, "the only candidate failed its proof")
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].Reason, "the startup script exited with 1: the CUDA smoke proof failed on this host"))
	assert.Check(t, is.Equal(countRoute(s, "GET /v2/pods/{id}/logs"), 3), "two refused opens, then the tail read once")
	// The running record's cost priced the attempt, not the catalog.
	assert.Check(t, is.DeepEqual(res.Attempts[0].Price, cost.KnownPrice(money.PerHour(0.25), "v2 cost while running")))
}
