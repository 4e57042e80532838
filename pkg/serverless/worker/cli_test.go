package worker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// A job that fails still gets its output written: the failure is inside it.
func TestRunCLIWritesTheOutputOfAFailedJob(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	assert.NilError(t, os.WriteFile(in, []byte(`{"deadline_seconds": 0}`), 0o600))
	getenv := func(string) string { return "" }
	assert.NilError(t, RunCLI(context.Background(), []string{"--input", in, "--output", out}, getenv, nil))

	data, err := os.ReadFile(out)
	assert.NilError(t, err)
	var got jobwire.JobOutput
	assert.NilError(t, json.Unmarshal(data, &got))
	assert.Equal(t, got.Error, "deadline_seconds 0: want a positive worker deadline")
	assert.Equal(t, got.CUDAExecuted, false)
}

func TestRunCLIRefusesWithoutAnInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "in.json")
	assert.NilError(t, os.WriteFile(notJSON, []byte("payload"), 0o600))
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no flags", wantErr: "--input and --output are required"},
		{name: "unknown flag", args: []string{"--in", notJSON}, wantErr: "flag provided but not defined: -in"},
		{name: "missing input file", args: []string{"--input", filepath.Join(dir, "missing.json"), "--output", out}, wantErr: "no such file"},
		{name: "input not JSON", args: []string{"--input", notJSON, "--output", out}, wantErr: "input: invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := RunCLI(context.Background(), tc.args, func(string) string { return "" }, nil)
			assert.ErrorContains(t, err, tc.wantErr)
			_, err = os.Stat(out)
			assert.Check(t, os.IsNotExist(err), "no output is written")
		})
	}
}
