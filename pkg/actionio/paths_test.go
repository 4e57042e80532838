package actionio

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

func TestResolvePath(t *testing.T) {
	ws, temp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, "out"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, "out", "report.md"), []byte("x"), 0o644))
	assert.NilError(t, os.Symlink("/etc/passwd", filepath.Join(ws, "passwd-link")))
	assert.NilError(t, os.Symlink(outside, filepath.Join(ws, "escape")))
	assert.NilError(t, os.Symlink(filepath.Join(outside, "missing"), filepath.Join(ws, "dangling")))
	assert.NilError(t, os.Symlink(filepath.Join(ws, "out"), filepath.Join(temp, "back-in")))
	realWS, err := filepath.EvalSymlinks(ws)
	assert.NilError(t, err)
	realTemp, err := filepath.EvalSymlinks(temp)
	assert.NilError(t, err)

	tests := []struct {
		name, value, def string
		want             string // "" when refused
	}{
		{name: "relative, in the workspace", value: "out/report.md", want: filepath.Join(realWS, "out", "report.md")},
		{name: "not yet existing", value: "new/dir/record.json", want: filepath.Join(realWS, "new", "dir", "record.json")},
		{name: "the default", def: "runpod-cost", want: filepath.Join(realWS, "runpod-cost")},
		{name: "absolute, in the runner temp dir", value: filepath.Join(temp, "x.json"), want: filepath.Join(realTemp, "x.json")},
		{name: "a link from the temp dir back into the workspace", value: filepath.Join(temp, "back-in", "report.md"), want: filepath.Join(realWS, "out", "report.md")},
		{name: "dots that stay inside", value: "out/../out/report.md", want: filepath.Join(realWS, "out", "report.md")},
		{name: "an absolute path outside", value: "/etc/passwd"},
		{name: "dots that leave", value: "../../etc/passwd"},
		{name: "dots that leave and come back elsewhere", value: "out/../../" + filepath.Base(outside) + "/x"},
		{name: "a link to a file outside", value: "passwd-link"},
		{name: "a path through a link to a directory outside", value: "escape/new.json"},
		{name: "a dangling link", value: "dangling"},
		{name: "the filesystem root", value: "/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, map[string]string{"cost-report-path": tc.value})
			r.env[RootWorkspace], r.env[RootTemp] = ws, temp
			got, err := r.io.ResolvePath("cost-report-path", r.io.input("cost-report-path"), tc.def, RootWorkspace, RootTemp)
			if tc.want != "" {
				assert.NilError(t, err)
				assert.Equal(t, got, tc.want)
				return
			}
			assert.ErrorContains(t, err, "input cost-report-path = ")
			assert.ErrorContains(t, err, "want a path inside GITHUB_WORKSPACE ("+ws+") or RUNNER_TEMP ("+temp+"), after resolving symbolic links and ..")
			assert.Equal(t, got, "")
		})
	}

	t.Run("no root set", func(t *testing.T) {
		r := newRunner(t, map[string]string{"record-path": "x.json"})
		_, err := r.io.ResolvePath("record-path", r.io.input("record-path"), "", RootWorkspace)
		assert.ErrorContains(t, err, `input record-path = "x.json": want a path inside GITHUB_WORKSPACE, but none of them is set to an existing directory`)
	})
}
