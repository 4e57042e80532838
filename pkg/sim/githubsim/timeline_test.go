package githubsim

import (
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// headHistoryQuery is the query the lane sends (pkg/ghapi), spelled as a client would.
const headHistoryQuery = `query($owner: String!, $name: String!, $number: Int!, $last: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT]) {
        nodes {
          __typename
          ... on HeadRefForcePushedEvent { createdAt beforeCommit { oid } afterCommit { oid } }
          ... on PullRequestCommit { commit { oid } }
        }
      }
    }
  }
}`

func historyVars(number, last int) map[string]any {
	return map[string]any{"owner": "octo", "name": "gpu-lib", "number": number, "last": last}
}

// The timeline shows the opening commit, a plain push and a force-push with
// the heads before and after it, oldest first; last keeps the newest items.
func TestGraphQLHeadHistoryShape(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a'), MergeCommitSHA: sha('d')})
	assert.NilError(t, err)
	f.clock.Advance(60e9)
	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.HeadSHA = sha('b') }))
	f.clock.Advance(60e9)
	assert.NilError(t, f.srv.ForcePushPullRequest(repoName, n, func(p *PullRequestSpec) { p.HeadSHA, p.MergeCommitSHA = sha('c'), sha('e') }))

	rec, body := serveDirect(t, f.srv, "POST", "/graphql", appToken, graphqlRequest{Query: headHistoryQuery, Variables: historyVars(n, 50)})
	assert.Equal(t, rec.Code, http.StatusOK)
	golden.Assert(t, indent(t, body), "graphql-head-history.golden.json")

	rec, body = serveDirect(t, f.srv, "POST", "/api/graphql", appToken, graphqlRequest{Query: headHistoryQuery, Variables: historyVars(n, 1)})
	assert.Equal(t, rec.Code, http.StatusOK, "GitHub Enterprise Server's path")
	assert.Check(t, is.Contains(string(body), `"HeadRefForcePushedEvent"`))
	assert.Check(t, !strings.Contains(string(body), `"PullRequestCommit"`), "last: 1 keeps only the newest item: %s", body)
}

// What does not resolve answers 200 with GraphQL errors, as GitHub does; a
// missing token is a 401 like any other endpoint.
func TestGraphQLHeadHistoryErrors(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		want  string
	}{
		{name: "unknown repository", query: headHistoryQuery, vars: map[string]any{"owner": "octo", "name": "nope", "number": n, "last": 5},
			want: `{"data":{"repository":null},"errors":[{"type":"NOT_FOUND","path":["repository"],"message":"Could not resolve to a Repository with the name 'octo/nope'."}]}`},
		{name: "unknown pull request", query: headHistoryQuery, vars: historyVars(7, 5),
			want: `{"data":{"repository":{"pullRequest":null}},"errors":[{"type":"NOT_FOUND","path":["repository","pullRequest"],"message":"Could not resolve to a PullRequest with the number of 7."}]}`},
		{name: "last above 100", query: headHistoryQuery, vars: historyVars(n, 101),
			want: `{"data":null,"errors":[{"type":"INVALID_ARGUMENTS","message":"Variables number and last are required; ` + "`last`" + ` must be between 1 and 100."}]}`},
		{name: "another query", query: "query { viewer { login } }", vars: nil,
			want: `{"data":null,"errors":[{"message":"the simulated GitHub answers only the pull request head-history query"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, body := serveDirect(t, f.srv, "POST", "/graphql", appToken, graphqlRequest{Query: tc.query, Variables: tc.vars})
			assert.Equal(t, rec.Code, http.StatusOK)
			assert.Equal(t, string(body), tc.want)
		})
	}
	rec, _ := serveDirect(t, f.srv, "POST", "/graphql", "", graphqlRequest{Query: headHistoryQuery, Variables: historyVars(n, 5)})
	assert.Equal(t, rec.Code, http.StatusUnauthorized)
}

// A pull request's merge commit is recorded with parents (base, head) when it
// first appears and keeps them: a head moved back without a new merge commit
// still names the merge of the other head.
func TestMergeCommitParentsAndMergeable(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a'), MergeCommitSHA: sha('d')})
	assert.NilError(t, err)
	commit, _, err := f.app.Git.GetCommit(ctx, "octo", "gpu-lib", sha('d'))
	assert.NilError(t, err)
	assert.Check(t, is.Len(commit.Parents, 2))
	assert.Check(t, is.Equal(commit.Parents[0].GetSHA(), sha('0')), "the base first")
	assert.Check(t, is.Equal(commit.Parents[1].GetSHA(), sha('a')), "then the head")
	assert.Check(t, is.Len(commit.GetTree().GetSHA(), 40), "an unnamed tree is still a tree")

	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.HeadSHA, p.MergeCommitSHA = sha('e'), sha('f') }))
	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.HeadSHA = sha('a') }))
	commit, _, err = f.app.Git.GetCommit(ctx, "octo", "gpu-lib", sha('f'))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(commit.Parents[1].GetSHA(), sha('e')), "the merge commit of the pushed head, not the head now")

	pr, _, err := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(pr.GetMergeable(), true))
	assert.Check(t, is.Equal(pr.GetMergeableState(), "clean"))
	no := false
	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.Mergeable = &no }))
	pr, _, err = f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(pr.GetMergeable(), false))
	assert.Check(t, is.Equal(pr.GetMergeableState(), "dirty"))
	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.Mergeable, p.MergeCommitSHA = nil, "" }))
	pr, _, err = f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Check(t, pr.Mergeable == nil, "not computed yet: null")

	assert.NilError(t, f.srv.SetCommitParents(repoName, sha('d'), sha('1'), sha('a')))
	commit, _, err = f.app.Git.GetCommit(ctx, "octo", "gpu-lib", sha('d'))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(commit.Parents[0].GetSHA(), sha('1')))
	_, _, err = f.app.Git.GetCommit(ctx, "octo", "gpu-lib", sha('9'))
	assert.Check(t, is.Equal(statusOf(err), http.StatusNotFound))
}

// Reviews list who reviewed which commit, with the verdict.
func TestListPullRequestReviews(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	_, err = f.srv.AddReview(repoName, n, ReviewSpec{Author: "bob", State: "APPROVED"})
	assert.NilError(t, err)
	_, err = f.srv.AddReview(repoName, n, ReviewSpec{Author: "carol", State: "CHANGES_REQUESTED", CommitID: sha('b')})
	assert.NilError(t, err)
	_, err = f.srv.AddReview(repoName, n, ReviewSpec{Author: "bob", State: "LGTM"})
	assert.Check(t, is.ErrorContains(err, `review state "LGTM"`))

	reviews, _, err := f.app.PullRequests.ListReviews(ctx, "octo", "gpu-lib", n, nil)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(reviews, 2))
	assert.Check(t, is.Equal(reviews[0].GetUser().GetLogin(), "bob"))
	assert.Check(t, is.Equal(reviews[0].GetState(), "APPROVED"))
	assert.Check(t, is.Equal(reviews[0].GetCommitID(), sha('a')), "bound to the head it was submitted on")
	assert.Check(t, is.Equal(reviews[1].GetCommitID(), sha('b')))
	assert.Check(t, reviews[0].SubmittedAt != nil)
	_, _, err = f.app.PullRequests.ListReviews(ctx, "octo", "gpu-lib", 99, nil)
	assert.Check(t, is.Equal(statusOf(err), http.StatusNotFound))
}

// A comparison lists the files recorded for it; another pair is unknown.
func TestCompareCommits(t *testing.T) {
	f := newFixture(t)
	assert.NilError(t, f.srv.SetCompareFiles(repoName, sha('1'), sha('2'), []string{"src/k.cu", "README.md"}))
	comp, _, err := f.app.Repositories.CompareCommits(ctx, "octo", "gpu-lib", sha('1'), sha('2'), nil)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(comp.Files, 2))
	assert.Check(t, is.Equal(comp.Files[0].GetFilename(), "src/k.cu"))
	assert.Check(t, is.Equal(comp.GetStatus(), "ahead"))
	_, _, err = f.app.Repositories.CompareCommits(ctx, "octo", "gpu-lib", sha('2'), sha('1'), nil)
	assert.Check(t, is.Equal(statusOf(err), http.StatusNotFound))
}
