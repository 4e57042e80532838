package suitecopy

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// checkout writes files (slash paths to contents) under a new directory.
func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(p))
		assert.NilError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		assert.NilError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return dir
}

func readAll(t *testing.T, dir string, paths ...string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		assert.NilError(t, err)
		got[p] = string(data)
	}
	return got
}

var suiteFiles = map[string]string{
	"go.mod":                            "module github.com/org/runpod-gpu\n\ngo 1.26\n",
	"pkg/cmd/x/main.go":                 "import \"github.com/org/runpod-gpu/pkg/devcli\"\n",
	"actions/gate/action.yml":           "runs:\n  image: docker://ghcr.io/org/runpod-gpu:v1\n",
	"pkg/callers/render_test.go":        "Suite: \"my-org/runpod-gpu@v1\" // org/runpod-gpu\n",
	"README.md":                         "uses: org/runpod-gpu/.github/workflows/gpu-lane.yml@v1\n",
	"docs/other.md":                     "nothing of the suite's here: my-org/runpod-gpu\n",
	".git/config":                       "url = https://github.com/org/runpod-gpu\n",
	"pkg/demo/testdata/picture.png":     "\x89PNG\x00org/runpod-gpu",
	"pkg/cmd/runpod-gpu/scripts/run.sh": "#!/bin/sh\necho org/runpod-gpu\n",
}

func TestCopy(t *testing.T) {
	dir := checkout(t, suiteFiles)
	script := filepath.Join(dir, "pkg/cmd/runpod-gpu/scripts/run.sh")
	assert.NilError(t, os.Chmod(script, 0o755))

	res, err := Copy(dir, "acme", false)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.From, "org"))
	assert.Check(t, is.Equal(res.To, "acme"))
	assert.Check(t, is.DeepEqual(res.Changes, []Change{
		{Path: "README.md", Count: 1},
		{Path: "actions/gate/action.yml", Count: 1},
		{Path: "go.mod", Count: 1},
		{Path: "pkg/callers/render_test.go", Count: 1},
		{Path: "pkg/cmd/runpod-gpu/scripts/run.sh", Count: 1},
		{Path: "pkg/cmd/x/main.go", Count: 1},
	}))
	assert.Check(t, is.Equal(res.References(), 6))
	assert.Check(t, is.DeepEqual(readAll(t, dir, "go.mod", "pkg/callers/render_test.go", "docs/other.md", ".git/config", "pkg/demo/testdata/picture.png"), map[string]string{
		"go.mod":                        "module github.com/acme/runpod-gpu\n\ngo 1.26\n",
		"pkg/callers/render_test.go":    "Suite: \"my-org/runpod-gpu@v1\" // acme/runpod-gpu\n",
		"docs/other.md":                 "nothing of the suite's here: my-org/runpod-gpu\n",
		".git/config":                   "url = https://github.com/org/runpod-gpu\n",
		"pkg/demo/testdata/picture.png": "\x89PNG\x00org/runpod-gpu",
	}))
	st, err := os.Stat(script)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Mode().Perm(), os.FileMode(0o755)), "the mode is kept")
	left, err := filepath.Glob(filepath.Join(dir, "*", ".copy-suite-*"))
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "no staged file is left")

	again, err := Copy(dir, "acme", false)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(again, Result{From: "acme", To: "acme"}), "a second run changes nothing")

	moved, err := Copy(dir, "beta", false)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(moved.From, "acme"))
	assert.Check(t, is.Len(moved.Changes, 6), "a copy moves again, from the owner its go.mod names")
}

func TestCopyDryRunChangesNothing(t *testing.T) {
	dir := checkout(t, suiteFiles)
	res, err := Copy(dir, "acme", true)
	assert.NilError(t, err)
	assert.Check(t, is.Len(res.Changes, 6))
	assert.Check(t, is.DeepEqual(readAll(t, dir, "go.mod", "README.md"), map[string]string{
		"go.mod": suiteFiles["go.mod"], "README.md": suiteFiles["README.md"],
	}))
}

func TestCopyRefuses(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		to      string
		wantErr string
	}{
		{name: "bad owner", files: suiteFiles, to: "my_org", wantErr: `--to "my_org": a GitHub owner name has only letters, digits and hyphens, not '_'`},
		{name: "upper case", files: suiteFiles, to: "MyOrg", wantErr: `--to "MyOrg": write it in lower case (myorg)`},
		{name: "no go.mod", files: map[string]string{"README.md": "org/runpod-gpu"}, to: "acme", wantErr: "not a checkout of the suite"},
		{name: "another module", files: map[string]string{"go.mod": "module github.com/org/gpu-project\n"}, to: "acme",
			wantErr: "go.mod's module is not github.com/OWNER/runpod-gpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := checkout(t, tc.files)
			_, err := Copy(dir, tc.to, false)
			assert.ErrorContains(t, err, tc.wantErr)
			for p, text := range tc.files {
				assert.Check(t, is.Equal(readAll(t, dir, p)[p], text), "%s is unchanged", p)
			}
		})
	}
}

// A file that cannot be staged (here: gone since it was read) leaves every
// file as it was, and no staged file behind.
func TestApplyAllOrNothing(t *testing.T) {
	dir := checkout(t, suiteFiles)
	edits := []edit{
		{path: filepath.Join(dir, "go.mod"), rel: "go.mod", text: []byte("module github.com/acme/runpod-gpu\n"), count: 1},
		{path: filepath.Join(dir, "gone", "main.go"), rel: "gone/main.go", text: []byte("acme/runpod-gpu"), count: 1},
	}
	err := apply(edits)
	assert.ErrorContains(t, err, "writing gone/main.go")
	assert.ErrorContains(t, err, "nothing changed")
	assert.Check(t, is.Equal(readAll(t, dir, "go.mod")["go.mod"], suiteFiles["go.mod"]))
	left, err := filepath.Glob(filepath.Join(dir, ".copy-suite-*"))
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "no staged file is left")
}
