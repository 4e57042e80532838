package market

import (
	"bytes"
	"context"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestRunCLI(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the output, or in the error when wantErr
		err  bool
	}{
		{name: "a tiny replay prints the table and chart", args: []string{"-prs", "3", "-layouts", "clustered", "-warmup", "0"},
			want: "| policy | $ per tested ref | paid pods per ref | wasted $ on rejected hosts per accepted pod |"},
		{name: "and the secure cloud alone", args: []string{"-prs", "3", "-layouts", "uniform", "-warmup", "0"},
			want: "Secure cloud only (every policy restricted to it):"},
		{name: "negative warm-up", args: []string{"-warmup", "-1h"}, err: true, want: "-warmup -1h0m0s: want 0 or more"},
		{name: "bad share out of range", args: []string{"-bad", "1.5"}, err: true, want: "-bad 1.5: want a share above 0 and at most 1"},
		{name: "no pull requests", args: []string{"-prs", "0"}, err: true, want: "-prs 0: want a positive number"},
		{name: "unknown layout", args: []string{"-prs", "1", "-layouts", "striped"}, err: true, want: `layout "striped": want "uniform" or "clustered"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := RunCLI(context.Background(), tc.args, &out)
			if tc.err {
				assert.ErrorContains(t, err, tc.want)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Contains(out.String(), tc.want))
			assert.Check(t, is.Contains(out.String(), "```mermaid\nxychart-beta"))
		})
	}
}
