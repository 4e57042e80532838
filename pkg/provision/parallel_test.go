package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A candidate whose pod lost its slot under max_concurrent_pods is tried
// again right after itself, under a number after every other candidate's (a
// new pod name and label), while the plan stays within
// max_provision_attempts; at the limit the next candidate follows instead.
func TestRetryAfterSlotPutsTheCandidateAgainUnderANewNumber(t *testing.T) {
	three := []plan.Candidate{{N: 1, Name: "live-1"}, {N: 2, Name: "live-2"}, {N: 3, Name: "live-3"}}
	for _, tt := range []struct {
		name        string
		i, attempts int
		want        []int // the plan's candidate numbers after
		wantLog     string
	}{
		{name: "room for one more", i: 1, attempts: 4, want: []int{1, 2, 4, 3}, wantLog: "candidate live-2 lost its slot: trying it again as candidate 4 once a slot is free"},
		{name: "the first candidate", i: 0, attempts: 5, want: []int{1, 4, 2, 3}, wantLog: "trying it again as candidate 4"},
		{name: "at max_provision_attempts", i: 1, attempts: 3, want: []int{1, 2, 3}, wantLog: "max_provision_attempts 3 reached, trying the next candidate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs := &recorder{}
			r := &run{deps: Deps{Observer: obs}, cfg: &config.Config{MaxProvisionAttempts: tt.attempts},
				res: Result{Plan: plan.Plan{Candidates: append([]plan.Candidate(nil), three...)}}}

			r.retryAfterSlot(tt.i)

			var got []int
			for _, c := range r.res.Plan.Candidates {
				got = append(got, c.N)
			}
			assert.Check(t, is.DeepEqual(got, tt.want))
			assert.Check(t, is.Contains(obs.log(), tt.wantLog))
		})
	}
}

// A lane that finds no free slot under max_concurrent_pods for SlotWaitLimit
// stops there, creating nothing and saying why: the live pods it counted, or
// that they could not be listed. The limit is held to the poll: the run
// stops when it is reached, neither a poll early nor waiting on.
func TestNoFreeSlotStopsTheRunAtTheWaitLimit(t *testing.T) {
	for _, tt := range []struct {
		name    string
		faults  runpodsim.Faults
		occupy  bool // an earlier lane of the repository holds the slot
		wantWhy string
	}{
		{name: "the slot stays taken", occupy: true, wantWhy: "1 of max_concurrent_pods 1 live; no pod was created"},
		{name: "the live pods cannot be listed", faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Status: 500}}},
			wantWhy: "the live pods could not be listed"},
		{name: "the slot stays taken, each listing slow", occupy: true, wantWhy: "1 of max_concurrent_pods 1 live; no pod was created",
			faults: runpodsim.Faults{Slow: []runpodsim.SlowFault{{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Every: 1}, Delay: 7 * time.Second}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)), Faults: tt.faults}, func(c *config.Config) {
				onlyA4000(c)
				c.MaxConcurrentPods = 1
			})
			var live []string
			if tt.occupy {
				first, err := s.run(t)
				assert.NilError(t, err)
				live = []string{first.Accepted.PodID}
				s.req.Owner.RunID++ // another lane of the repository, while the first one's pod is live
			}
			start := s.clock.Now()
			// A wait that never ends is cut after a few polls more than the
			// limit holds, so a broken limit fails here instead of hanging.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s.deps.Observer = &cancelAfterWaits{recorder: s.obs, most: int(SlotWaitLimit/SlotPoll) + 3, cancel: cancel}

			_, err := Run(ctx, s.deps, s.req)

			assert.Check(t, errors.Is(err, ErrStopped), "got %v", err)
			waited := s.clock.Now().Sub(start).Round(time.Second)
			assert.Check(t, is.ErrorContains(err, fmt.Sprintf("no free slot for a pod of %s after %s: %s", cloud.Repository, waited, tt.wantWhy)))
			// The last wait ends at the limit: only that listing's own time may follow.
			assert.Check(t, waited >= SlotWaitLimit && waited < SlotWaitLimit+SlotPoll/2, "stopped %s after it began, the limit %s", waited, SlotWaitLimit)
			if len(tt.faults.ServerErrors)+len(tt.faults.Slow) == 0 {
				assert.Check(t, is.Equal(waited, SlotWaitLimit), "stopped as the limit was reached")
			}
			assert.Check(t, is.DeepEqual(aliveInSim(s), live), "nothing created")
		})
	}
}

// cancelAfterWaits cancels the run once it has logged more waits than most:
// lines starting with prefix ("waiting for a free slot" when empty).
type cancelAfterWaits struct {
	*recorder
	waits, most int
	cancel      func()
	prefix      string
}

func (c *cancelAfterWaits) Logf(format string, args ...any) {
	if strings.HasPrefix(format, cmp.Or(c.prefix, "waiting for a free slot")) {
		if c.waits++; c.waits > c.most {
			c.cancel()
		}
	}
	c.recorder.Logf(format, args...)
}

// racingLane creates, right before the lane's first create, a pod of another
// lane of the same repository: two lanes that passed waitForSlot together.
type racingLane struct {
	RunPod
	raced bool
}

func (r *racingLane) CreatePod(ctx context.Context, body runpod.CreatePodRequest) (*runpod.Pod, error) {
	if !r.raced {
		r.raced = true
		tags, err := ownership.FromPod(body.Name, body.Env)
		if err != nil {
			return nil, err
		}
		tags.RunID++
		other := body
		other.Name, other.Env = tags.PodName(), maps.Clone(body.Env)
		other.Env[ownership.EnvRunID] = strconv.FormatInt(tags.RunID, 10)
		if _, err := r.RunPod.CreatePod(ctx, other); err != nil {
			return nil, err
		}
	}
	return r.RunPod.CreatePod(ctx, body)
}

// A pod created past max_concurrent_pods, because another lane's pod was
// created first, is deleted at once and its candidate waits for a slot; a
// pod whose live pods cannot be listed after its create cannot be shown to
// fit, and is deleted likewise.
func TestPodPastMaxConcurrentPodsIsDeletedAtOnce(t *testing.T) {
	t.Run("another lane's pod came first", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000))}, func(c *config.Config) {
			onlyA4000(c)
			c.MaxConcurrentPods = 1
		})
		s.deps.RunPod = &racingLane{RunPod: s.deps.RunPod}

		res, err := s.run(t)

		assert.NilError(t, err, "once the other lane's pod ended, the candidate gets its slot")
		assert.Check(t, is.Contains(s.obs.log(), "is past the maximum of concurrent pods: 1 pod(s) of "+cloud.Repository+" created before it are live, max_concurrent_pods 1; deleting it at once"))
		assert.Check(t, is.Contains(s.obs.log(), "candidate live-1 lost its slot: trying it again as candidate 2 once a slot is free"))
		assert.Assert(t, is.Len(s.obs.created, 2), "this lane's first pod deleted, the candidate tried again")
		found := false
		for _, p := range s.cloud.RunPod.Pods() {
			if p.ID == s.obs.created[0] {
				found = true
				assert.Check(t, !p.TerminatedAt.IsZero() && p.TerminatedAt.Sub(p.CreatedAt) < budget.RecheckWindow, "deleted at once: %+v", p)
			}
		}
		assert.Check(t, found, "the first pod %s is in the simulator's record", s.obs.created[0])
		assert.Check(t, is.Equal(res.Accepted.PodID, s.obs.created[1]))
	})
	t.Run("the live pods cannot be listed after the create", func(t *testing.T) {
		// The first listing (waitForSlot's) answers; the next ones, after the create, do not.
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000)), Faults: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
			{Match: runpodsim.Match{Route: "GET /v2/pods"}, When: runpodsim.Trigger{Nth: []int{2, 3, 4, 5, 6, 7, 8, 9, 10}}, Status: 500}}}}, func(c *config.Config) {
			onlyA4000(c)
			c.MaxConcurrentPods = 1
		})

		res, err := s.run(t)

		assert.NilError(t, err, "once the pods can be listed, the candidate gets its slot")
		assert.Check(t, is.Contains(s.obs.log(), "the live pods could not be listed"))
		assert.Check(t, is.Contains(s.obs.log(), "so max_concurrent_pods 1 cannot be shown to hold; deleting it at once"))
		assert.Check(t, is.Len(s.obs.created, 2), "the first pod deleted, the candidate tried again")
		assert.Check(t, is.DeepEqual(aliveInSim(s), []string{res.Accepted.PodID}))
	})
}
