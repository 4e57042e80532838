package history

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const token = "ghp_CostHistoryTestToken0123456789"

func TestRunCLI(t *testing.T) {
	saved := t.TempDir()
	assert.NilError(t, os.CopyFS(saved, os.DirFS("testdata/evidence")))
	repoDir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(repoDir, ".git"), 0o755))
	empty := t.TempDir()
	apiURL := simulatedGitHub(t)
	collectDir := filepath.Join(t.TempDir(), "history")

	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantOut    string
		wantStderr string
		wantErr    string
		wantUsage  bool
	}{
		{
			name:       "regenerates offline from saved evidence",
			args:       []string{"--directory", saved},
			wantOut:    saved + "/report.md\n" + saved + "/report.json\n" + saved + "/reputation.json\n",
			wantStderr: "31 attempts, 35 pods (1 with unknown cost), spend $1.2034 known, 1 pod of unknown cost\n",
		},
		{
			name:    "collects a range with a token",
			args:    []string{"-since", "2026-10-06", "-until", "2026-10-08", "-repo", "org/app", "-directory", collectDir},
			env:     map[string]string{"GH_TOKEN": token, "GITHUB_API_URL": apiURL},
			wantOut: collectDir + "/report.md\n" + collectDir + "/report.json\n" + collectDir + "/reputation.json\n",
			wantStderr: "collected 2026-10-06..2026-10-08: 1 runs, 1 attempts (0 already saved, 1 now complete, 0 to retry next time), 1 searches\n" +
				"reputation: 0 observation(s) written to reputation.json; left out: 0 pod(s) with no known data center (older records), 0 whose attempt showed nothing about the host, 0 undated\n" +
				"1 attempts, 0 pods (0 with unknown cost), spend $0.0000\n",
		},
		{
			name:      "one date without the other",
			args:      []string{"--since", "2026-10-06", "--directory", empty},
			wantUsage: true, wantStderr: "--since and --until go together",
		},
		{
			name:      "a stray argument",
			args:      []string{"2026-10-06"},
			wantUsage: true, wantStderr: `unexpected argument "2026-10-06"`,
		},
		{
			name:    "a date that is not one",
			args:    []string{"--since", "yesterday", "--until", "2026-10-06", "--directory", empty},
			wantErr: `invalid date range: since "yesterday": want a UTC date YYYY-MM-DD`,
		},
		{
			name:    "collecting without a token",
			args:    []string{"--since", "2026-10-06", "--until", "2026-10-06", "--repo", "org/app", "--directory", empty},
			wantErr: "no token: set GH_TOKEN or GITHUB_TOKEN",
		},
		{
			name:    "collecting without a repository",
			args:    []string{"--since", "2026-10-06", "--until", "2026-10-06", "--directory", empty},
			env:     map[string]string{"GH_TOKEN": token},
			wantErr: `--repo "": want owner/name (or set GH_REPO)`,
		},
		{
			name:    "a directory inside a repository",
			args:    []string{"--directory", filepath.Join(repoDir, "history")},
			wantErr: "evidence directory is inside a git repository",
		},
		{
			name:    "nothing saved to regenerate from",
			args:    []string{"--directory", empty},
			wantErr: "no saved evidence in " + empty,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return tc.env[k] }
			err := RunCLI(context.Background(), tc.args, getenv, &stdout, &stderr)
			switch {
			case tc.wantUsage:
				assert.Assert(t, errors.Is(err, cmdline.ErrUsage), "got %v", err)
				assert.Check(t, is.Contains(stderr.String(), "usage: cost-history"))
			case tc.wantErr != "":
				assert.ErrorContains(t, err, tc.wantErr)
			default:
				assert.NilError(t, err)
				assert.Equal(t, stdout.String(), tc.wantOut)
			}
			if tc.wantStderr != "" {
				assert.Check(t, is.Contains(stderr.String(), tc.wantStderr))
			}
			assert.Check(t, !strings.Contains(stdout.String()+stderr.String(), token), "the token never shows")
		})
	}
}

// simulatedGitHub serves one completed run with a log and no GPU work.
func simulatedGitHub(t *testing.T) string {
	t.Helper()
	clock := simclock.NewVirtual(time.Date(2026, 10, 12, 0, 0, 0, 0, time.UTC))
	srv := githubsim.New(githubsim.WithClock(clock), githubsim.WithToken(token, githubsim.Identity{Login: "maintainer"}))
	assert.NilError(t, srv.AddRepo(githubsim.Repo{Owner: "org", Name: "app"}))
	id, err := srv.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: "org/app", WorkflowPath: ".github/workflows/" + DefaultWorkflow,
		CreatedAt: time.Date(2026, 10, 7, 9, 0, 0, 0, time.UTC), Status: "completed", Conclusion: "success"})
	assert.NilError(t, err)
	assert.NilError(t, srv.SetRunLogs("org/app", id, 1, map[string]string{"0_gate.txt": "2026-10-07T09:01:00Z no GPU path changed\n"}))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

// RUNPOD_API_KEY is read as every command reads it (runpod.KeyFromEnv): an
// echoed key's newline is not sent, and a blank one reads no billing.
func TestRunCLITrimsTheRunPodKey(t *testing.T) {
	apiURL := simulatedGitHub(t)
	tests := []struct {
		name     string
		key      string
		wantAuth []string
	}{
		{name: "an echoed key", key: "rpa_CostHistoryKey\n", wantAuth: []string{"Bearer rpa_CostHistoryKey"}},
		{name: "a blank key", key: " \n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var auths []string
			billing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if !slices.Contains(auths, r.Header.Get("Authorization")) {
					auths = append(auths, r.Header.Get("Authorization"))
				}
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte("[]"))
			}))
			defer billing.Close()
			env := map[string]string{"GH_TOKEN": token, "GITHUB_API_URL": apiURL, "RUNPOD_API_KEY": tc.key}
			args := []string{"-since", "2026-10-06", "-until", "2026-10-08", "-repo", "org/app",
				"-directory", filepath.Join(t.TempDir(), "history"), "-runpod-api-url", billing.URL}
			var stdout, stderr bytes.Buffer
			err := RunCLI(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
			assert.NilError(t, err, stderr.String())
			mu.Lock()
			defer mu.Unlock()
			assert.Check(t, is.DeepEqual(auths, tc.wantAuth))
		})
	}
}
