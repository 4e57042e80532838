package history

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// forgedOutcome is what one collection made of an attempt: the report's
// dollars, the reputation and spend records, and the attempt's warnings.
type forgedOutcome struct {
	dollars, reputation, spend string
	warnings                   string
}

// collectLane plays one lane attempt on the simulated GitHub: its real
// cleanup artifact (sealed in the cleanup job's log) and, uploaded by the GPU
// job's pull-request code, forged artifacts claiming the lane's jobs
// (forgedFirst lists them before the real one). The GPU job's log carries a
// seal of each forged file too: that log is the pull request's to write.
func collectLane(t *testing.T, forgedJobs []string, forgedFirst bool) (forgedOutcome, []string) {
	t.Helper()
	g := newSimGitHub(t)
	ctx := context.Background()
	real := acceptedReport("realpod", "NVIDIA L4", 0.36, t0, 600)
	run := g.addRun(t, date(2026, 10, 6).Add(10*time.Hour), "pull_request", "")
	jobs, err := g.srv.Jobs(simRepo, run, 1)
	assert.NilError(t, err)
	jobID := map[string]int64{}
	for _, j := range jobs {
		jobID[j.Name] = j.ID
	}

	var forgedNames, gpuSeals []string
	uploadForged := func() {
		for i, claimed := range forgedJobs {
			// $99/h for 10 h, on a pod of its own, and a duplicate of the real pod at $0.
			forged := artifactOf(run, 1, cost.TriggerAutomatic, refA, acceptedReport(fmt.Sprintf("forged%d", i), "NVIDIA H100", 99, t0, 36000))
			if i%2 == 1 {
				forged = artifactOf(run, 1, cost.TriggerAutomatic, refA, acceptedReport("realpod", "NVIDIA L4", 0.0000001, t0, 1))
			}
			body, err := json.Marshal(forged)
			assert.NilError(t, err)
			name := cost.JobArtifactName(run, 1, jobID[claimed])
			// While the claimed job runs (the watchdog runs beside the GPU job by design).
			_, err = g.srv.AddArtifact(simRepo, run, githubsim.ArtifactSpec{Name: name, CreatedAt: t0,
				Files: map[string]string{cost.ArtifactFileName: string(body)}})
			assert.NilError(t, err)
			forgedNames = append(forgedNames, name)
			gpuSeals = append(gpuSeals, cost.SealLine(body).Format())
		}
	}
	if forgedFirst {
		uploadForged()
	}
	g.addCostArtifact(t, run, 1, real, time.Time{})
	if !forgedFirst {
		uploadForged()
	}
	g.setLogs(t, run, 1, cost.CostLine(real).Format())
	// The GPU job's log, which its pull-request code writes, seals the forgeries.
	logs := map[string]string{provisionLog: logText(t0, cost.CostLine(real).Format()), cleanupLog: logText(t0, g.seals[AttemptKey{RunID: run, Attempt: 1}]...)}
	if len(gpuSeals) > 0 {
		logs[gpuLog] = logText(t0, gpuSeals...)
	}
	assert.NilError(t, g.srv.SetRunLogs(simRepo, run, 1, logs))

	dir := filepath.Join(t.TempDir(), "history")
	rng, err := ParseRange("2026-10-06", "2026-10-06")
	assert.NilError(t, err)
	res, err := Run(ctx, Options{Dir: dir, Range: &rng, GitHub: g.client, Clock: g.clock})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Report.Attempts, 1))
	out := forgedOutcome{dollars: res.Report.Totals.Spend.String(), warnings: strings.Join(res.Report.Attempts[0].Warnings, "\n")}
	out.reputation = readFile(t, res.ReputationPath)
	spend, err := os.ReadFile(res.SpendPath)
	assert.NilError(t, err)
	out.spend = string(spend)
	return out, forgedNames
}

// TestForgedEvidenceCountsForNothing: a cost artifact the GPU job uploads,
// named for the watchdog, the gate or the cleanup job while that job runs,
// and sealed in the GPU job's own log, changes neither the report's dollars,
// the reputation nor the spend record, in either listing order; the report
// names each one.
func TestForgedEvidenceCountsForNothing(t *testing.T) {
	honest, _ := collectLane(t, nil, false)
	assert.Equal(t, honest.dollars, "$0.0600", "the real pod: $0.36/h for 600 s")
	tests := []struct {
		name        string
		claims      []string
		forgedFirst bool
	}{
		{name: "claims the watchdog, listed first", claims: []string{JobWatchdog}, forgedFirst: true},
		{name: "claims the watchdog, listed last", claims: []string{JobWatchdog}},
		{name: "claims the gate and cleanup, listed first", claims: []string{JobGate, JobCleanup}, forgedFirst: true},
		{name: "claims the gate and cleanup, listed last", claims: []string{JobGate, JobCleanup}},
		{name: "claims every lane job, listed first", claims: []string{JobAuthorize, JobProvision, JobWatchdog, JobGate, JobCleanup}, forgedFirst: true},
		{name: "claims every lane job, listed last", claims: []string{JobAuthorize, JobProvision, JobWatchdog, JobGate, JobCleanup}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, forged := collectLane(t, tc.claims, tc.forgedFirst)
			assert.Equal(t, got.dollars, honest.dollars)
			assert.Equal(t, got.reputation, honest.reputation)
			assert.Equal(t, got.spend, honest.spend)
			for _, name := range forged {
				assert.Check(t, is.Contains(got.warnings, "cost artifact "+name+" ignored as forged"))
			}
		})
	}
}

// TestForgedEvidenceDuplicateCountsOnce: the lane's own artifact uploaded
// twice (a re-run of the upload step) counts once, and the report names the
// copy.
func TestForgedEvidenceDuplicateCountsOnce(t *testing.T) {
	g := newSimGitHub(t)
	real := acceptedReport("realpod", "NVIDIA L4", 0.36, t0, 600)
	run := g.addRun(t, date(2026, 10, 6).Add(10*time.Hour), "pull_request", "")
	g.setLogs(t, run, 1)
	g.addCostArtifact(t, run, 1, real, time.Time{})
	g.addCostArtifact(t, run, 1, real, time.Time{})
	rng, err := ParseRange("2026-10-06", "2026-10-06")
	assert.NilError(t, err)
	res, err := Run(context.Background(), Options{Dir: filepath.Join(t.TempDir(), "history"), Range: &rng, GitHub: g.client})
	assert.NilError(t, err)
	assert.Equal(t, res.Report.Totals.Spend.String(), "$0.0600")
	name := g.costArtifactName(t, run, 1)
	assert.Check(t, is.Contains(strings.Join(res.Report.Attempts[0].Warnings, "\n"), "cost artifact "+name+" ignored: a duplicate of "+name))
}
