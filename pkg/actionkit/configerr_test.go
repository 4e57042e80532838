package actionkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionio"
)

const tiers = "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA GeForce RTX 4090\"]\n"

// TestConfigErrorsAreAnnotatedAndSummarized runs Config on broken files in a
// workspace and reads what the runner would show: the annotations in the log
// and the job summary.
func TestConfigErrorsAreAnnotatedAndSummarized(t *testing.T) {
	tests := []struct {
		name        string
		file        string // under the workspace; "" writes no file
		body        string
		input       string // config-path; "" uses the default
		wantLog     []string
		wantSummary []string
	}{
		{name: "unknown key", file: ".github/runpod-gpu.yml", body: tiers + "min_vram_gbs: 24\n",
			wantLog:     []string{"::error col=1,file=.github/runpod-gpu.yml,line=4,title=runpod-gpu config::min_vram_gbs: want a known key of the config: one of gpu_tiers"},
			wantSummary: []string{"## RunPod GPU configuration error", "`.github/runpod-gpu.yml`", "| 4:1 | `min_vram_gbs` | want a known key", "**did you mean `min_vram_gb`?**"}},
		{name: "nested value, absolute path inside the workspace", file: "ci/gpu.yml", input: "$WS/ci/gpu.yml",
			body:        "gpu_tiers:\n  - name: Ada Lovelace\n    gpu_ids: [x]\n",
			wantLog:     []string{`::error col=5,file=ci/gpu.yml,line=2,title=runpod-gpu config::gpu_tiers[0].name: want a name of 1-32`},
			wantSummary: []string{"| 2:5 | `gpu_tiers[0].name` | want a name"}},
		{name: "missing key has no line", file: ".github/runpod-gpu.yml", body: "gpu_count: 1\n",
			wantLog:     []string{"::error file=.github/runpod-gpu.yml,title=runpod-gpu config::gpu_tiers: want at least one tier"},
			wantSummary: []string{"| – | `gpu_tiers` |"}},
		{name: "syntax error", file: ".github/runpod-gpu.yml", body: "gpu_tiers:\n\t- name: a\n",
			wantLog:     []string{"::error file=.github/runpod-gpu.yml,line=2,title=runpod-gpu config::not a valid YAML config: yaml: line 2: found character that cannot start any token"},
			wantSummary: []string{"not one well-formed YAML document", "spaces, not tabs"}},
		{name: "no file",
			wantLog:     []string{"::error file=.github/runpod-gpu.yml,title=runpod-gpu config::read config: open .github/runpod-gpu.yml: no such file or directory"},
			wantSummary: []string{"There is no file at that path", "`config-path`"}},
		{name: "a value is never repeated", file: ".github/runpod-gpu.yml", body: tiers + "image: \"a|b<script>\"\n",
			wantSummary: []string{"| 4:1 | `image` | want an image reference"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			t.Chdir(ws) // a container action runs in the workspace
			if tc.file != "" {
				assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, tc.file)), 0o755))
				assert.NilError(t, os.WriteFile(filepath.Join(ws, tc.file), []byte(tc.body), 0o644))
			}
			log, summary, err := loadConfig(t, ws, strings.ReplaceAll(tc.input, "$WS", ws))
			_, placed := err.(annotatedError)
			assert.Assert(t, placed, "got %T %v", err, err)
			for _, want := range tc.wantLog {
				assert.Check(t, is.Contains(log, want))
			}
			assert.Equal(t, strings.Count(log, "::error "), strings.Count(log, "\n"), "every line an annotation:\n%s", log)
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(summary, want))
			}
		})
	}
}

// TestConfigErrorsStayWithinGitHubsAnnotationLimit: GitHub shows ten error
// annotations per step and silently drops the rest, so the tenth says how
// many more the summary lists.
func TestConfigErrorsStayWithinGitHubsAnnotationLimit(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	var body strings.Builder
	body.WriteString(tiers)
	for i := range 12 {
		fmt.Fprintf(&body, "bogus_%d: 1\n", i)
	}
	assert.NilError(t, os.WriteFile(filepath.Join(ws, "c.yml"), []byte(body.String()), 0o644))
	log, summary, _ := loadConfig(t, ws, "c.yml")
	assert.Equal(t, strings.Count(log, "::error "), maxAnnotations, log)
	assert.Check(t, is.Contains(log, "::error file=c.yml,title=runpod-gpu config::3 more problems in this file: the job summary lists them all\n"))
	assert.Equal(t, strings.Count(summary, "| `(unknown key)` |"), 12)
}

func loadConfig(t *testing.T, ws, input string) (log, summary string, err error) {
	t.Helper()
	summaryPath := filepath.Join(t.TempDir(), "summary")
	env := map[string]string{"GITHUB_WORKSPACE": ws, "GITHUB_STEP_SUMMARY": summaryPath}
	var out bytes.Buffer
	cfg, err := Config(actionio.New(&out, func(k string) string { return env[k] }, nil), input)
	assert.Assert(t, cfg == nil)
	b, rerr := os.ReadFile(summaryPath)
	assert.NilError(t, rerr)
	return out.String(), string(b), err
}

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
		{name: "a misspelt key with markup", file: ".github/runpod-gpu.yml", body: tiers + "\"min<vram`gb\": 1\n",
			wantSummary: []string{"| ``min<vram`gb`` | want a known key"},
			notSummary:  []string{"&lt;", "min<vram'gb"}},
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
