package githubsim

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

func TestGetPullRequest(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{
		Title: "Faster kernels", Author: "alice", HeadRef: "fast", HeadSHA: sha('a'),
		MergeCommitSHA: sha('d'), Labels: []string{"gpu-validated-locally"},
	})
	assert.NilError(t, err)

	pr, _, err := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Equal(t, pr.GetNumber(), 1)
	assert.Equal(t, pr.GetState(), "open")
	assert.Equal(t, pr.GetTitle(), "Faster kernels")
	assert.Equal(t, pr.GetUser().GetLogin(), "alice")
	assert.Equal(t, pr.GetHead().GetSHA(), sha('a'))
	assert.Equal(t, pr.GetHead().GetRef(), "fast")
	assert.Equal(t, pr.GetHead().GetRepo().GetFullName(), "octo/gpu-lib")
	assert.Equal(t, pr.GetHead().GetRepo().GetFork(), false)
	assert.Equal(t, pr.GetBase().GetRef(), "main")
	assert.Equal(t, pr.GetBase().GetSHA(), sha('0'))
	assert.Equal(t, pr.GetMergeCommitSHA(), sha('d'))
	assert.Equal(t, pr.GetMerged(), false)
	assert.Assert(t, pr.MergedAt == nil && pr.ClosedAt == nil)
	assert.Equal(t, len(pr.Labels), 1)
	assert.Equal(t, pr.Labels[0].GetName(), "gpu-validated-locally")
	assert.Equal(t, pr.GetCreatedAt().Time, start)

	_, _, err = f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 99)
	assert.Equal(t, statusOf(err), http.StatusNotFound)
}

func TestForkPullRequest(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "main", HeadSHA: sha('e'), HeadRepo: "mallory/gpu-lib"})
	assert.NilError(t, err)

	pr, _, err := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Equal(t, pr.GetHead().GetRepo().GetFullName(), "mallory/gpu-lib", "the origin shows in head.repo.full_name")
	assert.Equal(t, pr.GetHead().GetRepo().GetFork(), true)
	assert.Equal(t, pr.GetHead().GetLabel(), "mallory:main")
	assert.Equal(t, pr.GetBase().GetRepo().GetFullName(), "octo/gpu-lib")
}

func TestUpdatePullRequest(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	f.clock.Advance(time.Hour)

	assert.NilError(t, f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) {
		p.State, p.Merged, p.HeadSHA = "closed", true, sha('b')
	}))
	pr, _, err := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", n)
	assert.NilError(t, err)
	assert.Equal(t, pr.GetState(), "closed")
	assert.Equal(t, pr.GetMerged(), true)
	assert.Equal(t, pr.GetHead().GetSHA(), sha('b'))
	assert.Equal(t, pr.GetClosedAt().Time, start.Add(time.Hour))
	assert.Equal(t, pr.GetMergedAt().Time, start.Add(time.Hour))

	err = f.srv.UpdatePullRequest(repoName, n, func(p *PullRequestSpec) { p.State = "merged" })
	assert.Check(t, errors.Is(err, ErrInvalid))
	err = f.srv.UpdatePullRequest(repoName, 42, func(*PullRequestSpec) {})
	assert.Check(t, errors.Is(err, ErrNotFound))
}

func TestAddPullRequestRefusals(t *testing.T) {
	tests := []struct {
		name string
		spec PullRequestSpec
		want error
	}{
		{name: "short head SHA", spec: PullRequestSpec{HeadRef: "x", HeadSHA: "abc123"}, want: ErrInvalid},
		{name: "no head ref", spec: PullRequestSpec{HeadSHA: sha('a')}, want: ErrInvalid},
		{name: "open and merged", spec: PullRequestSpec{HeadRef: "x", HeadSHA: sha('a'), Merged: true}, want: ErrInvalid},
		{name: "unknown base branch", spec: PullRequestSpec{HeadRef: "x", HeadSHA: sha('a'), BaseRef: "nope"}, want: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.srv.AddPullRequest(repoName, tt.spec)
			assert.Check(t, errors.Is(err, tt.want), "got %v", err)
		})
	}
}

func TestIssueComments(t *testing.T) {
	f := newFixture(t)
	n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a')})
	assert.NilError(t, err)
	assert.NilError(t, f.srv.SetRole(repoName, "maintainer", "maintain"))
	for i := range 23 {
		_, err := f.srv.AddIssueComment(repoName, n, "alice", fmt.Sprintf("comment %d", i))
		assert.NilError(t, err)
		f.clock.Advance(time.Minute)
	}

	created, resp, err := f.client(userToken).Issues.CreateComment(ctx, "octo", "gpu-lib", n, &github.IssueComment{
		Body: github.String("<!-- local-gpu-gate:" + sha('a') + " -->\nGPU: RTX 4090"),
	})
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusCreated)
	assert.Equal(t, created.GetUser().GetLogin(), "maintainer", "the author is the token's user")
	assert.Equal(t, created.GetAuthorAssociation(), "COLLABORATOR")

	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 10}}
	var bodies []string
	pages := 0
	for {
		page, resp, err := f.app.Issues.ListComments(ctx, "octo", "gpu-lib", n, opts)
		assert.NilError(t, err)
		for _, c := range page {
			bodies = append(bodies, c.GetBody())
		}
		pages++
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	assert.Equal(t, pages, 3)
	assert.Equal(t, len(bodies), 24)
	assert.Equal(t, bodies[0], "comment 0", "oldest first")
	assert.Equal(t, bodies[23], created.GetBody())

	since := start.Add(20 * time.Minute)
	recent, _, err := f.app.Issues.ListComments(ctx, "octo", "gpu-lib", n, &github.IssueListCommentsOptions{Since: &since})
	assert.NilError(t, err)
	assert.Equal(t, len(recent), 4, "comments 20-22 and the new one")

	_, _, err = f.app.Issues.CreateComment(ctx, "octo", "gpu-lib", 77, &github.IssueComment{Body: github.String("x")})
	assert.Equal(t, statusOf(err), http.StatusNotFound)
}

func TestPermissionRoleName(t *testing.T) {
	tests := []struct {
		name           string
		setup          func(s *Server) error
		login          string
		wantPermission string
		wantRole       string
	}{
		{name: "owner", login: "octo", wantPermission: "admin", wantRole: "admin"},
		{name: "admin", login: "u", setup: func(s *Server) error { return s.SetRole(repoName, "u", "admin") },
			wantPermission: "admin", wantRole: "admin"},
		{name: "maintain shows as write", login: "u", setup: func(s *Server) error { return s.SetRole(repoName, "u", "maintain") },
			wantPermission: "write", wantRole: "maintain"},
		{name: "write", login: "u", setup: func(s *Server) error { return s.SetRole(repoName, "u", "write") },
			wantPermission: "write", wantRole: "write"},
		{name: "triage shows as read", login: "u", setup: func(s *Server) error { return s.SetRole(repoName, "u", "triage") },
			wantPermission: "read", wantRole: "triage"},
		{name: "custom role on write", login: "u",
			setup:          func(s *Server) error { return s.SetCustomRole(repoName, "u", "gpu-operator", "write") },
			wantPermission: "write", wantRole: "gpu-operator"},
		{name: "no role on a public repository", login: "u", setup: func(s *Server) error { _, err := s.AddIssueComment(repoName, 1, "u", "hi"); return err },
			wantPermission: "read", wantRole: "read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
			assert.NilError(t, err)
			if tt.setup != nil {
				assert.NilError(t, tt.setup(f.srv))
			}
			level, _, err := f.app.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", tt.login)
			assert.NilError(t, err)
			assert.Equal(t, level.GetPermission(), tt.wantPermission)
			assert.Equal(t, level.GetRoleName(), tt.wantRole)
			assert.Equal(t, level.GetUser().GetLogin(), tt.login)
		})
	}
}

func TestPermissionRefusals(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.app.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "ghost")
	assert.Equal(t, statusOf(err), http.StatusNotFound, "an unknown user")

	assert.Check(t, errors.Is(f.srv.SetRole(repoName, "u", "maintainer"), ErrInvalid))
	assert.Check(t, errors.Is(f.srv.SetCustomRole(repoName, "u", "ops", "maintain"), ErrInvalid), "a custom role's base is admin|write|read|none")

	assert.NilError(t, f.srv.AddRepo(Repo{Owner: "octo", Name: "secret", Private: true}))
	assert.NilError(t, f.srv.SetRole(repoName, "bob", "read"))
	level, _, err := f.app.Repositories.GetPermissionLevel(ctx, "octo", "secret", "bob")
	assert.NilError(t, err)
	assert.Equal(t, level.GetPermission(), "none")
}
