package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// metaMaxInitBytes is the most one package of this module may allocate while
// it initialises. The image runs one program for every role, so a package's
// init (a package-level regexp.MustCompile, a parsed template, a built table)
// runs at every start of every role, used or not; such work belongs on first
// use (pkg/lazyre, sync.OnceValue). A handful of sentinel errors and small
// maps fit; one compiled regular expression does not.
const metaMaxInitBytes = 8 << 10

// TestRolesStartWithoutEagerInit starts every role as the runner does, with
// no inputs, and reads GODEBUG=inittrace=1: no package of this module may
// spend more than metaMaxInitBytes initialising. The start-up comparison with
// the per-action programs is pkg/cmd/startup-bench.
func TestRolesStartWithoutEagerInit(t *testing.T) {
	dirs, err := filepath.Glob("../../actions/*/action.yml")
	assert.NilError(t, err)
	assert.Assert(t, len(dirs) > 0)
	for _, yml := range dirs {
		role := filepath.Base(filepath.Dir(yml))
		t.Run(role, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(harness.BinDir(), harness.ActionsBinary), role)
			cmd.Dir, cmd.Env = t.TempDir(), []string{"GODEBUG=inittrace=1"}
			out, err := cmd.CombinedOutput()
			assert.Assert(t, err != nil, "a role without inputs must fail:\n%s", out)
			costs := metaInitBytes(string(out))
			assert.Assert(t, len(costs) > 0, "no inittrace lines for this module:\n%s", out)
			var heavy []string
			for pkg, bytes := range costs {
				if bytes > metaMaxInitBytes {
					heavy = append(heavy, pkg+": "+strconv.FormatInt(bytes, 10)+" bytes")
				}
			}
			assert.Check(t, len(heavy) == 0, "package init allocates more than %d bytes at every start; do it on first use:\n  %s",
				metaMaxInitBytes, strings.Join(heavy, "\n  "))
		})
	}
}

// metaInitBytes reads inittrace lines ("init <pkg> @0.1 ms, 0.2 ms clock, 512
// bytes, 3 allocs") into bytes per package of this module.
func metaInitBytes(trace string) map[string]int64 {
	costs := map[string]int64{}
	for _, line := range strings.Split(trace, "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," || !strings.HasPrefix(f[1], metaModule+"/") {
			continue
		}
		if n, err := strconv.ParseInt(f[7], 10, 64); err == nil {
			costs[strings.TrimPrefix(f[1], metaModule+"/")] += n
		}
	}
	return costs
}

func TestMetaInitBytesReadsInittrace(t *testing.T) {
	trace := "init runtime @0.5 ms, 0.6 ms clock, 0 bytes, 0 allocs\n" +
		"init " + metaModule + "/pkg/registry @23 ms, 3.4 ms clock, 154272 bytes, 2102 allocs\n" +
		"init gopkg.in/yaml%2ev3 @7.9 ms, 0.14 ms clock, 25736 bytes, 276 allocs\n" +
		"::error::input runpod-api-key: a RunPod API key\n"
	assert.DeepEqual(t, metaInitBytes(trace), map[string]int64{"pkg/registry": 154272})
}

// TestLazyPatternsCompile compiles every lazyre.Regexp pattern of the module:
// they compile on first use, so a broken one would otherwise surface only
// when its role reaches it.
func TestLazyPatternsCompile(t *testing.T) {
	count := 0
	err := filepath.WalkDir(metaRepoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != metaRepoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "lazyre.Regexp{") {
			return err
		}
		consts := metaPackageConsts(t, filepath.Dir(path))
		file, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !metaIsSelector(lit.Type, "lazyre", "Regexp") {
				return true
			}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && metaIsIdent(kv.Key, "Pattern") {
					pattern, ok := metaConstString(kv.Value, consts)
					if !assert.Check(t, ok, "%s: a lazyre pattern must be a constant string", path) {
						continue
					}
					_, err := regexp.Compile(pattern)
					assert.Check(t, err, "%s: %q", path, pattern)
					count++
				}
			}
			return true
		})
		return nil
	})
	assert.NilError(t, err)
	assert.Assert(t, count > 0, "found no lazyre.Regexp")
}

// metaPackageConsts maps the package-level constants of dir's non-test files
// to their expressions.
func metaPackageConsts(t *testing.T, dir string) map[string]ast.Expr {
	t.Helper()
	consts := map[string]ast.Expr{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	assert.NilError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		assert.NilError(t, err)
		for _, decl := range file.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							consts[name.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	return consts
}

// metaConstString evaluates a constant string expression: literals, "+" and
// the package's named constants.
func metaConstString(e ast.Expr, consts map[string]ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return metaConstString(e.X, consts)
	case *ast.BinaryExpr:
		x, okX := metaConstString(e.X, consts)
		y, okY := metaConstString(e.Y, consts)
		return x + y, okX && okY && e.Op == token.ADD
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			delete(consts, e.Name) // a constant cannot refer to itself
			s, ok := metaConstString(v, consts)
			consts[e.Name] = v
			return s, ok
		}
	}
	return "", false
}

func metaIsSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && metaIsIdent(sel.X, pkg) && sel.Sel.Name == name
}

func metaIsIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
