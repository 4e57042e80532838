package provision

// Scenario tests for lines mutation testing (.ci/mutation) found unguarded:
// exact paid seconds, exact read counts, budgets at their edges, and what a
// manual run must never read.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestAcceptedPodsStartupSeconds: the accepted pod's startup seconds are
// whole seconds from the provider's start to acceptance — more than none and
// at most the startup budget — and the same figure the attempt record carries.
func TestAcceptedPodsStartupSeconds(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	secs := res.Accepted.StartupSeconds
	assert.Check(t, secs > 0 && secs <= 420, "startup seconds %d", secs)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Equal(res.Attempts[0].Seconds, cost.KnownSeconds(secs)))
}

// removalGitHub fails every runner removal with err.
type removalGitHub struct {
	GitHub
	err error

	mu      sync.Mutex
	removed int
}

func (g *removalGitHub) DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error {
	g.mu.Lock()
	g.removed++
	g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	return g.GitHub.DeleteRunner(ctx, id, scope)
}

// TestUnusedRunnerRemoval: the registration of a rejected pod's runner is
// removed once; a removal that fails is logged with its error and never
// stops the run, and one that succeeds logs nothing.
func TestUnusedRunnerRemoval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantLog bool
	}{
		{name: "removed"},
		{name: "removal fails", err: errors.New("GitHub 502"), wantLog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
			gh := &removalGitHub{GitHub: s.deps.GitHub, err: tc.err}
			s.deps.GitHub = gh

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
			assert.Check(t, is.Equal(gh.removed, 1), "the rejected attempt's runner only")
			logged := strings.Contains(s.obs.log(), ": could not remove its registration (GitHub drops it within a day): GitHub 502")
			assert.Check(t, is.Equal(logged, tc.wantLog), "log:\n%s", s.obs.log())
		})
	}
}

// TestRejectedPodsDeletionWaitsOutALongRetryAfter: the deletion of a
// rejected pod has its whole budget (180 s) on the policy's clock; its wall
// clock backstop is longer, never shorter, so a 429 whose Retry-After takes
// most of that budget is waited out and the pod is deleted, not reported
// unconfirmed.
func TestRejectedPodsDeletionWaitsOutALongRetryAfter(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)), Faults: runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "DELETE /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 175 * time.Second}},
	}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 2))
	assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
}

// TestReconciliationReadsFourTimesBeforeTheRetry: a create answered 503
// that made nothing is reconciled by exactly four list reads (at 0, 2, 6 and
// 14 s) before its one informed retry.
func TestReconciliationReadsFourTimesBeforeTheRetry(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: runpodsim.Faults{
		ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 1}, Status: 503}},
	}}, onlyA4000)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(listReadsBeforeSecondCreate(s), 4))
	var lists []time.Time
	var post time.Time
	for _, r := range s.cloud.RunPod.Requests() {
		switch r.Route {
		case "GET /v2/pods":
			if post.IsZero() {
				lists = append(lists, r.At)
			}
		case "POST /v2/pods":
			if len(lists) > 0 && post.IsZero() {
				post = r.At
			}
		}
	}
	assert.Assert(t, is.Len(lists, 4))
	var gaps []time.Duration
	for i := 1; i < len(lists); i++ {
		gaps = append(gaps, lists[i].Sub(lists[i-1]).Round(time.Second))
	}
	assert.Check(t, is.DeepEqual(gaps, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}))
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
	assert.Check(t, is.Equal(res.Accepted.Price, cost.KnownPrice(0.25, "catalog list price")))
}

// TestManualRunReadsNoPullRequest: a manual validation (no PR) reads no PR
// and looks for no reusable gate result, even with a tested ref — not even
// one refused locally, which would log a PR #0 or a paid-path decision — and
// a run that kept no pod names no retention artifact nor warns about one.
func TestManualRunReadsNoPullRequest(t *testing.T) {
	// The same run for a PR reads both: the patterns below do match them.
	pr := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	_, err := pr.run(t)
	assert.NilError(t, err)
	assert.Assert(t, pr.cloud.GitHub.CountRequests("", "/repos/*/*/pulls/*") > 0)
	assert.Assert(t, pr.cloud.GitHub.CountRequests("", "/repos/*/*/commits/*/check-runs") > 0)

	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	s.req.PRNumber, s.req.ExpectedHeadSHA = 0, ""

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Decision, DecisionPaid))
	assert.Check(t, is.Equal(s.cloud.GitHub.CountRequests("", "/repos/*/*/pulls/*"), 0))
	assert.Check(t, is.Equal(s.cloud.GitHub.CountRequests("", "/repos/*/*/commits/*/check-runs"), 0))
	assert.Check(t, is.Equal(res.RetentionArtifact, ""))
	assert.Check(t, is.Equal(res.Outputs().RetentionArtifactName, ""))
	for _, never := range []string{"PR #0", "paid-path decision", "retention record"} {
		assert.Check(t, !strings.Contains(s.obs.log(), never), "%q in the log:\n%s", never, s.obs.log())
	}
}

// hideListedPods answers the pod-list reads it hits with an empty list: pods
// that exist but are not listed yet, read by read.
func hideListedPods(nth ...int) runpodsim.RewriteFault {
	return runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Nth: nth},
		Body: func(status int, body []byte) []byte {
			if status != http.StatusOK {
				return body
			}
			return []byte("[]")
		}}
}

// TestDuplicatesOfARetriedCreateAreDeleted: both POSTs of a retried create
// made a pod of the same name. Whichever way the other pod comes to light —
// listed together with the one used, or only after the one used was
// rejected at once — it is deleted before the run ends, never left billing.
func TestDuplicatesOfARetriedCreateAreDeleted(t *testing.T) {
	anotherGPU := func(status int, body []byte) []byte {
		var pod map[string]any
		if status >= 300 || json.Unmarshal(body, &pod) != nil {
			return body
		}
		pod["gpu"] = map[string]any{"id": "NVIDIA H100 80GB HBM3", "count": 1}
		out, _ := json.Marshal(pod)
		return out
	}
	for _, tc := range []struct {
		name         string
		faults       runpodsim.Faults
		wantAccepted bool
		wantDeletes  int
	}{
		{
			// Both answers lost; the first reconciliation (four reads) lists
			// nothing, the second lists both pods: one is used, the other is a
			// duplicate already tracked.
			name: "both listed by the second reconciliation", wantAccepted: true, wantDeletes: 1,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1, 2}}, Status: 502}},
				Rewrites:    []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4)},
			},
		},
		{
			// The first answer lost and its pod not listed during the
			// reconciliation; the retry's pod is another GPU, rejected on its
			// create answer before any watch read: only the look after the
			// watch can find the first pod.
			name: "the first listed only after the retry's pod was rejected", wantDeletes: 2,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
				Rewrites: []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4),
					{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, Body: anotherGPU}},
			},
		},
		{
			// As above, and the first DELETE (the duplicate's) answers 429 with
			// a Retry-After that takes most of the deletion's 180 s budget: the
			// duplicate's deletion has that whole budget, in wall time too.
			name: "the duplicate's deletion waits out a long Retry-After", wantDeletes: 3,
			faults: runpodsim.Faults{
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
				Rewrites: []runpodsim.RewriteFault{hideListedPods(1, 2, 3, 4),
					{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, Body: anotherGPU}},
				RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "DELETE /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 175 * time.Second}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)), Faults: tc.faults}, onlyA4000)

			res, err := s.run(t)

			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2))
			assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), tc.wantDeletes), "each pod not used is deleted once")
			assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 2), "both POSTs made a pod")
			if !tc.wantAccepted {
				assert.Check(t, err != nil)
				assert.Check(t, is.Len(aliveInSim(s), 0))
				return
			}
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
		})
	}
}

// TestCeilingCountsEachPodFromTheCandidatesFirstPOST: what the ceiling
// counts as spent is, for each pod of a rejected candidate — the duplicate
// of a retried create included — its price from the candidate's first POST
// to its confirmed deletion: no pod left out, none counted at another rate.
func TestCeilingCountsEachPodFromTheCandidatesFirstPOST(t *testing.T) {
	ceiling := 0.30 // the A4000 fits ($0.2792); the A5000 after it never does ($0.3015)
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a4000, oldPTX), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, ceilingAt(ceiling))

	_, err := s.run(t)

	assert.Assert(t, errors.Is(err, ErrStopped), "got %v", err)
	var counted float64
	msg := err.Error()
	i := strings.Index(msg, "(rejected pods $")
	assert.Assert(t, i >= 0, msg)
	_, scanErr := fmt.Sscanf(msg[i:], "(rejected pods $%f", &counted)
	assert.NilError(t, scanErr, msg)
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "the first create and its retry")
	firstPOST := pods[0].CreatedAt
	want := 0.0
	for _, p := range pods {
		assert.Assert(t, !p.TerminatedAt.IsZero(), "pod %s deleted", p.ID)
		want += max(p.HourlyPrice, 0.25) * p.TerminatedAt.Sub(firstPOST).Hours()
	}
	assert.Check(t, math.Abs(counted-want) <= 0.0002, "the ceiling counted $%.4f; each pod from the first POST to its deletion is $%.4f", counted, want)
}

// TestKeptPodsRetentionRecordLogsNoWarning: a kept pod's retention name is
// written without a warning; the warning is for a name that cannot be made.
func TestKeptPodsRetentionRecordLogsNoWarning(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	s.req.KeepFailedPods = true

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.RetainedPodIDs, 1))
	want, nerr := ownership.FormatRetentionName(7001, 1, res.RetainedPodIDs)
	assert.NilError(t, nerr)
	assert.Check(t, is.Equal(res.RetentionArtifact, want))
	assert.Check(t, !strings.Contains(s.obs.log(), "retention record"), s.obs.log())
}

// TestCancelledAfterAcceptanceIsAnError: SIGTERM arriving once the pod was
// accepted, before Run returns, fails the run as cancelled, with the
// cancellation as its cause; no GPU job of a cancelled run will use the pod,
// so Run deletes it like every other pod it created (its documented
// contract) and no longer reports it as accepted in the outputs.
func TestCancelledAfterAcceptanceIsAnError(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.deps.Observer = cancelOnAccept{Observer: s.deps.Observer, cancel: cancel}

	res, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.Error(err, "provisioning cancelled: context canceled"))
	assert.Check(t, errors.Is(err, context.Canceled))
	assert.Assert(t, is.Len(s.obs.created, 1))
	assert.Check(t, is.Len(aliveInSim(s), 0), "the accepted pod of a cancelled run is deleted")
	assert.Check(t, is.Contains(s.obs.log(), "cancelled: pod "+s.obs.created[0]+" deleted at "))
	assert.Check(t, !strings.Contains(s.obs.log(), "cancelled: pod "+s.obs.created[0]+": "), "no deletion error logged")
	assert.Check(t, res.Accepted == nil)
	assert.Check(t, is.Equal(res.Outputs().PodID, ""), "no output names a deleted pod as accepted")
	assert.Check(t, is.Contains(res.Summary(err), "**Failed**: provisioning cancelled"))
}

// cancelOnAccept cancels the run the moment an attempt is accepted.
type cancelOnAccept struct {
	Observer
	cancel context.CancelFunc
}

func (o cancelOnAccept) AttemptDone(a cost.Attempt) {
	o.Observer.AttemptDone(a)
	if a.Outcome == cost.OutcomeAccepted {
		o.cancel()
	}
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
