package lanes

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// An identical tree re-pushed while the first lane's GPU job runs follows
// that lane, through the README's workflow_run caller and gpu-lane.yml as
// shipped (lane-wait-seconds 240): the re-push's authorize finds the first
// lane's in-progress gate on the PR's earlier head, publishes a follow gate
// on the new head and ends at once, paying nothing; the first lane's gate
// job completes it when its GPU job ends, however long that job took. Before,
// the re-push waited the whole 240 s for the other head's stake and then paid.
// The first lane's workflow run is in progress all along (stakelife.go reads
// it), as it is while its GPU job runs, for 5, 12 or 40 minutes.
func TestIdenticalTreeWhileTheFirstLaneRunsThroughTheShippedLane(t *testing.T) {
	for i, job := range []time.Duration{5 * time.Minute, 12 * time.Minute, 40 * time.Minute} {
		t.Run("job="+job.String(), func(t *testing.T) {
			s := startShippedCloud(t, testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true))
			pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
				MergeCommitSHA: harness.MergeSHA})
			assert.NilError(t, err)
			assert.NilError(t, s.GitHub.SetCommitTree(cloud.Repository, harness.MergeSHA, treeSHA))
			firstRun, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: mainCaller,
				Event: "workflow_run", HeadSHA: strings.Repeat("0", 40)})
			assert.NilError(t, err)
			assert.NilError(t, s.GitHub.SetRunStatus(cloud.Repository, firstRun, "in_progress", ""))
			amended, amendedMerge := strings.Repeat("c", 40), strings.Repeat("d", 40)

			var rePush shippedRun
			started := time.Now()
			first := s.runShipped(t, delivery{caller: mainCaller, eventName: "workflow_run", event: workflowRunEvent(pr, harness.HeadSHA),
				sha: strings.Repeat("0", 40), actor: "alice", runID: firstRun,
				whileTheGPUJobRuns: func() {
					// An amended commit message, pushed while the GPU job runs: a new
					// head and merge commit, the same merged tree.
					s.forcePush(t, pr, amended, amendedMerge, treeSHA, "")
					rePush = s.runShipped(t, delivery{caller: mainCaller, eventName: "workflow_run", event: workflowRunEvent(pr, amended),
						sha: strings.Repeat("0", 40), actor: "alice", runID: 9600 + int64(i)})
				}})
			shippedOK(t, first)
			shippedOK(t, rePush)
			assert.Check(t, time.Since(started) < time.Minute, "the re-push followed at once instead of waiting lane-wait-seconds")

			assert.Check(t, is.Equal(first.gateKind, "paid"), first.String())
			assert.Check(t, is.Contains(rePush.authorize.Outputs["reason"], "on an earlier head of this PR ("+harness.HeadSHA+"): this lane follows it and pays nothing"), rePush.String())
			assert.Check(t, rePush.provision == nil, "the re-push provisions nothing")
			assert.Check(t, is.Equal(len(s.RunPod.Pods()), 1), "0 extra pods for the identical tree")
			checks := s.gateChecks(t, amended)
			assert.Assert(t, is.Len(checks, 1), "the re-push's head has one gate")
			assert.Check(t, is.Equal(checks[0].GetStatus(), "completed"))
			assert.Check(t, is.Equal(checks[0].GetConclusion(), "success"), checks[0].GetExternalID())
			assert.Check(t, strings.HasPrefix(checks[0].GetExternalID(), gatecheck.ExternalIDPrefixV2+amendedMerge+":reused:tree:"+treeSHA), checks[0].GetExternalID())
		})
	}
}
