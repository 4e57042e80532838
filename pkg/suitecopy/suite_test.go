package suitecopy

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// copyOwner is the owner the suite's copy is renamed to: it ends in a
// hyphenated part, as the owners the old sed broke did.
const copyOwner = "acme-ci"

// copyTestPackages are the suite's own rule tests a renamed copy must pass:
// the layout, docs and references rules, the callers init renders (which
// name the suite) and the command line's tests (init, app and doctor, with
// my-org/runpod-gpu fixtures the old sed broke). Not this package: its copy
// would clone and rename again.
var copyTestPackages = []string{"./action-tests/rules", "./pkg/callers", "./pkg/devcli"}

// TestCopyOfTheSuite clones this repository at HEAD, renames the clone to
// copyOwner with Copy and runs the suite's own rule tests in it. It took
// 80 to 100 s on a busy 2-core machine with a warm build cache, most of it
// the rule tests' own minute; the modules come from the local cache (GOPROXY=off:
// nothing is downloaded). -short skips it.
func TestCopyOfTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP -short: renaming a clone and running its rule tests takes minutes")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	head := strings.TrimSpace(run(ctx, t, root, nil, "git", "rev-parse", "HEAD"))
	clone := filepath.Join(t.TempDir(), "runpod-gpu")
	run(ctx, t, root, nil, "git", "clone", "--quiet", "--no-checkout", root, clone)
	run(ctx, t, clone, nil, "git", "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", head)

	res, err := Copy(clone, copyOwner, false)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.From, "org"))
	assert.Check(t, res.References() > 100, "the suite names itself more than %d times", res.References())
	t.Logf("renamed %d references in %d files", res.References(), len(res.Changes))

	// Nothing of the old name is left as a whole owner; the fixtures whose
	// owner only ends in it are untouched.
	grep := exec.CommandContext(ctx, "git", "grep", "-I", "-n", "-E", `(^|[^A-Za-z0-9._-])org/runpod-gpu([^A-Za-z0-9_]|$)`)
	grep.Dir = clone
	left, err := grep.CombinedOutput()
	var exit *exec.ExitError
	assert.Check(t, errors.As(err, &exit) && exit.ExitCode() == 1, "the old name is left in the copy (%v):\n%s", err, left)
	fixture, err := os.ReadFile(filepath.Join(clone, "pkg", "callers", "render_test.go"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(fixture), `"my-org/runpod-gpu@v1"`))
	assert.Check(t, is.Contains(string(fixture), "github.com/"+copyOwner+"/runpod-gpu/"))

	again, err := Copy(clone, copyOwner, false)
	assert.NilError(t, err)
	assert.Check(t, is.Len(again.Changes, 0), "a second run changes nothing")

	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=readonly")
	out := run(ctx, t, clone, env, "go", append([]string{"test", "-count=1"}, copyTestPackages...)...)
	t.Logf("the renamed copy's tests:\n%s", out)
}

// run runs name with args in dir (env nil: this process's) and returns its
// standard output; a failure fails the test with everything it printed.
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s %s in %s:\n%s", name, strings.Join(args, " "), dir, out)
	return string(out)
}
