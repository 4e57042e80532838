package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

func TestRunRefuses(t *testing.T) {
	repo := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	empty := t.TempDir()
	rng := LastFullDays(t0, 7)
	tests := []struct {
		name    string
		opts    Options
		wantIs  error
		wantErr string
	}{
		{name: "no directory", opts: Options{}, wantErr: "evidence directory: empty; want a directory outside the repository"},
		{name: "inside a repository", opts: Options{Dir: filepath.Join(repo, "out", "history")}, wantIs: ErrInsideRepository,
			wantErr: "is inside " + repo + "; choose a directory outside it"},
		{name: "nothing saved to regenerate from", opts: Options{Dir: empty}, wantIs: ErrNoEvidence,
			wantErr: "no saved evidence in " + empty + ": collect with a date range first"},
		{name: "collecting without a client", opts: Options{Dir: empty, Range: &rng}, wantErr: "collecting needs a GitHub client"},
		{name: "a workflow that is not a file name", opts: Options{Dir: empty, Workflow: "../../x.yml"},
			wantErr: `workflow "../../x.yml": want a workflow file name such as runpod-gpu.yml`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.opts)
			assert.ErrorContains(t, err, tc.wantErr)
			if tc.wantIs != nil {
				assert.Assert(t, errors.Is(err, tc.wantIs), "got %v", err)
			}
		})
	}
}

func TestCheckOutsideRepository(t *testing.T) {
	root := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "repo", ".git"), 0o755))
	// A worktree or submodule has a .git file instead of a folder.
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "worktree"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(root, "worktree", ".git"), []byte("gitdir: ../repo/.git\n"), 0o644))
	for _, tc := range []struct {
		dir    string
		inside bool
	}{
		{filepath.Join(root, "repo"), true},
		{filepath.Join(root, "repo", "deep", "not", "there", "yet"), true},
		{filepath.Join(root, "worktree", "h"), true},
		{filepath.Join(root, "elsewhere"), false},
	} {
		err := CheckOutsideRepository(tc.dir)
		assert.Check(t, errors.Is(err, ErrInsideRepository) == tc.inside, "%s: %v", tc.dir, err)
	}
}
