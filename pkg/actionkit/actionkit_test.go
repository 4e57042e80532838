package actionkit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

func newIO(t *testing.T, env map[string]string) *actionio.IO {
	t.Helper()
	return actionio.New(&bytes.Buffer{}, func(k string) string { return env[k] }, nil)
}

func TestCurrentRun(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Run
		wantErr string
	}{
		{name: "runner environment", env: map[string]string{
			"GITHUB_REPOSITORY": "org/gpu", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "2",
			"GITHUB_WORKFLOW_REF": "org/gpu/.github/workflows/runpod-gpu.yml@refs/heads/main",
		}, want: Run{Repository: "org/gpu", Workflow: ".github/workflows/runpod-gpu.yml", ID: 42, Attempt: 2, ServerURL: "https://github.com"}},
		{name: "no run id", env: map[string]string{"GITHUB_REPOSITORY": "org/gpu", "GITHUB_RUN_ATTEMPT": "1"}, wantErr: "GITHUB_RUN_ID"},
		{name: "workflow ref of another repository", env: map[string]string{
			"GITHUB_REPOSITORY": "org/gpu", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1",
			"GITHUB_WORKFLOW_REF": "other/repo/.github/workflows/x.yml@refs/heads/main",
		}, wantErr: "GITHUB_WORKFLOW_REF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CurrentRun(newIO(t, tc.env))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
			assert.Equal(t, got.URL(), "https://github.com/org/gpu/actions/runs/42/attempts/2")
		})
	}
}

func TestClientsNameTheMissingInput(t *testing.T) {
	_, _, err := RunPod(newIO(t, nil), RunPodInputs{})
	assert.ErrorContains(t, err, "input runpod-api-key")
	env := map[string]string{"GITHUB_REPOSITORY": "org/gpu"}
	in := GitHubInputs{}
	_, err = GitHub(context.Background(), newIO(t, env), in, "")
	assert.ErrorContains(t, err, "input github-token")
	in.AppID = 12
	_, err = GitHub(context.Background(), newIO(t, env), in, "")
	assert.ErrorContains(t, err, "input app-installation-id")
	in.InstallationID = 34
	_, err = GitHub(context.Background(), newIO(t, env), in, "")
	assert.ErrorContains(t, err, "input app-private-key")
}

func TestConfigNamesTheFileAndKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpu.yml")
	assert.NilError(t, os.WriteFile(path, []byte("gpu_tiers: []\nbogus: 1\n"), 0o644))
	_, err := Config(newIO(t, nil), path)
	assert.ErrorContains(t, err, "gpu.yml:2: (unknown key): want a known key")
	_, err = Config(newIO(t, nil), filepath.Join(dir, "missing.yml"))
	assert.ErrorContains(t, err, "missing.yml")
}

func TestRunnerScope(t *testing.T) {
	tests := []struct {
		name      string
		in        RunnerInputs
		wantScope ghapi.Scope
		wantErr   string
	}{
		{name: "empty means the repository", wantScope: ghapi.ScopeRepo},
		{name: "an organization", in: RunnerInputs{Scope: ghapi.ScopeOrg, Org: "acme"}, wantScope: ghapi.ScopeOrg},
		{name: "an organization without its name", in: RunnerInputs{Scope: ghapi.ScopeOrg},
			wantErr: "input runner-org: the organization of org-scope runners (required when runner-scope is org)"},
		{name: "another scope", in: RunnerInputs{Scope: "enterprise"}, wantErr: `input runner-scope = "enterprise": want "repo" or "org"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope, _, err := RunnerScope(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, scope, tc.wantScope)
		})
	}
}
