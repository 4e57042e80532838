package clock

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestSleepContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Check(t, errors.Is(SleepContext(ctx, time.Hour), context.Canceled), "a cancelled context ends the sleep at once")
	assert.NilError(t, SleepContext(context.Background(), 0))
	assert.NilError(t, SleepContext(context.Background(), time.Nanosecond))
}

// The real sleeper waits until its context ends when that comes first, and a
// zero wait on a cancelled context always reports the cancellation (a zero
// timer must not race it).
func TestSleepContextEdges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.Check(t, errors.Is(SleepContext(ctx, time.Hour), context.DeadlineExceeded), "an hour's sleep ends with its context")

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	for i := 0; i < 64; i++ {
		assert.Assert(t, errors.Is(SleepContext(cancelled, 0), context.Canceled), "try %d", i)
	}
}

func TestNowFallsBackToTheWallClock(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	assert.Equal(t, Now(Func(func() time.Time { return at })), at)
	before := time.Now()
	got := Now(nil)
	assert.Check(t, !got.Before(before) && !got.After(time.Now()), "a nil clock reads the wall clock: %s", got)
}

func TestFuncReadsItsFunction(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	assert.Equal(t, Func(func() time.Time { return at }).Now(), at)
}

// TestNoOtherClock keeps this package the one clock: no other product file
// declares a Now-only interface or a type whose Now is time.Now (tests may
// declare fakes). The reap action's own wall clock is the coordinator's to move.
func TestNoOtherClock(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	assert.NilError(t, err)
	exempt := map[string]bool{"pkg/clock/clock.go": true}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || exempt[filepath.ToSlash(rel)] {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if it, ok := n.Type.(*ast.InterfaceType); ok && len(it.Methods.List) == 1 && len(it.Methods.List[0].Names) == 1 && it.Methods.List[0].Names[0].Name == "Now" {
					found = append(found, rel+": interface "+n.Name.Name)
				}
			case *ast.FuncDecl:
				if n.Recv != nil && n.Name.Name == "Now" && n.Body != nil && len(n.Body.List) == 1 {
					if ret, ok := n.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 && types.ExprString(ret.Results[0]) == "time.Now()" {
						found = append(found, rel+": wall clock "+types.ExprString(n.Recv.List[0].Type))
					}
				}
				if n.Recv != nil && n.Name.Name == "now" && callsTimeNow(n.Body) {
					found = append(found, rel+": private now() falling back to time.Now: use clock.Now")
				}
			}
			return true
		})
		return nil
	})
	assert.NilError(t, err)
	assert.Assert(t, len(found) == 0, "use pkg/clock (Clock, Wall) instead of:\n%s", strings.Join(found, "\n"))
}

// callsTimeNow reports whether body calls time.Now().
func callsTimeNow(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && types.ExprString(call.Fun) == "time.Now" {
			found = true
		}
		return !found
	})
	return found
}
