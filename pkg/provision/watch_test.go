package provision

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestObsolescenceNoticedWithinAMinute: while a pod boots (90 s, then a 25 s
// proof) the watch re-reads the PR at most once a minute, yet a PR closed or
// moved at any moment of the watch is noticed within a minute — before the
// runner could be accepted — and the pod is deleted.
func TestObsolescenceNoticedWithinAMinute(t *testing.T) {
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
			for i := 1; i < len(reads); i++ {
				assert.Check(t, reads[i].Sub(reads[i-1]) >= PRWatchInterval, "PR reads at %v: want at most one a minute", reads)
			}
			assert.Assert(t, len(reads) > 0 && !reads[len(reads)-1].Before(changed), "PR reads at %v, change at %v", reads, changed)
			noticed := reads[len(reads)-1] // the read that saw the change ended the watch
			assert.Check(t, noticed.Sub(changed) <= PRWatchInterval, "the change at +%v was noticed %v later", tc.after, noticed.Sub(changed))
			assert.Check(t, strings.Contains(err.Error(), fmt.Sprintf("PR #%d", s.pr)))
		})
	}
}

// TestAcceptanceRereadsThePR: a pod that comes online before the minute's PR
// read is accepted only on a PR read of the same poll, so a head moved while
// it booted is never accepted; an unchanged PR accepts on a 304.
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
