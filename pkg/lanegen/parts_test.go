package lanegen

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestFromLane: each value source of a lane job as a part reads it.
func TestFromLane(t *testing.T) {
	own := []string{"environment", "lane", "gpu-job-result", "rerun-gpu-job-result"}
	tests := []struct {
		name, line, want, wantErr string
		ownJobs                   []string
	}{
		{name: "a lane input", line: "config-path: ${{ inputs.config-path }}", want: "config-path: ${{ fromJSON(inputs.lane).inputs.config-path }}"},
		{name: "the part's own input", line: "environment: ${{ inputs.environment || 'runpod-gpu' }}", want: "environment: ${{ inputs.environment || 'runpod-gpu' }}"},
		{name: "inputs inside an expression", line: "if: ${{ !inputs.keep-failed-pods && inputs.environment }}",
			want: "if: ${{ !fromJSON(inputs.lane).inputs.keep-failed-pods && inputs.environment }}"},
		{name: "another job's output", line: "if: needs.reputation.outputs.found == 'true'", want: "if: fromJSON(inputs.lane).reputation.outputs.found == 'true'"},
		{name: "the part's own job", line: "tier-results: ${{ needs.cleanup.outputs.tier-results }}", ownJobs: []string{"cleanup"},
			want: "tier-results: ${{ needs.cleanup.outputs.tier-results }}"},
		{name: "the latest of a job and its re-run", line: "tiers: ${{ needs.provision-again.outputs.tiers || needs.provision.outputs.tiers }}",
			want: "tiers: ${{ fromJSON(inputs.lane).provision.outputs.tiers }}"},
		{name: "the GPU jobs' results", line: "r: ${{ needs.gpu-tests.result }} ${{ needs.gpu-tests-again.result }}",
			want: "r: ${{ inputs.gpu-job-result }} ${{ inputs.rerun-gpu-job-result }}"},
		{name: "the GPU job's name, a literal in the lane", line: "          gpu-job-name: GPU tests # the gpu-tests job's name",
			want: "          gpu-job-name: ${{ fromJSON(inputs.lane).inputs.gpu-job-name }}"},
		{name: "the test step's name", line: "          test-step-name: Run GPU tests",
			want: "          test-step-name: ${{ fromJSON(inputs.lane).inputs.test-step-name }}"},
		{name: "steps and the job context stay", line: "x: ${{ steps.provision.outputs.pods }} ${{ job.check_run_id }}",
			want: "x: ${{ steps.provision.outputs.pods }} ${{ job.check_run_id }}"},
		{name: "another job's result", line: "if: needs.authorize.result == 'success'", wantErr: "needs.authorize.result is not a job of the part"},
		{name: "a job and another's re-run", line: "x: ${{ needs.watchdog-again.outputs.tiers || needs.provision.outputs.tiers }}",
			wantErr: "reads two jobs that are not a job and its re-run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fromLane(tc.line, own, tc.ownJobs)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tc.want))
		})
	}
}

// TestFromLaneResultsNeedTheirInputs: a part that takes no GPU job result
// cannot read one.
func TestFromLaneResultsNeedTheirInputs(t *testing.T) {
	_, err := fromLane("r: ${{ needs.gpu-tests.result }}", []string{"lane"}, nil)
	assert.ErrorContains(t, err, "needs.gpu-tests.result is not a job of the part")
}

// TestWithWiring: a job's needs and if (with the comments above the if) are
// replaced where the needs was; a comment above the needs stays.
func TestWithWiring(t *testing.T) {
	j := job{id: "gate", body: []string{
		"    name: Publish",
		"    # After cleanup.",
		"    needs: [a, b]",
		"    # Why the if.",
		"    if: always()",
		"    runs-on: ubuntu-latest",
	}}
	got := j.withWiring([]string{"    needs: cleanup"})
	assert.DeepEqual(t, got.body, []string{"    name: Publish", "    # After cleanup.", "    needs: cleanup", "    runs-on: ubuntu-latest"})
	got = job{body: []string{"    name: W", "    runs-on: x"}}.withWiring([]string{"    if: always()"})
	assert.DeepEqual(t, got.body, []string{"    name: W", "    if: always()", "    runs-on: x"})
}
