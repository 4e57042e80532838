package actionkit

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/actionio"
)

func TestRole(t *testing.T) {
	picked := ""
	roles := map[string]RunFunc{
		"provision": func(context.Context, *actionio.IO) error { picked = "provision"; return nil },
		"reap":      func(context.Context, *actionio.IO) error { picked = "reap"; return nil },
	}
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{name: "known role", args: []string{"/runpod-gpu-actions", "reap"}, want: "reap"},
		{name: "another role", args: []string{"/runpod-gpu-actions", "provision"}, want: "provision"},
		{name: "no role", args: []string{"/runpod-gpu-actions"},
			wantErr: `/runpod-gpu-actions: 0 arguments []: want exactly one, the action's role (provision, reap), as its action.yml passes in runs.args`},
		{name: "no arguments at all", args: nil,
			wantErr: `runpod-gpu-actions: 0 arguments []: want exactly one, the action's role (provision, reap)`},
		{name: "two roles", args: []string{"/runpod-gpu-actions", "reap", "provision"},
			wantErr: `/runpod-gpu-actions: 2 arguments ["reap" "provision"]: want exactly one`},
		{name: "unknown role", args: []string{"/runpod-gpu-actions", "provison"},
			wantErr: `/runpod-gpu-actions: role "provison": want one of provision, reap`},
		{name: "empty role", args: []string{"/runpod-gpu-actions", ""},
			wantErr: `/runpod-gpu-actions: role "": want one of provision, reap`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			picked = ""
			run, err := Role(tc.args, roles)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Assert(t, run == nil)
				return
			}
			assert.NilError(t, err)
			assert.NilError(t, run(context.Background(), nil))
			assert.Equal(t, picked, tc.want)
		})
	}
}
