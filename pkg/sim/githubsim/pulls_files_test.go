package githubsim

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

func TestPullRequestFilesDecodeWithGoGitHub(t *testing.T) {
	s := New(WithToken("tok", Identity{Login: "octocat"}))
	assert.NilError(t, s.AddRepo(Repo{Owner: "o", Name: "r"}))
	n, err := s.AddPullRequest("o/r", PullRequestSpec{HeadRef: "topic", HeadSHA: "0123456789012345678901234567890123456789", Files: []string{"src/a.cu", "docs/b.md", "c.txt"}})
	assert.NilError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(srv.URL+"/", srv.URL+"/")
	assert.NilError(t, err)
	c.BaseURL, _ = c.BaseURL.Parse(srv.URL + "/")
	files, resp, err := c.PullRequests.ListFiles(context.Background(), "o", "r", n, &github.ListOptions{PerPage: 2})
	assert.NilError(t, err)
	assert.Equal(t, len(files), 2)
	assert.Equal(t, files[0].GetFilename(), "src/a.cu")
	assert.Equal(t, resp.NextPage, 2)
	files, _, err = c.PullRequests.ListFiles(context.Background(), "o", "r", n, &github.ListOptions{PerPage: 2, Page: 2})
	assert.NilError(t, err)
	assert.Equal(t, files[0].GetFilename(), "c.txt")
}
