package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// The attempt's GPU job conclusion comes from its cost evidence; an artifact
// written before reports carried it reads as unknown, and a known conclusion
// wins over an unknown one (the watchdog reports while the job still runs).
func TestAttemptJobConclusion(t *testing.T) {
	start := t0.Add(time.Minute)
	with := func(c cost.Conclusion) cost.Report {
		r := acceptedReport("pod1", "NVIDIA L4", 0.36, start, 600)
		r.JobConclusion = c
		return r
	}
	watchdog := func(r cost.Report) cost.Artifact {
		a := artifactOf(7, 1, cost.TriggerAutomatic, refA, r)
		a.Action = "watchdog"
		return a
	}
	tests := []struct {
		name      string
		artifacts []cost.Artifact
		logs      []string
		want      cost.Conclusion
	}{
		{name: "success", artifacts: []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, with(cost.ConclusionSuccess))},
			want: cost.ConclusionSuccess},
		{name: "failure", artifacts: []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, with(cost.ConclusionFailure))},
			want: cost.ConclusionFailure},
		{name: "older artifact without the field", artifacts: []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, with(""))},
			want: cost.ConclusionUnknown},
		{name: "a cost line only", logs: []string{cost.CostLine(with(cost.ConclusionCancelled)).Format()},
			want: cost.ConclusionCancelled},
		{name: "the watchdog's unknown, then cleanup's failure",
			artifacts: []cost.Artifact{watchdog(with(cost.ConclusionUnknown)), artifactOf(7, 1, cost.TriggerAutomatic, refA, with(cost.ConclusionFailure))},
			want:      cost.ConclusionFailure},
		{name: "an older artifact, and a newer cost line that knows",
			artifacts: []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, with(""))},
			logs:      []string{cost.CostLine(with(cost.ConclusionSuccess)).Format()},
			want:      cost.ConclusionSuccess},
		{name: "no cost evidence", logs: []string{cost.AttemptLine(acceptedAttempt(1, "pod1", "NVIDIA L4", 0.36, 60)).Format()},
			want: cost.ConclusionUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := savedAttempt{rec: completedAttempt(7, 1, "pull_request", t0),
				logs: map[string]string{provisionLog: logText(t0, tc.logs...)}, artifacts: tc.artifacts}
			writeSaved(t, dir, saved)
			a := readSaved(t, dir, saved.rec.Key())
			assert.Equal(t, a.Decision, DecisionPaid)
			assert.Equal(t, a.JobConclusion, tc.want)
		})
	}
}

// The report tells a paid failure from a paid success: spend of paid
// attempts by their GPU job's conclusion, every conclusion listed, in the
// JSON and the Markdown.
func TestSummarizeSpendByConclusion(t *testing.T) {
	usd := func(v float64) cost.Money { return cost.KnownMoney(money.FromDollars(v)) }
	day := func(n int) time.Time { return t0.AddDate(0, 0, n) }
	ended := func(a Attempt, c cost.Conclusion) Attempt { a.JobConclusion = c; return a }
	attempts := []Attempt{
		ended(paidAttempt(1, day(0), cost.TriggerAutomatic, refA, pod("a1", "L4", cost.OutcomeAccepted, usd(0.10))), cost.ConclusionSuccess),
		ended(paidAttempt(2, day(1), cost.TriggerAutomatic, refB, pod("b0", "A40", cost.OutcomeRejected, usd(0.01)),
			pod("b1", "L4", cost.OutcomeAccepted, usd(0.20))), cost.ConclusionFailure),
		ended(paidAttempt(3, day(2), cost.TriggerAutomatic, refB, pod("b2", "L4", cost.OutcomeAccepted, usd(0.30))), cost.ConclusionFailure),
		ended(paidAttempt(4, day(3), cost.TriggerManual, refA, pod("a2", "L4", cost.OutcomeAccepted, cost.Money{})), cost.ConclusionCancelled),
		paidAttempt(5, day(4), cost.TriggerAutomatic, refA, pod("a3", "L4", cost.OutcomeAccepted, usd(0.05))), // an older artifact: not stated
		// Not paid: in no group, whatever it says.
		ended(Attempt{RunID: 6, Attempt: 1, TestedRef: refB, CreatedAt: day(5), Decision: DecisionReused, EvidenceComplete: true}, cost.ConclusionSuccess),
	}
	r := summarize(attempts, nil)
	assert.DeepEqual(t, r.Conclusions, []ConclusionGroup{
		{Conclusion: cost.ConclusionSuccess, Attempts: 1, Pods: 1, Spend: Amount{Known: money.FromDollars(0.10)}},
		{Conclusion: cost.ConclusionFailure, Attempts: 2, Pods: 3, Spend: Amount{Known: money.FromDollars(0.51)}},
		{Conclusion: cost.ConclusionCancelled, Attempts: 1, Pods: 1, Spend: Amount{Unknown: 1}},
		{Conclusion: cost.ConclusionSkipped},
		{Conclusion: cost.ConclusionUnknown, Attempts: 1, Pods: 1, Spend: Amount{Known: money.FromDollars(0.05)}},
	}, cents)

	data, err := json.Marshal(r)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(data), `{"conclusion":"failure","attempts":2,"pods":3,"spend":`))
	md := r.Markdown()
	assert.Check(t, is.Contains(md, "| success | 1 | 1 | $0.1000 |"))
	assert.Check(t, is.Contains(md, "| failure | 2 | 3 | $0.5100 |"))
	assert.Check(t, is.Contains(md, "| unknown | 1 | 1 | $0.0500 |"))
	assert.Check(t, strings.Contains(md, "| paid | failure | 2 |"), "the attempt table names each paid attempt's GPU job conclusion")
	assert.Check(t, strings.Contains(md, "| reused | n/a | 0 |"))
}
