package provision

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// A rejection reason is outside text (a provider's message, a log line): it
// stays inside its cell, by the one escaper every summary uses.
func TestSummaryKeepsReasonsInTheirCell(t *testing.T) {
	tests := []struct {
		name, reason, wantCell string
	}{
		{name: "pipe", reason: "exit 1 | retry", wantCell: `| exit 1 \| retry |`},
		{name: "line break", reason: "pod EXITED\n| forged | row |", wantCell: `| pod EXITED \| forged \| row \| |`},
		{name: "HTML", reason: "<img src=x> failed", wantCell: "| &lt;img src=x&gt; failed |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Result{Attempts: []cost.Attempt{{Number: 1, Candidate: "c1", GPU: "NVIDIA L4", PodID: "p1",
				Outcome: cost.OutcomeRejected, Reason: tc.reason, Seconds: cost.KnownSeconds(30)}}}
			summary := res.Summary(nil)
			assert.Check(t, is.Contains(summary, tc.wantCell))
			rows := 0
			for _, l := range strings.Split(summary, "\n") {
				if strings.HasPrefix(l, "| ") {
					rows++
				}
			}
			assert.Check(t, is.Equal(rows, 2), "header and one attempt:\n%s", summary)
		})
	}
}

// TestOutputs: the action outputs say exactly what was accepted and what
// rejected pods cost, and stay empty where nothing is known.
func TestOutputs(t *testing.T) {
	started := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600))
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: l4, PodID: "p1", Outcome: cost.OutcomeRejected,
		Price: cost.KnownPrice(money.PerHour(3.6), "catalog list price"), Seconds: cost.KnownSeconds(10)}
	accepted := cost.Attempt{Number: 3, Candidate: "live-3", GPU: a4000, PodID: "p3", Outcome: cost.OutcomeAccepted,
		Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost while running"), Seconds: cost.KnownSeconds(33)}
	failed := cost.Attempt{Number: 2, Candidate: "live-2", GPU: a5000, Outcome: cost.OutcomeFailed}
	for _, tc := range []struct {
		name string
		res  Result
		want Outputs
	}{
		{
			name: "accepted after a rejection and a failure",
			res: Result{Decision: DecisionPaid, Image: "img@sha256:1", Attempts: []cost.Attempt{rejected, failed, accepted},
				Accepted: &Accepted{PodID: "p3", RunnerLabel: "lbl", GPU: a4000, Candidate: "live-3", Tier: "ampere",
					Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost while running"), StartupSeconds: 33, StartedAt: started}},
			want: Outputs{PaidPath: "paid", Image: "img@sha256:1", Attempts: "3", RejectedCostUSD: "0.0100",
				RejectedAttempts: cost.FormatAttempts([]cost.Attempt{rejected}), RunnerLabel: "lbl", GPUType: a4000,
				Candidate: "live-3", Tier: "ampere", PricePerHour: "0.25", StartupSeconds: "33", StartedAt: "2026-03-04T04:06:07Z", PodID: "p3"},
		},
		{
			name: "accepted at an unknown price, start unknown",
			res:  Result{Decision: DecisionPaid, Attempts: []cost.Attempt{accepted}, Accepted: &Accepted{PodID: "p3", StartupSeconds: 0}},
			want: Outputs{PaidPath: "paid", Attempts: "1", RejectedCostUSD: "0.0000", RejectedAttempts: cost.FormatAttempts(nil), StartupSeconds: "0", PodID: "p3"},
		},
		{
			name: "failed with a kept pod of unknown cost",
			res: Result{Decision: DecisionPaid, RetainedPodIDs: []string{"p1", "p2"}, RetentionArtifact: "keep-1",
				Attempts: []cost.Attempt{rejected, {Number: 2, PodID: "p2", Outcome: cost.OutcomeRejected}}},
			want: Outputs{PaidPath: "paid", Attempts: "2", RejectedCostUSD: "0.0100+unknown",
				RejectedAttempts: cost.FormatAttempts([]cost.Attempt{rejected, {Number: 2, PodID: "p2", Outcome: cost.OutcomeRejected}}),
				RetainedPodIDs:   "p1,p2", RetentionArtifactName: "keep-1"},
		},
		{
			name: "reused",
			res:  Result{Decision: DecisionReused, ReusedCheckURL: "https://example/check/1"},
			want: Outputs{PaidPath: "reused", ReusedCheckURL: "https://example/check/1", Attempts: "0", RejectedCostUSD: "0.0000",
				RejectedAttempts: cost.FormatAttempts(nil)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(tc.res.Outputs(), tc.want))
		})
	}
}

// TestSummaryShapes: the job summary shows each part only when there is
// something to show, and says how many rejected pods have an unknown cost.
func TestSummaryShapes(t *testing.T) {
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: l4, PodID: "p1", Outcome: cost.OutcomeRejected,
		Price: cost.KnownPrice(money.PerHour(3.6), "catalog list price"), Seconds: cost.KnownSeconds(10), Reason: "EXITED"}
	accepted := cost.Attempt{Number: 2, Candidate: "live-2", GPU: a4000, PodID: "p2", Outcome: cost.OutcomeAccepted,
		Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost while running"), Seconds: cost.KnownSeconds(33)}
	for _, tc := range []struct {
		name    string
		res     Result
		runErr  error
		want    []string
		notWant []string
	}{
		{
			name: "reused: the evidence only", res: Result{Decision: DecisionReused, ReusedCheckURL: "https://example/check/1", Image: "img"},
			want:    []string{"**Reused**: this tested ref already passed. No pod was created.\n\nEvidence: https://example/check/1\n"},
			notWant: []string{"Runner image", cost.Disclaimer},
		},
		{
			name: "nothing tried", res: Result{Decision: DecisionPaid}, runErr: errors.New("boom"),
			want:    []string{"**Failed**: boom\n\n", cost.Disclaimer},
			notWant: []string{"Runner image", "| #", "Rejected candidates cost", "Kept for inspection", "<details>", "[!WARNING]"},
		},
		{
			name: "skipped", res: Result{Decision: DecisionSkipped, Image: "img@sha256:1"},
			want: []string{"**Skipped**: the pull request carries `gpu-validated-locally`", "Runner image: `img@sha256:1`"},
		},
		{
			name: "accepted after a rejection",
			res: Result{Decision: DecisionPaid, Attempts: []cost.Attempt{rejected, accepted},
				Accepted: &Accepted{PodID: "p2", GPU: a4000, Candidate: "live-2", Tier: "ampere", Price: accepted.Price, RunnerLabel: "lbl", StartupSeconds: 33}},
			want: []string{"online 33 s after the pod started, after 2 attempt(s).", "| 33 to acceptance | $0.0023 to acceptance |",
				"Rejected candidates cost " + cost.KnownMoney(money.FromDollars(0.01)).String() + ".\n", "| EXITED | 10 | $0.0100 |"},
			notWant: []string{"unknown cost", "**Failed**"},
		},
		{
			name: "a rejected pod of unknown cost, kept pods, warnings",
			res: Result{Decision: DecisionPaid, RetainedPodIDs: []string{"pb", "pa"}, Warnings: []string{"careful"},
				Attempts: []cost.Attempt{rejected, {Number: 2, Candidate: "live-2", GPU: a4000, PodID: "pb", Outcome: cost.OutcomeRejected}}},
			runErr: errors.New("exhausted"),
			want: []string{"plus 1 with unknown cost.\n", "**Kept for inspection (still billing):** pa, pb\n",
				"\n> [!WARNING]\n> careful\n", "| live-2 | NVIDIA RTX A4000 | pb | unknown | rejected | - |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.res.Summary(tc.runErr)
			for _, w := range tc.want {
				assert.Check(t, is.Contains(got, w))
			}
			for _, w := range tc.notWant {
				assert.Check(t, !strings.Contains(got, w), "%q in:\n%s", w, got)
			}
		})
	}
}
