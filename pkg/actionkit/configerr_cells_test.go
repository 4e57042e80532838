package actionkit

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestConfigErrorCodeSpansShowTextAsWritten: a key and a file path are shown
// in code spans, where GitHub prints an entity literally, so they go through
// mdtable.Code (pipes escaped, fence widened) and not the cell escaper (which
// would show "&lt;" and turn a backtick into a quote).
func TestConfigErrorCodeSpansShowTextAsWritten(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		body        string
		wantSummary []string
		notSummary  []string
	}{
		{name: "key with markup", file: ".github/runpod-gpu.yml", body: tiers + "\"a<b`c|d\": 1\n",
			wantSummary: []string{"| ``a<b`c\\|d`` | want a known key"},
			notSummary:  []string{"&lt;", "a<b'c"}},
		{name: "path with an angle bracket", file: "ci/<gpu>.yml", body: tiers + "gpu_count: 0\n",
			wantSummary: []string{"`ci/<gpu>.yml` was refused"},
			notSummary:  []string{"&lt;gpu&gt;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			t.Chdir(ws)
			assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, tc.file)), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(ws, tc.file), []byte(tc.body), 0o644))
			_, summary, err := loadConfig(t, ws, tc.file)
			assert.Assert(t, err != nil)
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(summary, want))
			}
			for _, not := range tc.notSummary {
				assert.Check(t, !is.Contains(summary, not)().Success(), "summary shows %q:\n%s", not, summary)
			}
		})
	}
}
