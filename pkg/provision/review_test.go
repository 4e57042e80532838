package provision

// A sceptical review of provision's money bounds: each test here
// drives a path where a pod could be created and not tracked, accepted
// without being the reviewed GPU, or accepted past the spend ceiling.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// aliveInSim lists the pods the simulator itself holds alive (its list API
// hides young pods under ListingDelay).
func aliveInSim(s *scenario) []string {
	var alive []string
	for _, p := range s.cloud.RunPod.Pods() {
		if p.Status != runpodsim.StatusTerminated {
			alive = append(alive, p.ID)
		}
	}
	return alive
}

// A create whose answer is lost, an informed retry whose answer is lost too,
// and a pod list that shows new pods only after 20 s: both POSTs made a pod.
// Reconciliation finds the first; the second must not be left billing
// untracked until the cleanup job.
func TestReviewTwoLostCreatesOfOneCandidateLeaveOneLivePod(t *testing.T) {
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
func TestReviewSIGTERMDuringReconciliationDeletesThePod(t *testing.T) {
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
func TestReviewUncertainCreateThenRateLimitedRetryIsSwept(t *testing.T) {
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

// A pod record whose gpu names no id cannot show the pod is the reviewed GPU:
// it is never accepted as one (as with no gpu at all).
func TestReviewPodWithoutAGPUIDIsNeverAccepted(t *testing.T) {
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
func TestReviewObservedPriceAboveTheCeilingIsNotAccepted(t *testing.T) {
	ceiling := 0.30 // $0.25/h × (420 + 3600) s = $0.2792 fits; $1.00/h × 4020 s = $1.12 does not
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
	assert.Check(t, res.Accepted == nil, "accepted at $%.2f/h under a $%.2f ceiling", acceptedPrice(res), ceiling)
	assert.Assert(t, is.Len(res.Attempts, 1))
	assert.Check(t, is.Contains(res.Attempts[0].Reason, "max_run_spend_usd $0.30: RunPod bills this pod at $1.0000/h (catalog $0.25/h), which could bring the run to $1.1167"))
	assert.Check(t, is.Len(aliveInSim(s), 0))
}

func acceptedPrice(r Result) float64 {
	if r.Accepted == nil {
		return 0
	}
	return r.Accepted.Price.PerHour
}

// Both POSTs of a retried create share the candidate's single-use runner
// config. When the first one's pod (listed 20 s late) is left alive during the
// watch, its runner comes online first and the second pod is accepted on that
// runner's strength; the first is then deleted, and the accepted pod's own
// runner can never connect. The accepted pod must run its own runner.
func TestReviewAcceptedPodOfARetriedCreateRunsItsOwnRunner(t *testing.T) {
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
