package lanes

// The lanes as the workflows wire them: a README caller's `with:` and
// gpu-lane.yml's step `with:` blocks are evaluated, expression by expression,
// the way the Actions runner does, from the event, the inputs, the needs and
// the secrets, so a test drives the real binaries with exactly the inputs the
// documented caller and the shipped lane give them. Only the endpoints of the
// simulated cloud (API URLs) are added on top.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
)

// wfJob is the part of a workflow job these tests read.
type wfJob struct {
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]any    `yaml:"with"`
	Steps []wfStep          `yaml:"steps"`
	Env   map[string]string `yaml:"env"`
}

type wfStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
}

type workflow struct {
	On   map[string]any   `yaml:"on"`
	Jobs map[string]wfJob `yaml:"jobs"`
}

func parseWorkflow(t *testing.T, text string) workflow {
	t.Helper()
	var wf workflow
	assert.NilError(t, yaml.Unmarshal([]byte(text), &wf))
	return wf
}

// gpuLane is .github/workflows/gpu-lane.yml as shipped.
func gpuLane(t *testing.T) workflow {
	t.Helper()
	raw, err := os.ReadFile("../../.github/workflows/gpu-lane.yml")
	assert.NilError(t, err)
	return parseWorkflow(t, string(raw))
}

// readmeCaller is the workflows page's first YAML block whose first line is "# <file>".
func readmeCaller(t *testing.T, file string) workflow {
	t.Helper()
	for _, text := range docYAMLBlocks(t, docWorkflows) {
		if strings.HasPrefix(text, "# "+file) {
			return parseWorkflow(t, text)
		}
	}
	t.Fatalf("%s has no caller %s", docWorkflows, file)
	return workflow{}
}

// step is the step of job named name (or with that id).
func (wf workflow) step(t *testing.T, job, name string) wfStep {
	t.Helper()
	for _, s := range wf.Jobs[job].Steps {
		if s.Name == name || s.ID == name {
			return s
		}
	}
	t.Fatalf("job %s has no step %s", job, name)
	return wfStep{}
}

// callInputs are the inputs a caller's job hands the called workflow: its
// `with:` evaluated, then the called workflow's defaults for the rest.
func callInputs(t *testing.T, caller wfJob, called workflow, ctx map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range caller.With {
		out[k] = evalValue(t, fmt.Sprint(v), ctx)
	}
	call, _ := called.On["workflow_call"].(map[string]any)
	inputs, _ := call["inputs"].(map[string]any)
	for name, spec := range inputs {
		m, _ := spec.(map[string]any)
		if _, given := out[name]; !given {
			out[name] = m["default"]
		}
		if m["type"] == "number" { // a number input arrives as a number
			if s, ok := out[name].(string); ok && s != "" {
				f, err := strconv.ParseFloat(s, 64)
				assert.NilError(t, err, "input %s = %q is not a number", name, s)
				out[name] = f
			}
		}
	}
	return out
}

// stepInputs evaluates a step's `with:` into the strings the runner passes.
func stepInputs(t *testing.T, s wfStep, ctx map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range s.With {
		out[k] = str(evalValue(t, v, ctx))
	}
	return out
}

// evalValue renders a value with ${{ }} expressions: a value that is one
// expression keeps its type, any other is a string.
func evalValue(t *testing.T, v string, ctx map[string]any) any {
	t.Helper()
	trimmed := strings.TrimSpace(v)
	if strings.HasPrefix(trimmed, "${{") && strings.HasSuffix(trimmed, "}}") && strings.Count(trimmed, "${{") == 1 {
		return evalExpr(t, trimmed[3:len(trimmed)-2], ctx)
	}
	var out strings.Builder
	rest := v
	for {
		start := strings.Index(rest, "${{")
		if start < 0 {
			out.WriteString(rest)
			return out.String()
		}
		out.WriteString(rest[:start])
		end := strings.Index(rest[start:], "}}")
		assert.Assert(t, end >= 0, "unterminated expression in %q", v)
		out.WriteString(str(evalExpr(t, rest[start+3:start+end], ctx)))
		rest = rest[start+end+2:]
	}
}

// evalCondition is a job's or step's `if:` (with or without ${{ }}).
func evalCondition(t *testing.T, cond string, ctx map[string]any) bool {
	t.Helper()
	cond = strings.TrimSpace(cond)
	if strings.HasPrefix(cond, "${{") {
		cond = strings.TrimSuffix(strings.TrimPrefix(cond, "${{"), "}}")
	}
	return truthy(evalExpr(t, cond, ctx))
}

func evalExpr(t *testing.T, expr string, ctx map[string]any) any {
	t.Helper()
	node, err := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(expr + "}}"))
	assert.Assert(t, err == nil, "expression %q: %v", expr, err)
	return evalNode(t, node, ctx)
}

// evalNode evaluates the expression forms the workflows use; any other form
// fails the test, so the evaluator never guesses.
func evalNode(t *testing.T, n actionlint.ExprNode, ctx map[string]any) any {
	t.Helper()
	switch n := n.(type) {
	case *actionlint.StringNode:
		return n.Value
	case *actionlint.IntNode:
		return float64(n.Value)
	case *actionlint.BoolNode:
		return n.Value
	case *actionlint.NullNode:
		return nil
	case *actionlint.VariableNode:
		return lookup(ctx, n.Name)
	case *actionlint.ObjectDerefNode:
		m, _ := evalNode(t, n.Receiver, ctx).(map[string]any)
		return lookup(m, n.Property)
	case *actionlint.IndexAccessNode:
		list, _ := evalNode(t, n.Operand, ctx).([]any)
		i, _ := evalNode(t, n.Index, ctx).(float64)
		if int(i) < len(list) {
			return list[int(i)]
		}
		return nil
	case *actionlint.NotOpNode:
		return !truthy(evalNode(t, n.Operand, ctx))
	case *actionlint.LogicalOpNode:
		l := evalNode(t, n.Left, ctx)
		if (n.Kind == actionlint.LogicalOpNodeKindOr) == truthy(l) {
			return l
		}
		return evalNode(t, n.Right, ctx)
	case *actionlint.CompareOpNode:
		l, r := evalNode(t, n.Left, ctx), evalNode(t, n.Right, ctx)
		switch n.Kind {
		case actionlint.CompareOpNodeKindEq:
			return looseEqual(l, r)
		case actionlint.CompareOpNodeKindNotEq:
			return !looseEqual(l, r)
		}
	case *actionlint.FuncCallNode:
		switch strings.ToLower(n.Callee) {
		case "always", "success":
			return true
		case "cancelled":
			return false
		}
	}
	t.Fatalf("expression form %T is not evaluated by this test; extend evalNode", n)
	return nil
}

// lookup reads a property case-insensitively, as contexts are read.
func lookup(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// looseEqual compares as the runner does for the forms used: null equals
// null only, strings case-insensitively, numbers by value.
func looseEqual(l, r any) bool {
	switch {
	case l == nil || r == nil:
		return l == nil && r == nil
	}
	ls, lok := l.(string)
	rs, rok := r.(string)
	if lok && rok {
		return strings.EqualFold(ls, rs)
	}
	return fmt.Sprint(l) == fmt.Sprint(r)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return true
}

// str renders a value as the runner passes it to an action: null is "".
func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}
