package provision

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// payOnceStats is what the overlapping deliveries and identical re-pushes paid.
type payOnceStats struct {
	prs              int
	testedPods       int // pods created for each PR's first tested tree
	identicalTreePod int // pods created for re-pushes whose merge tree was identical
	reused, lanes    int
	waited           int // lanes that waited for another lane's in-progress gate
}

// laneTestDuration is how long the GPU job of an accepted pod runs before its
// gate is completed, in virtual time.
const laneTestDuration = 5 * time.Minute

// payOnce drives n PRs through the simulated cloud in model mode, on its
// virtual clock, with no workflow concurrency group: each PR gets three
// overlapping deliveries for its head (the second arrives while the first lane
// is testing and waits for it on the virtual clock; the third as it ends), then a re-push whose merge commit is new but whose
// merge tree is identical (an amended message), again with three deliveries.
// Each delivery runs the lane's paid path in code: the in-progress gate
// protocol (gatecheck.ClaimOrWait), provision when it says pay, and the gate
// completed when the GPU job ends.
func payOnce(tb testing.TB, n int) payOnceStats {
	tb.Helper()
	s := newScenario(tb, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a4000))}, nil)
	gh := s.deps.GitHub.(*ghapi.Client)
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	digest, err := gatecheck.LaneDigest(gatecheck.LaneDefinition{Config: []byte(`{"bench":true}`), TestCommand: "make test-gpu",
		ImageDigest: cloud.RunnerImage + "@" + cloud.RunnerImageDigest, Workflow: cloud.Repository + "/" + cloud.Workflow + "@refs/heads/main", Version: "bench"})
	assert.NilError(tb, err)
	var st payOnceStats
	runID := int64(500000)
	sha := func(kind byte, i int) string { return fmt.Sprintf("%c%039x", kind, i) }

	// deliver runs one delivery's lane and returns how many pods it created.
	deliver := func(pr int, head, merge, earlier string, key *gatecheck.TreeKey) int {
		runID++
		st.lanes++
		q := gatecheck.ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: cloud.AppID, Key: key}
		if earlier != "" {
			q.EarlierHeads = []string{earlier}
		}
		c, err := gatecheck.ClaimOrWait(context.Background(), gh, gatecheck.ClaimRequest{Query: q, LaneBound: 2 * time.Hour,
			Wait: 30 * time.Minute, Poll: 30 * time.Second, Clock: s.clock, Sleep: s.clock.Sleep})
		assert.NilError(tb, err)
		if c.Leader != 0 {
			st.waited++
		}
		e := gatecheck.Evidence{HeadSHA: head, TestedRef: merge, Key: key, CheckRunID: c.Staked.GetID()}
		if c.Reuse {
			st.reused++
			e.Kind, e.ReusedCheckURL = gatecheck.KindReused, c.CheckURL
			_, err := gatecheck.Publish(context.Background(), gh, e)
			assert.NilError(tb, err)
			return 0
		}
		req := s.req
		req.Owner.RunID, req.PRNumber, req.ExpectedHeadSHA, req.TestedRef = runID, pr, head, merge
		req.Reuse = q
		before := len(s.cloud.RunPod.Pods())
		res, err := Run(context.Background(), s.deps, req)
		assert.NilError(tb, err)
		if res.Decision != DecisionPaid || res.Accepted == nil {
			e.Kind, e.ReusedCheckURL = gatecheck.KindReused, res.ReusedCheckURL
			_, err := gatecheck.Publish(context.Background(), gh, e)
			assert.NilError(tb, err)
			return 0
		}
		e.Kind, e.Pod = gatecheck.KindPaid, &gatecheck.PodEvidence{ID: res.Accepted.PodID, GPU: res.Accepted.GPU}
		pod := res.Accepted.PodID
		// The GPU job runs on the pod; its gate is completed when it ends,
		// while later deliveries may be waiting for it.
		s.clock.AfterFunc(laneTestDuration, func() {
			_, err := gatecheck.Publish(context.Background(), gh, e)
			if err != nil {
				tb.Errorf("complete the paid gate: %v", err)
			}
			if err := rp.DeletePod(context.Background(), pod); err != nil {
				tb.Errorf("delete pod %s: %v", pod, err)
			}
		})
		return len(s.cloud.RunPod.Pods()) - before
	}

	for i := 0; i < n; i++ {
		head, merge, tree := sha('a', i), sha('b', i), sha('7', i)
		pr, err := s.cloud.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: head, HeadRef: fmt.Sprintf("f%d", i), MergeCommitSHA: merge})
		assert.NilError(tb, err)
		assert.NilError(tb, s.cloud.GitHub.SetCommitTree(cloud.Repository, merge, tree))
		key := &gatecheck.TreeKey{Tree: tree, Lane: digest}
		for range 3 {
			st.testedPods += deliver(pr, head, merge, "", key)
		}
		// An amended commit message: new head and merge commit, the same merge tree.
		amended, amendedMerge := sha('c', i), sha('d', i)
		assert.NilError(tb, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
			p.HeadSHA, p.MergeCommitSHA = amended, amendedMerge
		}))
		assert.NilError(tb, s.cloud.GitHub.SetCommitTree(cloud.Repository, amendedMerge, tree))
		for range 3 {
			st.identicalTreePod += deliver(pr, amended, amendedMerge, head, key)
		}
		s.clock.Advance(laneTestDuration) // every lane of this PR ends
		st.prs++
	}
	return st
}

// Overlapping deliveries of one head pay once, and a re-push with an identical
// merge tree pays nothing, with no workflow concurrency group.
func TestOverlappingDeliveriesAndIdenticalTreesPayOnce(t *testing.T) {
	st := payOnce(t, 4)
	assert.Equal(t, st.testedPods, st.prs, "pods per tested ref")
	assert.Equal(t, st.identicalTreePod, 0, "extra pods for identical trees")
	assert.Equal(t, st.reused, st.lanes-st.prs, "every other delivery reused the one paid gate")
	// The second delivery arrives while the first lane tests and waits for it
	// (the third arrives as the first completes, on the virtual clock).
	assert.Check(t, st.waited >= st.prs, "deliveries that overlapped the first lane waited for it: %d", st.waited)
}

// BenchmarkPayOnce is the figure that shows paying once: N PRs × 3 overlapping
// deliveries plus a re-push with an identical merge tree (3 deliveries more),
// on the model-mode simulated cloud with a virtual clock and no workflow
// concurrency group. It reports pods per tested ref (target 1.00) and extra
// pods for identical trees (target 0.00):
//
//	go test ./pkg/provision -run '^$' -bench PayOnce -benchtime 200x
func BenchmarkPayOnce(b *testing.B) {
	st := payOnce(b, b.N)
	perRef := float64(st.testedPods) / float64(st.prs)
	extra := float64(st.identicalTreePod) / float64(st.prs)
	b.ReportMetric(perRef, "pods/tested-ref")
	b.ReportMetric(extra, "extra-pods/identical-tree")
	b.ReportMetric(float64(st.lanes)/float64(st.prs), "deliveries/PR")
	fmt.Printf("%d PRs × (3 overlapping deliveries + 3 after an identical-tree re-push), concurrency group off: "+
		"%.2f pods per tested ref (target 1.00), %.2f extra pods for identical trees (target 0.00), %d of %d lanes reused, %d waited for a lane in progress\n",
		st.prs, perRef, extra, st.reused, st.lanes, st.waited)
}
