package gate

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
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
