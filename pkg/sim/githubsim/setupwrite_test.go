package githubsim

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
	"golang.org/x/crypto/nacl/box"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// sealFor seals value with the environment's public key, as a client must
// (go-github v66 reads environment keys by repository id; the path by name is GitHub's too).
func (f *fixture) sealFor(t *testing.T, c *github.Client, env, value string) *github.EncryptedSecret {
	t.Helper()
	var pk github.PublicKey
	_, err := f.raw(t, c, http.MethodGet, "repos/octo/gpu-lib/environments/"+env+"/secrets/public-key", nil, &pk)
	assert.NilError(t, err)
	raw, err := base64.StdEncoding.DecodeString(pk.GetKey())
	assert.NilError(t, err)
	var recipient [32]byte
	copy(recipient[:], raw)
	sealed, err := box.SealAnonymous(nil, []byte(value), &recipient, rand.Reader)
	assert.NilError(t, err)
	return &github.EncryptedSecret{KeyID: pk.GetKeyID(), EncryptedValue: base64.StdEncoding.EncodeToString(sealed)}
}

// The set-up's writes, made through go-github, read back as GitHub answers
// them: the environment with custom branch policies, a secret the simulator
// opens with its private key, variables, a branch with a committed file, a
// pull request found by its head, and classic protection.
func TestSetupWritesReadBack(t *testing.T) {
	f := newFixture(t)
	c := f.client(userToken)
	env, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "gpu-lib", "runpod-gpu", &github.CreateUpdateEnvironment{
		DeploymentBranchPolicy: &github.BranchPolicy{CustomBranchPolicies: github.Bool(true), ProtectedBranches: github.Bool(false)},
	})
	assert.NilError(t, err)
	assert.Check(t, env.DeploymentBranchPolicy.GetCustomBranchPolicies(), "custom before the first policy")
	for _, name := range []string{"main", "gh-readonly-queue/main/*"} {
		_, _, err = c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "gpu-lib", "runpod-gpu", &github.DeploymentBranchPolicyRequest{Name: github.String(name), Type: github.String("branch")})
		assert.NilError(t, err)
	}
	_, _, err = c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "gpu-lib", "runpod-gpu", &github.DeploymentBranchPolicyRequest{Name: github.String("main")})
	assert.Check(t, is.Equal(statusOf(err), http.StatusUnprocessableEntity), "a policy twice")
	policies, _, err := c.Repositories.ListDeploymentBranchPolicies(ctx, "octo", "gpu-lib", "runpod-gpu")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(policies.GetTotalCount(), 2))

	secret := f.sealFor(t, c, "runpod-gpu", "rpa_SECRET")
	secret.Name = "RUNPOD_API_KEY"
	_, err = f.raw(t, c, http.MethodPut, "repos/octo/gpu-lib/environments/runpod-gpu/secrets/RUNPOD_API_KEY", secret, nil)
	assert.NilError(t, err)
	got, err := f.srv.EnvironmentSecret(repoName, "runpod-gpu", "RUNPOD_API_KEY")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got, "rpa_SECRET"))
	var listed github.Secrets
	_, err = f.raw(t, c, http.MethodGet, "repos/octo/gpu-lib/environments/runpod-gpu/secrets", nil, &listed)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(listed.Secrets[0].Name, "RUNPOD_API_KEY"))

	_, err = f.raw(t, c, http.MethodPost, "repos/octo/gpu-lib/actions/variables", &github.ActionsVariable{Name: "RUNPOD_GPU_APP_ID", Value: "901"}, nil)
	assert.NilError(t, err)
	_, err = f.raw(t, c, http.MethodPost, "repos/octo/gpu-lib/actions/variables", &github.ActionsVariable{Name: "RUNPOD_GPU_APP_ID", Value: "902"}, nil)
	assert.Check(t, is.Equal(statusOf(err), http.StatusConflict), "a variable twice")
	_, err = c.Actions.UpdateRepoVariable(ctx, "octo", "gpu-lib", &github.ActionsVariable{Name: "RUNPOD_GPU_APP_ID", Value: "902"})
	assert.NilError(t, err)
	vars, _, err := c.Actions.ListRepoVariables(ctx, "octo", "gpu-lib", nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(vars.Variables[0].Value, "902"))
	_, err = f.raw(t, c, http.MethodPost, "repos/octo/gpu-lib/environments/runpod-gpu/variables", &github.ActionsVariable{Name: "TIER", Value: "ada"}, nil)
	assert.NilError(t, err)
	envVars, err := f.srv.EnvironmentVariables(repoName, "runpod-gpu")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(envVars, map[string]string{"TIER": "ada"}))

	assert.NilError(t, f.srv.SetFile(repoName, "", "README.md", "hello\n"))
	_, _, err = c.Git.GetRef(ctx, "octo", "gpu-lib", "heads/runpod-gpu/setup")
	assert.Check(t, is.Equal(statusOf(err), http.StatusNotFound))
	main, _, err := c.Git.GetRef(ctx, "octo", "gpu-lib", "heads/main")
	assert.NilError(t, err)
	_, _, err = c.Git.CreateRef(ctx, "octo", "gpu-lib", &github.Reference{Ref: github.String("refs/heads/runpod-gpu/setup"), Object: &github.GitObject{SHA: main.Object.SHA}})
	assert.NilError(t, err)
	_, resp, err := c.Repositories.CreateFile(ctx, "octo", "gpu-lib", ".github/runpod-gpu.yml", &github.RepositoryContentFileOptions{
		Message: github.String("runpod-gpu init"), Content: []byte("gpu_tiers: []\n"), Branch: github.String("runpod-gpu/setup")})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(resp.StatusCode, http.StatusCreated))
	_, _, err = c.Repositories.CreateFile(ctx, "octo", "gpu-lib", ".github/runpod-gpu.yml", &github.RepositoryContentFileOptions{
		Message: github.String("again"), Content: []byte("x\n"), Branch: github.String("runpod-gpu/setup")})
	assert.Check(t, is.Equal(statusOf(err), http.StatusUnprocessableEntity), "an update without the sha")
	file, _, _, err := c.Repositories.GetContents(ctx, "octo", "gpu-lib", "README.md", &github.RepositoryContentGetOptions{Ref: "runpod-gpu/setup"})
	assert.NilError(t, err)
	assert.Check(t, file != nil, "the branch starts with the default branch's files")

	pr, _, err := c.PullRequests.Create(ctx, "octo", "gpu-lib", &github.NewPullRequest{Title: github.String("Set up runpod-gpu"),
		Head: github.String("runpod-gpu/setup"), Base: github.String("main")})
	assert.NilError(t, err)
	_, _, err = c.PullRequests.Create(ctx, "octo", "gpu-lib", &github.NewPullRequest{Title: github.String("again"),
		Head: github.String("runpod-gpu/setup"), Base: github.String("main")})
	assert.Check(t, is.Equal(statusOf(err), http.StatusUnprocessableEntity), "one open pull request a head")
	open, _, err := c.PullRequests.List(ctx, "octo", "gpu-lib", &github.PullRequestListOptions{Head: "octo:runpod-gpu/setup", State: "open"})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(open, 1))
	assert.Check(t, is.Equal(open[0].GetNumber(), pr.GetNumber()))
	other, _, err := c.PullRequests.List(ctx, "octo", "gpu-lib", &github.PullRequestListOptions{Head: "octo:feature"})
	assert.NilError(t, err)
	assert.Check(t, is.Len(other, 0))

	_, _, err = c.Repositories.UpdateBranchProtection(ctx, "octo", "gpu-lib", "main", &github.ProtectionRequest{
		RequiredStatusChecks: &github.RequiredStatusChecks{Checks: &[]*github.RequiredStatusCheck{{Context: "CI GPU gate", AppID: github.Int64(gateAppID)}}}})
	assert.NilError(t, err)
	prot, _, err := c.Repositories.GetBranchProtection(ctx, "octo", "gpu-lib", "main")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(*(*prot.RequiredStatusChecks.Checks)[0].AppID, gateAppID))
}

// What GitHub refuses is refused: a secret that does not open with the
// environment's key or names another key, a policy before custom policies
// are on, a token without the scope a write needs (named in
// X-Accepted-OAuth-Scopes), and classic protection on a plan without it.
func TestSetupWritesRefuse(t *testing.T) {
	f := newFixture(t, WithToken("ghp_norepo", Identity{Login: "octo"}), WithTokenScopes("ghp_norepo", "read:org"),
		WithToken("ghp_noworkflow", Identity{Login: "octo"}), WithTokenScopes("ghp_noworkflow", "repo"))
	c := f.client(userToken)
	_, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "octo", "gpu-lib", "runpod-gpu", nil)
	assert.NilError(t, err)
	_, _, err = c.Repositories.CreateDeploymentBranchPolicy(ctx, "octo", "gpu-lib", "runpod-gpu", &github.DeploymentBranchPolicyRequest{Name: github.String("main")})
	assert.Check(t, is.Equal(statusOf(err), http.StatusNotFound), "custom policies are off")

	good := f.sealFor(t, c, "runpod-gpu", "v")
	other, _, err := box.GenerateKey(rand.Reader)
	assert.NilError(t, err)
	wrongKey, err := box.SealAnonymous(nil, []byte("v"), other, rand.Reader)
	assert.NilError(t, err)
	for _, tc := range []struct {
		name string
		body any
	}{
		{"sealed for another key", map[string]string{"key_id": good.KeyID, "encrypted_value": base64.StdEncoding.EncodeToString(wrongKey)}},
		{"plaintext", map[string]string{"key_id": good.KeyID, "encrypted_value": base64.StdEncoding.EncodeToString([]byte("v"))}},
		{"another key id", map[string]string{"key_id": "1", "encrypted_value": good.EncryptedValue}},
		{"not base64", map[string]string{"key_id": good.KeyID, "encrypted_value": "%%"}},
	} {
		rec, body := serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/environments/runpod-gpu/secrets/K", userToken, tc.body)
		assert.Check(t, is.Equal(rec.Code, http.StatusUnprocessableEntity), "%s: %s", tc.name, body)
	}
	_, err = f.srv.EnvironmentSecret(repoName, "runpod-gpu", "K")
	assert.Check(t, is.ErrorIs(err, ErrNotFound), "nothing stored")

	rec, _ := serveDirect(t, f.srv, http.MethodGet, "/repos/octo/gpu-lib", "ghp_norepo", nil)
	assert.Check(t, is.Equal(rec.Header().Get("X-OAuth-Scopes"), "read:org"))
	rec, _ = serveDirect(t, f.srv, http.MethodGet, "/repos/octo/gpu-lib", userToken, nil)
	assert.Check(t, is.Equal(rec.Header().Get("X-OAuth-Scopes"), ""), "a fine-grained token has no scopes header")
	rec, _ = serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/environments/x", "ghp_norepo", map[string]any{})
	assert.Check(t, is.Equal(rec.Code, http.StatusForbidden))
	assert.Check(t, is.Equal(rec.Header().Get("X-Accepted-OAuth-Scopes"), "repo"))
	content := map[string]string{"message": "m", "content": base64.StdEncoding.EncodeToString([]byte("on: push\n"))}
	rec, _ = serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/contents/.github/workflows/x.yml", "ghp_noworkflow", content)
	assert.Check(t, is.Equal(rec.Code, http.StatusForbidden))
	assert.Check(t, is.Equal(rec.Header().Get("X-Accepted-OAuth-Scopes"), "workflow"))
	rec, _ = serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/contents/README.md", "ghp_noworkflow", content)
	assert.Check(t, is.Equal(rec.Code, http.StatusCreated))

	assert.NilError(t, f.srv.SetRulesetsUnavailable(repoName, http.StatusForbidden))
	rec, body := serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/branches/main/protection", userToken, map[string]any{"required_status_checks": nil})
	assert.Check(t, is.Equal(rec.Code, http.StatusForbidden))
	assert.Check(t, is.Contains(string(body), "Upgrade to GitHub Pro"))
}
