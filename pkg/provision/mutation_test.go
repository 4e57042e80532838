package provision

// Tests written against mutations that survived every other test: each one fails when the check it names is removed
// or weakened. They observe only what a run exposes — its Result, the attempt
// records the Observer hears, the simulated cloud's state — so they hold
// whatever the watch and create code look like inside.

import (
	"context"
	"encoding/json"
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

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// onlyA4000 narrows the plan to one candidate, so a rejection is the run's end
// and its reason is the only one.
func onlyA4000(c *config.Config) {
	c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}}
	c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 2
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

// timedObserver records, on the scenario's clock, when each attempt ended.
type timedObserver struct {
	Observer
	now  func() time.Time
	mu   sync.Mutex
	ends []time.Time
}

func (o *timedObserver) AttemptDone(a cost.Attempt) {
	o.mu.Lock()
	o.ends = append(o.ends, o.now())
	o.mu.Unlock()
	o.Observer.AttemptDone(a)
}

// TestCreateDeadlineBoundsEachCandidate: create_deadline_seconds (default 60)
// bounds one candidate's create, answer reconciliation and any retry
// included. Every create is refused with a 503 that creates nothing, so each
// candidate ends with nothing created — each within its deadline of when it
// began, never later.
func TestCreateDeadlineBoundsEachCandidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seconds  int // 0: the default
		deadline time.Duration
	}{
		{name: "default 60 s", deadline: 60 * time.Second},
		{name: "configured 20 s", seconds: 20, deadline: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000), host("h3", l4)), Faults: runpodsim.Faults{
				ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Status: 503}},
			}}, func(c *config.Config) {
				if tc.seconds > 0 {
					c.CreateDeadlineSeconds = tc.seconds
				}
			})
			assert.Equal(t, s.req.Config.CreateDeadline(), tc.deadline)
			obs := &timedObserver{Observer: s.deps.Observer, now: s.clock.Now}
			s.deps.Observer = obs
			start := s.clock.Now()
			res, err := s.run(t)
			assert.Check(t, err != nil, "no create ever succeeds")
			assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 0), "nothing was created")
			assert.Assert(t, len(res.Attempts) >= 2, "the run moves on to later candidates: %v", outcomes(res))
			assert.Assert(t, is.Len(obs.ends, len(res.Attempts)))
			began := start
			for i, end := range obs.ends {
				assert.Check(t, end.Sub(began) <= tc.deadline, "attempt %d (%s) took %s, past create_deadline_seconds %s",
					i+1, res.Attempts[i].Candidate, end.Sub(began), tc.deadline)
				began = end
			}
		})
	}
}

// TestLateListedPodIsFoundWithinTheCreateDeadline: a create whose answer is
// lost made a pod that the pod list shows only 25 s later (eventual
// listing). The create deadline (60 s) leaves time to find it: the run ends
// with that one pod — the cheapest candidate — accepted, never with it left
// billing beside a pricier candidate's.
func TestLateListedPodIsFoundWithinTheCreateDeadline(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: runpodsim.Faults{
		LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
		ListingDelay: 25 * time.Second,
	}}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Accepted.GPU, a4000), "the late-listed pod of the first candidate is the one used")
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "one live pod, the accepted one")
	assert.Check(t, is.Equal(live[0].ID, res.Accepted.PodID))
}
