package lanegen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// workflowsDir is the repository's workflows, the committed output.
const workflowsDir = "../../.github/workflows"

// committed reads the committed lane and parts.
func committed(t *testing.T) map[string]string {
	t.Helper()
	files, err := ReadDir(workflowsDir)
	assert.NilError(t, err)
	return files
}

// staleFiles names each file whose text is not what Generate writes from the
// files, with its first differing line.
func staleFiles(t *testing.T, files map[string]string) []string {
	t.Helper()
	out, err := Generate(files)
	assert.NilError(t, err)
	var stale []string
	for _, name := range Files() {
		if out[name] == files[name] {
			continue
		}
		got, want := lines(files[name]), lines(out[name])
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end of file)"
		}
		stale = append(stale, fmt.Sprintf("%s differs from what lanegen writes at line %d:\n  committed: %s\n  generated: %s", name, i+1, line(got), line(want)))
	}
	return stale
}

// TestLaneYAMLIsGenerated: the committed re-run jobs of gpu-lane.yml and the
// jobs of the four parts are what lanegen writes from gpu-lane.yml's first
// jobs. Run `go generate ./...` after changing them.
func TestLaneYAMLIsGenerated(t *testing.T) {
	if stale := staleFiles(t, committed(t)); len(stale) > 0 {
		t.Errorf("run go generate ./... and commit the result:\n%s", strings.Join(stale, "\n"))
	}
}

// TestLaneYAMLCheckDetectsChanges plants edits in the committed files: a job
// or a setting changed in gpu-lane.yml alone, a generated job or header
// edited by hand and a job added to a part are each reported.
func TestLaneYAMLCheckDetectsChanges(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		want                 []string // the files reported stale
	}{
		{name: "a provision input in gpu-lane.yml's first job only", file: Lane,
			old:  "          test-archive-artifact: ${{ inputs.test-archive-artifact }}\n      # The reaper",
			new:  "          test-archive-artifact: ${{ inputs.test-archive-artifact }}\n          runner-dir: /opt/runner\n      # The reaper",
			want: []string{Lane, "gpu-lane-provision.yml"}},
		{name: "a watchdog step changed in gpu-lane.yml", file: Lane,
			old: "        timeout-minutes: 125\n", new: "        timeout-minutes: 120\n", want: []string{Lane, "gpu-lane-watchdog.yml"}},
		{name: "the re-run's GPU job on the first pods", file: Lane,
			old: "        pod: ${{ fromJSON(needs.provision-again.outputs.pods) }}\n", new: "        pod: ${{ fromJSON(needs.provision.outputs.pods) }}\n", want: []string{Lane}},
		{name: "a value from the wrong job in a part", file: "gpu-lane-watchdog.yml",
			old: "fromJSON(inputs.lane).authorize.outputs.head-sha", new: "fromJSON(inputs.lane).provision.outputs.head-sha", want: []string{"gpu-lane-watchdog.yml"}},
		{name: "an extra job in a part", file: "gpu-lane-finish.yml",
			old: "\njobs:\n", new: "\njobs:\n  extra:\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n", want: []string{"gpu-lane-finish.yml"}},
		{name: "a part's header edited by hand", file: "gpu-lane-finish.yml",
			old: "      provision-result:\n", new: "      provision-outcome:\n", want: []string{"gpu-lane-finish.yml"}},
		{name: "a setting of gpu-lane.yml the authorize part copies", file: Lane,
			old: "        description: Prefix of the per-attempt runner labels.\n", new: "        description: Prefix of the runner labels.\n",
			want: []string{"gpu-lane-authorize.yml"}},
		{name: "a secret every part copies", file: Lane,
			old: "        description: RunPod API key. It stays on hosted runners; the pod never sees it.\n", new: "        description: RunPod API key.\n",
			want: []string{"gpu-lane-provision.yml", "gpu-lane-watchdog.yml", "gpu-lane-finish.yml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := committed(t)
			assert.Assert(t, strings.Contains(files[tc.file], tc.old), "%s no longer contains %q; update this case", tc.file, tc.old)
			files[tc.file] = strings.Replace(files[tc.file], tc.old, tc.new, 1)
			stale := staleFiles(t, files)
			assert.Check(t, is.Len(stale, len(tc.want)), "%v", stale)
			for i, name := range tc.want {
				if i < len(stale) {
					assert.Check(t, strings.HasPrefix(stale[i], name+" differs"), "%v", stale)
				}
			}
		})
	}
}

// TestGenerateIsIdempotent: what Generate writes, it writes again unchanged,
// and the lane's hand-written jobs come out as they went in.
func TestGenerateIsIdempotent(t *testing.T) {
	files := committed(t)
	first, err := Generate(files)
	assert.NilError(t, err)
	second, err := Generate(first)
	assert.NilError(t, err)
	assert.DeepEqual(t, second, first)
}

// TestWriteDir regenerates a copy of the workflows with the generated jobs
// and parts gone stale or missing, and only the generated files change.
func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	files := committed(t)
	for name, text := range files {
		switch name {
		case Lane: // without its re-run jobs
			begin, end := strings.Index(text, beginGenerated), strings.Index(text, endGenerated)
			text = text[:begin] + text[end+len(endGenerated)+2:]
		case "gpu-lane-watchdog.yml":
			continue // missing: written anew
		default:
			text = "stale\n"
		}
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	other := filepath.Join(dir, "ci.yml")
	assert.NilError(t, os.WriteFile(other, []byte("name: CI\n"), 0o644))
	assert.NilError(t, WriteDir(context.Background(), dir))
	got, err := ReadDir(dir)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, files)
	ci, err := os.ReadFile(other)
	assert.NilError(t, err)
	assert.Equal(t, string(ci), "name: CI\n")
}

// TestGenerateErrors: a source lanegen cannot write from is refused, naming
// the file and what is missing.
func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		want                 string
	}{
		{name: "no first provision", file: Lane, old: "\n  provision:\n", new: "\n  provisioning:\n",
			want: "gpu-lane.yml: no job provision (lanegen writes provision-again from it)"},
		{name: "generated jobs that never end", file: Lane, old: endGenerated + "\n", new: "",
			want: "gpu-lane.yml: the generated jobs start on line"},
		{name: "no step to add the lane so far to", file: Lane, old: "        id: provision\n", new: "        id: create\n",
			want: "gpu-lane.yml: job provision-again: no step with id provision to add 2 inputs to"},
		{name: "a line outside any job", file: Lane, old: "\n  gate:\n", new: "\n gate:\n",
			want: `gpu-lane.yml: line`},
		{name: "a setting a part copies, gone from the lane", file: Lane, old: "      runner-org:\n", new: "      runner-organization:\n",
			want: `at <laneInput "runner-org">: error calling laneInput: gpu-lane.yml has no input runner-org`},
		{name: "a part job reading another job's result", file: Lane,
			old:  "          gpu-job-result: ${{ needs.gpu-tests.result }}\n",
			new:  "          gpu-job-result: ${{ needs.provision.result }}\n",
			want: "gpu-lane-finish.yml: job gate: line \"gpu-job-result: ${{ needs.provision.result }}\": needs.provision.result is not a job of the part"},
		{name: "two jobs read as a job and its re-run", file: Lane,
			old:  "          tier-results: ${{ needs.cleanup.outputs.tier-results }}\n",
			new:  "          tier-results: ${{ needs.watchdog-again.outputs.tiers || needs.provision.outputs.tiers }}\n",
			want: "reads two jobs that are not a job and its re-run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := committed(t)
			assert.Assert(t, strings.Contains(files[tc.file], tc.old), "%s no longer contains %q; update this case", tc.file, tc.old)
			files[tc.file] = strings.Replace(files[tc.file], tc.old, tc.new, 1)
			_, err := Generate(files)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := Generate(map[string]string{})
	assert.Error(t, err, "no gpu-lane.yml to generate from")
}
