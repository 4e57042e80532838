package githubsim

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

func TestUnknownRoutesAnswerLikeGitHub(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
	}{
		{name: "unknown path", method: "GET", path: "repos/octo/gpu-lib/nothing-here"},
		{name: "unknown repository", method: "GET", path: "repos/octo/missing/pulls/1"},
		{name: "wrong method", method: "PUT", path: "repos/octo/gpu-lib/check-runs"},
		{name: "id that is not a number", method: "GET", path: "repos/octo/gpu-lib/actions/runs/abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.raw(t, f.app, tt.method, tt.path, nil, nil)
			var er *github.ErrorResponse
			assert.Assert(t, errors.As(err, &er))
			assert.Equal(t, er.Response.StatusCode, http.StatusNotFound)
			assert.Equal(t, er.Message, "Not Found")
			assert.Equal(t, er.DocumentationURL, docsURL)
		})
	}
}

func TestOversizedBodyRefused(t *testing.T) {
	f := newFixture(t)
	rec, _ := serveDirect(t, f.srv, "POST", "/repos/octo/gpu-lib/check-runs", appToken, strings.Repeat("x", maxBodyBytes+1))
	assert.Equal(t, rec.Code, http.StatusRequestEntityTooLarge)
}

func TestRequestLog(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	assert.NilError(t, f.srv.SetRunLogs(repoName, runID, 0, map[string]string{"a.txt": "x"}))
	u, _, err := f.app.Actions.GetWorkflowRunLogs(ctx, "octo", "gpu-lib", runID, 0)
	assert.NilError(t, err)
	resp, err := http.Get(u.String())
	assert.NilError(t, err)
	resp.Body.Close()

	log := f.srv.Requests()
	assert.Equal(t, len(log), 2)
	assert.Equal(t, log[0].Login, "runpod-gpu-gate[bot]")
	assert.Equal(t, log[0].Status, http.StatusFound)
	assert.Equal(t, log[1].Path, "/_sim/blobs/{key}", "download keys are credentials and stay out of the log")
	assert.Equal(t, f.srv.CountRequests("GET", "/repos/*/*/actions/runs/*/logs"), 1)
	for _, r := range log {
		assert.Check(t, !strings.Contains(r.Path+r.Query, appToken))
	}
}

func TestConcurrentClients(t *testing.T) {
	f := newFixture(t)
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			_, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("r-"+itoa(int64(i)), "gpu"))
			errs <- err
		}()
	}
	for range 20 {
		assert.NilError(t, <-errs)
	}
	assert.Equal(t, len(f.srv.Runners()), 20)
}
