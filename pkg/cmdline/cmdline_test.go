package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{name: "success", err: nil, wantCode: 0},
		{name: "usage, already explained", err: fmt.Errorf("parse: %w", ErrUsage), wantCode: 2},
		{name: "any other error", err: errors.New("disk full"), wantCode: 1, wantStderr: "prog: disk full\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, ExitCode("prog", tc.err, &stderr), tc.wantCode)
			assert.Equal(t, stderr.String(), tc.wantStderr)
		})
	}
}

func TestParseAndUsagef(t *testing.T) {
	var out bytes.Buffer
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	fs.SetOutput(&out)
	fs.Usage = func() { fmt.Fprintln(&out, "usage: prog -n N") }
	n := fs.Int("n", 0, "a number")

	assert.NilError(t, Parse(fs, []string{"-n", "3"}))
	assert.Equal(t, *n, 3)
	assert.Equal(t, Parse(fs, []string{"-x"}), ErrUsage)
	assert.Check(t, is.Contains(out.String(), "flag provided but not defined: -x\nusage: prog -n N\n"))
	assert.Equal(t, Parse(fs, []string{"-h"}), ErrUsage)

	out.Reset()
	assert.Equal(t, Usagef(fs, "-n %d: want a positive number", -1), ErrUsage)
	assert.Equal(t, out.String(), "prog: -n -1: want a positive number\nusage: prog -n N\n")
}

func TestToken(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr error
	}{
		{name: "GH_TOKEN first", env: map[string]string{"GH_TOKEN": "gh", "GITHUB_TOKEN": "github"}, want: "gh"},
		{name: "GITHUB_TOKEN otherwise", env: map[string]string{"GITHUB_TOKEN": "github"}, want: "github"},
		{name: "neither", env: map[string]string{"GH_REPO": "o/r"}, wantErr: ErrNoToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Token(func(k string) string { return tc.env[k] })
			assert.Equal(t, err, tc.wantErr)
			assert.Equal(t, got, tc.want)
		})
	}
	assert.Error(t, ErrNoToken, "no token: set GH_TOKEN or GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token))")
}

func TestRepository(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"GH_REPO": "env/repo"}[k] }
	assert.Equal(t, Repository("flag/repo", getenv), "flag/repo")
	assert.Equal(t, Repository("", getenv), "env/repo")
	assert.Equal(t, Repository("", func(string) string { return "" }), "")
}
