package localgate

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cmdline"
)

func TestParseArgs(t *testing.T) {
	env := map[string]string{"GH_TOKEN": "ghp_x", "GH_REPO": "octo/gpu-lib"}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantOpts  LocalOptions
		wantUsage string
		wantErr   string
	}{
		{
			name: "defaults",
			args: []string{"-pr", "12", "--", "make", "gpu-test"},
			wantOpts: LocalOptions{
				RepoDir: ".", Repository: "octo/gpu-lib", PRNumber: 12, Command: []string{"make", "gpu-test"},
				Workflow: "local-gpu-gate.yml", Timeout: 5 * time.Hour,
			},
		},
		{
			name: "everything set",
			args: []string{"-pr=3", "-repo", "org/other", "-C", "/src", "-workflow", "relay.yml", "-ref", "trunk",
				"-timeout", "90m", "-log", "/tmp/lane.log", "pytest", "-k", "cuda"},
			wantOpts: LocalOptions{
				RepoDir: "/src", Repository: "org/other", PRNumber: 3, Command: []string{"pytest", "-k", "cuda"},
				Workflow: "relay.yml", Ref: "trunk", Timeout: 90 * time.Minute, LogFile: "/tmp/lane.log",
			},
		},
		{name: "no PR", args: []string{"--", "make"}, wantUsage: "-pr: want the pull request number"},
		{name: "no command", args: []string{"-pr", "1"}, wantUsage: "no lane command"},
		{name: "zero timeout", args: []string{"-pr", "1", "-timeout", "0s", "make"}, wantUsage: "-timeout 0s: want a positive duration"},
		{name: "unknown flag", args: []string{"-pr", "1", "-force", "make"}, wantUsage: "flag provided but not defined: -force"},
		{name: "no token", args: []string{"-pr", "1", "make"}, env: map[string]string{"GH_REPO": "octo/gpu-lib"}, wantErr: "no token: set GH_TOKEN or GITHUB_TOKEN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				e = tc.env
			}
			var stderr bytes.Buffer
			cfg, err := parseArgs(context.Background(), tc.args, func(k string) string { return e[k] }, &stderr)
			switch {
			case tc.wantUsage != "":
				assert.Assert(t, errors.Is(err, cmdline.ErrUsage), "got %v", err)
				assert.Check(t, is.Contains(stderr.String(), tc.wantUsage))
				assert.Check(t, is.Contains(stderr.String(), "usage: local-gpu-gate -pr NUMBER"))
			case tc.wantErr != "":
				assert.ErrorContains(t, err, tc.wantErr)
			default:
				assert.NilError(t, err)
				if tc.wantOpts.LogFile == "" {
					assert.Check(t, strings.Contains(cfg.opts.LogFile, "local-gpu-gate-pr"), cfg.opts.LogFile)
					cfg.opts.LogFile = ""
				}
				assert.DeepEqual(t, cfg.opts, tc.wantOpts)
				assert.Equal(t, cfg.token, "ghp_x")
			}
		})
	}
}

func TestParseArgsReadsOriginRemote(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "git@github.com:octo/gpu-lib.git"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		assert.NilError(t, err, "%s", out)
	}
	getenv := func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghs_y"}[k] }
	cfg, err := parseArgs(context.Background(), []string{"-pr", "7", "-C", dir, "make"}, getenv, &bytes.Buffer{})
	assert.NilError(t, err)
	assert.Equal(t, cfg.opts.Repository, "octo/gpu-lib")
	assert.Equal(t, cfg.token, "ghs_y")

	_, err = parseArgs(context.Background(), []string{"-pr", "7", "-C", t.TempDir(), "make"}, getenv, &bytes.Buffer{})
	assert.ErrorContains(t, err, "no -repo and no origin remote to read it from")
}

func TestParseRemote(t *testing.T) {
	tests := []struct{ url, want, wantErr string }{
		{url: "https://github.com/octo/gpu-lib.git", want: "octo/gpu-lib"},
		{url: "https://github.com/octo/gpu-lib", want: "octo/gpu-lib"},
		{url: "https://ghe.example.com/octo/gpu-lib/", want: "octo/gpu-lib"},
		{url: "git@github.com:octo/gpu-lib.git", want: "octo/gpu-lib"},
		{url: "ssh://git@github.com/octo/gpu.lib.git", want: "octo/gpu.lib"},
		{url: "/srv/git/gpu-lib.git", wantErr: `origin remote "/srv/git/gpu-lib.git": want a GitHub URL`},
		{url: "https://github.com/octo", wantErr: "want a GitHub URL"},
		{url: "https://github.com/octo/gpu-lib/tree/main", wantErr: "want a GitHub URL"},
		{url: "https://github.com/../..", wantErr: "want a GitHub URL"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			got, err := parseRemote(tc.url)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

func FuzzParseRemote(f *testing.F) {
	f.Add("https://github.com/octo/gpu-lib.git")
	f.Add("git@github.com:octo/gpu-lib.git")
	f.Add("ssh://git@github.com/a/.git")
	f.Fuzz(func(t *testing.T, url string) {
		repo, err := parseRemote(url)
		if err != nil {
			return
		}
		owner, name, ok := strings.Cut(repo, "/")
		if !ok || owner == "" || name == "" || strings.ContainsAny(repo, ":@ \n") {
			t.Fatalf("parseRemote(%q) = %q", url, repo)
		}
	})
}
