package devcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// suiteOwner is the owner the suite's go.mod names (org, for the published
// suite): read from a reference, so that a renamed copy's test follows it.
var suiteOwner, _, _ = strings.Cut("octo/runpod-gpu", "/")

// suiteCheckout is a small checkout of the suite: its go.mod, an action, and
// a test whose my-org/runpod-gpu fixture must stay as it is.
func suiteCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range map[string]string{
		"go.mod":                     "module github.com/octo/runpod-gpu\n",
		"actions/gate/action.yml":    "  image: docker://ghcr.io/octo/runpod-gpu:v1\n",
		"pkg/callers/render_test.go": "Suite: \"my-org/runpod-gpu@v1\" // github.com/octo/runpod-gpu/pkg/callers\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(p))
		assert.NilError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		assert.NilError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return dir
}

// The fixture's suite is published as octo/runpod-gpu, not the suite's own
// name, so a copy of the suite renamed by this very command still tests it.
func TestCopySuite(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
		// wantGate is actions/gate/action.yml afterwards.
		wantGate string
	}{
		{name: "renames", args: []string{"--to", "acme"}, wantGate: "  image: docker://ghcr.io/acme/runpod-gpu:v1\n",
			wantOut: "changed actions/gate/action.yml (1)\nchanged go.mod (1)\nchanged pkg/callers/render_test.go (1)\n" +
				"octo/runpod-gpu → acme/runpod-gpu: 3 references in 3 files\n" +
				"Next: go test ./action-tests/rules ./pkg/callers ./pkg/devcli, commit, push, and run a release (.github/docs/own-copy.md).\n"},
		{name: "dry run", args: []string{"--to", "acme", "--dry-run"}, wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n",
			wantOut: "would change actions/gate/action.yml (1)\nwould change go.mod (1)\nwould change pkg/callers/render_test.go (1)\n" +
				"octo/runpod-gpu → acme/runpod-gpu: 3 references in 3 files\n"},
		{name: "no owner", args: []string{}, wantCode: ExitUsage, wantErr: `--to "": want your GitHub user or organization name`,
			wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n"},
		{name: "bad owner", args: []string{"--to", "-acme"}, wantCode: ExitUsage, wantErr: `--to "-acme": a GitHub owner name cannot begin or end with a hyphen`,
			wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n"},
		{name: "upper case", args: []string{"--to", "Acme"}, wantCode: ExitUsage, wantErr: `write it in lower case (acme)`,
			wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n"},
		{name: "already named", args: []string{"--to", suiteOwner}, wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n",
			wantOut: "already names " + suiteOwner + "/runpod-gpu: nothing to change\n"},
		{name: "an argument", args: []string{"acme"}, wantCode: ExitUsage, wantErr: `unknown command "acme"`,
			wantGate: "  image: docker://ghcr.io/octo/runpod-gpu:v1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			dir := suiteCheckout(t)
			r := w.run(append([]string{"copy-suite", "--dir", dir}, tc.args...)...)
			assert.Check(t, is.Equal(r.code, tc.wantCode), r.stderr)
			if tc.wantErr != "" {
				assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			}
			if tc.wantOut != "" {
				want := tc.wantOut
				if tc.name == "already named" {
					want = dir + " " + want
				}
				assert.Check(t, is.Equal(r.stdout, want))
			}
			gate, err := os.ReadFile(filepath.Join(dir, "actions", "gate", "action.yml"))
			assert.NilError(t, err)
			assert.Check(t, is.Equal(string(gate), tc.wantGate))
			fixture, err := os.ReadFile(filepath.Join(dir, "pkg", "callers", "render_test.go"))
			assert.NilError(t, err)
			assert.Check(t, is.Contains(string(fixture), `"my-org/runpod-gpu@v1"`), "my-org/runpod-gpu is never rewritten")
		})
	}
}

// A second run changes nothing; a directory that is no checkout of the suite is a usage error.
func TestCopySuiteAgainAndNotASuite(t *testing.T) {
	w := newWorld(t)
	dir := suiteCheckout(t)
	assert.Check(t, is.Equal(w.run("copy-suite", "--dir", dir, "--to", "acme").code, ExitOK))
	again := w.run("copy-suite", "--dir", dir, "--to", "acme")
	assert.Check(t, is.Equal(again.code, ExitOK))
	assert.Check(t, is.Equal(again.stdout, dir+" already names acme/runpod-gpu: nothing to change\n"))

	empty := w.run("copy-suite", "--dir", t.TempDir(), "--to", "acme")
	assert.Check(t, is.Equal(empty.code, ExitUsage))
	assert.Check(t, is.Contains(empty.stderr, "not a checkout of the suite"))
}
