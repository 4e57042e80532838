package actionkit

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionio"
)

func TestRole(t *testing.T) {
	picked := ""
	type none struct{}
	roles := map[string]Action{
		"provision": NewAction(func(context.Context, *actionio.IO, none) error { picked = "provision"; return nil }),
		"reap":      NewAction(func(context.Context, *actionio.IO, none) error { picked = "reap"; return nil }),
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
			assert.NilError(t, run.Run(context.Background(), actionio.New(io.Discard, func(string) string { return "" }, nil)))
			assert.Equal(t, picked, tc.want)
		})
	}
}

// exampleOutputs is the one output type exampleAction declares.
type exampleOutputs struct {
	Greeting string `output:"greeting"`
}

// undeclaredOutputs is a type exampleAction never declared.
type undeclaredOutputs struct {
	Secret string `output:"other"`
}

type exampleInputs struct {
	Name  string `input:"name,required" desc:"Who to greet."`
	Times int64  `input:"times" default:"1" min:"1" max:"3" desc:"How often."`
}

func exampleAction(write func(io *actionio.IO) error) Action {
	return NewAction(func(_ context.Context, io *actionio.IO, in exampleInputs) error {
		if in.Times > 1 {
			return write(io)
		}
		return actionio.WriteOutputs[exampleOutputs](io, exampleOutputs{Greeting: "hello " + in.Name})
	}, reflect.TypeFor[exampleOutputs]())
}

func TestRunRole(t *testing.T) {
	writeOther := func(io *actionio.IO) error {
		return actionio.WriteOutputs[undeclaredOutputs](io, undeclaredOutputs{Secret: "x"})
	}
	tests := []struct {
		name     string
		args     []string
		inputs   map[string]string
		wantCode int
		wantOut  string // in the log
		wantFile string // GITHUB_OUTPUT
	}{
		{name: "the role runs with its inputs read", args: []string{"/p", "greet"}, inputs: map[string]string{"INPUT_NAME": "octo"},
			wantCode: 0, wantFile: "greeting<<"},
		{name: "an unknown role is a usage error", args: []string{"/p", "greeet"}, wantCode: ExitUsage,
			wantOut: `::error::/p: role "greeet": want one of greet`},
		{name: "a missing required input fails before the run", args: []string{"/p", "greet"}, wantCode: 1,
			wantOut: "::error::input name: a value (the input is required)"},
		{name: "every bad input is named", args: []string{"/p", "greet"}, inputs: map[string]string{"INPUT_TIMES": "9"}, wantCode: 1,
			wantOut: `input times = "9": want an integer from 1 to 3`},
		{name: "an undeclared output is refused", args: []string{"/p", "greet"}, inputs: map[string]string{"INPUT_NAME": "octo", "INPUT_TIMES": "2"},
			wantCode: 1, wantOut: "output other: the action declares no such output; refusing to write it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "output")
			env := map[string]string{"GITHUB_OUTPUT": out}
			for k, v := range tc.inputs {
				env[k] = v
			}
			var log bytes.Buffer
			code := RunRole(context.Background(), tc.args, func(k string) string { return env[k] }, &log,
				map[string]Action{"greet": exampleAction(writeOther)})
			assert.Check(t, is.Equal(code, tc.wantCode), log.String())
			assert.Check(t, is.Contains(log.String(), tc.wantOut))
			b, _ := os.ReadFile(out)
			assert.Check(t, is.Contains(string(b), tc.wantFile))
		})
	}
}
