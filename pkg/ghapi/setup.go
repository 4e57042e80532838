package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/go-github/v66/github"
)

// Read-only calls for a repository's set-up, as runpod-gpu doctor checks it
// before the first pull request: the repository, its environment and that
// environment's deployment branch policies and secrets (names only), branch
// protection, repository secrets and variables, files at a ref, the
// workflows, and an organization's runner group. None of them writes.

// ErrBranchNotProtected matches BranchProtection's answer for a branch
// without protection (GitHub's 404 "Branch not protected").
var ErrBranchNotProtected = errors.New("branch not protected")

// setupPages bounds the set-up listings (100 a page): a repository with more
// than 1,000 secrets or workflows is not one the doctor can judge.
const setupPages = 10

// Repository reads the client's repository (default branch, visibility).
func (c *Client) Repository(ctx context.Context) (*github.Repository, error) {
	r, _, err := c.gh.Repositories.Get(ctx, c.owner, c.repo)
	return r, c.fail("read the repository", err, nil)
}

// Environment reads a deployment environment; a missing one is ErrNotFound.
func (c *Client) Environment(ctx context.Context, name string) (*github.Environment, error) {
	env, _, err := c.gh.Repositories.GetEnvironment(ctx, c.owner, c.repo, name)
	return env, c.fail(fmt.Sprintf("read the environment %s", name), err, nil)
}

// DeploymentBranchPolicies lists an environment's custom branch and tag policies.
func (c *Client) DeploymentBranchPolicies(ctx context.Context, env string) ([]*github.DeploymentBranchPolicy, error) {
	r, _, err := c.gh.Repositories.ListDeploymentBranchPolicies(ctx, c.owner, c.repo, env)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list the deployment branch policies of %s", env), err, nil)
	}
	return r.BranchPolicies, nil
}

// BranchProtection reads a branch's protection; an unprotected branch is
// ErrBranchNotProtected (and ErrNotFound).
func (c *Client) BranchProtection(ctx context.Context, branch string) (*github.Protection, error) {
	p, _, err := c.gh.Repositories.GetBranchProtection(ctx, c.owner, c.repo, branch)
	if errors.Is(err, github.ErrBranchNotProtected) {
		return nil, c.fail(fmt.Sprintf("read the protection of %s", branch), err, ErrBranchNotProtected)
	}
	return p, c.fail(fmt.Sprintf("read the protection of %s", branch), err, nil)
}

// secretNames lists the secrets at path (names only: GitHub never returns values).
func (c *Client) secretNames(ctx context.Context, op, path string) ([]string, error) {
	secrets, err := listPages(c, op, setupPages, func(page int) ([]*github.Secret, *github.Response, error) {
		req, err := c.gh.NewRequest("GET", fmt.Sprintf("%s?per_page=100&page=%d", path, page), nil)
		if err != nil {
			return nil, nil, err
		}
		var out github.Secrets
		resp, err := c.gh.Do(ctx, req, &out)
		return out.Secrets, resp, err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(secrets))
	for _, s := range secrets {
		names = append(names, s.Name)
	}
	return names, nil
}

// EnvironmentSecretNames lists an environment's secrets by name.
func (c *Client) EnvironmentSecretNames(ctx context.Context, env string) ([]string, error) {
	return c.secretNames(ctx, fmt.Sprintf("list the secrets of the environment %s", env),
		fmt.Sprintf("repos/%s/%s/environments/%s/secrets", c.owner, c.repo, url.PathEscape(env)))
}

// RepositorySecretNames lists the repository's own secrets by name.
func (c *Client) RepositorySecretNames(ctx context.Context) ([]string, error) {
	return c.secretNames(ctx, "list the repository secrets", fmt.Sprintf("repos/%s/%s/actions/secrets", c.owner, c.repo))
}

// RepositoryVariables reads the repository's variables.
func (c *Client) RepositoryVariables(ctx context.Context) (map[string]string, error) {
	vars, err := collectPages("repository variables", setupPages, func(page int) ([]*github.ActionsVariable, *github.Response, error) {
		r, resp, err := c.gh.Actions.ListRepoVariables(ctx, c.owner, c.repo, &github.ListOptions{PerPage: 100, Page: page})
		if r == nil {
			return nil, resp, err
		}
		return r.Variables, resp, err
	})
	if err != nil {
		return nil, c.fail("list the repository variables", err, nil)
	}
	out := make(map[string]string, len(vars))
	for _, v := range vars {
		out[v.Name] = v.Value
	}
	return out, nil
}

// FileAt reads a file at ref ("" is the default branch); a missing file is ErrNotFound.
func (c *Client) FileAt(ctx context.Context, path, ref string) ([]byte, error) {
	op := fmt.Sprintf("read %s at %s", path, refName(ref))
	file, _, _, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, c.fail(op, err, nil)
	}
	if file == nil {
		return nil, c.fail(op, fmt.Errorf("%w: %s is a directory", ErrUnusableAnswer, path), nil)
	}
	text, err := file.GetContent()
	if err != nil {
		return nil, c.fail(op, fmt.Errorf("%w: %v", ErrUnusableAnswer, err), nil)
	}
	return []byte(text), nil
}

// DirAt lists the file names in a directory at ref ("" is the default
// branch); a missing directory is ErrNotFound.
func (c *Client) DirAt(ctx context.Context, path, ref string) ([]string, error) {
	_, entries, _, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("list %s at %s", path, refName(ref)), err, nil)
	}
	var names []string
	for _, e := range entries {
		if e.GetType() == "file" {
			names = append(names, e.GetName())
		}
	}
	return names, nil
}

func refName(ref string) string {
	if ref == "" {
		return "the default branch"
	}
	return ref
}

// ListWorkflows lists the repository's workflows (name and path).
func (c *Client) ListWorkflows(ctx context.Context) ([]*github.Workflow, error) {
	wfs, err := collectPages("workflows", setupPages, func(page int) ([]*github.Workflow, *github.Response, error) {
		r, resp, err := c.gh.Actions.ListWorkflows(ctx, c.owner, c.repo, &github.ListOptions{PerPage: 100, Page: page})
		if r == nil {
			return nil, resp, err
		}
		return r.Workflows, resp, err
	})
	return wfs, c.fail("list the workflows", err, nil)
}

// OrgRunnerGroup reads an organization's runner group and the repositories
// a selected group admits (nil for visibility all).
func (c *Client) OrgRunnerGroup(ctx context.Context, org string, id int64) (*github.RunnerGroup, []string, error) {
	op := fmt.Sprintf("read runner group %d of %s", id, org)
	g, _, err := c.gh.Actions.GetOrganizationRunnerGroup(ctx, org, id)
	if err != nil || g.GetVisibility() != "selected" {
		return g, nil, c.fail(op, err, nil)
	}
	repos, err := collectPages(op, setupPages, func(page int) ([]*github.Repository, *github.Response, error) {
		r, resp, err := c.gh.Actions.ListRepositoryAccessRunnerGroup(ctx, org, id, &github.ListOptions{PerPage: 100, Page: page})
		if r == nil {
			return nil, resp, err
		}
		return r.Repositories, resp, err
	})
	if err != nil {
		return nil, nil, c.fail(op, err, nil)
	}
	names := make([]string, 0, len(repos))
	for _, r := range repos {
		names = append(names, r.GetFullName())
	}
	return g, names, nil
}

// RepoInstallationDetails returns the App's installation covering
// owner/repo with the permissions it was granted; an App not installed
// there is ErrNotFound.
func (a *AppClient) RepoInstallationDetails(ctx context.Context, owner, repo string) (*github.Installation, error) {
	if err := validateNames(Options{Owner: owner, Repo: repo}); err != nil {
		return nil, err
	}
	inst, _, err := a.gh.Apps.FindRepositoryInstallation(ctx, owner, repo)
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("find the App's installation on %s/%s", owner, repo), StatusCode: statusOf(err), Err: err, redactor: a.redactor}
	}
	return inst, nil
}
