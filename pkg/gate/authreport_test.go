package gate

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/gatecheck"
)

// TestAuthorizationSummaryKeepsEachValueInItsCell: the approval label is the
// workflow's input, so a pipe or a backtick in it must stay inside its code
// span and its cell; every row keeps the table's two columns.
func TestAuthorizationSummaryKeepsEachValueInItsCell(t *testing.T) {
	a := Authorization{Outcome: OutcomeRun, Reason: "approved fork", TestedRef: "abc", HeadSHA: "abc",
		ForkApproval: &ForkApproval{Via: ApprovedByLabel, SHA: "abc", Approver: "octo", Label: "gpu|`ok`"}}
	summary := a.Summary(nil)
	assert.Check(t, is.Contains(summary, "added the label `` gpu\\|`ok` `` at `abc`"))
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "|") {
			assert.Check(t, is.Equal(strings.Count(line, "|")-strings.Count(line, `\|`), 3), "row %q", line)
		}
	}
}

func TestAuthorizationReport(t *testing.T) {
	cases := []struct {
		name string
		a    Authorization
		err  error
	}{
		{name: "run", a: Authorization{Outcome: OutcomeRun, TestedRef: merge, HeadSHA: head, Reason: "no earlier gate for tested ref " + merge + ": running the paid path"}},
		{name: "reuse", a: Authorization{Outcome: OutcomeReuse, TestedRef: merge, HeadSHA: head, Reason: "gate 99 already passed tested ref " + merge + " (paid): reusing it",
			ReusedCheckURL: "https://github.com/o/r/runs/99", ReusedCheckID: 99}},
		{name: "skip-not-required", a: Authorization{Outcome: OutcomeSkip, Kind: gatecheck.KindNotRequired, TestedRef: merge, HeadSHA: head, Reason: "PR #7 changes 1 file(s), none under the configured GPU paths"}},
		{name: "skip-label", a: Authorization{Outcome: OutcomeSkip, HeadSHA: head, Reason: "PR #7 is labelled gpu-validated-locally: the local relay publishes the gate"}},
		{name: "run-fork-approved-by-label", a: Authorization{Outcome: OutcomeRun, TestedRef: merge, HeadSHA: head,
			Reason:       "fork PR approved (label gpu-approved added by bob at head " + head + "); no earlier gate for tested ref " + merge + ": running the paid path",
			ForkApproval: &ForkApproval{Via: ApprovedByLabel, SHA: head, Approver: "bob", Label: ApprovalLabel}, ApproverRole: "admin"}},
		{name: "run-fork-approved-by-dispatch", a: Authorization{Outcome: OutcomeRun, TestedRef: merge, HeadSHA: head,
			Reason:       "fork PR approved (dispatch by alice with approved-fork-sha " + head + "); no earlier gate for tested ref " + merge + ": running the paid path",
			ForkApproval: &ForkApproval{Via: ApprovedByDispatch, SHA: head, Approver: "alice"}, ApproverRole: "maintain"}},
		{name: "refused", err: refuse("PR #7 comes from mallory/gpu-project, not from o/r: a fork PR runs on a paid GPU only at a head an admin or maintainer approved " +
			"(dispatch the lane with approved-fork-sha set to the reviewed head, or add the label gpu-approved)")},
		{name: "refused-push-after-approval", err: refuse("PR #7's head is %s, not the approved %s: a push after the approval voids it; "+
			"an admin or maintainer must approve the new head", merge2, head)},
		{name: "github-error", err: errors.New("read PR #7: 502 Bad Gateway")},
	}
	var all string
	for _, tc := range cases {
		all += "=== " + tc.name + "\n" + tc.a.Summary(tc.err) + "\n"
		if tc.err == nil {
			out := tc.a.Outputs()
			assert.Check(t, is.Equal(out.Decision, string(tc.a.Outcome)))
			assert.Check(t, is.Equal(out.GateKind, string(tc.a.Kind)))
			assert.Check(t, is.Equal(out.TestedRef, tc.a.TestedRef))
			assert.Check(t, is.Equal(out.ReusedCheckURL, tc.a.ReusedCheckURL))
		}
	}
	golden.Assert(t, all, "authorize-summary.golden")
}
