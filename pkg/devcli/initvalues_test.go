package devcli

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// init refuses a value that would open a GitHub Actions expression in the
// workflows it writes, and a money value outside its range, naming the flag,
// the value and what it accepts; nothing is written.
func TestInitRefusesExpressionsAndUnreasonableMoney(t *testing.T) {
	exprCI := "name: \"CI ${{ github.event.pull_request.title }}\"\non: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: make test}]\n"
	tests := []struct {
		name      string
		workflows map[string]string
		input     string // answers on standard input; "" runs with --no-input
		args      []string
		wantErr   string
	}{
		{name: "an expression in --test-command", args: []string{"--test-command", "make ${{ secrets.RUNPOD_API_KEY }}"},
			wantErr: `--test-command "make ${{ secrets.RUNPOD_API_KEY }}": want a value without "${{": init writes it into a workflow`},
		{name: "an expression in --workflows", args: []string{"--workflows", "CI${{ github.actor }}"},
			wantErr: `--workflows "CI${{ github.actor }}": want a value without "${{"`},
		{name: "an expression in --suite", args: []string{"--suite", "org/runpod-gpu@${{ github.head_ref }}"},
			wantErr: `--suite "org/runpod-gpu@${{ github.head_ref }}": want a value without "${{"`},
		{name: "an expression in a workflow name read from the checkout", workflows: map[string]string{"ci.yml": exprCI},
			wantErr: `--workflows "CI ${{ github.event.pull_request.title }}": want a value without "${{"`},
		{name: "an expression answered for the test command", input: "make ${{ github.event.comment.body }}\n",
			args: []string{"--max-run-spend", "5"}, wantErr: `--test-command "make ${{ github.event.comment.body }}": want a value without "${{"`},
		{name: "a billion dollars", args: []string{"--max-run-spend", "1000000000"},
			wantErr: `--max-run-spend "1000000000": want a positive amount of USD, at most 1000 (omit it to be asked)`},
		{name: "an exponent is no amount", args: []string{"--max-run-spend", "1e2"}, wantErr: `--max-run-spend "1e2": want a positive amount of USD, at most 1000`},
		{name: "NaN dollars", args: []string{"--max-run-spend", "NaN"}, wantErr: `--max-run-spend "NaN": want a positive amount of USD, at most 1000`},
		{name: "infinite dollars", args: []string{"--max-run-spend", "+Inf"}, wantErr: `--max-run-spend "+Inf": want a positive amount of USD, at most 1000`},
		{name: "negative dollars", args: []string{"--max-run-spend", "-2"}, wantErr: `--max-run-spend "-2": want a positive amount of USD, at most 1000`},
		{name: "zero dollars", args: []string{"--max-run-spend", "0"}, wantErr: `--max-run-spend "0": want a positive amount of USD, at most 1000`},
		{name: "a seventh decimal", args: []string{"--max-run-spend", "1.0000001"}, wantErr: `--max-run-spend "1.0000001": want a positive amount of USD, at most 1000`},
		{name: "a billion dollars answered", input: "5000000\n", args: []string{"--test-command", "make"},
			wantErr: `--max-run-spend "5000000": want a positive amount of USD, at most 1000`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			workflows := tc.workflows
			if workflows == nil {
				workflows = map[string]string{"ci.yml": ciWorkflow}
			}
			dir := checkout(t, workflows)
			args := []string{"init", "--dir", dir, "--gpus", "RTX4090"}
			var r result
			if tc.input == "" {
				// The defaults first: the case's flags come last and win.
				args = append(args, "--no-input", "--test-command", "make", "--max-run-spend", "5")
				r = w.run(append(args, tc.args...)...)
			} else {
				r = w.runWithInput(tc.input, append(args, tc.args...)...)
			}
			assert.Equal(t, r.code, ExitUsage, r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			for _, p := range initFiles {
				_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p)))
				assert.Check(t, os.IsNotExist(err), "%s written", p)
			}
		})
	}
}
