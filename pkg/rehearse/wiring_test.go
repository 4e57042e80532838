package rehearse

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
)

// What runpod-gpu init writes (its file writer, callers.Render, with a fixed
// catalog's tiers) rehearses green.
func TestRehearseInitOutputIsGreen(t *testing.T) {
	files, err := callers.Render(callers.Options{Suite: "org/runpod-gpu@v1", Workflows: []string{"CI"}, TestCommand: "make test-gpu",
		Tiers: []config.GPUTier{{Name: "ampere", GPUIDs: []string{"NVIDIA RTX A4000", "NVIDIA RTX A5000"}}}, MaxRunSpendUSD: 5 * money.Dollar})
	assert.NilError(t, err)
	written := map[string]string{}
	for _, f := range files {
		written[f.Path] = f.Text
	}
	r := rehearse(t, repoWith(t, written))
	assertGreen(t, r, "gpu", "gpu / authorize", "gpu / provision", "gpu / gpu-tests", "gpu / gate", "gpu / cleanup")
}

// mutated is caller with old replaced by new once; the test fails if old is not there.
func mutated(t *testing.T, caller, old, new string) string {
	t.Helper()
	assert.Assert(t, strings.Contains(caller, old), "the caller no longer holds %q", old)
	return strings.Replace(caller, old, new, 1)
}

// Each wiring mistake is found and named with its fix, one mutated workflow
// per mistake; a rehearsal with a mistake plays nothing and is not OK.
func TestRehearseNamesEachWiringMistake(t *testing.T) {
	lane, own := laneCaller(t), ownJobCaller(t)
	const lanePath = ".github/workflows/runpod-gpu.yml"
	tests := []struct {
		name     string
		files    func(t *testing.T) map[string]string
		wantErr  []string // each: a mistake's what, then its fix
		wantFixs []string
	}{
		{
			name: "gpu-job-name matches no job",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, own, "gpu-job-name: GPU tests", "gpu-job-name: GPU test")}
			},
			wantErr:  []string{`gpu-job-name "GPU test" matches no job on the pod's runner label (jobs on it: "GPU tests")`},
			wantFixs: []string{`set gpu-job-name in the authorize job's with: to your GPU job's name:`},
		},
		{
			name: "test-step-name matches no step",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, own, "test-step-name: Run GPU tests", "test-step-name: Run the tests")}
			},
			wantErr:  []string{`test-step-name "Run the tests" matches no step of the GPU job "GPU tests"`},
			wantFixs: []string{`set test-step-name in the authorize job's with: to the name: of the step that runs your tests`},
		},
		{
			name: "a part's missing permission",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, own, "permissions: {actions: write, contents: read, pull-requests: read}", "permissions: {contents: read, pull-requests: read}")}
			},
			wantErr:  []string{"job watchdog calls gpu-lane-watchdog.yml, whose jobs need actions: write, but the caller grants actions: none"},
			wantFixs: []string{"add actions: write to jobs.watchdog.permissions"},
		},
		{
			name: "the lane's missing permission",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, lane, "  checks: write\n", "")}
			},
			wantErr:  []string{"job gpu calls gpu-lane.yml, whose jobs need checks: write, but the caller grants checks: none"},
			wantFixs: []string{"add checks: write to the workflow's permissions"},
		},
		{
			name: "a secret read under another name",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, lane, "RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}", "RUNPOD_API_KEY: ${{ secrets.RUNPOD_KEY }}")}
			},
			wantErr:  []string{"job gpu passes secrets.RUNPOD_KEY as RUNPOD_API_KEY, but the set-up (runpod-gpu init, checked by doctor) keeps this secret as RUNPOD_API_KEY in the runpod-gpu environment"},
			wantFixs: []string{"write RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}"},
		},
		{
			name: "a secret passed under a name the lane does not read",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, lane, "RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}", "RUNPOD_KEY: ${{ secrets.RUNPOD_API_KEY }}")}
			},
			wantErr:  []string{"job gpu passes the secret RUNPOD_KEY, which gpu-lane.yml does not read", "job gpu does not pass the secret RUNPOD_API_KEY, which gpu-lane.yml requires"},
			wantFixs: []string{"rename it to the name gpu-lane.yml reads", "add RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }} under jobs.gpu.secrets"},
		},
		{
			name: "a variable that does not match",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, own, "app-id: ${{ vars.RUNPOD_GPU_APP_ID }}", "app-id: ${{ vars.GPU_APP_ID }}")}
			},
			wantErr:  []string{"job authorize passes vars.GPU_APP_ID as app-id, but the set-up keeps it as the variable RUNPOD_GPU_APP_ID"},
			wantFixs: []string{"write app-id: ${{ vars.RUNPOD_GPU_APP_ID }}"},
		},
		{
			name: "another job on the runner's label",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, own, "  finish:   #", "  lint:\n    needs: provision\n    runs-on: ${{ needs.provision.outputs.runner-label }}\n    permissions: {}\n    steps: [{run: make lint}]\n  finish:   #")}
			},
			wantErr:  []string{`job "lint" runs on the pod's runner label (runs-on: ${{ needs.provision.outputs.runner-label }}), which only the GPU job "GPU tests" may`},
			wantFixs: []string{"give job lint a hosted runner (runs-on: ubuntu-latest)"},
		},
		{
			name: "workflow_run names no workflow of the repository",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: mutated(t, lane, "workflows: [CI]", "workflows: [Tests]")}
			},
			wantErr:  []string{`on.workflow_run.workflows names "Tests", but no workflow in .github/workflows has that name (the names are: "CI")`},
			wantFixs: []string{"write the `name:` of your CI workflow (not its file name)"},
		},
		{
			name: "workflow_run names a workflow the repository does not have",
			files: func(t *testing.T) map[string]string {
				return map[string]string{lanePath: own, ".github/workflows/ci.yml": ""}
			},
			wantErr:  []string{`on.workflow_run.workflows names "CI", but no workflow in .github/workflows has that name (the names are: none)`},
			wantFixs: []string{"write the `name:` of your CI workflow"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rehearse(t, repoWith(t, tt.files(t)))
			var text strings.Builder
			r.WriteText(&text)
			assert.Check(t, is.Len(r.Mistakes, len(tt.wantErr)), text.String())
			for i, want := range tt.wantErr {
				found := false
				for _, m := range r.Mistakes {
					if strings.Contains(m.What, want) && strings.Contains(m.Fix, tt.wantFixs[i]) {
						found = true
						assert.Check(t, is.Equal(m.File, lanePath))
					}
				}
				assert.Check(t, found, "want mistake %q with fix %q in:\n%s", want, tt.wantFixs[i], text.String())
			}
			assert.Check(t, is.Len(r.Played, 0), "a rehearsal with a mistake plays nothing")
			assert.Check(t, !r.OK())
			assert.Check(t, is.Contains(text.String(), "fix: "))
		})
	}
}

// A checkout without a lane caller, or without the configuration, is a mistake with its fix too.
func TestRehearseNamesAMissingCallerOrConfiguration(t *testing.T) {
	r := rehearse(t, repoWith(t, map[string]string{".github/runpod-gpu.yml": ""}))
	assert.Assert(t, is.Len(r.Mistakes, 2))
	assert.Check(t, is.Contains(r.Mistakes[0].What, "no workflow calls the GPU lane"))
	assert.Check(t, is.Contains(r.Mistakes[0].Fix, "runpod-gpu init"))
	assert.Check(t, is.Equal(r.Mistakes[1].What, "the configuration is missing"))

	dir := t.TempDir()
	_, err := Run(context.Background(), Options{Dir: dir})
	assert.Check(t, is.ErrorContains(err, "--dir "+dir+": no .github/workflows/*.yml"))
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, ".github", "workflows", "bad.yml"), []byte("jobs: [\n"), 0o644))
	_, err = Run(context.Background(), Options{Dir: dir})
	assert.Check(t, is.ErrorContains(err, ".github/workflows/bad.yml"))
}
