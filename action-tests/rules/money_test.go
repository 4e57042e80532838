package rules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// moneyWords name an amount of money: an identifier with one of them as a
// word (camelCase or snake_case parts, any case) holds dollars or cents.
var moneyWords = []string{"dollar", "dollars", "cent", "cents", "usd", "price", "prices", "spend", "spent", "cost", "costs", "budget", "budgets"}

// moneyFormat is a format verb printed after a dollar sign: "$%.2f", "$%d.%02d".
var moneyFormat = regexp.MustCompile(`\$%[-+# 0-9.*]*[dfFgGeEvsq]`)

// moneyRoom is the one package that may hold bare numbers of dollars and
// format them (issue 36); the simulators keep their own (they model RunPod's
// floats, they decide nothing).
var moneyRoom = []string{"pkg/money", "pkg/sim"}

// TestMoneyIsOneType keeps issue 36's rule: outside pkg/money (and the
// simulators), product code holds no bare float64 or int64 named for dollars
// or cents (a field, a parameter, a result, a var or const) and formats no
// "$%" itself: amounts are money.Amount and money.Rate, printed by
// money.Format. Outside data (RunPod's JSON floats, artifacts, records, the
// configuration's YAML, the ledger's cents) is read into money.Amount,
// money.Rate or money.WholeCents where it is decoded; nothing is exempt.
func TestMoneyIsOneType(t *testing.T) {
	var found []string
	walkProductGo(t, func(rel string) bool { return slices.Contains(moneyRoom, rel) }, func(rel string, src []byte) error {
		findings, err := moneyFindings(rel, src)
		for _, f := range findings {
			found = append(found, fmt.Sprintf("%s:%d: %s", rel, f.line, f.what))
		}
		return err
	})
	assert.Check(t, len(found) == 0, "bare dollars outside pkg/money (use money.Amount or money.Rate, and money.Format to print):\n  %s",
		strings.Join(found, "\n  "))
}

// TestMoneyRuleCatchesAPlantedDollarField runs the rule's checker over a
// file written as the rule forbids: each planted offence is found, and
// nothing else.
func TestMoneyRuleCatchesAPlantedDollarField(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "money", "planted.go"))
	assert.NilError(t, err)
	findings, err := moneyFindings("planted.go", src)
	assert.NilError(t, err)
	var got []string
	for _, f := range findings {
		got = append(got, f.what)
	}
	assert.Check(t, is.DeepEqual(got, []string{
		`field TotalUSD float64`,
		`field SpentCents int64`,
		`field Prices []float64`,
		`param pricePerHour float64`,
		`result cost float64`,
		`var budgetLimitDollars *float64`,
		`format "$%.2f"`,
		`format "at $%d.%02d"`,
	}))
}

// moneyFinding is one offence of the rule in a file.
type moneyFinding struct {
	what string // the message
	line int
}

// moneyFindings parses src and returns its bare dollar numbers and "$%" formats.
func moneyFindings(rel string, src []byte) ([]moneyFinding, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []moneyFinding
	add := func(kind string, names []*ast.Ident, typ ast.Expr) {
		bare, ok := bareNumber(typ)
		if !ok {
			return
		}
		for _, n := range names {
			if moneyName(n.Name) {
				out = append(out, moneyFinding{what: fmt.Sprintf("%s %s %s", kind, n.Name, bare), line: fset.Position(n.Pos()).Line})
			}
		}
	}
	fields := func(kind string, l *ast.FieldList) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			add(kind, f.Names, f.Type)
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.StructType:
			fields("field", n.Fields)
		case *ast.FuncType:
			fields("param", n.Params)
			fields("result", n.Results)
		case *ast.ValueSpec:
			add("var", n.Names, n.Type)
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil && moneyFormat.MatchString(s) {
					out = append(out, moneyFinding{what: "format " + n.Value, line: fset.Position(n.Pos()).Line})
				}
			}
		}
		return true
	})
	return out, nil
}

// bareNumber reports a float64 or int64 type (or a pointer, slice or array of
// one) as written.
func bareNumber(typ ast.Expr) (string, bool) {
	switch t := typ.(type) {
	case *ast.Ident:
		return t.Name, t.Name == "float64" || t.Name == "int64"
	case *ast.StarExpr:
		s, ok := bareNumber(t.X)
		return "*" + s, ok
	case *ast.ArrayType:
		s, ok := bareNumber(t.Elt)
		return "[]" + s, ok && t.Len == nil
	}
	return "", false
}

// moneyName reports whether an identifier has a money word among its parts.
func moneyName(name string) bool {
	for _, w := range identWords(name) {
		if slices.Contains(moneyWords, w) {
			return true
		}
	}
	return false
}

// identWords splits an identifier into lower-case words at underscores and
// case changes: "maxRunSpendUSD" → max, run, spend, usd.
func identWords(name string) []string {
	var words []string
	runes := []rune(name)
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(string(runes[start:end])))
		}
	}
	for i := 0; i < len(runes); i++ {
		switch {
		case runes[i] == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(runes[i]) && (unicode.IsLower(runes[i-1]) || unicode.IsDigit(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]))):
			flush(i)
			start = i
		}
	}
	flush(len(runes))
	return words
}
