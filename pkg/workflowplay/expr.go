package workflowplay

// GitHub Actions expressions (${{ … }}), evaluated the way the runner does
// for what the suite's workflows use: contexts, property and index access,
// literals, !, ==, !=, <, <=, >, >=, && and || (which yield an operand, not a
// boolean), and the functions format, toJSON, fromJSON, contains, startsWith,
// endsWith and the status functions. Parsing is actionlint's. Values are
// JSON-like: nil, bool, float64, string, map[string]any and []any.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// Contexts are the expression contexts by name (github, inputs, needs, jobs,
// steps, secrets, vars), plus the job's status for the status functions.
type Contexts struct {
	Values map[string]any
	// Status answers success(), failure() and cancelled(); always() is true.
	Status Status
}

// Status is what the status functions answer where the expression is evaluated.
type Status struct{ Success, Failure, Cancelled bool }

// Eval evaluates one expression, written without ${{ }}.
func Eval(expr string, ctx Contexts) (any, error) {
	node, perr := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(expr + "}}"))
	if perr != nil {
		return nil, fmt.Errorf("expression %q: %s", expr, perr.Message)
	}
	return eval(node, ctx)
}

// Interpolate replaces each ${{ … }} in s by its value as a string.
func Interpolate(s string, ctx Contexts) (string, error) {
	var out strings.Builder
	for {
		start := strings.Index(s, "${{")
		if start < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		out.WriteString(s[:start])
		end := closing(s[start:])
		if end < 0 {
			return "", fmt.Errorf("unterminated expression in %q", s)
		}
		v, err := Eval(s[start+3:start+end], ctx)
		if err != nil {
			return "", err
		}
		out.WriteString(exprString(v))
		s = s[start+end+2:]
	}
}

// closing is the index of the }} that ends the expression s starts with,
// outside its single-quoted strings (” is a quote inside one); -1 if none.
func closing(s string) int {
	quoted := false
	for i := 3; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted
		case !quoted && strings.HasPrefix(s[i:], "}}"):
			return i
		}
	}
	return -1
}

// UsesStatus reports whether a condition calls a status function; without
// one, GitHub evaluates it as success() && (condition).
func UsesStatus(cond string) bool {
	for _, f := range []string{"success(", "failure(", "cancelled(", "always("} {
		if strings.Contains(strings.ReplaceAll(cond, " ", ""), f) {
			return true
		}
	}
	return false
}

// Condition evaluates a job's or step's if: as GitHub does: empty means
// success(), and a condition without a status function is ANDed with it.
func Condition(cond string, ctx Contexts) (bool, error) {
	cond = strings.TrimSpace(cond)
	if c, ok := strings.CutPrefix(cond, "${{"); ok {
		cond = strings.TrimSpace(strings.TrimSuffix(c, "}}"))
	}
	if cond == "" {
		return ctx.Status.Success, nil
	}
	v, err := Eval(cond, ctx)
	if err != nil {
		return false, err
	}
	if !UsesStatus(cond) && !ctx.Status.Success {
		return false, nil
	}
	return truthy(v), nil
}

func eval(n actionlint.ExprNode, ctx Contexts) (any, error) {
	switch n := n.(type) {
	case *actionlint.NullNode:
		return nil, nil
	case *actionlint.BoolNode:
		return n.Value, nil
	case *actionlint.IntNode:
		return float64(n.Value), nil
	case *actionlint.FloatNode:
		return n.Value, nil
	case *actionlint.StringNode:
		return n.Value, nil
	case *actionlint.VariableNode:
		return property(ctx.Values, n.Name), nil
	case *actionlint.ObjectDerefNode:
		recv, err := eval(n.Receiver, ctx)
		return property(recv, n.Property), err
	case *actionlint.IndexAccessNode:
		return evalIndex(n, ctx)
	case *actionlint.NotOpNode:
		v, err := eval(n.Operand, ctx)
		return !truthy(v), err
	case *actionlint.LogicalOpNode:
		l, err := eval(n.Left, ctx)
		if err != nil || (n.Kind == actionlint.LogicalOpNodeKindOr) == truthy(l) {
			return l, err
		}
		return eval(n.Right, ctx)
	case *actionlint.CompareOpNode:
		return evalCompare(n, ctx)
	case *actionlint.FuncCallNode:
		return evalCall(n, ctx)
	}
	return nil, fmt.Errorf("expression node %T is not evaluated here", n)
}

func evalIndex(n *actionlint.IndexAccessNode, ctx Contexts) (any, error) {
	recv, err := eval(n.Operand, ctx)
	if err != nil {
		return nil, err
	}
	idx, err := eval(n.Index, ctx)
	if err != nil {
		return nil, err
	}
	switch r := recv.(type) {
	case map[string]any:
		return property(r, exprString(idx)), nil
	case []any:
		if i, ok := idx.(float64); ok && i >= 0 && int(i) < len(r) {
			return r[int(i)], nil
		}
	}
	return nil, nil
}

// property reads a property case-insensitively, as contexts are; anything
// but an object has none (null).
func property(v any, name string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if x, ok := m[name]; ok {
		return x
	}
	for k, x := range m {
		if strings.EqualFold(k, name) {
			return x
		}
	}
	return nil
}

func evalCompare(n *actionlint.CompareOpNode, ctx Contexts) (any, error) {
	l, err := eval(n.Left, ctx)
	if err != nil {
		return nil, err
	}
	r, err := eval(n.Right, ctx)
	if err != nil {
		return nil, err
	}
	switch n.Kind {
	case actionlint.CompareOpNodeKindEq:
		return looseEqual(l, r), nil
	case actionlint.CompareOpNodeKindNotEq:
		return !looseEqual(l, r), nil
	}
	a, b := number(l), number(r)
	if ls, ok := l.(string); ok {
		if rs, ok := r.(string); ok {
			a, b = float64(strings.Compare(strings.ToLower(ls), strings.ToLower(rs))), 0
		}
	}
	switch n.Kind {
	case actionlint.CompareOpNodeKindLess:
		return a < b, nil
	case actionlint.CompareOpNodeKindLessEq:
		return a <= b, nil
	case actionlint.CompareOpNodeKindGreater:
		return a > b, nil
	case actionlint.CompareOpNodeKindGreaterEq:
		return a >= b, nil
	}
	return nil, fmt.Errorf("comparison %v is not evaluated here", n.Kind)
}

// looseEqual is GitHub's ==: strings case-insensitively, values of different
// types as numbers (null 0, true 1, "" 0, other text NaN).
func looseEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.EqualFold(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case nil:
		if b == nil {
			return true
		}
	case map[string]any, []any:
		return false
	}
	return number(a) == number(b)
}

func number(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return math.NaN()
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// exprString is a value as the runner writes it into a string.
func exprString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case []any:
		return "Array"
	}
	return "Object"
}

func evalCall(n *actionlint.FuncCallNode, ctx Contexts) (any, error) {
	args := make([]any, 0, len(n.Args))
	for _, a := range n.Args {
		v, err := eval(a, ctx)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	str := func(i int) string { return exprString(args[i]) }
	switch f := strings.ToLower(n.Callee); {
	case f == "success" || f == "failure" || f == "cancelled" || f == "always":
		return map[string]bool{"success": ctx.Status.Success, "failure": ctx.Status.Failure, "cancelled": ctx.Status.Cancelled, "always": true}[f], nil
	case f == "tojson" && len(args) == 1:
		b, err := json.MarshalIndent(args[0], "", "  ")
		return string(b), err
	case f == "fromjson" && len(args) == 1:
		var v any
		if err := json.Unmarshal([]byte(str(0)), &v); err != nil {
			return nil, fmt.Errorf("fromJSON(%.80q): %w", str(0), err)
		}
		return v, nil
	case f == "format" && len(args) >= 1:
		return format(str(0), args[1:])
	case f == "contains" && len(args) == 2:
		if list, ok := args[0].([]any); ok {
			for _, x := range list {
				if looseEqual(x, args[1]) {
					return true, nil
				}
			}
			return false, nil
		}
		return strings.Contains(strings.ToLower(str(0)), strings.ToLower(str(1))), nil
	case f == "startswith" && len(args) == 2:
		return strings.HasPrefix(strings.ToLower(str(0)), strings.ToLower(str(1))), nil
	case f == "endswith" && len(args) == 2:
		return strings.HasSuffix(strings.ToLower(str(0)), strings.ToLower(str(1))), nil
	}
	return nil, fmt.Errorf("function %s/%d is not evaluated here", n.Callee, len(args))
}

// format is GitHub's format(): {N} is argument N, {{ and }} are braces.
func format(f string, args []any) (string, error) {
	var out strings.Builder
	for i := 0; i < len(f); i++ {
		switch {
		case strings.HasPrefix(f[i:], "{{"):
			out.WriteByte('{')
			i++
		case strings.HasPrefix(f[i:], "}}"):
			out.WriteByte('}')
			i++
		case f[i] == '{':
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("format %q: unclosed {", f)
			}
			n, err := strconv.Atoi(f[i+1 : i+end])
			if err != nil || n < 0 || n >= len(args) {
				return "", fmt.Errorf("format %q: no argument %q", f, f[i+1:i+end])
			}
			out.WriteString(exprString(args[n]))
			i += end
		case f[i] == '}':
			return "", fmt.Errorf("format %q: unescaped }", f)
		default:
			out.WriteByte(f[i])
		}
	}
	return out.String(), nil
}
