package ghapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// graphQLServer answers POST path with reply, recording the request bodies.
func graphQLServer(t *testing.T, path string, status int, reply string) (string, *[]map[string]any) {
	t.Helper()
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("unexpected request %s %s, want POST %s", r.Method, r.URL.Path, path)
		}
		assert.Check(t, is.Equal(r.Header.Get("Authorization"), "Bearer "+testToken))
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		assert.Check(t, json.Unmarshal(raw, &body))
		bodies = append(bodies, body)
		writeJSON(w, status, reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &bodies
}

const historyReply = `{"data":{"repository":{"pullRequest":{"timelineItems":{"nodes":[
 {"__typename":"PullRequestCommit","commit":{"oid":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
 {"__typename":"HeadRefForcePushedEvent","createdAt":"2026-03-02T10:02:00Z","beforeCommit":{"oid":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},"afterCommit":{"oid":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}},
 {"__typename":"HeadRefForcePushedEvent","beforeCommit":null,"afterCommit":{"oid":"not-a-sha"}},
 {"__typename":"SomethingNew"}]}}}}}`

// One POST to GraphQL beside the REST root (api.github.com/graphql; on
// GitHub Enterprise Server /api/graphql beside /api/v3) reads the pushes,
// oldest first; what is not a commit SHA reads as "".
func TestPullRequestHeadHistory(t *testing.T) {
	for _, tc := range []struct{ name, base, path string }{
		{name: "github.com", base: "", path: "/graphql"},
		{name: "enterprise server", base: "/api/v3", path: "/api/graphql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, bodies := graphQLServer(t, tc.path, http.StatusOK, historyReply)
			env := newTestEnv(t, func(o *Options) { o.BaseURL = url + tc.base })
			pushes, err := env.client.PullRequestHeadHistory(context.Background(), 7, 30)
			assert.NilError(t, err)
			a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
			assert.Check(t, is.DeepEqual(pushes, []HeadPush{{Commit: a}, {Force: true, Before: a, After: b}, {Force: true}}))
			assert.Assert(t, is.Len(*bodies, 1), "one request")
			vars := (*bodies)[0]["variables"].(map[string]any)
			assert.Check(t, is.DeepEqual(vars, map[string]any{"owner": "acme", "name": "widgets", "number": float64(7), "last": float64(30)}))
			assert.Check(t, is.Contains((*bodies)[0]["query"].(string), "HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT"))
		})
	}
}

func TestPullRequestHeadHistoryFailures(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reply  string
		want   string
	}{
		{name: "not found", status: http.StatusOK,
			reply: `{"data":{"repository":{"pullRequest":null}},"errors":[{"type":"NOT_FOUND","message":"Could not resolve to a PullRequest with the number of 7."}]}`,
			want:  "GraphQL error NOT_FOUND: Could not resolve to a PullRequest"},
		{name: "no data", status: http.StatusOK, reply: `{"data":null}`, want: "the answer names no pull request"},
		{name: "forbidden", status: http.StatusForbidden, reply: `{"message":"Resource not accessible by integration"}`, want: "403"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := graphQLServer(t, "/graphql", tc.status, tc.reply)
			env := newTestEnv(t, func(o *Options) { o.BaseURL = url })
			_, err := env.client.PullRequestHeadHistory(context.Background(), 7, 30)
			assert.Check(t, is.ErrorContains(err, "read the head history of pull request #7"))
			assert.Check(t, is.ErrorContains(err, tc.want))
		})
	}
	env := newTestEnv(t)
	_, err := env.client.PullRequestHeadHistory(context.Background(), 7, MaxHeadHistoryItems+1)
	assert.Check(t, is.ErrorContains(err, "want 1 to 100"))
	_, err = env.client.PullRequestHeadHistory(context.Background(), 0, 5)
	assert.Check(t, is.ErrorContains(err, "want a positive number"))
}

func TestGitCommitTreeAndParents(t *testing.T) {
	env := newTestEnv(t)
	merge, base, head, tree := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40), strings.Repeat("4", 40)
	env.fake.on("GET", "repos/acme/widgets/git/commits/"+merge, respond(200,
		`{"sha":"`+merge+`","tree":{"sha":"`+tree+`"},"parents":[{"sha":"`+base+`"},{"sha":"`+head+`"}]}`)).times(2)
	c, err := env.client.GitCommit(context.Background(), merge)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(c, Commit{Tree: tree, Parents: []string{base, head}}))
	got, err := env.client.CommitTree(context.Background(), merge)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got, tree))

	env.fake.on("GET", "repos/acme/widgets/git/commits/"+head, respond(200, `{"sha":"`+head+`","tree":{"sha":"`+tree+`"},"parents":[{"sha":"HEAD~1"}]}`))
	_, err = env.client.GitCommit(context.Background(), head)
	assert.Check(t, is.ErrorContains(err, `parent sha "HEAD~1"`))
}

func TestListPullRequestReviews(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7/reviews?per_page=100", respond(200,
		`[{"id":1,"user":{"login":"bob"},"state":"APPROVED","commit_id":"`+strings.Repeat("a", 40)+`"}]`))
	reviews, err := env.client.ListPullRequestReviews(context.Background(), 7)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(reviews, 1))
	assert.Check(t, is.Equal(reviews[0].GetUser().GetLogin(), "bob"))
	assert.Check(t, is.Equal(reviews[0].GetCommitID(), strings.Repeat("a", 40)))
}

func TestCompareFiles(t *testing.T) {
	env := newTestEnv(t)
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	env.fake.on("GET", "repos/acme/widgets/compare/"+a+"..."+b, respond(200,
		`{"status":"ahead","files":[{"filename":"src/k.cu"},{"filename":"docs/new.md","previous_filename":"docs/old.md"}]}`))
	files, err := env.client.CompareFiles(context.Background(), a, b)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(files, []string{"src/k.cu", "docs/new.md", "docs/old.md"}))

	many := make([]string, maxCompareFiles)
	for i := range many {
		many[i] = `{"filename":"f"}`
	}
	env.fake.on("GET", "repos/acme/widgets/compare/"+b+"..."+a, respond(200, `{"files":[`+strings.Join(many, ",")+`]}`))
	_, err = env.client.CompareFiles(context.Background(), b, a)
	assert.Check(t, is.ErrorContains(err, "300 files is GitHub's listing cap"))
	_, err = env.client.CompareFiles(context.Background(), "main", a)
	assert.Check(t, is.ErrorContains(err, "want two full lowercase commit SHAs"))
}
