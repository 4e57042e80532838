package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// cents compares sums of dollars without float noise.
var cents = cmpopts.EquateApprox(0, 1e-9)

// paidAttempt is a summarized attempt with one pod.
func paidAttempt(runID int64, at time.Time, trigger cost.Trigger, ref string, pods ...Pod) Attempt {
	return Attempt{RunID: runID, Attempt: 1, Trigger: trigger, TestedRef: ref, CreatedAt: at, StartedAt: at,
		Decision: DecisionPaid, EvidenceComplete: true, Pods: pods, URL: "https://github.com/org/app/actions/runs/1/attempts/1"}
}

func pod(id, gpu string, outcome cost.Outcome, dollars cost.Money) Pod {
	return Pod{ID: id, GPU: gpu, Outcome: outcome, Dollars: dollars, Source: SourceArtifact}
}

func TestSummarizeTriggersAndRefs(t *testing.T) {
	usd := func(v float64) cost.Money { return cost.KnownMoney(money.FromDollars(v)) }
	day := func(n int) time.Time { return t0.AddDate(0, 0, n) }
	attempts := []Attempt{
		paidAttempt(1, day(0), cost.TriggerAutomatic, refA, pod("a1", "L4", cost.OutcomeAccepted, usd(0.10))),
		paidAttempt(2, day(1), cost.TriggerAutomatic, refA, pod("a2", "L4", cost.OutcomeAccepted, usd(0.20))), // a repeat
		paidAttempt(3, day(2), cost.TriggerManual, refA, pod("a3", "L4", cost.OutcomeAccepted, usd(0.40))),    // a confirmation
		paidAttempt(4, day(3), cost.TriggerAutomatic, refB, pod("b1", "A40", cost.OutcomeRejected, usd(0.01)),
			pod("b2", "L4", cost.OutcomeAccepted, usd(0.30))),
		paidAttempt(5, day(4), cost.TriggerAutomatic, "", pod("x1", "L4", cost.OutcomeAccepted, usd(0.05))),
		{RunID: 6, Attempt: 1, Trigger: cost.TriggerAutomatic, TestedRef: refB, CreatedAt: day(5), Decision: DecisionReused, EvidenceComplete: true},
	}
	r := summarize(attempts, nil)

	assert.DeepEqual(t, r.Triggers, Triggers{
		AutomaticFirst:  TriggerGroup{Attempts: 2, TestedRefs: 2, Spend: Amount{Known: money.FromDollars(0.41)}},
		AutomaticRepeat: TriggerGroup{Attempts: 1, TestedRefs: 1, Spend: Amount{Known: money.FromDollars(0.20)}},
		Manual:          TriggerGroup{Attempts: 1, TestedRefs: 1, Spend: Amount{Known: money.FromDollars(0.40)}},
		UnknownRef:      TriggerGroup{Attempts: 1, Spend: Amount{Known: money.FromDollars(0.05)}},
	}, cents)
	assert.DeepEqual(t, r.RepeatedRefs, []RefSummary{{TestedRef: refA, Automatic: 2, Manual: 1, Spend: Amount{Known: money.FromDollars(0.7)}}}, cents)
	assert.Equal(t, len(r.ReusedGates), 1)
	assert.Equal(t, r.ReusedGates[0].TestedRef, refB)
	assert.Equal(t, r.Totals.Spend.String(), "$1.0600")
	assert.Equal(t, r.Totals.RejectedSpend.String(), "$0.0100")
	assert.Equal(t, r.GPUs[0].GPU, "L4")
	assert.Equal(t, r.GPUs[0].SpendPerAcceptedPod.String(), "$0.2100", "$1.05 over 5 accepted pods")
	assert.Check(t, r.GPUs[1].SpendPerAcceptedPod == nil, "A40 has no accepted pod")
	assert.Equal(t, r.FirstDay+".."+r.LastDay, "2026-10-06..2026-10-11")
}

func TestDuplicatePodsCountOnce(t *testing.T) {
	usd := func(v float64) cost.Money { return cost.KnownMoney(money.FromDollars(v)) }
	r := summarize([]Attempt{
		paidAttempt(1, t0, cost.TriggerAutomatic, refA, pod("dup", "L4", cost.OutcomeAccepted, usd(0.10))),
		paidAttempt(2, t0.Add(time.Hour), cost.TriggerAutomatic, refB, pod("dup", "L4", cost.OutcomeAccepted, usd(0.10)),
			pod("other", "L4", cost.OutcomeAccepted, usd(0.05))),
	}, nil)
	assert.Equal(t, r.Totals.Pods, 2)
	assert.Equal(t, r.Totals.Duplicates, 1)
	assert.Equal(t, r.Totals.Spend.String(), "$0.1500")
	assert.Equal(t, r.Attempts[1].Pods[0].DuplicateOf, "run 1 attempt 1")
	assert.DeepEqual(t, r.Warnings, []string{"pod dup appears in run 1 attempt 1 and again in run 2 attempt 1: counted once, in run 1 attempt 1"})
	assert.Check(t, is.Contains(r.Markdown(), "1 duplicate rows counted once"))
}

// TestMissingCostIsUnknownNeverZero is the promise of the whole report: a
// pod whose cost the evidence does not show, and an attempt whose evidence is
// missing, are unknown in both outputs, and every sum they are part of is.
func TestMissingCostIsUnknownNeverZero(t *testing.T) {
	unknownPod := pod("p-unknown", "L4", cost.OutcomeAccepted, cost.Money{})
	unknownPod.Notes = []string{"deletion not confirmed: the paid window has no end and the pod may have kept billing"}
	r := summarize([]Attempt{
		paidAttempt(1, t0, cost.TriggerAutomatic, refA, unknownPod),
		{RunID: 2, Attempt: 1, Trigger: cost.TriggerAutomatic, CreatedAt: t0, Decision: DecisionUnknown,
			Notes: []string{"logs not downloaded (failed: HTTP 502 Bad Gateway): its GPU work and cost are unknown until a collection downloads them"}},
	}, nil)

	data, err := json.Marshal(r)
	assert.NilError(t, err)
	var out struct {
		Totals struct {
			Spend           map[string]any `json:"spend"`
			UnknownCostPods int            `json:"unknownCostPods"`
			UnknownAttempts int            `json:"unknownAttempts"`
		} `json:"totals"`
		GPUs []struct {
			Spend map[string]any `json:"spend"`
		} `json:"gpus"`
		Weeks []struct {
			Spend map[string]any `json:"spend"`
		} `json:"weeks"`
		Attempts []struct {
			Pods []struct {
				Dollars *float64 `json:"dollars"`
			} `json:"pods"`
		} `json:"attempts"`
	}
	assert.NilError(t, json.Unmarshal(data, &out))
	for what, spend := range map[string]map[string]any{"total": out.Totals.Spend, "GPU": out.GPUs[0].Spend, "week": out.Weeks[0].Spend} {
		assert.Check(t, spend["usd"] == nil, "%s spend must be null, got %v", what, spend["usd"])
		assert.Check(t, spend["unknown"] == 1.0, "%s spend counts the unknown amount: %v", what, spend)
	}
	assert.Check(t, out.Attempts[0].Pods[0].Dollars == nil, "the pod's dollars are null")
	assert.Equal(t, out.Totals.UnknownCostPods, 1)
	assert.Equal(t, out.Totals.UnknownAttempts, 1)

	md := r.Markdown()
	assert.Check(t, is.Contains(md, "| Spend | $0.0000 known, 1 pod of unknown cost |"))
	assert.Check(t, is.Contains(md, "| L4 | 1 | 1 | 0 | 1 | $0.0000 known, 1 pod of unknown cost |"))
	assert.Check(t, is.Contains(md, "1 unknown (evidence missing)"))
	assert.Check(t, is.Contains(md, "run 1 attempt 1, pod p-unknown: deletion not confirmed"))
	assert.Check(t, is.Contains(md, "run 2 attempt 1: logs not downloaded"))
	assert.Check(t, !strings.Contains(md, "| Spend | $0.0000 |"))
}

// The headline leads with the amount, and a bar chart's axis starts at 0 so
// the smallest bar is not drawn empty (Mermaid starts at the smallest value).
func TestMarkdownHeadlineAndChartAxis(t *testing.T) {
	tests := []struct {
		name     string
		spend    Amount
		values   []money.Amount
		headline string
		axis     string
	}{
		{name: "known", spend: Amount{Known: money.FromDollars(1.23)}, values: []money.Amount{money.Dollar / 2, money.Dollar / 5},
			headline: "**$1.2300** spent on GPU pods", axis: `y-axis "USD" 0 --> 0.5`},
		{name: "one unknown", spend: Amount{Known: money.FromDollars(1.23), Unknown: 1}, values: []money.Amount{money.Dollar / 5, money.Dollar / 2},
			headline: "**$1.2300 known, 1 pod of unknown cost** spent on GPU pods", axis: `y-axis "USD" 0 --> 0.5`},
		{name: "every known amount zero", spend: Amount{Unknown: 2}, values: []money.Amount{0, 0},
			headline: "**$0.0000 known, 2 pods of unknown cost** spent", axis: `y-axis "USD" 0 --> 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{FirstDay: "2026-10-01", LastDay: "2026-10-07", Totals: Totals{Attempts: 3, Spend: tc.spend}}
			var b strings.Builder
			r.writeTotals(&b)
			assert.Check(t, strings.HasPrefix(b.String(), tc.headline), b.String())
			b.Reset()
			writeChart(&b, "Known spend per week (USD)", []string{"W40", "W41"}, tc.values, 0)
			assert.Check(t, is.Contains(b.String(), "\n    "+tc.axis+"\n"))
		})
	}
}
