package cudalib_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
)

func TestRunCLI(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantErr  bool
		wantOut  string // a substring of the output
		wantLast string // the last line, when set
	}{
		{name: "help", args: []string{"--help"}, wantOut: "usage: cuda-smoke [flags]"},
		{name: "bad flag value", args: []string{"--min-vram-gb", "lots"}, wantErr: true,
			wantLast: `SMOKE FAIL: config: --min-vram-gb (SMOKE_MIN_VRAM_GB) "lots": want a non-negative number of GB (10^9 bytes) such as 8 or 7.5`},
		{name: "bad env value", env: map[string]string{"SMOKE_BASELINE_TIER": "12.x"}, wantErr: true,
			wantLast: `SMOKE FAIL: config: --baseline-tier (SMOKE_BASELINE_TIER) "12.x": want a CUDA version MAJOR.MINOR such as 12.8`},
		{name: "JIT config present", env: map[string]string{"RUNNER_JIT_CONFIG": "eyJqaXQiOiJzZWNyZXQifQ=="}, wantErr: true,
			wantOut:  "[FAIL] environment: RUNNER_JIT_CONFIG is set",
			wantLast: "SMOKE FAIL: environment: RUNNER_JIT_CONFIG is set; the proof must run without the runner's JIT config (env -u RUNNER_JIT_CONFIG)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := cudalib.RunCLI(context.Background(), tt.args, &out, func(k string) string { return tt.env[k] })
			assert.Equal(t, err != nil, tt.wantErr, "error %v", err)
			assert.Assert(t, strings.Contains(out.String(), tt.wantOut), out.String())
			if tt.wantLast != "" {
				assert.Equal(t, lastLine(out.String()), tt.wantLast)
			}
			for _, v := range tt.env {
				if strings.HasPrefix(v, "eyJ") {
					assert.Assert(t, !strings.Contains(out.String(), v), "secret printed")
				}
			}
		})
	}
}
