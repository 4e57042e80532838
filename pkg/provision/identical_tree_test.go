package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// An identical tree re-pushed while the first lane's GPU job runs follows
// that lane, with the shipped policy (shippedLanePolicy: 240 s of waiting for
// a lane on another head) on the virtual clock, for GPU jobs of 5, 12 and 40
// minutes: a re-push a minute into the job and another a minute before it
// ends each follow the stake on the PR's first head and pay nothing; the
// first lane's gate job completes the follow gate on the PR's head when the
// job ends. Before, a re-push waited 240 s for the other head's stake and then
// paid whenever the job had more than 4 minutes left.
func TestIdenticalTreeWhileTheFirstLaneRunsInTheLibrary(t *testing.T) {
	for _, job := range []time.Duration{5 * time.Minute, 12 * time.Minute, 40 * time.Minute} {
		t.Run("job="+job.String(), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a4000), host("h4", a4000))}, nil)
			p := shippedLanePolicy(t, s.req.Config)
			gh := s.deps.GitHub.(*ghapi.Client)
			key := &gatecheck.TreeKey{Tree: fmt.Sprintf("7%039x", 1), Lane: fmt.Sprintf("%064x", 1)}
			sha := func(c byte, i int) string { return fmt.Sprintf("%c%039x", c, i) }
			head, merge := sha('a', 0), sha('b', 0)
			pr, err := s.cloud.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: head, HeadRef: "f", MergeCommitSHA: merge})
			assert.NilError(t, err)
			assert.NilError(t, s.cloud.GitHub.SetCommitTree(cloud.Repository, merge, key.Tree))

			// The first lane leads, pays, and its GPU job runs for job.
			q := gatecheck.ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: cloud.AppID, Key: key}
			c, err := gatecheck.ClaimOrWait(context.Background(), gh, gatecheck.ClaimRequest{Query: q, LaneBound: p.bound, Wait: p.wait, Poll: p.poll,
				Clock: s.clock, Sleep: s.clock.Sleep, FollowEarlierHeads: true})
			assert.NilError(t, err)
			assert.Assert(t, c.Staked != nil && !c.Following, c.Reason)
			req := s.req
			req.PRNumber, req.ExpectedHeadSHA, req.TestedRef, req.Reuse = pr, head, merge, q
			res, err := Run(context.Background(), s.deps, req)
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			e := gatecheck.Evidence{Kind: gatecheck.KindPaid, HeadSHA: head, TestedRef: merge, Key: key, CheckRunID: c.Staked.GetID(),
				Pod: &gatecheck.PodEvidence{ID: res.Accepted.PodID, GPU: res.Accepted.GPU}}
			completed := 0
			s.clock.AfterFunc(job, func() { // the gate job: its head and the PR's head now
				gate, err := gatecheck.Publish(context.Background(), gh, e)
				if err != nil {
					t.Errorf("the first lane's gate: %v", err)
					return
				}
				prNow, err := gh.GetPullRequest(context.Background(), pr)
				if err != nil {
					t.Errorf("read the PR: %v", err)
					return
				}
				f, err := gatecheck.CompleteFollowers(context.Background(), gh, gate, e, []string{head, prNow.GetHead().GetSHA()})
				if err != nil {
					t.Errorf("complete the follow gates: %v", err)
				}
				completed += len(f.Completed)
				if err := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey).DeletePod(context.Background(), res.Accepted.PodID); err != nil {
					t.Errorf("delete pod: %v", err)
				}
			})
			pods := len(s.cloud.RunPod.Pods())

			// Re-pushes with the same merged tree: a minute into the job, and
			// a minute before it ends.
			start := s.clock.Now()
			var heads []string
			for i, at := range []time.Duration{time.Minute, job - time.Minute} {
				s.clock.Advance(start.Add(at).Sub(s.clock.Now()))
				amended, amendedMerge := sha('c', i+1), sha('d', i+1)
				assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
					p.HeadSHA, p.MergeCommitSHA = amended, amendedMerge
				}))
				assert.NilError(t, s.cloud.GitHub.SetCommitTree(cloud.Repository, amendedMerge, key.Tree))
				earlier := append([]string{}, heads...) // newest first, as authorize reads the PR's head history
				slices.Reverse(earlier)
				rq := gatecheck.ReuseQuery{HeadSHA: amended, TestedRef: amendedMerge, AppID: cloud.AppID, Key: key, EarlierHeads: append(earlier, head)}
				c, err := gatecheck.ClaimOrWait(context.Background(), gh, gatecheck.ClaimRequest{Query: rq, LaneBound: p.bound, Wait: p.wait, Poll: p.poll,
					Clock: s.clock, Sleep: s.clock.Sleep, FollowEarlierHeads: true})
				assert.NilError(t, err)
				assert.Check(t, c.Following, "re-push %d, %s into the job: %s", i, at, c.Reason)
				heads = append(heads, amended)
			}
			assert.Check(t, is.Equal(len(s.cloud.RunPod.Pods()), pods), "0 extra pods for identical trees")
			s.clock.Advance(job)
			assert.Check(t, completed >= 1, "the first lane's gate completed the follow gate on the PR's head")
			last := heads[len(heads)-1]
			for _, r := range s.cloud.GitHub.CheckRuns(cloud.Repository, last) {
				assert.Check(t, is.Equal(r.Status, "completed"), r.ExternalID)
				assert.Check(t, is.Equal(r.Conclusion, "success"), r.ExternalID)
			}
		})
	}
}

// The PR's head moves while the lane's pod boots. To a merge commit of the
// same tree (an amended message), the lane goes on and is accepted: the
// re-push's lane follows it. To another tree, it stops as obsolete and
// deletes its pod, as before.
func TestHeadMovedToTheSameTreeWhileBootingGoesOn(t *testing.T) {
	tree, otherTree := fmt.Sprintf("7%039x", 9), fmt.Sprintf("8%039x", 9)
	tests := []struct {
		name     string
		newTree  string
		obsolete bool
	}{
		{name: "same merged tree: go on", newTree: tree},
		{name: "another tree: obsolete", newTree: otherTree, obsolete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
			assert.NilError(t, s.cloud.GitHub.SetCommitTree(cloud.Repository, mergeSHA, tree))
			s.req.Reuse.Key = &gatecheck.TreeKey{Tree: tree, Lane: fmt.Sprintf("%064x", 1)}
			newMerge := fmt.Sprintf("d%039x", 9)
			assert.NilError(t, s.cloud.GitHub.SetCommitTree(cloud.Repository, newMerge, tc.newTree))
			s.obs.onCreate = func(string) { // the push lands while the pod boots
				_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA, p.MergeCommitSHA = movedHead, newMerge })
			}
			res, err := s.run(t)
			if tc.obsolete {
				assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
				assert.Check(t, is.Len(s.livePods(t), 0))
				return
			}
			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil)
			assert.Check(t, is.Contains(s.obs.log(), "with the same merged tree "+tree+": this lane goes on testing it"))
		})
	}
}
