package actionkit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/actionio"
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
	_, _, err := RunPod(newIO(t, nil))
	assert.ErrorContains(t, err, "input runpod-api-key")
	env := map[string]string{"GITHUB_REPOSITORY": "org/gpu"}
	_, err = GitHub(context.Background(), newIO(t, env), "")
	assert.ErrorContains(t, err, "input github-token")
	env["INPUT_APP-ID"] = "12"
	_, err = GitHub(context.Background(), newIO(t, env), "")
	assert.ErrorContains(t, err, "input app-installation-id")
	env["INPUT_APP-INSTALLATION-ID"] = "34"
	_, err = GitHub(context.Background(), newIO(t, env), "")
	assert.ErrorContains(t, err, "input app-private-key")
}

func TestConfigNamesTheFileAndKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpu.yml")
	assert.NilError(t, os.WriteFile(path, []byte("gpu_tiers: []\nbogus: 1\n"), 0o644))
	_, err := Config(newIO(t, map[string]string{"INPUT_CONFIG-PATH": path}))
	assert.ErrorContains(t, err, "bogus")
	_, err = Config(newIO(t, map[string]string{"INPUT_CONFIG-PATH": filepath.Join(dir, "missing.yml")}))
	assert.ErrorContains(t, err, "missing.yml")
}
