package workflowplay

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestInterpolate(t *testing.T) {
	ctx := Contexts{Values: map[string]any{
		"inputs": map[string]any{"pr-number": float64(7), "empty": "", "flag": false},
		"needs": map[string]any{
			"provision": map[string]any{"result": "success", "outputs": map[string]any{"runner-label": "rp-1", "lane": ""}},
			"authorize": map[string]any{"result": "success", "outputs": map[string]any{"lane": `{"inputs":{"pr-number":7,"name":"GPU tests"}}`}},
		},
		"github": map[string]any{"event": map[string]any{"workflow_run": map[string]any{"pull_requests": []any{map[string]any{"number": float64(42)}}}}},
	}}
	tests := []struct{ in, want, wantErr string }{
		{in: "${{ inputs.pr-number }}", want: "7"},
		{in: "runs-on ${{ needs.provision.outputs.runner-label }}!", want: "runs-on rp-1!"},
		{in: "${{ needs.provision.outputs.lane || needs.authorize.outputs.lane }}", want: `{"inputs":{"pr-number":7,"name":"GPU tests"}}`},
		{in: "${{ fromJSON(needs.authorize.outputs.lane).inputs.name }}", want: "GPU tests"},
		{in: "${{ fromJSON(needs.authorize.outputs.lane).inputs['pr-number'] }}", want: "7"},
		{in: "${{ fromJSON(needs.authorize.outputs.lane).missing.outputs.x }}", want: ""},
		{in: "${{ github.event.workflow_run.pull_requests[0].number || inputs.pr-number }}", want: "42"},
		{in: "${{ github.event.workflow_run.pull_requests[1] != null }}", want: "false"},
		{in: "${{ inputs.empty == null }}", want: "true"}, // GitHub: both are 0 as numbers
		{in: "${{ 'SUCCESS' == needs.provision.result }}", want: "true"},
		{in: "${{ inputs.flag && 'yes' || 'no' }}", want: "no"},
		{in: "${{ format('{{\"a\":{0}}}', toJSON(inputs.pr-number)) }}", want: `{"a":7}`},
		{in: "${{ nosuch(1) }}", wantErr: "not evaluated here"},
		{in: "${{ inputs.x", wantErr: "unterminated"},
	}
	for _, tc := range tests {
		got, err := Interpolate(tc.in, ctx)
		if tc.wantErr != "" {
			assert.Check(t, is.ErrorContains(err, tc.wantErr), tc.in)
			continue
		}
		assert.Check(t, err, tc.in)
		assert.Check(t, is.Equal(got, tc.want), tc.in)
	}
}

func TestCondition(t *testing.T) {
	needs := map[string]any{"authorize": map[string]any{"result": "success", "outputs": map[string]any{"decision": "run"}}}
	tests := []struct {
		cond   string
		status Status
		want   bool
	}{
		{cond: "", status: Status{Success: true}, want: true},
		{cond: "", status: Status{Failure: true}},
		{cond: "needs.authorize.outputs.decision == 'run'", status: Status{Success: true}, want: true},
		{cond: "needs.authorize.outputs.decision == 'run'", status: Status{Failure: true}}, // success() is implied
		{cond: "${{ always() && needs.authorize.result == 'success' }}", status: Status{Failure: true}, want: true},
		{cond: "${{ !cancelled() && needs.authorize.outputs.decision == 'skip' }}", status: Status{Success: true}},
	}
	for _, tc := range tests {
		got, err := Condition(tc.cond, Contexts{Values: map[string]any{"needs": needs}, Status: tc.status})
		assert.NilError(t, err)
		assert.Check(t, is.Equal(got, tc.want), "%q with %+v", tc.cond, tc.status)
	}
}
