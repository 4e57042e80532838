package provision

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/config"

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
	followed         int // lanes that followed another lane's in-progress gate on their head
	completed        int // follow gates the leaders completed
}

// lanePolicy is the in-progress protocol's bounds a lane runs with.
type lanePolicy struct {
	wait, poll, bound time.Duration
}

// shippedLanePolicy is the protocol as a user of gpu-lane.yml gets it: the
// authorize action's defaults for lane-wait-seconds and lane-poll-seconds
// (action.yml), unless gpu-lane.yml's Authorize step sets them, and the lane
// bound authorize derives from the configuration (gatecheck.LaneBound, which
// the action's LaneBound calls).
func shippedLanePolicy(tb testing.TB, cfg *config.Config) lanePolicy {
	tb.Helper()
	read := func(path string, v any) {
		raw, err := os.ReadFile(path)
		assert.NilError(tb, err)
		assert.NilError(tb, yaml.Unmarshal(raw, v))
	}
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
	}
	read("../../actions/authorize/action.yml", &action)
	var lane struct {
		Jobs map[string]struct {
			Steps []struct {
				ID   string            `yaml:"id"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	read("../../.github/workflows/gpu-lane.yml", &lane)
	given := map[string]string{}
	for _, st := range lane.Jobs["authorize"].Steps {
		if st.ID == "authorize" {
			given = st.With
		}
	}
	seconds := func(input string) time.Duration {
		v, ok := given[input]
		if !ok {
			v = action.Inputs[input].Default
		}
		n, err := strconv.Atoi(v)
		assert.NilError(tb, err, "%s = %q as shipped", input, v)
		return time.Duration(n) * time.Second
	}
	assert.Equal(tb, given["in-progress-gate"], "true", "the shipped lane publishes its in-progress gate")
	return lanePolicy{wait: seconds("lane-wait-seconds"), poll: seconds("lane-poll-seconds"),
		bound: gatecheck.LaneBound(1, cfg.MaxProvisionAttempts, cfg.StartupTimeout(), cfg.Lifetime())}
}

// payOnce drives n PRs through the simulated cloud in model mode, on its
// virtual clock, with no workflow concurrency group, under policy p, for a GPU
// job of length job. Each PR gets three deliveries for its head: the first
// leads and pays; the second arrives a minute later, while the first lane's
// GPU job runs; the third a minute after that job ended. Then a re-push whose
// merge commit is new but whose merge tree is identical (an amended message)
// gets three deliveries too. Each delivery runs the lane's paid path in code:
// the in-progress gate protocol (gatecheck.ClaimOrWait), provision when it says
// pay, and the leader's gate completed when its GPU job ends, with the follow
// gates of the lanes that followed it (gatecheck.CompleteFollowers).
// Long: one PR's deliveries are one scenario, read top to bottom.
func payOnce(tb testing.TB, n int, p lanePolicy, job time.Duration) payOnceStats {
	tb.Helper()
	s := newScenario(tb, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000), host("h3", a4000))}, nil)
	if p.bound == 0 {
		p = shippedLanePolicy(tb, s.req.Config)
	}
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
		c, err := gatecheck.ClaimOrWait(context.Background(), gh, gatecheck.ClaimRequest{Query: q, LaneBound: p.bound,
			Wait: p.wait, Poll: p.poll, Clock: s.clock, Sleep: s.clock.Sleep})
		assert.NilError(tb, err)
		if c.Following {
			st.followed++ // it publishes nothing; the leader's gate completes its follow gate
			return 0
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
		// The GPU job runs on the pod; its gate job publishes when it ends,
		// completing the follow gates of the lanes that followed this one.
		s.clock.AfterFunc(job, func() {
			gate, err := gatecheck.Publish(context.Background(), gh, e)
			if err != nil {
				tb.Errorf("complete the paid gate: %v", err)
				return
			}
			f, err := gatecheck.CompleteFollowers(context.Background(), gh, gate, e, []string{head})
			if err != nil {
				tb.Errorf("complete the follow gates: %v", err)
			}
			st.completed += len(f.Completed)
			if err := rp.DeletePod(context.Background(), pod); err != nil {
				tb.Errorf("delete pod %s: %v", pod, err)
			}
		})
		return len(s.cloud.RunPod.Pods()) - before
	}
	at := func(d time.Duration, start time.Time) { // moves the clock to start+d, never back
		if wait := start.Add(d).Sub(s.clock.Now()); wait > 0 {
			s.clock.Advance(wait)
		}
	}

	for i := 0; i < n; i++ {
		head, merge, tree := sha('a', i), sha('b', i), sha('7', i)
		pr, err := s.cloud.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: head, HeadRef: fmt.Sprintf("f%d", i), MergeCommitSHA: merge})
		assert.NilError(tb, err)
		assert.NilError(tb, s.cloud.GitHub.SetCommitTree(cloud.Repository, merge, tree))
		key := &gatecheck.TreeKey{Tree: tree, Lane: digest}
		start := s.clock.Now()
		for _, offset := range []time.Duration{0, time.Minute, time.Minute + job + time.Minute} {
			at(offset, start)
			st.testedPods += deliver(pr, head, merge, "", key)
		}
		at(2*time.Minute+job+p.bound, start) // every lane of this head has ended
		// An amended commit message: new head and merge commit, the same merge tree.
		amended, amendedMerge := sha('c', i), sha('d', i)
		assert.NilError(tb, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
			p.HeadSHA, p.MergeCommitSHA = amended, amendedMerge
		}))
		assert.NilError(tb, s.cloud.GitHub.SetCommitTree(cloud.Repository, amendedMerge, tree))
		for range 3 {
			st.identicalTreePod += deliver(pr, amended, amendedMerge, head, key)
		}
		for _, h := range []string{head, amended} {
			for _, r := range s.cloud.GitHub.CheckRuns(cloud.Repository, h) {
				if r.Status != "completed" || r.Conclusion != "success" {
					tb.Errorf("PR %d: gate %d on %s is %s/%s (%s): every delivery's head must end with a passing gate", pr, r.ID, h, r.Status, r.Conclusion, r.ExternalID)
				}
			}
		}
		st.prs++
	}
	return st
}

// payOnceJobs are the GPU job lengths the pay-once figure is shown for.
var payOnceJobs = []time.Duration{time.Minute, 5 * time.Minute, 12 * time.Minute, 40 * time.Minute}

// Overlapping deliveries of one head pay once with the shipped defaults,
// whatever the GPU job's length, and a re-push with an identical merge tree
// pays nothing, with no workflow concurrency group.
func TestOverlappingDeliveriesAndIdenticalTreesPayOnce(t *testing.T) {
	for _, job := range payOnceJobs {
		t.Run("job="+job.String(), func(t *testing.T) {
			st := payOnce(t, 2, lanePolicy{}, job)
			assert.Equal(t, st.testedPods, st.prs, "pods per tested ref")
			assert.Equal(t, st.identicalTreePod, 0, "extra pods for identical trees")
			// The second delivery arrives while the first lane tests and follows
			// it; the third, after it ended, reuses its gate; so do the re-push's.
			assert.Equal(t, st.followed, st.prs, "one follower per PR")
			assert.Equal(t, st.completed, st.followed, "the leader completed every follow gate")
			assert.Equal(t, st.reused, st.lanes-2*st.prs, "every other delivery reused the paid gate")
		})
	}
}

// The shipped policy is what the lane ships: 240 s of waiting for a lane on
// another head, a 15 s poll, and the fallback bound of the default configuration.
func TestShippedLanePolicy(t *testing.T) {
	cfg := config.Default()
	p := shippedLanePolicy(t, cfg)
	assert.Equal(t, p.wait, 240*time.Second)
	assert.Equal(t, p.poll, 15*time.Second)
	// Where a stake's workflow run cannot be read: the first provisioning and
	// the host-fault re-run, each after an hour of waiting for a free slot.
	assert.Equal(t, p.bound, 2*(gatecheck.SlotWaitMargin+time.Duration(cfg.MaxProvisionAttempts)*cfg.StartupTimeout()+cfg.Lifetime())+15*time.Minute)
}

// BenchmarkPayOnce is the figure that shows paying once with the shipped
// defaults (shippedLanePolicy) for GPU jobs of 1, 5, 12 and 40 minutes: N PRs ×
// 3 overlapping deliveries plus a re-push with an identical merge tree (3
// deliveries more), on the model-mode simulated cloud with a virtual clock and
// no workflow concurrency group. It reports pods per tested ref (target 1.00)
// and extra pods for identical trees (target 0.00):
//
//	go test ./pkg/provision -run '^$' -bench PayOnce -benchtime 50x
func BenchmarkPayOnce(b *testing.B) {
	for _, job := range payOnceJobs {
		b.Run("job="+job.String(), func(b *testing.B) {
			st := payOnce(b, b.N, lanePolicy{}, job)
			perRef := float64(st.testedPods) / float64(st.prs)
			extra := float64(st.identicalTreePod) / float64(st.prs)
			b.ReportMetric(perRef, "pods/tested-ref")
			b.ReportMetric(extra, "extra-pods/identical-tree")
			b.ReportMetric(float64(st.lanes)/float64(st.prs), "deliveries/PR")
			fmt.Printf("GPU job %s, shipped defaults, %d PRs × (3 overlapping deliveries + 3 after an identical-tree re-push), concurrency group off: "+
				"%.2f pods per tested ref (target 1.00), %.2f extra pods for identical trees (target 0.00), %d of %d lanes followed, %d reused\n",
				job, st.prs, perRef, extra, st.followed, st.lanes, st.reused)
		})
	}
}
