package actions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// handedRun reads what an actions/<role>/main.go hands to actionkit.Main:
// "<import path>.<func>", or "" when its main is not that one line.
func handedRun(t *testing.T, path string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	assert.NilError(t, err)
	imports := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	handed := ""
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		if fun, ok := call.Fun.(*ast.SelectorExpr); !ok || fun.Sel.Name != "Main" {
			return true
		}
		if arg, ok := call.Args[0].(*ast.SelectorExpr); ok {
			if pkg, ok := arg.X.(*ast.Ident); ok {
				handed = imports[pkg.Name] + "." + arg.Sel.Name
			}
		}
		return true
	})
	return handed
}

// TestRolesAreTheActionMains: the multi-call binary has exactly one role per
// actions/<role>/main.go, and each role runs the function that main hands to
// actionkit.Main, so `go run ./actions/<role>` and the image run the same code.
func TestRolesAreTheActionMains(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "..", "actions", "*", "main.go"))
	assert.NilError(t, err)
	assert.Assert(t, len(mains) > 0)
	roles := Roles()
	seen := map[string]bool{}
	for _, m := range mains {
		role := filepath.Base(filepath.Dir(m))
		seen[role] = true
		run, ok := roles[role]
		if !assert.Check(t, ok, "actions/%s has no role in Roles: the image could not run it", role) {
			continue
		}
		got := runtime.FuncForPC(reflect.ValueOf(run).Pointer()).Name()
		assert.Check(t, is.Equal(got, handedRun(t, m)), "role %s", role)
	}
	for role := range roles {
		_, err := os.Stat(filepath.Join("..", "..", "actions", role, "action.yml"))
		assert.Check(t, seen[role] && err == nil, "role %s has no actions/%s/main.go and action.yml", role, role)
	}
}
