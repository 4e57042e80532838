package ghapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestGetPullRequest(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7", respondFile(t, http.StatusOK, "pull_request.json"))

	pr, err := env.client.GetPullRequest(context.Background(), 7)
	assert.NilError(t, err)
	assert.Equal(t, pr.GetState(), "open")
	assert.Equal(t, pr.GetHead().GetRepo().GetFork(), false)
	assert.Equal(t, pr.Labels[0].GetName(), "gpu-validated-locally")
	assert.Equal(t, pr.GetMergeCommitSHA(), "0123456789abcdef0123456789abcdef01234567")
}

func TestGetPullRequestRefusesUnusableAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{name: "empty object", body: `{}`, wantErr: "ghapi: get pull request #7: the answer describes #0: unusable answer"},
		{name: "no state", body: `{"number":7,"head":{"sha":"0123456789abcdef0123456789abcdef01234567"}}`, wantErr: `state ""; want open or closed`},
		{name: "unknown state", body: `{"number":7,"state":"merged?","head":{"sha":"0123456789abcdef0123456789abcdef01234567"}}`, wantErr: `state "merged?"; want open or closed`},
		{name: "no head", body: `{"number":7,"state":"open"}`, wantErr: "the answer has no head SHA"},
		{name: "another pull request", body: `{"number":8,"state":"closed","head":{"sha":"0123456789abcdef0123456789abcdef01234567"}}`, wantErr: "the answer describes #8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.on("GET", "repos/acme/widgets/pulls/7", respond(http.StatusOK, tc.body))

			pr, err := env.client.GetPullRequest(context.Background(), 7)

			assert.Check(t, pr == nil)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, errors.Is(err, ErrUnusableAnswer))
			assert.Check(t, !errors.Is(err, ErrNotFound), "an unusable answer is unknown, never a missing PR")
		})
	}
}

func TestGetPullRequestRejectsBadNumber(t *testing.T) {
	env := newTestEnv(t)
	_, err := env.client.GetPullRequest(context.Background(), 0)
	assert.Check(t, is.ErrorContains(err, "pull request number is 0; want a positive number"))
}

func TestIssueComments(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/issues/7/comments?per_page=100&page=1", withNextPage(2, 2, respondFile(t, http.StatusOK, "issue_comments.json")))
	env.fake.on("GET", "repos/acme/widgets/issues/7/comments?per_page=100&page=2", respond(http.StatusOK, `[]`))
	env.fake.on("POST", "repos/acme/widgets/issues/7/comments", expectJSONBody(t, `{"body":"evidence"}`,
		respond(http.StatusCreated, `{"id":2,"body":"evidence","user":{"login":"relay-bot[bot]","type":"Bot"},"author_association":"NONE"}`)))

	comments, err := env.client.ListIssueComments(context.Background(), 7)
	assert.NilError(t, err)
	assert.Equal(t, len(comments), 1)
	assert.Equal(t, comments[0].GetUser().GetLogin(), "octocat")

	created, err := env.client.CreateIssueComment(context.Background(), 7, "evidence")
	assert.NilError(t, err)
	assert.Equal(t, created.GetID(), int64(2))
}

func TestPermissionRoleReadsRoleName(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantRole string
		wantErr  string
	}{
		{name: "maintain shows as write in permission", body: "file:permission_maintain.json", wantRole: RoleMaintain},
		{name: "triage shows as read in permission", body: `{"permission":"read","role_name":"triage","user":{"login":"octocat"}}`, wantRole: RoleTriage},
		{name: "custom role", body: `{"permission":"write","role_name":"gpu-operator","user":{"login":"octocat"}}`, wantRole: "gpu-operator"},
		{name: "admin", body: `{"permission":"admin","role_name":"admin","user":{"login":"octocat"}}`, wantRole: RoleAdmin},
		{name: "no role_name", body: `{"permission":"admin","user":{"login":"octocat"}}`, wantErr: "read octocat's permission: GitHub's answer has no role_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			handler := respond(http.StatusOK, tt.body)
			if file, ok := strings.CutPrefix(tt.body, "file:"); ok {
				handler = respondFile(t, http.StatusOK, file)
			}
			env.fake.on("GET", "repos/acme/widgets/collaborators/octocat/permission", handler)

			role, err := env.client.PermissionRole(context.Background(), "octocat")
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, role, tt.wantRole)
		})
	}
}

func TestListPullRequestFiles(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/pulls/7/files?per_page=100&page=1", withNextPage(2, 2,
		respond(http.StatusOK, `[{"filename":"src/add.cu","status":"modified"},{"filename":"docs/new.md","previous_filename":"docs/old.md","status":"renamed"}]`)))
	env.fake.on("GET", "repos/acme/widgets/pulls/7/files?per_page=100&page=2", respond(http.StatusOK, `[{"filename":"README.md","status":"modified"}]`))

	files, err := env.client.ListPullRequestFiles(context.Background(), 7)
	assert.NilError(t, err)
	assert.DeepEqual(t, files, []string{"src/add.cu", "docs/new.md", "docs/old.md", "README.md"})
	_, err = env.client.ListPullRequestFiles(context.Background(), 0)
	assert.Check(t, is.ErrorContains(err, "want a positive number"))
}
