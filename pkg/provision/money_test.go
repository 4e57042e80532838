package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A pause inside the startup watch that does not fit the
// candidate's remaining budget ends the candidate; it never extends it.
func TestRetryAfterLongerThanTheStartupBudgetEndsTheCandidate(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{
			Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{2}}, RetryAfter: 1000 * time.Second,
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

// The ceiling counts the accepted pod's lifetime bound.
func TestSpendCeilingCountsTheStartupBudgetAndTheLifetime(t *testing.T) {
	tests := []struct {
		name         string
		ceiling      float64
		hosts        []runpodsim.HostProfile
		wantAttempts []string
		wantErr      string
	}{
		{
			// $0.25/h × (420 s + 3600 s) = $0.2792: the old check saw only $0.0292.
			name: "first candidate could pass the ceiling", ceiling: 0.10, hosts: []runpodsim.HostProfile{host("h1", a4000)},
			wantErr: "max_run_spend_usd $0.10: creating candidate live-1 (NVIDIA RTX A4000 at $0.25/h) could bring the run to $0.2792 " +
				"(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds 3600 at its price); no pod was created for it",
		},
		{
			name: "first candidate fits", ceiling: 0.28, hosts: []runpodsim.HostProfile{host("h1", a4000)},
			wantAttempts: []string{"live-1 RTX A4000 accepted"},
		},
		{
			// The rejected A4000 cost a little; the A5000's $0.3015 on top passes $0.30.
			name: "what rejected pods cost counts", ceiling: 0.30, hosts: []runpodsim.HostProfile{host("h1", a4000, oldPTX), host("h2", a5000)},
			wantAttempts: []string{"live-1 RTX A4000 rejected"},
			wantErr:      "creating candidate live-2 (NVIDIA RTX A5000 at $0.27/h) could bring the run to $0.30",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(tc.hosts...)}, func(c *config.Config) { c.MaxRunSpendUSD = &tc.ceiling })

			res, err := s.run(t)

			assert.DeepEqual(t, outcomes(res), tc.wantAttempts)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, errors.Is(err, ErrStopped), "got %v", err)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, is.Len(s.livePods(t), 0))
		})
	}
}

// A 2xx create answer that does not name a usable pod is
// reconciled by the pod's unique name, never tracked as pod "".
func TestCreateAnswerWithoutAUsablePodIsReconciledByName(t *testing.T) {
	tests := []struct {
		name    string
		rewrite func(body []byte) []byte
	}{
		{name: "empty object", rewrite: func([]byte) []byte { return []byte(`{}`) }},
		{name: "not JSON", rewrite: func([]byte) []byte { return []byte(`<html>created</html>`) }},
		{name: "another pod's name", rewrite: func(body []byte) []byte {
			return []byte(strings.Replace(string(body), `"name":"rgpu-7001-1-c1"`, `"name":"rgpu-7001-1-c9"`, 1))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
				Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
					Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}},
					Body: func(_ int, body []byte) []byte { return tc.rewrite(body) },
				}}}}, nil)

			res, err := s.run(t)

			assert.NilError(t, err)
			live := s.livePods(t)
			assert.Assert(t, is.Len(live, 1), "exactly the one real pod")
			assert.Equal(t, res.Accepted.PodID, live[0].ID, "the pod that exists is the one tracked and accepted")
			assert.Equal(t, res.Accepted.GPU, a4000)
			assert.DeepEqual(t, s.obs.created, []string{live[0].ID})
			assert.Equal(t, countRoute(s, "POST /v2/pods"), 1, "never a second POST for a pod that exists")
			assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists as "+live[0].ID))
		})
	}
}

// cancellingRunPod cancels the run while a create is in flight: the create
// happens on the server, its answer is lost to the cancellation (SIGTERM).
type cancellingRunPod struct {
	RunPod
	cancel context.CancelFunc
}

func (c cancellingRunPod) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	_, _ = c.RunPod.CreatePod(context.WithoutCancel(ctx), r)
	c.cancel()
	return nil, ctx.Err()
}

func TestSIGTERMDuringACreateDeletesThePodItMade(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.deps.RunPod = cancellingRunPod{RunPod: s.deps.RunPod, cancel: cancel}

	_, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(s.obs.created, 1), "the in-flight pod was found by name and published")
	assert.Check(t, is.Len(s.livePods(t), 0), "and deleted")
}

// A transient create error costs no more than a prompt
// reconciliation and one informed retry of the same (cheapest) candidate.
func TestTransientCreateErrorRetriesTheSameCandidateOnce(t *testing.T) {
	tests := []struct {
		name   string
		faults runpodsim.Faults
	}{
		{name: "503, nothing created", faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
			{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 503}}}},
		{name: "408, nothing created", faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
			{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 408}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.faults.RateLimits = nil
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)), Faults: tc.faults}, nil)
			start := s.clock.Now()

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Equal(t, res.Accepted.GPU, a4000, "the cheapest candidate, not a pricier one")
			assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 accepted"})
			assert.Equal(t, countRoute(s, "POST /v2/pods"), 2, "one informed retry")
			assert.Check(t, listReadsBeforeSecondCreate(s) <= 4, "four reconciliation reads, not a poll to the deadline")
			assert.Check(t, is.Contains(s.obs.log(), "no pod of that name exists; one informed retry"))
			assert.Check(t, res.Accepted.StartedAt.Sub(start) < 60*time.Second, "reconciled promptly: pod started %s after the run", res.Accepted.StartedAt.Sub(start))
			assert.Check(t, is.Len(s.livePods(t), 1))
		})
	}
}

// A lost create whose pod reaches the list only late: the retry makes a
// second pod, and the late first one is found and deleted — never two live
// pods for one candidate.
func TestLateListedPodOfARetriedCreateIsDeleted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "one live pod")
	assert.Equal(t, live[0].ID, res.Accepted.PodID)
	assert.Equal(t, len(s.obs.created), 2, "both pods were tracked")
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

// The label is re-read right before each create.
func TestLocalValidationLabelStopsSpending(t *testing.T) {
	label := func(p *githubsim.PullRequestSpec) { p.Labels = append(p.Labels, gatecheck.LocalLabel) }
	t.Run("added after authorize: nothing is created", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
		assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, label))

		res, err := s.run(t)

		assert.NilError(t, err)
		assert.Equal(t, res.Decision, DecisionSkipped)
		assert.Equal(t, res.Outputs().PaidPath, "skipped")
		assert.Check(t, is.Len(s.obs.created, 0))
		assert.Equal(t, countRoute(s, "POST /v2/pods"), 0)
		assert.Check(t, is.Contains(res.Summary(err), "**Skipped**"))
	})
	t.Run("added while the pod boots: it is deleted and no other is created", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
		s.obs.onCreate = func(string) { _ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, label) }

		res, err := s.run(t)

		assert.NilError(t, err)
		assert.Equal(t, res.Decision, DecisionSkipped)
		assert.Check(t, res.Accepted == nil)
		assert.Check(t, is.Len(s.obs.created, 1))
		assert.Check(t, is.Len(s.livePods(t), 0))
	})
}

// A PR run needs the pinned head; every SHA is a full SHA.
func TestCommitSHAsAreValidatedBeforeAnyCall(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Request)
		wantErr string
	}{
		{name: "PR without its head", mutate: func(r *Request) { r.ExpectedHeadSHA = "" },
			wantErr: "expected head SHA: empty for PR #1; want authorize's pinned head-sha output (a full commit SHA)"},
		{name: "short head", mutate: func(r *Request) { r.ExpectedHeadSHA = "abc1234" },
			wantErr: `expected head SHA: got "abc1234"; want a full commit SHA (40 lower-case hex digits`},
		{name: "tested ref as a branch", mutate: func(r *Request) { r.TestedRef = "refs/heads/main" },
			wantErr: `tested ref: got "refs/heads/main"; want a full commit SHA`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
			tc.mutate(&s.req)

			_, err := s.run(t)

			assert.ErrorContains(t, err, tc.wantErr)
			assert.Equal(t, len(s.cloud.RunPod.Requests()), 0, "no RunPod call")
		})
	}
}

// unreadablePR answers every PR read with a 200 that has no state: through the
// real GitHub client, as GitHub's edge might send it.
type unreadablePR struct {
	GitHub
	pulls *ghapi.Client
}

func (u unreadablePR) GetPullRequest(ctx context.Context, n int) (*github.PullRequest, error) {
	return u.pulls.GetPullRequest(ctx, n)
}

// An unreadable PR answer is unknown, never obsolete.
func TestPRAnswerWithoutStateIsUnknownNotObsolete(t *testing.T) {
	tests := []struct {
		name, answer string
		wantLog      string
	}{
		{name: "no state", answer: `{}`, wantLog: "state unknown"},
		// An open PR whose answer names no head is not "head moved to ''".
		{name: "open without a head", answer: `{"state":"open","number":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer stub.Close()
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
			pulls, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: stub.URL, Token: "t", Owner: cloud.Owner, Repo: cloud.RepoName,
				Policy: reqpolicy.New(reqpolicy.WithClock(s.clock), reqpolicy.WithSleeper(s.clock.Sleep))})
			assert.NilError(t, err)
			s.deps.GitHub = unreadablePR{GitHub: s.deps.GitHub, pulls: pulls}

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil, "an unusable PR answer never stops the run")
			if tc.wantLog != "" {
				assert.Check(t, is.Contains(s.obs.log(), tc.wantLog))
			}
		})
	}
}

// A lost create whose pod is listed only after the create deadline: the run
// moves on, and its last look before returning finds and deletes that pod.
func TestPodOfAnUncertainCreateListedAfterTheDeadlineIsDeleted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 90 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Equal(t, res.Accepted.GPU, a5000)
	var alive []string // from the simulator's own state: the list hides young pods
	for _, p := range s.cloud.RunPod.Pods() {
		if p.Status != runpodsim.StatusTerminated {
			alive = append(alive, p.ID)
		}
	}
	assert.DeepEqual(t, alive, []string{res.Accepted.PodID})
	assert.Check(t, is.Contains(s.obs.log(), "of an uncertain create of rgpu-7001-1-c1 was listed late; deleted"))
}

// listReadsBeforeSecondCreate counts the pod-list reads of the reconciliation
// between the first POST and the informed retry (the watch's duplicate checks
// come after it).
func listReadsBeforeSecondCreate(s *scenario) int {
	n, posts := 0, 0
	for _, r := range s.cloud.RunPod.Requests() {
		switch r.Route {
		case "POST /v2/pods":
			if posts++; posts == 2 {
				return n
			}
		case "GET /v2/pods":
			n++
		}
	}
	return n
}

// The startup budget runs from the first POST, also for a pod found by
// reconciliation long after it: it was billing since its create.
func TestStartupBudgetOfAReconciledPodRunsFromItsCreate(t *testing.T) {
	neverBoots := func(h *runpodsim.HostProfile) { h.BootSeconds = 100000 }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, neverBoots)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 40 * time.Second,
		}}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 2
	})
	start := s.clock.Now()

	res, err := s.run(t)

	assert.Check(t, err != nil)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists"), "found late, by the create-deadline search")
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 1))
	assert.Equal(t, pods[0].Status, runpodsim.StatusTerminated)
	lived := pods[0].TerminatedAt.Sub(start)
	assert.Check(t, lived <= 425*time.Second, "deleted %s after its create: past startup_timeout_seconds 420", lived)
	assert.Check(t, is.Len(res.Attempts, 1))
}

// What the ceiling counts as spent bounds what RunPod billed for every pod
// of the run, the duplicate of a retried create included.
func TestCeilingCountsADuplicatePodsSpend(t *testing.T) {
	ceiling := 0.30 // the A4000 fits ($0.2792); the A5000 after it never does ($0.3015)
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a4000, oldPTX), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, func(c *config.Config) { c.MaxRunSpendUSD = &ceiling })

	_, err := s.run(t)

	assert.Assert(t, errors.Is(err, ErrStopped), "got %v", err)
	var counted float64
	_, scanErr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "(rejected pods $"):], "(rejected pods $%f", &counted)
	assert.NilError(t, scanErr, err.Error())
	billed := 0.0
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "the first create and its retry")
	for _, p := range pods {
		b, berr := s.cloud.RunPod.Bill(p.ID)
		assert.NilError(t, berr)
		billed += b.Dollars
	}
	assert.Check(t, counted >= billed-0.00005, "the ceiling counted $%.4f of $%.4f billed", counted, billed)
}
