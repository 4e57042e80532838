package githubsim

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
)

// TestConditionalGet: a GET carrying the ETag of the answer it would get is
// answered 304 with no body and no rate-limit charge; a stale or absent ETag
// gets the full answer (and is charged).
func TestConditionalGet(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	get := func(ifNoneMatch string) *http.Response {
		t.Helper()
		req, err := f.app.NewRequest(http.MethodGet, "repos/octo/gpu-lib/pulls/1", nil)
		assert.NilError(t, err)
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err := f.app.Client().Do(req)
		assert.NilError(t, err)
		resp.Body.Close()
		return resp
	}
	first := get("")
	assert.Equal(t, first.StatusCode, http.StatusOK)
	etag := first.Header.Get("ETag")
	assert.Assert(t, etag != "", "a 200 GET carries an ETag")
	login := f.srv.Requests()[0].Login
	used := f.srv.RateUsed(login)

	for _, tc := range []struct {
		name, ifNoneMatch string
		want              int
		charged           int
	}{
		{"matching", etag, http.StatusNotModified, 0},
		{"weak form and a list", `"other", W/` + etag, http.StatusNotModified, 0},
		{"stale", `"0123"`, http.StatusOK, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.srv.RateUsed(login)
			resp := get(tc.ifNoneMatch)
			assert.Equal(t, resp.StatusCode, tc.want)
			assert.Equal(t, f.srv.RateUsed(login)-before, tc.charged, "a 304 costs no rate limit")
			assert.Equal(t, resp.Header.Get("ETag"), etag)
		})
	}
	assert.Equal(t, f.srv.RateUsed(login), used+1)

	// A change makes the old ETag stale: the full, new answer.
	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.HeadSHA = sha('b') }))
	changed := get(etag)
	assert.Equal(t, changed.StatusCode, http.StatusOK)
	assert.Assert(t, changed.Header.Get("ETag") != etag)
}
