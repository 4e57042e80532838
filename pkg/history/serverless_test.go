package history

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// serverlessJobs are the jobs of one attempt of serverless-lane.yml.
func serverlessJobs() []JobInfo {
	hosted := func(id int64, name string) JobInfo {
		return JobInfo{ID: id, Name: name, Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 1", Steps: []string{"Set up job"}}
	}
	return []JobInfo{hosted(1, "gpu / "+JobAuthorize), hosted(2, "gpu / Prepare the payload"), hosted(3, "gpu / One Serverless job"), hosted(4, "gpu / "+JobGate)}
}

// TestServerlessSpendIsInTheHistory: a Serverless attempt's cost artifact
// gives the report its own rows and chart, and its spend counts in the total
// beside the pods'; an attempt that created nothing costs a known $0, a job
// whose timing is unknown an unknown amount, never zero.
func TestServerlessSpendIsInTheHistory(t *testing.T) {
	dir := t.TempDir()
	run := cost.Run{Repository: "org/app", Trigger: cost.TriggerManual, Attempt: 1}
	sls := func(id int64, spend cost.ServerlessSpend) savedAttempt {
		r := run
		r.ID = id
		return savedAttempt{rec: completedAttempt(id, 1, "workflow_dispatch", t0.AddDate(0, 0, int(id))), logs: map[string]string{}, jobs: serverlessJobs(),
			artifacts: []cost.Artifact{{Run: r, Action: "serverless", Serverless: &spend}}}
	}
	writeSaved(t, dir,
		savedAttempt{rec: completedAttempt(1, 1, "pull_request", t0), logs: map[string]string{},
			artifacts: []cost.Artifact{artifactOf(1, 1, cost.TriggerAutomatic, refA, acceptedReport("pod1", "NVIDIA L4", 0.5, t0, 36*60))}},
		sls(2, cost.ServerlessSpend{Attempt: "rpg-sls-org-app-2-1-aa", JobID: "job-2", JobStatus: "COMPLETED", GPU: "NVIDIA RTX A4000", Pool: "AMPERE_16",
			PricePerHour: money.PerHour(0.70), WorkerSeconds: 360, Dollars: cost.KnownMoney(money.FromDollars(0.07)), ReservedCents: 261, LedgerCents: 261}),
		sls(3, cost.ServerlessSpend{Attempt: "rpg-sls-org-app-3-1-bb", GPU: "NVIDIA RTX A4000", PricePerHour: money.PerHour(0.70), Dollars: cost.KnownMoney(money.FromDollars(0))}),
		sls(4, cost.ServerlessSpend{Attempt: "rpg-sls-org-app-4-1-cc", JobID: "job-4", JobStatus: "IN_QUEUE", GPU: "NVIDIA RTX A4000", PricePerHour: money.PerHour(0.70), ReservedCents: 261}),
	)
	r, err := Summarize(dir, nil)
	assert.NilError(t, err)

	assert.Assert(t, r.Serverless != nil)
	assert.Check(t, is.Equal(r.Serverless.Attempts, 3))
	assert.Check(t, is.Equal(r.Serverless.Jobs, 2))
	assert.Check(t, is.Equal(r.Serverless.Spend.String(), "$0.0700 known, 1 Serverless job of unknown cost"))
	assert.Check(t, is.Equal(r.Serverless.ReservedCents, money.WholeCents(522)))
	assert.Check(t, is.Equal(r.Totals.ServerlessAttempts, 3))
	assert.Check(t, is.Equal(r.Totals.Spend.Known, money.FromDollars(0.37)), "the pod's $0.30 and the Serverless job's $0.07 in one total")
	assert.Check(t, is.Equal(r.Totals.Spend.Unknown, 1))
	assert.Check(t, is.Equal(r.Totals.Paid, 4))

	md := r.Markdown()
	for _, want := range []string{"spent on GPU pods and Serverless jobs", "### Serverless lane", "| Serverless jobs |",
		"`job-2`", "COMPLETED", "| 360 | $0.0700 | $2.61 |", "Known Serverless spend per week (USD)", "`serverless` lane",
		"**$0.3700 known, 1 Serverless job of unknown cost** spent on GPU pods and Serverless jobs"} {
		assert.Check(t, is.Contains(md, want))
	}
	data, err := json.Marshal(r)
	assert.NilError(t, err)
	assert.Check(t, strings.Contains(string(data), `"serverless":{"attempts":3`), "the JSON report has the Serverless summary")
}
