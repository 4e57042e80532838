package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// graphQLAllowed are the product files that may name a GraphQL endpoint,
// relative to the repository root, each with why. RunPod's GraphQL API is
// to be retired (January 2027): nothing of the lane may depend on it.
var graphQLAllowed = map[string]string{
	"pkg/runpod/balance.go": "doctor's optional balance line (REST v2 has no balance)",
	"pkg/ghapi/history.go":  "GitHub's GraphQL API (a pull request's head history), not RunPod's",
}

// graphQLSkipped are the trees the rule does not read: the simulators serve
// GraphQL, they never send it.
var graphQLSkipped = []string{"pkg/sim"}

// TestNoGraphQLInTheLane keeps issue 37's rule: no product code (the non-test
// Go files under pkg/ and actions/) names a GraphQL endpoint in a string
// literal, except the files of graphQLAllowed; and RunPod's one GraphQL read
// (the account balance) is called only by doctor. A runtime check beside it
// (action-tests/lanes: TestNoGraphQLInTheLane) runs the lane on the simulated
// cloud and finds no /graphql request.
func TestNoGraphQLInTheLane(t *testing.T) {
	var found, balanceCallers []string
	walkProductGo(t, graphQLSkippedTree, func(rel string, src []byte) error {
		lits, calls, err := graphQLUses(rel, src)
		if err != nil {
			return err
		}
		if _, ok := graphQLAllowed[rel]; !ok {
			found = append(found, lits...)
		}
		if calls > 0 && !strings.HasPrefix(rel, "pkg/doctor/") && !strings.HasPrefix(rel, "pkg/runpod/") {
			balanceCallers = append(balanceCallers, rel)
		}
		return nil
	})
	assert.Check(t, len(found) == 0, "product code names a GraphQL endpoint (REST v2 only against RunPod; doctor's balance line is the one exception):\n  %s",
		strings.Join(found, "\n  "))
	assert.Check(t, len(balanceCallers) == 0, "RunPod's GraphQL balance read is called outside doctor: %v", balanceCallers)
}

// graphQLSkippedTree reports whether rel (slash-separated) is a tree the rule skips.
func graphQLSkippedTree(rel string) bool {
	for _, skip := range graphQLSkipped {
		if rel == skip {
			return true
		}
	}
	return false
}

// graphQLUses returns the string literals of src that name a GraphQL
// endpoint ("file:line: literal") and how many calls of GetBalance (RunPod's
// GraphQL balance read) it makes.
func graphQLUses(rel string, src []byte) (lits []string, balanceCalls int, _ error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, err
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING && namesGraphQLEndpoint(n.Value) {
				lits = append(lits, fset.Position(n.Pos()).String()+": "+n.Value)
			}
		case *ast.SelectorExpr:
			if n.Sel.Name == "GetBalance" {
				balanceCalls++
			}
		}
		return true
	})
	return lits, balanceCalls, nil
}

// namesGraphQLEndpoint reports whether a string literal (quotes included)
// names a GraphQL endpoint: a /graphql path, or the bare word as a path part
// built beside it. Prose that names the API ("RunPod's GraphQL API") is no
// request and passes.
func namesGraphQLEndpoint(lit string) bool {
	v := strings.ToLower(strings.Trim(lit, "`\""))
	return strings.Contains(v, "/graphql") || v == "graphql"
}

// The rule finds a GraphQL path however it is spelled in a literal, and a
// balance read wherever it is called; comments and other strings pass.
func TestGraphQLUsesFindsLiteralsAndBalanceCalls(t *testing.T) {
	for _, tc := range []struct {
		name      string
		src       string
		wantLits  int
		wantCalls int
	}{
		{name: "a path literal", src: `package p; var x = call{path: "/graphql"}`, wantLits: 1},
		{name: "a raw URL", src: "package p; const u = `https://api.runpod.io/GraphQL?api_key=`", wantLits: 1},
		{name: "a query built beside it", src: `package p; var q = "query { pod { machineId } }"; var p = "/" + "graphql"`, wantLits: 1},
		{name: "prose naming the API", src: `package p; var m = "RunPod's GraphQL API did not tell the balance"`, wantLits: 0},
		{name: "a comment only", src: "package p\n// reads nothing over /graphql\nvar x = \"/v2/pods\"", wantLits: 0},
		{name: "a balance call", src: `package p; func f(c C) { c.GetBalance(nil) }`, wantCalls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lits, calls, err := graphQLUses("p.go", []byte(tc.src))
			assert.NilError(t, err)
			assert.Check(t, is.Len(lits, tc.wantLits), "%v", lits)
			assert.Check(t, is.Equal(calls, tc.wantCalls))
		})
	}
}
