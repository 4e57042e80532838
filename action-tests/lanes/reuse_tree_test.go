package lanes

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The tree both merge commits of an identical re-push have, and the tree of a
// base move that changes the merged files.
var (
	treeSHA        = strings.Repeat("7", 40)
	changedTreeSHA = strings.Repeat("8", 40)
)

// lane is one workflow run of the GPU lane as gpu-lane.yml wires it:
// authorize (tree key, in-progress gate), provision when it says run, then the
// gate completing the in-progress gate with the tree key.
type lane struct {
	runID              int64
	head, earlier      string
	authorize, publish harness.StepResult
	provision          *harness.StepResult
}

func (s *simulated) laneEnv(runID int64) map[string]string {
	env := s.RunnerEnv()
	env["GITHUB_RUN_ID"] = fmt.Sprint(runID)
	return env
}

// runLane runs one lane for PR pr at head; it must not call t.FailNow off the
// test goroutine, so every step is checked by the caller from the results.
func (s *simulated) runLane(t *testing.T, pr int, l *lane) {
	env := s.laneEnv(l.runID)
	env["GITHUB_ACTOR"], env["GITHUB_TRIGGERING_ACTOR"] = "bob", "bob"
	l.authorize = harness.RunStep(t, harness.Step{Action: "authorize", Workspace: s.Workspace, Env: env, Inputs: map[string]string{
		"github-token": cloud.GitHubToken, "pr-number": harness.Itoa(pr), "expected-head-sha": l.head, "gate-app-id": harness.Itoa(int(cloud.AppID)),
		"test-command": "make test-gpu", "registry-api-url": s.RegistryURL, "earlier-head-shas": l.earlier,
		"in-progress-gate": "true", "lane-wait-seconds": "60", "lane-poll-seconds": "1",
	}})
	a := l.authorize.Outputs
	if l.authorize.ExitCode != 0 {
		return
	}
	gateIn := map[string]string{
		"decision": a["decision"], "head-sha": a["head-sha"], "tested-ref": a["tested-ref"], "reason": a["reason"],
		"reused-check-url": a["reused-check-url"], "tree-key": a["tree-key"], "lane-image": a["lane-image"],
		"in-progress-check-run-id": a["gate-check-run-id"], "gpu-job-result": "skipped",
	}
	if a["decision"] == "run" {
		pst := s.ProvisionStep(pr)
		pst.Env = s.laneEnv(l.runID)
		pst.Inputs["expected-head-sha"], pst.Inputs["tested-ref"], pst.Inputs["tree-key"] = a["head-sha"], a["tested-ref"], a["tree-key"]
		res := harness.RunStep(t, pst)
		l.provision = &res
		p := res.Outputs
		if p["paid-path"] == "reused" {
			gateIn["reused-check-url"] = p["reused-check-url"]
		} else if res.ExitCode == 0 {
			gateIn["gpu-job-result"] = "success" // the GPU job passed on the accepted pod
			for _, k := range []string{"pod-id", "gpu-type", "tier", "price-per-hour", "startup-seconds", "attempts", "image"} {
				gateIn[k] = p[k]
			}
		}
	}
	st := s.GateStep(pr, gateIn)
	st.Env = s.laneEnv(l.runID)
	l.publish = harness.RunStep(t, st)
}

func (s *simulated) treePR(t *testing.T) int {
	t.Helper()
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature", MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, harness.MergeSHA, treeSHA))
	return pr
}

// rePush moves the PR to a new head and merge commit whose merge tree is tree.
func (s *simulated) rePush(t *testing.T, pr int, head, merge, tree string) {
	t.Helper()
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.HeadSHA, p.MergeCommitSHA = head, merge
	}))
	assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, merge, tree))
}

func laneOK(t *testing.T, l *lane) {
	t.Helper()
	assert.Assert(t, l.authorize.ExitCode == 0, "authorize exited %d:\n%s", l.authorize.ExitCode, l.authorize.Stdout)
	if l.provision != nil {
		assert.Assert(t, l.provision.ExitCode == 0, "provision exited %d:\n%s", l.provision.ExitCode, l.provision.Stdout)
	}
	assert.Assert(t, l.publish.ExitCode == 0, "gate exited %d:\n%s", l.publish.ExitCode, l.publish.Stdout)
}

// A re-push whose merge tree is identical (an amended message: new head, new
// merge SHA, same files) reuses the paid gate through its tree key and creates
// no pod; a moved base that changes the merged tree pays again.
func TestTreeKeyIdenticalTreeReusesChangedTreePays(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.treePR(t)

	first := &lane{runID: 9200, head: harness.HeadSHA}
	s.runLane(t, pr, first)
	laneOK(t, first)
	assert.Equal(t, first.authorize.Outputs["decision"], "run")
	key := first.authorize.Outputs["tree-key"]
	assert.Assert(t, strings.HasPrefix(key, "tree:"+treeSHA+":lane:"), "tree key %q", key)
	paid := first.publish.Outputs["external-id"]
	assert.Equal(t, paid, gatecheck.ExternalIDPrefixV2+harness.MergeSHA+":paid:"+key, "the paid gate records the merge SHA and the tree key")
	assert.Equal(t, first.publish.Outputs["check-run-id"], first.authorize.Outputs["gate-check-run-id"], "the in-progress gate was completed, not duplicated")
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1))

	amendedHead, amendedMerge := strings.Repeat("d", 40), strings.Repeat("e", 40)
	s.rePush(t, pr, amendedHead, amendedMerge, treeSHA)
	again := &lane{runID: 9201, head: amendedHead, earlier: harness.HeadSHA}
	s.runLane(t, pr, again)
	laneOK(t, again)
	assert.Equal(t, again.authorize.Outputs["decision"], "reuse", again.authorize.Stdout)
	assert.Check(t, is.Contains(again.authorize.Outputs["reason"], "identical tree and lane"))
	assert.Check(t, is.Equal(again.authorize.Outputs["reused-check-url"], first.publish.Outputs["check-run-url"]))
	assert.Check(t, is.Equal(again.publish.Outputs["external-id"], gatecheck.ExternalIDPrefixV2+amendedMerge+":reused:"+key))
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "an identical tree pays nothing")

	movedHead, movedMerge := strings.Repeat("f", 40), strings.Repeat("9", 40)
	s.rePush(t, pr, movedHead, movedMerge, changedTreeSHA)
	moved := &lane{runID: 9202, head: movedHead, earlier: amendedHead}
	s.runLane(t, pr, moved)
	laneOK(t, moved)
	assert.Check(t, is.Equal(moved.authorize.Outputs["decision"], "run"))
	assert.Check(t, is.Equal(moved.provision.Outputs["paid-path"], "paid"))
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 2), "a changed tree is new code: it pays")
	for _, h := range []string{harness.HeadSHA, amendedHead, movedHead} {
		for _, c := range s.gateChecks(t, h) {
			assert.Check(t, is.Equal(c.GetStatus(), "completed"), "gate %d on %s stays %s", c.GetID(), h, c.GetStatus())
		}
	}
}

// Three overlapping deliveries for one head, with no workflow concurrency
// group serializing them, create exactly one pod: each lane publishes its gate
// in progress before any spend, the oldest leads, and the others follow it —
// they end at once, paying nothing, and the leader's gate completes their
// follow gates with its result.
func TestThreeOverlappingDeliveriesCreateOnePod(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true), testHost("h3", harness.A4000, true)),
		runpodsim.Faults{}, fastConfig)
	pr := s.treePR(t)
	lanes := []*lane{{runID: 9300, head: harness.HeadSHA}, {runID: 9301, head: harness.HeadSHA}, {runID: 9302, head: harness.HeadSHA}}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runLane(t, pr, l)
		}()
	}
	wg.Wait()
	decisions, followed := map[string]int{}, 0
	for _, l := range lanes {
		laneOK(t, l)
		if strings.Contains(l.authorize.Outputs["reason"], "this lane follows it and pays nothing") {
			followed++
			assert.Check(t, is.Equal(l.publish.Outputs["kind"], ""), "a follower publishes nothing itself")
		}
		assertNoSecrets(t, s, l.authorize)
		decisions[l.authorize.Outputs["decision"]]++
	}
	assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "overlapping deliveries of one head pay once: %v", decisions)
	assert.Check(t, is.Equal(decisions["run"], 1), "one leader: %v", decisions)
	assert.Check(t, is.Equal(decisions["skip"]+decisions["reuse"], 2), "the others follow or reuse: %v", decisions)
	assert.Check(t, followed >= 1, "the deliveries overlapped: a lane followed the leader's in-progress gate")
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Check(t, is.Len(checks, 3), "one gate per lane: the leader's and one per follower or reuser")
	for _, c := range checks {
		assert.Check(t, is.Equal(c.GetStatus(), "completed"), "gate %d stays %s", c.GetID(), c.GetStatus())
		assert.Check(t, is.Equal(c.GetConclusion(), "success"), "gate %d: %s", c.GetID(), c.GetExternalID())
		assert.Check(t, !strings.HasPrefix(c.GetExternalID(), gatecheck.FollowPrefix), "gate %d still a follow gate", c.GetID())
	}
}
