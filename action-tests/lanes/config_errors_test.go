package lanes

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// annotation is one ::error workflow command as the runner reads it.
type annotation struct {
	props   map[string]string
	message string
}

var annotationRE = regexp.MustCompile(`^::error(?: ([^:]*))?::(.*)$`)

// errorAnnotations parses every ::error command in a step's log; property
// order is the library's, so they are compared as a map.
func errorAnnotations(stdout string) []annotation {
	var out []annotation
	for _, l := range strings.Split(stdout, "\n") {
		m := annotationRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := annotation{props: map[string]string{}, message: m[2]}
		if m[1] != "" {
			for _, kv := range strings.Split(m[1], ",") {
				k, v, _ := strings.Cut(kv, "=")
				a.props[k] = v
			}
		}
		out = append(out, a)
	}
	return out
}

// TestConfigErrorsWhereTheUserLooks runs actions that read the config on a
// broken one: each problem is an error annotation on the offending key of
// .github/runpod-gpu.yml (GitHub shows it in the pull request's diff), the
// job summary explains it, a misspelt key names the one it was meant to be,
// no text of the file is repeated (a value, a key that is no misspelling),
// and no second, unplaced annotation repeats the error.
func TestConfigErrorsWhereTheUserLooks(t *testing.T) {
	const tiers = "# GPU CI\ngpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA GeForce RTX 4090\"]\n"
	tests := []struct {
		name        string
		action      string
		config      string
		want        []map[string]string // the annotations' places, in order
		wantMessage []string            // in the annotation of the same index
		wantSummary []string
	}{
		{name: "misspelt key", action: "provision", config: tiers + "min_vram_gbs: 24\n",
			want:        []map[string]string{{"line": "5", "col": "1"}},
			wantMessage: []string{"min_vram_gbs: want a known key of the config: one of gpu_tiers, "},
			wantSummary: []string{"| 5:1 | `min_vram_gbs` |", "**did you mean `min_vram_gb`?**"}},
		{name: "key without underscore, with another problem", action: "authorize", config: tiers + "gpu_count: two\nminvram_gb: 24\n",
			want:        []map[string]string{{"line": "5", "col": "12"}, {"line": "6", "col": "1"}},
			wantMessage: []string{`gpu_count: want an integer`, "minvram_gb: want a known key"},
			wantSummary: []string{"2 problem(s)", "| 5:12 | `gpu_count` | want an integer |", "| 6:1 | `minvram_gb` |", "**did you mean `min_vram_gb`?**"}},
		{name: "nested key", action: "watchdog", config: "gpu_tiers:\n  - name: ada\n    gpu_id: [\"NVIDIA GeForce RTX 4090\"]\n",
			want:        []map[string]string{{"line": "3", "col": "5"}},
			wantMessage: []string{"gpu_tiers[0].gpu_id: want a known key of gpu_tiers[0]: one of name, gpu_ids; did you mean `gpu_ids`?"},
			wantSummary: []string{"| 3:5 | `gpu_tiers[0].gpu_id` |"}},
		{name: "far from any key: no guess, and not repeated", action: "provision", config: tiers + "max_attempts: 6\n",
			want:        []map[string]string{{"line": "5", "col": "1"}},
			wantMessage: []string{"(unknown key): want a known key"},
			wantSummary: []string{"| 5:1 | `(unknown key)` |"}},
		{name: "not YAML", action: "provision", config: "gpu_tiers:\n\t- name: ada\n",
			want:        []map[string]string{{"line": "2"}},
			wantMessage: []string{"not a valid YAML config: yaml: line 2: found character that cannot start any token"},
			wantSummary: []string{"not one well-formed YAML document"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(tc.config), 0o644))
			res := harness.RunStep(t, harness.Step{Action: tc.action, Workspace: ws,
				Env: map[string]string{"GITHUB_WORKSPACE": ws, "GITHUB_REPOSITORY": "org/gpu"}})
			assert.Equal(t, res.ExitCode, 1, res.Stdout)

			got := errorAnnotations(res.Stdout)
			assert.Equal(t, len(got), len(tc.want), "one annotation per problem, none unplaced:\n%s", res.Stdout)
			for i, want := range tc.want {
				want["file"], want["title"] = ".github/runpod-gpu.yml", "runpod-gpu config"
				assert.Check(t, is.DeepEqual(got[i].props, want), "annotation %d", i)
				assert.Check(t, is.Contains(got[i].message, tc.wantMessage[i]), "annotation %d", i)
			}
			assert.Check(t, is.Contains(res.Summary, "## RunPod GPU configuration error"))
			assert.Check(t, is.Contains(res.Summary, "`.github/runpod-gpu.yml` was refused before this step made any API call"))
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(res.Summary, want))
			}
			assert.Check(t, !strings.Contains(res.Stdout+res.Summary, `"two"`), "a value of the file is repeated")
			if !strings.Contains(tc.name, "no guess") {
				return
			}
			assert.Check(t, !strings.Contains(res.Stdout+res.Summary, "did you mean"))
			assert.Check(t, !strings.Contains(res.Stdout+res.Summary, "max_attempts"), "an unknown key is repeated")
		})
	}
}
