package githubsim

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
)

func TestRewriteReplacesMatchingSuccessfulAnswers(t *testing.T) {
	f := newFixture(t)
	_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
	assert.NilError(t, err)
	f.srv.AddRewrite(Rewrite{Method: "GET", Path: "/repos/*/*/pulls/*", Skip: 1, Times: 2,
		Body: func(status int, body []byte) []byte {
			assert.Check(t, status == http.StatusOK && len(body) > 2, "the rule sees the handled answer")
			return []byte(`{}`)
		}})
	f.srv.AddFault(Fault{Kind: FaultServerError, Method: "GET", Path: "/repos/*/*/pulls/*", Skip: 3, Times: 1, Status: 503})

	var states []string
	for range 5 {
		pr, resp, _ := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
		states = append(states, http.StatusText(resp.StatusCode)+":"+pr.GetState())
	}
	assert.DeepEqual(t, states, []string{"OK:open", "OK:", "OK:", "Service Unavailable:", "OK:open"})

	_, _, err = f.app.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
	assert.NilError(t, err, "other paths are untouched")
}

func TestRewriteCanReplaceTheStatus(t *testing.T) {
	f := newFixture(t)
	_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
	assert.NilError(t, err)
	f.srv.AddRewrite(Rewrite{Path: prPath, Status: http.StatusNonAuthoritativeInfo})
	_, resp, err := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusNonAuthoritativeInfo)
	assert.Equal(t, f.srv.Requests()[0].Status, http.StatusNonAuthoritativeInfo, "the request log records what was sent")
}
