package provision

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// cancelWithoutCreate cancels the run while its create is in flight, and the
// create never reached RunPod; it counts pod-list reads.
type cancelWithoutCreate struct {
	RunPod
	cancel context.CancelFunc
	create bool // the create does happen on the server

	mu    sync.Mutex
	lists int
}

func (c *cancelWithoutCreate) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	if c.create {
		_, _ = c.RunPod.CreatePod(context.WithoutCancel(ctx), r)
	}
	c.cancel()
	return nil, ctx.Err()
}

func (c *cancelWithoutCreate) ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.RunPod.ListPods(ctx, q)
}

// TestSIGTERMDuringACreateLooksForItsPodWithinTheBudget: after a SIGTERM
// during a create, the pod list is read every 1.5 s for CancelReconcileBudget
// (8 s) — six reads — when no pod of the name shows up, and the run ends with
// the cleanup job's sweep named as the backstop; a pod that is listed stops
// the search at the first read, and is deleted. (Run's last look at uncertain
// creates, sweepUncertain, adds one read either way.)
func TestSIGTERMDuringACreateLooksForItsPodWithinTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		create    bool
		wantLists int
		wantLog   string
	}{
		{name: "nothing was created", wantLists: 6 + 1,
			wantLog: "cancelled during the create of rgpu-7001-1-c1: no pod of that name found within 8s; the cleanup job's tag sweep is the backstop"},
		{name: "the pod exists", create: true, wantLists: 1 + 1, wantLog: "reconciled: pod rgpu-7001-1-c1 exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rp := &cancelWithoutCreate{RunPod: s.deps.RunPod, cancel: cancel, create: tc.create}
			s.deps.RunPod = rp

			_, err := Run(ctx, s.deps, s.req)

			assert.Check(t, is.ErrorContains(err, "provisioning cancelled: provisioning stopped: create of rgpu-7001-1-c1 interrupted: context canceled"))
			assert.Check(t, is.Equal(rp.lists, tc.wantLists))
			assert.Check(t, is.Contains(s.obs.log(), tc.wantLog))
			assert.Check(t, is.Len(aliveInSim(s), 0))
			if !tc.create {
				assert.Check(t, !strings.Contains(s.obs.log(), "reconciled:"))
			}
		})
	}
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

// A create answer that names the id of a pod the run created earlier (the
// rejected first candidate's) is a lost answer: the second candidate's real
// pod is found by name and used, never left billing untracked, and the first
// pod is not watched again as if it were the second.
func TestCreateAnswerNamingAnotherPodsIDIsReconciledByName(t *testing.T) {
	var s *scenario
	s = newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}},
			Body: func(_ int, body []byte) []byte {
				var pod map[string]any
				assert.Check(t, json.Unmarshal(body, &pod))
				s.obs.mu.Lock()
				pod["id"] = s.obs.created[0] // the first candidate's pod
				s.obs.mu.Unlock()
				out, err := json.Marshal(pod)
				assert.Check(t, err)
				return out
			},
		}}}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1), "exactly the second candidate's pod")
	assert.Check(t, is.Equal(res.Accepted.PodID, live[0].ID))
	assert.Check(t, is.Equal(live[0].Name, "rgpu-7001-1-c2"))
	assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2), "never a second POST for a pod that exists")
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c2 exists as "+live[0].ID))
}

// A create answer naming the id of a pod that is not this run's (another
// pod of the account) is a lost answer too: that pod's record, named
// otherwise, is never judged, priced or deleted as the candidate's; its id is
// forgotten, and the candidate's real pod is found by name and used.
func TestCreateAnswerNamingAForeignPodsIDNeverTouchesThatPod(t *testing.T) {
	var s *scenario
	var foreign string
	s = newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)),
		Faults: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}},
			Body: func(_ int, body []byte) []byte {
				var pod map[string]any
				assert.Check(t, json.Unmarshal(body, &pod))
				pod["id"] = foreign
				out, err := json.Marshal(pod)
				assert.Check(t, err)
				return out
			},
		}}}}, onlyA4000)
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	notebook, err := rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "alice-notebook", Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: a4000, Count: 1}})
	assert.NilError(t, err)
	foreign = notebook.ID

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, res.Accepted.PodID != foreign)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists as "+res.Accepted.PodID))
	var alive []string
	for _, p := range s.livePods(t) {
		alive = append(alive, p.Name)
	}
	assert.Check(t, is.DeepEqual(alive, []string{"alice-notebook", "rgpu-7001-1-c1"}), "the foreign pod is untouched")
	assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 2), "the notebook's and the candidate's: never a second")
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
	late := res.Attempts[len(res.Attempts)-1]
	assert.Check(t, is.Equal(late.Candidate, "live-1"))
	assert.Check(t, late.Price.Known && late.Price.PerHour == money.PerHour(0.25), "the late pod's attempt is priced: %+v", late.Price)
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

// A create whose answer is lost, an informed retry whose answer is lost too,
// and a pod list that shows new pods only after 20 s: both POSTs made a pod.
// Reconciliation finds the first; the second must not be left billing
// untracked until the cleanup job.
func TestTwoLostCreatesOfOneCandidateLeaveOneLivePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1, 2}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.DeepEqual(t, aliveInSim(s), []string{res.Accepted.PodID})
	assert.Check(t, is.Len(s.obs.created, 2), "both pods were tracked and published")
}

// cancelDuringList cancels the run (SIGTERM) while the first pod-list read is
// in flight, and answers that read with the cancellation; later reads (on
// fresh contexts) pass through.
type cancelDuringList struct {
	RunPod
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelDuringList) ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error) {
	fired := false
	c.once.Do(func() { c.cancel(); fired = true })
	if fired {
		return nil, ctx.Err()
	}
	return c.RunPod.ListPods(ctx, q)
}

// SIGTERM arriving while a lost create is being reconciled: the create did
// make a pod, and the cancellation path must find and delete it.
func TestSIGTERMDuringReconciliationDeletesThePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)),
		Faults: runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}}}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.deps.RunPod = &cancelDuringList{RunPod: s.deps.RunPod, cancel: cancel}

	_, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(aliveInSim(s), 0), "the pod of the lost create was found and deleted")
}

// A lost create (its pod listed only after 20 s), then a 429 on the informed
// retry: the run stops, and the pod of the first POST must still be looked
// for before it returns, not left to the cleanup job.
func TestUncertainCreateThenRateLimitedRetryIsSwept(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			RateLimits:   []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2}}, RetryAfter: 30 * time.Second}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, _ := s.run(t)

	var want []string
	if res.Accepted != nil {
		want = []string{res.Accepted.PodID}
	}
	assert.DeepEqual(t, aliveInSim(s), want)
}

// Both POSTs of a retried create share the candidate's single-use runner
// config. When the first one's pod (listed 20 s late) is left alive during the
// watch, its runner comes online first and the second pod is accepted on that
// runner's strength; the first is then deleted, and the accepted pod's own
// runner can never connect. The accepted pod must run its own runner.
func TestAcceptedPodOfARetriedCreateRunsItsOwnRunner(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, nil)

	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	s.clock.Advance(5 * time.Minute) // the accepted pod's own proof and runner have long finished

	verdict, _ := s.cloud.Model.Verdict(res.Accepted.PodID)
	assert.Check(t, is.Equal(verdict, ""), "the accepted pod failed after acceptance")
	assert.DeepEqual(t, aliveInSim(s), []string{res.Accepted.PodID})
}

// A lost create whose reconciliation is answered 429 with an hour's
// Retry-After: provision stops rather than risk a second pod, and its last
// look for the uncertain name still goes out under that cooldown (urgent), so
// the pod it created is found and deleted instead of billing untracked until
// the cleanup job (chaos seed 769).
func TestLastLookForAnUncertainCreateGoesOutUnderAnHourCooldown(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods"},
				When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: time.Hour}},
		}}, nil)

	_, err := s.run(t)

	assert.Check(t, err != nil, "a create that cannot be reconciled stops provisioning")
	for _, p := range s.cloud.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "pod %s (%s) left alive", p.ID, p.Name)
	}
	assert.Check(t, is.Contains(s.obs.log(), "of an uncertain create of rgpu-7001-1-c1 was listed late; deleted"))
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

// A pod of an uncertain create that the run's last look finds and deletes
// billed too: it is an attempt of the run (with its cost bound and why it
// went) and counts in SpentBound, so the lane's committed spend, the next
// tier's and the re-run's ceilings and the cost report all see it.
func TestPodOfAnUncertainCreateIsCountedAndRecorded(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 90 * time.Second,
		}}, nil)

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	recorded := map[string]cost.Attempt{}
	for _, a := range res.Attempts {
		if a.PodID != "" {
			recorded[a.PodID] = a
		}
	}
	others := 0
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == res.Accepted.PodID {
			continue
		}
		others++
		a, ok := recorded[p.ID]
		assert.Check(t, ok, "pod %s (%s) billed and is no attempt of the run: %v", p.ID, p.Name, outcomes(res))
		assert.Check(t, is.Equal(a.Outcome, cost.OutcomeRejected))
		assert.Check(t, is.Contains(a.Reason, "uncertain create"))
		bill, err := s.cloud.RunPod.Bill(p.ID)
		assert.NilError(t, err)
		assert.Check(t, res.SpentBound >= money.FromDollars(bill.Dollars), "SpentBound %s < the pod's bill $%.6f", res.SpentBound.Format(money.Exact), bill.Dollars)
	}
	assert.Check(t, is.Equal(others, 1), "the scenario: one pod of the lost create")
	assert.Check(t, is.Len(s.obs.attempts, len(res.Attempts)), "the observer heard every attempt")
}
