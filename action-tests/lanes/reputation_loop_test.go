package lanes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// repLoopConfig tries one A4000 candidate once per run: RunPod places it
// where the stock is, US-TX-3, whose driver refuses the proof.
const repLoopConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000"]
max_price_candidates: 1
max_provision_attempts: 2
max_consecutive_startup_failures: 1
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

// The reputation loop with the real binaries on the simulated cloud: two lane
// runs fail in US-TX-3 (provision rejects the pod, cleanup writes the cost
// artifact); the cost history collects those runs and writes the reputation
// record; the next lane's provision reads it, pins its create to EU-RO-1 and
// gets a working runner from its first pod.
func TestReputationLoopFromCostHistoryToProvision(t *testing.T) {
	t.Parallel()
	w := historyStart(t)
	lanes := startCloud(t, reputationMarket(), runpodsim.Faults{}, repLoopConfig)
	created := time.Now().UTC()
	day := created.Format(time.DateOnly)

	for range 2 {
		// The run the history will find, whose id the lane's steps carry.
		id, err := w.gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: historyRepo, WorkflowPath: historyWorkflow,
			Event: "pull_request", CreatedAt: created, Status: "completed", Conclusion: "failure", Jobs: historyLaneJobs(created)})
		assert.NilError(t, err)

		pst := lanes.ProvisionStep(lanes.openPR(t))
		pst.Env = lanes.laneEnv(id)
		prov := harness.RunStep(t, pst)
		assert.Assert(t, prov.ExitCode != 0, "the pod in US-TX-3 fails its proof:\n%s", prov.Stdout)
		assert.Assert(t, is.Contains(prov.Outputs["rejected-attempts"], `"dataCenter":"US-TX-3"`), "provision says where the pod ran")
		assert.Check(t, is.Contains(prov.Outputs["rejected-attempts"], `"host":"failed"`), "and that its host failed")

		clean := harness.RunStep(t, lanes.cleanupStep(id, prov.Outputs))
		assert.Equal(t, clean.ExitCode, 0, clean.Stdout)
		body, err := os.ReadFile(filepath.Join(lanes.Workspace, clean.Outputs["cost-artifact-path"]))
		assert.NilError(t, err)
		_, err = w.gh.AddArtifact(historyRepo, id, githubsim.ArtifactSpec{Name: clean.Outputs["cost-artifact-name"],
			Files: map[string]string{filepath.Base(clean.Outputs["cost-artifact-path"]): string(body)}})
		assert.NilError(t, err)
		assert.NilError(t, w.gh.SetRunLogs(historyRepo, id, 1, map[string]string{
			historyLogFile(0, history.JobProvision): stamped(created, prov.Stdout),
			historyLogFile(2, history.JobCleanup):   stamped(created, clean.Stdout),
		}))
	}

	hist := harness.RunStep(t, w.step(map[string]string{"since": day, "until": day}))
	assert.Equal(t, hist.ExitCode, 0, hist.Stdout)
	path := hist.Outputs["reputation-file"]
	assert.Assert(t, path != "", "cost-history names the reputation record it wrote")
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	rec, err := reputation.Parse(data)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rec.Observations, 2), "one observation per rejected pod:\n%s", data)
	for _, o := range rec.Observations {
		assert.Check(t, is.Equal(o.DataCenter, "US-TX-3"))
		assert.Check(t, !o.OK)
	}
	assert.Check(t, is.Contains(hist.Stdout, "reputation: 2 observation(s) written to reputation.json"))
	historyAssertNoToken(t, hist)

	next := startCloud(t, reputationMarket(), runpodsim.Faults{}, repLoopConfig)
	st := next.ProvisionStep(next.openPR(t))
	// The lane downloads the record into provision's workspace.
	assert.NilError(t, os.MkdirAll(filepath.Join(next.Workspace, "runpod-gpu-reputation"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(next.Workspace, "runpod-gpu-reputation", "reputation.json"), data, 0o644))
	st.Inputs["reputation-file"] = "runpod-gpu-reputation/reputation.json"
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	pods := next.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 1), "one pod, no rejected host paid for")
	assert.Equal(t, pods[0].DataCenterID, "EU-RO-1")
	assert.Check(t, is.Contains(res.Stdout, "quarantined: NVIDIA RTX A4000 secure in US-TX-3 until"))
	assertNoSecrets(t, next, res)
	assertCreatesFollowContract(t, next)
}

// stamped prefixes each line of a step's output with a timestamp, as GitHub's
// log archive does.
func stamped(at time.Time, out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		b.WriteString(at.Format(time.RFC3339Nano) + " " + line)
	}
	return b.String()
}
