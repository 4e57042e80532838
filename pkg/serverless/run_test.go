package serverless

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// TestCheckJobRefusesAJobThatCannotPass: each refusal names the value and
// what is wanted, before anything is created or submitted.
func TestCheckJobRefusesAJobThatCannotPass(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	assert.NilError(t, os.MkdirAll(full, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(full, "junit.xml"), []byte("old"), 0o644))
	file := filepath.Join(dir, "file")
	assert.NilError(t, os.WriteFile(file, nil, 0o644))
	empty := filepath.Join(dir, "empty")
	assert.NilError(t, os.MkdirAll(empty, 0o755))
	ok := jobwire.JobInput{TestCommand: "pytest -q", Smoke: jobwire.SmokeArgs{MinCUDA: "12.6"}}
	cases := []struct {
		name    string
		command string
		minCUDA string
		output  string
		value   string
		want    string
	}{
		{name: "fine", command: ok.TestCommand, minCUDA: "12.6", output: filepath.Join(dir, "new")},
		{name: "an empty results directory is fine", command: ok.TestCommand, output: empty},
		{name: "no test command", output: filepath.Join(dir, "new"), value: TestCommandValue, want: "an empty one could never pass"},
		{name: "a blank test command", command: " \t\n", output: filepath.Join(dir, "new"), value: TestCommandValue, want: "a bash command"},
		{name: "min-cuda without a minor", command: "t", minCUDA: "12", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "min-cuda with a v", command: "t", minCUDA: "v12.6", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "min-cuda out of range", command: "t", minCUDA: "12.100", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "results over earlier ones", command: "t", output: full, value: OutputValue, want: "it holds 1 entries (junit.xml…)"},
		{name: "results into a file", command: "t", output: file, value: OutputValue, want: "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJob(jobwire.JobInput{TestCommand: tc.command, Smoke: jobwire.SmokeArgs{MinCUDA: tc.minCUDA}}, tc.output)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			var bad *ValueError
			assert.Assert(t, errors.As(err, &bad), "%v", err)
			assert.Check(t, is.Equal(bad.Name, tc.value))
			assert.Check(t, is.ErrorContains(err, tc.want))
		})
	}
}
