package rules

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaCostArtifactProblems checks that every cleanup step of a workflow names
// its job in the cost artifact (job-check-run-id: ${{ job.check_run_id }}),
// the only upload the cost history counts, and that the artifact is uploaded
// under the name cleanup gives it.
func metaCostArtifactProblems(name, text string) []string {
	var problems []string
	wf := metaWorkflow{}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return []string{name + ": " + err.Error()}
	}
	for _, id := range metaSortedKeys(wf.Jobs) {
		for i, st := range wf.Jobs[id].Steps {
			if !strings.HasSuffix(strings.SplitN(st.Uses, "@", 2)[0], "actions/cleanup") {
				continue
			}
			if got := strings.TrimSpace(st.With["job-check-run-id"]); got != "${{ job.check_run_id }}" {
				problems = append(problems, fmt.Sprintf("%s: jobs.%s.steps[%d] passes job-check-run-id %q; want ${{ job.check_run_id }}, or the cost history ignores its artifact", name, id, i, got))
			}
		}
		for i, st := range wf.Jobs[id].Steps {
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") && strings.Contains(st.With["path"], "cost-artifact-path") &&
				!strings.Contains(st.With["name"], ".outputs.cost-artifact-name") {
				problems = append(problems, fmt.Sprintf("%s: jobs.%s.steps[%d] uploads the cost artifact as %q, not cleanup's cost-artifact-name", name, id, i, st.With["name"]))
			}
		}
	}
	return problems
}

func TestMetaCleanupStepsNameTheirJob(t *testing.T) {
	files := metaWorkflowFiles(t)
	cleanups := 0
	for _, name := range metaSortedKeys(files) {
		cleanups += strings.Count(files[name], "/actions/cleanup")
		assert.Check(t, is.Len(metaCostArtifactProblems(name, files[name]), 0))
	}
	assert.Check(t, cleanups >= 2, "gpu-lane.yml and self-test.yml run cleanup")
}

func TestMetaCostArtifactCheckDetectsMistakes(t *testing.T) {
	lane := metaWorkflowFiles(t)["gpu-lane.yml"]
	for _, tc := range []struct{ name, old, new, want string }{
		{name: "no job id", old: "          job-check-run-id: ${{ job.check_run_id }}", new: "", want: "passes job-check-run-id \"\""},
		{name: "another name", old: "name: ${{ steps.cleanup.outputs.cost-artifact-name }}", new: "name: runpod-gpu-cost-${{ github.run_id }}",
			want: "not cleanup's cost-artifact-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(lane, tc.old))
			problems := metaCostArtifactProblems("gpu-lane.yml", strings.Replace(lane, tc.old, tc.new, 1))
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want), "%v", problems)
		})
	}
}
