package githubsim

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// A repository's set-up reads back through go-github as GitHub's API answers
// it: the environment's branch policy and secrets (names only), protection
// with App-bound checks ("Branch not protected" otherwise), repository secrets
// and variables, files and directories at a ref, the workflows the default
// branch's files define, and organization runner groups.
func TestSetupReadsBackAsGitHubAnswers(t *testing.T) {
	f := newFixture(t)
	c := f.client(userToken)
	const repo = "octo/gpu-lib"
	assert.NilError(t, f.srv.SetEnvironment(repo, Environment{Name: "runpod-gpu", Branches: []string{"main"}, Tags: []string{"v*"}, Secrets: []string{"RUNPOD_API_KEY"}}))
	assert.NilError(t, f.srv.SetEnvironment(repo, Environment{Name: "open"}))
	assert.NilError(t, f.srv.SetEnvironment(repo, Environment{Name: "release", Tags: []string{"v*"}, Reviewers: []string{"alice"}}))
	assert.NilError(t, f.srv.ProtectBranch(repo, "main", RequiredCheck{Context: "CI GPU gate", AppID: 901}, RequiredCheck{Context: "lint"}))
	assert.NilError(t, f.srv.SetRepoSecrets(repo, "OTHER"))
	assert.NilError(t, f.srv.SetVariable(repo, "RUNPOD_GPU_APP_ID", "901"))
	assert.NilError(t, f.srv.SetFile(repo, "", ".github/workflows/ci.yml", "name: CI\non: pull_request\n"))
	assert.NilError(t, f.srv.SetFile(repo, "", ".github/workflows/nameless.yaml", "on: push\n"))
	assert.NilError(t, f.srv.SetFile(repo, "", ".github/runpod-gpu.yml", "gpu_tiers: []\n"))
	assert.NilError(t, f.srv.SetFile(repo, "v1", "actions/provision/action.yml", "runs: {}\n"))

	r, _, err := c.Repositories.Get(ctx, "octo", "gpu-lib")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(r.GetDefaultBranch(), "main"))

	env, _, err := c.Repositories.GetEnvironment(ctx, "octo", "gpu-lib", "runpod-gpu")
	assert.NilError(t, err)
	assert.Check(t, env.DeploymentBranchPolicy.GetCustomBranchPolicies() && !env.DeploymentBranchPolicy.GetProtectedBranches())
	open, _, err := c.Repositories.GetEnvironment(ctx, "octo", "gpu-lib", "open")
	assert.NilError(t, err)
	assert.Check(t, open.DeploymentBranchPolicy == nil, "every branch: null")
	assert.Check(t, is.Len(env.ProtectionRules, 0), "no reviewers: no rule")
	release, _, err := c.Repositories.GetEnvironment(ctx, "octo", "gpu-lib", "release")
	assert.NilError(t, err)
	assert.Assert(t, is.Len(release.ProtectionRules, 1))
	assert.Check(t, is.Equal(release.ProtectionRules[0].GetType(), "required_reviewers"))
	assert.Check(t, is.Equal(release.ProtectionRules[0].Reviewers[0].GetType(), "User"))
	_, resp, _ := c.Repositories.GetEnvironment(ctx, "octo", "gpu-lib", "missing")
	assert.Check(t, is.Equal(resp.StatusCode, http.StatusNotFound))

	policies, _, err := c.Repositories.ListDeploymentBranchPolicies(ctx, "octo", "gpu-lib", "runpod-gpu")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(policies.GetTotalCount(), 2))
	assert.Check(t, is.Equal(policies.BranchPolicies[0].GetName(), "main"))
	assert.Check(t, is.Equal(policies.BranchPolicies[1].GetType(), "tag"))

	var envSecrets github.Secrets
	_, err = f.raw(t, c, http.MethodGet, "repos/octo/gpu-lib/environments/runpod-gpu/secrets", nil, &envSecrets)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(envSecrets.Secrets[0].Name, "RUNPOD_API_KEY"))
	repoSecrets, _, err := c.Actions.ListRepoSecrets(ctx, "octo", "gpu-lib", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(repoSecrets.Secrets[0].Name, "OTHER"))
	vars, _, err := c.Actions.ListRepoVariables(ctx, "octo", "gpu-lib", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(vars.Variables[0].Value, "901"))

	prot, _, err := c.Repositories.GetBranchProtection(ctx, "octo", "gpu-lib", "main")
	assert.NilError(t, err)
	assert.Check(t, is.Equal((*prot.RequiredStatusChecks.Checks)[0].Context, "CI GPU gate"))
	assert.Check(t, is.Equal(*(*prot.RequiredStatusChecks.Checks)[0].AppID, int64(901)))
	assert.Check(t, (*prot.RequiredStatusChecks.Checks)[1].AppID == nil)
	_, _, err = c.Repositories.GetBranchProtection(ctx, "octo", "gpu-lib", "other")
	assert.Check(t, is.ErrorIs(err, github.ErrBranchNotProtected), "go-github recognises GitHub's message")

	file, _, _, err := c.Repositories.GetContents(ctx, "octo", "gpu-lib", ".github/runpod-gpu.yml", nil)
	assert.NilError(t, err)
	text, err := file.GetContent()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(text, "gpu_tiers: []\n"))
	_, dir, _, err := c.Repositories.GetContents(ctx, "octo", "gpu-lib", ".github", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Len(dir, 2))
	assert.Check(t, is.Equal(dir[0].GetName(), "runpod-gpu.yml"))
	assert.Check(t, is.Equal(dir[1].GetType(), "dir"))
	_, _, _, err = c.Repositories.GetContents(ctx, "octo", "gpu-lib", "actions/provision/action.yml", nil)
	assert.Check(t, statusOf(err) == http.StatusNotFound, "not on the default branch")
	_, _, _, err = c.Repositories.GetContents(ctx, "octo", "gpu-lib", "actions/provision/action.yml", &github.RepositoryContentGetOptions{Ref: "v1"})
	assert.NilError(t, err)

	wfs, _, err := c.Actions.ListWorkflows(ctx, "octo", "gpu-lib", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(wfs.GetTotalCount(), 2))
	assert.Check(t, is.Equal(wfs.Workflows[0].GetName(), "CI"))
	assert.Check(t, is.Equal(wfs.Workflows[1].GetName(), ".github/workflows/nameless.yaml"), "a workflow without a name is named by its path")

	f.srv.SetRunnerGroup("octo", RunnerGroup{ID: 7, Name: "gpu", Visibility: "selected", Repositories: []string{"gpu-lib"}})
	g, _, err := c.Actions.GetOrganizationRunnerGroup(ctx, "octo", 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(g.GetVisibility(), "selected"))
	assert.Check(t, !g.GetAllowsPublicRepositories())
	repos, _, err := c.Actions.ListRepositoryAccessRunnerGroup(ctx, "octo", 7, nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(repos.Repositories[0].GetFullName(), "octo/gpu-lib"))
	_, _, err = c.Actions.GetOrganizationRunnerGroup(ctx, "octo", 8)
	assert.Check(t, statusOf(err) == http.StatusNotFound)
}

// An installation lists the permissions it was granted.
func TestInstallationPermissions(t *testing.T) {
	key, pemBytes := rsaKey(t, 0)
	perms := map[string]string{"administration": "write", "checks": "write", "metadata": "read"}
	f := newFixture(t, WithClock(simclock.NewVirtual(time.Now())), WithApp(App{ID: gateAppID, Slug: gateAppSlug, PublicKey: &key.PublicKey}),
		WithInstallation(Installation{ID: 88, AppID: gateAppID, Account: "octo", Permissions: perms}))
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, gateAppID, pemBytes)
	assert.NilError(t, err)
	atr.BaseURL = f.ts.URL
	app := github.NewClient(&http.Client{Transport: atr})
	app.BaseURL, _ = url.Parse(f.ts.URL + "/")
	inst, _, err := app.Apps.FindRepositoryInstallation(ctx, "octo", "gpu-lib")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(inst.GetPermissions().GetAdministration(), "write"))
	assert.Check(t, is.Equal(inst.GetPermissions().GetChecks(), "write"))
	assert.Check(t, is.Equal(inst.GetPermissions().GetActions(), ""))
}
