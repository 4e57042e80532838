package rehearse

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// docWorkflows is the page whose callers users copy.
const docWorkflows = "../../.github/docs/workflows.md"

var yamlBlockRE = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// docCaller is the workflows page's first YAML block that names marker.
func docCaller(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile(docWorkflows)
	assert.NilError(t, err)
	for _, m := range yamlBlockRE.FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(m[1], marker) {
			return m[1]
		}
	}
	t.Fatalf("%s has no caller naming %q", docWorkflows, marker)
	return ""
}

// The one-command lane caller and the own-job caller, as the page shows them.
func laneCaller(t *testing.T) string { return docCaller(t, "/.github/workflows/gpu-lane.yml@") }
func ownJobCaller(t *testing.T) string {
	return docCaller(t, "/.github/workflows/gpu-lane-authorize.yml@")
}

const ciWorkflow = `name: CI
on: [pull_request]
permissions: {contents: read}
jobs:
  test:
    runs-on: ubuntu-latest
    steps: [{run: make test}]
`

const testConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000"]
max_price_candidates: 2
max_provision_attempts: 3
`

// repoWith writes a checkout holding the CI workflow, the configuration and
// the given workflow files (path under .github/workflows → text).
func repoWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{".github/workflows/ci.yml": ciWorkflow, ".github/runpod-gpu.yml": testConfig}
	for p, text := range files {
		all[p] = text
	}
	for p, text := range all {
		if text == "" {
			continue // a file the case removes
		}
		path := filepath.Join(dir, p)
		assert.NilError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		assert.NilError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return dir
}

func rehearse(t *testing.T, dir string) *Report {
	t.Helper()
	r, err := Run(context.Background(), Options{Dir: dir})
	assert.NilError(t, err)
	return r
}

// assertGreen checks a played rehearsal: no mistake, the lane's jobs
// succeeded, a green gate, a worst case printed.
func assertGreen(t *testing.T, r *Report, jobs ...string) {
	t.Helper()
	var text strings.Builder
	r.WriteText(&text)
	assert.Check(t, is.Len(r.Mistakes, 0), text.String())
	assert.Assert(t, is.Len(r.Played, 1), text.String())
	p := r.Played[0]
	results := map[string]string{}
	for _, j := range p.Jobs {
		results[j.ID] = j.Result
	}
	for _, j := range jobs {
		assert.Check(t, is.Equal(results[j], "success"), "job %s\n%s", j, text.String())
	}
	assert.Assert(t, p.Gate != nil, text.String())
	assert.Check(t, is.Equal(p.Gate.Conclusion, "success"), text.String())
	assert.Check(t, p.Gate.Title != "", text.String())
	assert.Check(t, strings.HasPrefix(p.WorstCase, "$"), text.String())
	assert.Check(t, r.OK())
}

// The README's one-command lane caller rehearses green: the pull request's
// CI in progress starts it, the lane's jobs run their real action code, the
// GPU job runs on the simulated pod's runner, and the gate is green.
func TestRehearseLaneCallerIsGreen(t *testing.T) {
	r := rehearse(t, repoWith(t, map[string]string{".github/workflows/runpod-gpu.yml": laneCaller(t)}))
	assertGreen(t, r, "gpu", "gpu / authorize", "gpu / reputation", "gpu / provision", "gpu / watchdog", "gpu / gpu-tests", "gpu / gate", "gpu / cleanup")
	assert.Check(t, is.Equal(r.Played[0].CI, "CI"))
}

// The own-job caller (the lane in four parts around the caller's own GPU job) rehearses green.
func TestRehearseOwnJobCallerIsGreen(t *testing.T) {
	r := rehearse(t, repoWith(t, map[string]string{".github/workflows/runpod-gpu.yml": ownJobCaller(t)}))
	assertGreen(t, r, "authorize", "build", "provision", "watchdog", "gpu", "finish", "finish / gate")
}

// With RealSteps the own-job caller's steps run on this machine: the hosted build makes
// the test archive with the repository's Makefile and uploads it, the GPU job downloads,
// unpacks and runs it on the simulated pod; tests that fail there fail the GPU job and
// the gate.
func TestRehearseOwnJobCallerWithRealSteps(t *testing.T) {
	for _, tc := range []struct {
		name, script, wantGPU, wantGate, wantLog string
	}{
		{name: "passing tests", script: "#!/bin/sh\necho '<testsuite failures=\"0\"/>' > \"$2\"\n", wantGPU: "success", wantGate: "success",
			wantLog: `<testsuite failures="0"/>`},
		{name: "failing tests", script: "#!/bin/sh\necho 'kernel mismatch' >&2\nexit 1\n", wantGPU: "failure", wantGate: "failure",
			wantLog: "kernel mismatch\n##[error]Process completed with exit code 1."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repoWith(t, map[string]string{".github/workflows/runpod-gpu.yml": ownJobCaller(t),
				"Makefile": "gpu-test-archive:\n\ttar -czf gpu-tests.tar.gz gpu-tests\n"})
			assert.NilError(t, os.MkdirAll(filepath.Join(dir, "gpu-tests"), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "gpu-tests", "run.sh"), []byte(tc.script), 0o755))
			var log strings.Builder
			r, err := Run(context.Background(), Options{Dir: dir, RealSteps: true, StepsLog: &log})
			assert.NilError(t, err)
			assert.Check(t, is.Contains(log.String(), tc.wantLog))
			var text strings.Builder
			r.WriteText(&text)
			assert.Assert(t, is.Len(r.Played, 1), text.String())
			results := map[string]string{}
			for _, j := range r.Played[0].Jobs {
				results[j.ID] = j.Result
			}
			assert.Check(t, is.Equal(results["build"], "success"), text.String())
			assert.Check(t, is.Equal(results["gpu"], tc.wantGPU), text.String())
			assert.Assert(t, r.Played[0].Gate != nil, text.String())
			assert.Check(t, is.Equal(r.Played[0].Gate.Conclusion, tc.wantGate), text.String())
			_, err = os.Stat(filepath.Join(dir, "gpu-tests.tar.gz"))
			assert.Check(t, os.IsNotExist(err), "the build ran in a copy of the checkout")
		})
	}
}
