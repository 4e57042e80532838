package provision

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
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
