package actionkit

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
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

// A GitHub rate-limit answer (a 403 saying the window is spent) is waited
// out and retried by the GitHub policy every action builds, and logged in the
// step's log; a plain 403 is a permission problem, not retried.
func TestGitHubPolicyRetriesARateLimit(t *testing.T) {
	tests := []struct {
		name      string
		limited   bool
		wantCalls int
		wantLog   string
	}{
		{name: "rate limited", limited: true, wantCalls: 2, wantLog: "403"},
		{name: "forbidden", limited: false, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				if calls == 1 {
					if tc.limited {
						w.Header().Set("X-RateLimit-Remaining", "0")
						w.Header().Set("Retry-After", "1")
					}
					w.WriteHeader(http.StatusForbidden)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			var log bytes.Buffer
			io := actionio.New(&log, func(string) string { return "" }, nil)
			var slept time.Duration
			policy := GitHubPolicy(io, reqpolicy.WithSleeper(func(_ context.Context, d time.Duration) error { slept += d; return nil }))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			assert.NilError(t, err)
			resp, err := (&http.Client{Transport: policy.Transport(http.DefaultTransport)}).Do(req)
			assert.NilError(t, err)
			resp.Body.Close()
			assert.Equal(t, calls, tc.wantCalls)
			if tc.limited {
				assert.Check(t, slept > 0, "waited %s, want the Retry-After wait", slept)
				assert.Check(t, strings.Contains(log.String(), tc.wantLog), log.String())
			}
		})
	}
}

func TestOpenPodClients(t *testing.T) {
	runEnv := map[string]string{"GITHUB_REPOSITORY": "org/gpu", "GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_WORKFLOW_REF": "org/gpu/.github/workflows/runpod-gpu.yml@refs/heads/main"}
	key := RunPodInputs{APIKey: "rpa_key"}
	token := GitHubInputs{Token: "ghs_token"}
	tests := []struct {
		name    string
		env     map[string]string
		rp      RunPodInputs
		gh      GitHubInputs
		runner  RunnerInputs
		wantErr string
	}{
		{name: "all there", env: runEnv, rp: key, gh: token, runner: RunnerInputs{Scope: ghapi.ScopeOrg, Org: "org"}},
		{name: "a bad scope first", env: runEnv, runner: RunnerInputs{Scope: "enterprise"}, wantErr: "input runner-scope"},
		{name: "no RunPod key", env: runEnv, gh: token, wantErr: "input runpod-api-key"},
		{name: "no GitHub credentials", env: runEnv, rp: key, wantErr: "input github-token"},
		{name: "no run", env: map[string]string{"GITHUB_REPOSITORY": "org/gpu"}, rp: key, gh: token, wantErr: "GITHUB_RUN_ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := OpenPodClients(context.Background(), newIO(t, tc.env), tc.rp, tc.gh, tc.runner)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, got.RunPod == nil && got.GitHub == nil, "an error opens nothing")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, got.RunPod != nil && got.Policy != nil && got.GitHub != nil)
			assert.Equal(t, got.Scope, ghapi.ScopeOrg)
			assert.Equal(t, got.Run.Workflow, ".github/workflows/runpod-gpu.yml")
		})
	}
}

func TestLaneConfigAppliesTheRunnerImage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.yml")
	assert.NilError(t, os.WriteFile(path, []byte("gpu_tiers:\n  - name: small\n    gpu_ids: [\"NVIDIA RTX A4000\"]\n"), 0o644))
	_, err := LaneConfig(newIO(t, nil), path, RunnerImageInput{RunnerImage: "other"})
	assert.ErrorContains(t, err, `input runner-image = "other"`)
	cfg, err := LaneConfig(newIO(t, nil), path, RunnerImageInput{})
	assert.NilError(t, err)
	assert.Equal(t, cfg.Image, config.DefaultImage)
}
