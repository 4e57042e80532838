package devcli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestArchiveTestedRef: a record naming no test archive (the lane fetched
// the tested ref itself) has repro archive that ref from the user's
// checkout; a ref the checkout lacks fails naming git fetch.
func TestArchiveTestedRef(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "tests", "gpu"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tests", "gpu", "test_kernels.py"), []byte("def test_add(): pass\n"), 0o644))
	git("add", ".")
	git("commit", "-qm", "tests")
	tested := git("rev-parse", "HEAD")
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "tests", "gpu", "test_kernels.py"), []byte("changed after the run\n"), 0o644))

	folder, err := archiveTestedRef(context.Background(), dir, tested)
	assert.NilError(t, err)
	defer os.RemoveAll(filepath.Dir(folder))
	assert.Check(t, is.Equal(filepath.Base(folder), filepath.Base(ReproDir)))
	got, err := os.ReadFile(filepath.Join(folder, "tests", "gpu", "test_kernels.py"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), "def test_add(): pass\n"), "the tested ref's files, not the work tree's")

	missing := strings.Repeat("e", 40)
	_, err = archiveTestedRef(context.Background(), dir, missing)
	var ce *exitError
	assert.Assert(t, errors.As(err, &ce), "%v", err)
	assert.Check(t, is.Equal(ce.code, ExitNotFound))
	assert.Check(t, is.Contains(err.Error(), "git fetch origin "+missing))
}
