package githubsim

import (
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestRewriteReplacesAHandledAnswer(t *testing.T) {
	f := newFixture(t)
	first, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: ".github/workflows/gpu.yml", Status: "in_progress"})
	assert.NilError(t, err)
	second, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: ".github/workflows/gpu.yml", Status: "queued"})
	assert.NilError(t, err)
	// The second run's record, as the simulation answers it, stands in for the first's.
	var other map[string]any
	_, err = f.raw(t, f.app, "GET", "repos/octo/gpu-lib/actions/runs/"+itoa(second), nil, &other)
	assert.NilError(t, err)
	f.srv.AddRewrite(Rewrite{Method: "GET", Path: "/repos/*/*/actions/runs/" + itoa(first), Skip: 1, Times: 1,
		Body: func(status int, body []byte) []byte {
			assert.Equal(t, status, http.StatusOK)
			assert.Assert(t, strings.Contains(string(body), `"id":`+itoa(first)), "the handler's answer is passed in: %s", body)
			return []byte(`{"id":` + itoa(second) + `,"status":"queued"}`)
		}})

	var ids []int64
	for range 3 {
		run, resp, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", first)
		assert.NilError(t, err)
		assert.Equal(t, resp.StatusCode, http.StatusOK)
		ids = append(ids, run.GetID())
	}
	assert.DeepEqual(t, ids, []int64{first, second, first})

	f.srv.AddRewrite(Rewrite{Path: "/repos/*/*/actions/runs/" + itoa(second), Status: http.StatusNotFound})
	_, resp, err := f.app.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", second)
	assert.Check(t, err != nil)
	assert.Equal(t, resp.StatusCode, http.StatusNotFound)
	assert.Equal(t, other["id"], float64(second), "read before any rule: the simulation's own record")
}
