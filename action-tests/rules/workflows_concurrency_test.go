package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// evalGroup renders a concurrency group the way the Actions runner does for
// the expressions a workflow-level group may use: context lookups (missing
// ones are null, rendered ""), string literals, || and &&.
func evalGroup(t *testing.T, group string, contexts map[string]string) string {
	t.Helper()
	var out strings.Builder
	rest := group
	for {
		start := strings.Index(rest, "${{")
		if start < 0 {
			out.WriteString(rest)
			return out.String()
		}
		out.WriteString(rest[:start])
		rest = rest[start+3:]
		end := strings.Index(rest, "}}")
		assert.Assert(t, end >= 0, "unterminated expression in %q", group)
		node, perr := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(rest[:end+2]))
		assert.Assert(t, perr == nil, "group %q: %v", group, perr)
		out.WriteString(evalExpr(t, node, contexts))
		rest = rest[end+2:]
	}
}

func evalExpr(t *testing.T, n actionlint.ExprNode, contexts map[string]string) string {
	t.Helper()
	switch n := n.(type) {
	case *actionlint.StringNode:
		return n.Value
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode:
		return contexts[exprPath(t, n)]
	case *actionlint.LogicalOpNode:
		l := evalExpr(t, n.Left, contexts)
		if (n.Kind == actionlint.LogicalOpNodeKindOr) == (l != "") {
			return l
		}
		return evalExpr(t, n.Right, contexts)
	}
	t.Fatalf("concurrency group uses %T, which this check does not evaluate; extend evalExpr", n)
	return ""
}

func exprPath(t *testing.T, n actionlint.ExprNode) string {
	switch n := n.(type) {
	case *actionlint.VariableNode:
		return strings.ToLower(n.Name)
	case *actionlint.ObjectDerefNode:
		return exprPath(t, n.Receiver) + "." + strings.ToLower(n.Property)
	}
	t.Fatalf("concurrency group dereferences %T, which this check does not evaluate", n)
	return ""
}

// metaRenderByHead renders a workflow-level concurrency group for a run on
// head: two deliveries for one head must share it, two heads must not.
func metaRenderByHead(t *testing.T, group, head string, run int) string {
	ctx := map[string]string{
		"github.run_id": fmt.Sprint(run), "github.run_number": fmt.Sprint(run % 1000), "github.run_attempt": "1",
		"github.sha": fmt.Sprintf("%040x", run), "github.ref": "refs/heads/main", "github.event_name": "workflow_run",
		"github.repository": cloud.Repository, "github.workflow": "CI", "inputs.pr-number": "7", "inputs.head-sha": head,
		"github.event.workflow_run.head_sha": head,
	}
	return evalGroup(t, group, ctx)
}

// metaCheckGroupByHead checks that group serialises lanes per head.
func metaCheckGroupByHead(t *testing.T, name, group string) {
	t.Helper()
	headA, headB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	assert.Check(t, is.Equal(metaRenderByHead(t, group, headA, 1001), metaRenderByHead(t, group, headA, 2002)),
		"%s: group %q differs between two runs for the same head, so a repeated delivery pays again", name, group)
	assert.Check(t, metaRenderByHead(t, group, headA, 1001) != metaRenderByHead(t, group, headB, 1001),
		"%s: group %q is the same for different heads, so one head's lane waits for another's", name, group)
}

// metaPublishesGate reports whether a workflow runs the lane to its gate (a
// step uses the gate action), rather than being one part of it.
func metaPublishesGate(wf metaWorkflow) bool {
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if m := metaActionRefRE.FindStringSubmatch(st.Uses); m != nil && m[1] == "gate" {
				return true
			}
		}
	}
	return false
}

// TestMetaReusableLaneGroupsByHead: a reusable workflow that takes the PR head
// (input head-sha) and runs the lane to its gate serialises its lanes per
// head: two deliveries of the same head (two workflow runs) share one
// concurrency group — the second waits and reuses the first's gate instead of
// paying again — and different heads do not wait for each other. A group keyed
// on the run id pays twice. A part of the lane (gpu-lane-authorize.yml, whose
// gate is published by another part) declares none: its caller holds the group
// over every part, and a called workflow in its caller's group is cancelled
// by GitHub as a deadlock (TestReadmeOwnJobCallerGroupsByHead checks the caller).
func TestMetaReusableLaneGroupsByHead(t *testing.T) {
	checked, parts := 0, 0
	for _, name := range metaSortedKeys(metaWorkflowFiles(t)) {
		wf := metaParseWorkflow(t, name, metaWorkflowFiles(t)[name])
		on, _ := wf.On.(map[string]any)
		call, _ := on["workflow_call"].(map[string]any)
		inputs, _ := call["inputs"].(map[string]any)
		if _, ok := inputs["head-sha"]; !ok {
			continue
		}
		group, _ := metaGroup(wf.Concurrency)
		if !metaPublishesGate(wf) {
			parts++
			assert.Check(t, wf.Concurrency == nil, "%s is a part of the lane but declares workflow concurrency %v: in its caller's group GitHub cancels it as a deadlock", name, wf.Concurrency)
			continue
		}
		checked++
		assert.Check(t, group != "", "%s takes head-sha but has no workflow concurrency group", name)
		metaCheckGroupByHead(t, name, group)
	}
	assert.Check(t, checked > 0, "no reusable workflow takes head-sha: is gpu-lane.yml still one?")
	assert.Check(t, parts > 0, "no part of the lane takes head-sha: is gpu-lane-authorize.yml still one?")
}
