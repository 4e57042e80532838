package history

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/wire"
)

// addReaperRecord uploads a sweep's decision record (pkg/reap's own JSON)
// as reap.yml does, from a run on branch.
func (g *simGitHub) addReaperRecord(t *testing.T, branch string, pods ...reap.PodRecord) {
	t.Helper()
	run, err := g.srv.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: simRepo, WorkflowPath: ".github/workflows/runpod-gpu-reap.yml",
		Event: "schedule", HeadBranch: branch, HeadSHA: strings.Repeat("f", 40), Status: "completed", Conclusion: "success"})
	assert.NilError(t, err)
	rec := reap.Record{Version: reap.RecordVersion, CheckedAt: g.clock.Now(), Execute: true, Repository: simRepo, Pods: pods}
	data, err := rec.JSON()
	assert.NilError(t, err)
	_, err = g.srv.AddArtifact(simRepo, run, githubsim.ArtifactSpec{Name: fmt.Sprintf("%s%d-1", ownership.ReapRecordPrefix, run),
		Files: map[string]string{reap.DefaultRecordPath: string(data)}})
	assert.NilError(t, err)
}

// A pod the lane never reported (its cleanup never ran) is priced as the
// reaper that deleted it priced it, from the provider's start to the
// confirmed deletion, not estimated from the lane's log; a record uploaded
// from another branch is never read.
func TestReaperRecordPricesThePodItDeleted(t *testing.T) {
	g := newSimGitHub(t)
	run := g.addRun(t, t0, "pull_request", "")
	g.setLogs(t, run, 1, cost.AttemptLine(acceptedAttempt(1, "podO", "NVIDIA L40S", 0.86, 25)).Format(), "the run was cancelled")
	reaped := cost.Report{PodID: "podO", GPU: "NVIDIA L40S", Price: price(0.86), Window: window(t0, 1755)}
	forged := cost.Report{PodID: "podO", GPU: "NVIDIA L40S", Price: price(0.86), Window: window(t0, 1)}
	g.addReaperRecord(t, "feature", reap.PodRecord{PodID: "podO", RunID: run, Attempt: 1, Decision: reap.DecisionReclaim, Cost: &forged})

	dir := filepath.Join(t.TempDir(), "history")
	rng, err := ParseRange("2026-10-06", "2026-10-06")
	assert.NilError(t, err)
	res, err := Run(context.Background(), Options{Dir: dir, Range: &rng, GitHub: g.client})
	assert.NilError(t, err)
	pod := res.Report.Attempts[0].Pods[0]
	assert.Check(t, is.Equal(pod.Source, SourceLogWindow), "a record from a branch is not read")

	g.clock.Advance(time.Hour)
	g.addReaperRecord(t, "main", reap.PodRecord{PodID: "podO", RunID: run, Attempt: 1, Decision: reap.DecisionReclaim,
		DeletedAt: wire.KnownTime(t0.Add(1755 * time.Second)), Cost: &reaped})
	res, err = Run(context.Background(), Options{Dir: dir, Range: &rng, GitHub: g.client})
	assert.NilError(t, err)
	pod = res.Report.Attempts[0].Pods[0]
	assert.Check(t, is.Equal(pod.Source, SourceReaper))
	assert.Check(t, is.Equal(pod.Dollars, reaped.Dollars()), "the reaper's price: %v", pod.Dollars)
	assert.Check(t, is.Equal(pod.Candidate, "live-1"), "the attempt line still names the candidate")
	assert.Check(t, is.Equal(res.Report.Totals.Spend.String(), reaped.Dollars().String()))
	assert.Check(t, is.Len(res.Report.Unknowns, 0), "%v", res.Report.Unknowns)

	// Offline, from the saved evidence alone: the same.
	again, err := Run(context.Background(), Options{Dir: dir})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(again.Report.Attempts[0].Pods[0].Source, SourceReaper))
}

func TestIsReaperRecord(t *testing.T) {
	for name, want := range map[string]bool{
		"runpod-gpu-reap-12-1": true, "runpod-gpu-reap-org-12-1": false, "runpod-gpu-reap-12": false,
		"runpod-gpu-reap-12-1-x": false, "runpod-gpu-cost-12-1": false,
	} {
		assert.Check(t, is.Equal(isReaperRecord(name), want), name)
	}
}
