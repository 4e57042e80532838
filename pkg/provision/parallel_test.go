package provision

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/plan"
)

// A candidate whose pod lost its slot under max_concurrent_pods is tried
// again right after itself, under a number after every other candidate's (a
// new pod name and label), while the plan stays within
// max_provision_attempts; at the limit the next candidate follows instead.
func TestRetryAfterSlotPutsTheCandidateAgainUnderANewNumber(t *testing.T) {
	three := []plan.Candidate{{N: 1, Name: "live-1"}, {N: 2, Name: "live-2"}, {N: 3, Name: "live-3"}}
	for _, tt := range []struct {
		name        string
		i, attempts int
		want        []int // the plan's candidate numbers after
		wantLog     string
	}{
		{name: "room for one more", i: 1, attempts: 4, want: []int{1, 2, 4, 3}, wantLog: "candidate live-2 lost its slot: trying it again as candidate 4 once a slot is free"},
		{name: "the first candidate", i: 0, attempts: 5, want: []int{1, 4, 2, 3}, wantLog: "trying it again as candidate 4"},
		{name: "at max_provision_attempts", i: 1, attempts: 3, want: []int{1, 2, 3}, wantLog: "max_provision_attempts 3 reached, trying the next candidate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs := &recorder{}
			r := &run{deps: Deps{Observer: obs}, cfg: &config.Config{MaxProvisionAttempts: tt.attempts},
				res: Result{Plan: plan.Plan{Candidates: append([]plan.Candidate(nil), three...)}}}

			r.retryAfterSlot(tt.i)

			var got []int
			for _, c := range r.res.Plan.Candidates {
				got = append(got, c.N)
			}
			assert.Check(t, is.DeepEqual(got, tt.want))
			assert.Check(t, is.Contains(obs.log(), tt.wantLog))
		})
	}
}
