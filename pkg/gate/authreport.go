package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
)

// AuthorizeOutputs are the authorize action's outputs, one field per output
// (written by actionio.WriteOutputs).
type AuthorizeOutputs struct {
	Decision       string `output:"decision"`
	Reason         string `output:"reason"`
	TestedRef      string `output:"tested-ref"`
	HeadSHA        string `output:"head-sha"`
	GateKind       string `output:"gate-kind"`
	ReusedCheckURL string `output:"reused-check-url"`
	// TreeKey and GateCheckRunID carry the tested-tree key and the in-progress gate to provision and the gate.
	TreeKey        string `output:"tree-key"`
	GateCheckRunID string `output:"gate-check-run-id"`
	// LaneImage is the runner image digest the tree key was made with (set by the action).
	LaneImage string `output:"lane-image"`
}

// Outputs are the authorize action's outputs.
func (a Authorization) Outputs() AuthorizeOutputs {
	return AuthorizeOutputs{Decision: string(a.Outcome), Reason: a.Reason, TestedRef: a.TestedRef, HeadSHA: a.HeadSHA,
		GateKind: string(a.Kind), ReusedCheckURL: a.ReusedCheckURL, TreeKey: a.treeKey(), GateCheckRunID: a.gateCheckRunID()}
}

func (a Authorization) treeKey() string {
	if a.TreeKey == nil {
		return ""
	}
	return a.TreeKey.String()
}

// gateCheckRunID is "" (not "0") when no in-progress gate was published.
func (a Authorization) gateCheckRunID() string {
	if a.GateCheckRunID == 0 {
		return ""
	}
	return fmt.Sprint(a.GateCheckRunID)
}

// Summary renders the authorize job summary: what was decided and why, or,
// when err is Authorize's error, why nothing may be spent.
func (a Authorization) Summary(err error) string {
	var b strings.Builder
	b.WriteString("## GPU run authorization\n\n")
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(&b, "**Refused**: %s.\n\nNothing was spent: no pod is created for this trigger.\n", refused.Reason)
		return b.String()
	case err != nil:
		fmt.Fprintf(&b, "**Not authorized**: the trigger could not be verified (%v).\n\nNothing was spent; re-run the job once GitHub answers.\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "**Decision: %s** — %s.\n\n", a.Outcome, a.Reason)
	tb := mdtable.New("", "")
	tb.Row("tested ref", code(a.TestedRef))
	tb.Row("head", code(a.HeadSHA))
	if f := a.ForkApproval; f != nil {
		// A fork's code runs on the pod only because this person approved this SHA.
		how := "dispatched with `approved-fork-sha`"
		if f.Via == ApprovedByLabel {
			how = "added the label " + code(f.Label)
		}
		row, what := "fork approval", ""
		if a.Teammate != "" {
			row, what = "approval", " (PR author "+a.Teammate+")"
		}
		tb.Row(row, fmt.Sprintf("%s (%s) %s at %s%s; any push since voids it", f.Approver, a.ApproverRole, how, code(f.SHA), what))
	}
	switch a.Outcome {
	case OutcomeReuse:
		tb.Row("earlier gate", a.ReusedCheckURL)
	case OutcomeSkip:
		gate := "none (nothing is published)"
		switch {
		case a.Kind != "":
			gate = code(string(a.Kind))
		case a.Following != 0:
			gate = fmt.Sprintf("none by this run: follow gate %d waits for in-progress gate %d of the lane testing the same tree, whose gate job completes it", a.FollowGateID, a.Following)
		}
		tb.Row("gate to publish", gate)
	}
	b.WriteString(tb.String())
	return b.String()
}

// code shows a ref, SHA or label as a code span, "-" when there is none.
func code(s string) string {
	if s == "" {
		return "-"
	}
	return mdtable.Code(s)
}
