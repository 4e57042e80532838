package rules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// spendRoom is the one package that decides whether money may be spent
// (issue 36): worst cases, the run's ceiling, the budget, the ledger's caps.
const spendRoom = "pkg/spend"

// spendAskers are the packages that spend, or refuse to: each asks the spend
// room rather than reckoning a bound itself.
var spendAskers = []string{"provision", "serverless", "budget", "devcli"}

// TestSpendIsDecidedInOneRoom keeps issue 36's rule for spend decisions:
//   - no product package but pkg/spend declares a function, method or type
//     named for a worst case or a ceiling (provision.CandidateWorstCase,
//     plan.WorstCase, provision's checkCeiling once lived outside it), or
//     prices a duration itself: a Rate.For call on money.PerHour(…), a
//     money.Rate conversion or a variable named for a price or a rate
//     (checked by syntax: a rate held under another name passes unseen);
//   - the packages that spend (spendAskers) import pkg/spend;
//   - pkg/money imports nothing of the module (it is the leaf every amount
//     comes from), and pkg/spend imports only what lies below the lanes:
//     none of spendAskers, no action.
func TestSpendIsDecidedInOneRoom(t *testing.T) {
	root := funcLenRepoRoot(t)
	var found []string
	walkProductGo(t, func(rel string) bool { return rel == spendRoom || rel == "pkg/sim" }, func(rel string, src []byte) error {
		decls, err := spendDecisions(rel, src)
		found = append(found, decls...)
		return err
	})
	assert.Check(t, len(found) == 0, "a spend decision outside pkg/spend (ask the spend room instead):\n  %s", strings.Join(found, "\n  "))

	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./pkg/money", "./pkg/spend",
		"./pkg/provision", "./pkg/serverless", "./pkg/budget", "./pkg/devcli")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[strings.TrimPrefix(fields[0], metaModule+"/")] = fields[1:]
	}
	for _, p := range spendAskers {
		assert.Check(t, slices.Contains(imports["pkg/"+p], metaModule+"/"+spendRoom), "pkg/%s spends and does not ask pkg/spend", p)
	}
	for _, imp := range imports["pkg/money"] {
		assert.Check(t, !strings.HasPrefix(imp, metaModule+"/"), "pkg/money imports %s: it is the leaf every amount comes from", imp)
	}
	for _, imp := range imports[spendRoom] {
		for _, p := range spendAskers {
			assert.Check(t, imp != metaModule+"/pkg/"+p, "pkg/spend imports pkg/%s, a package that asks it", p)
		}
		assert.Check(t, !strings.HasPrefix(imp, metaModule+"/actions/"), "pkg/spend imports the action %s", imp)
	}
}

// TestSpendRuleCatchesAPlantedWorstCase runs the rule's checker over a file
// that reckons spend outside the room: each declaration is found, and
// nothing else.
func TestSpendRuleCatchesAPlantedWorstCase(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "spend", "planted.go"))
	assert.NilError(t, err)
	found, err := spendDecisions("planted.go", src)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(found, []string{
		"planted.go:12: func CandidateWorstCase",
		"planted.go:16: type LaneWorstCase",
		"planted.go:20: func checkCeiling",
		"planted.go:25: type ceilingNote",
		"planted.go:28: price × duration: money.PerHour(...).For",
		"planted.go:29: price × duration: pricePerHour.For",
		"planted.go:30: price × duration: money.Rate(...).For",
	}))
}

// spendDecisions lists the functions, methods and types of src named for a
// worst case or a ceiling: "worst" followed by "case", or "ceiling", among
// the name's words.
func spendDecisions(rel string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var found []string
	check := func(kind string, name *ast.Ident) {
		words := identWords(name.Name)
		i := slices.Index(words, "worst")
		if slices.Contains(words, "ceiling") || (i >= 0 && i+1 < len(words) && words[i+1] == "case") {
			found = append(found, fmt.Sprintf("%s:%d: %s %s", rel, fset.Position(name.Pos()).Line, kind, name.Name))
		}
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			check("func", d.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					check("type", ts.Name)
				}
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "For" || len(call.Args) != 1 {
			return true
		}
		if recv, ok := rateExpr(sel.X); ok {
			found = append(found, fmt.Sprintf("%s:%d: price × duration: %s.For", rel, fset.Position(call.Pos()).Line, recv))
		}
		return true
	})
	return found, nil
}

// rateExpr reports whether x reads as a money.Rate: money.PerHour(…), a
// money.Rate(…) conversion, or a name whose last part names a price or a rate.
func rateExpr(x ast.Expr) (string, bool) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return rateExpr(x.X)
	case *ast.CallExpr:
		if fn, ok := x.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := fn.X.(*ast.Ident); ok && pkg.Name == "money" && (fn.Sel.Name == "PerHour" || fn.Sel.Name == "Rate") {
				return "money." + fn.Sel.Name + "(...)", true
			}
		}
	case *ast.Ident:
		return x.Name, rateName(x.Name)
	case *ast.SelectorExpr:
		return x.Sel.Name, rateName(x.Sel.Name)
	}
	return "", false
}

// rateName reports whether a name has a price or a rate among its words.
func rateName(name string) bool {
	for _, w := range identWords(name) {
		if slices.Contains([]string{"price", "rate", "hourly"}, w) || slices.Contains(moneyWords, w) {
			return true
		}
	}
	return false
}
