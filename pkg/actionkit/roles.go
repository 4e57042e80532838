package actionkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
)

// Action is one action of the suite: what the image's program runs for its
// role, and the declarations its action.yml is checked against.
type Action interface {
	// Run reads the action's inputs, then does its whole job, writing its
	// outputs and job summary through io.
	Run(ctx context.Context, io *actionio.IO) error
	// Inputs is the struct type that declares the inputs (see actionio.InputTag).
	Inputs() reflect.Type
	// Outputs are the struct types of every output the action writes.
	Outputs() []reflect.Type
}

// NewAction declares an action: run gets the inputs In declares, read and
// validated; outputs are the types it writes with actionio.WriteOutputs,
// and no other output can be written.
func NewAction[In any](run func(ctx context.Context, io *actionio.IO, in In) error, outputs ...reflect.Type) Action {
	return &action[In]{run: run, outputs: outputs}
}

type action[In any] struct {
	run     func(ctx context.Context, io *actionio.IO, in In) error
	outputs []reflect.Type
}

func (a *action[In]) Inputs() reflect.Type    { return reflect.TypeFor[In]() }
func (a *action[In]) Outputs() []reflect.Type { return a.outputs }

func (a *action[In]) Run(ctx context.Context, io *actionio.IO) error {
	var in In
	if err := prepare(io, a.outputs, &in); err != nil {
		return err
	}
	return a.run(ctx, io, in)
}

// prepare restricts io to the declared outputs and reads the inputs into in.
// When they do not all read, an action that reads the configuration (it
// embeds ConfigInput) reports the configuration's problems first, annotated
// on the file, as it does when every input is right.
func prepare(io *actionio.IO, outputs []reflect.Type, in any) error {
	var names []string
	for _, t := range outputs {
		n, err := actionio.OutputNames(t)
		if err != nil {
			return err
		}
		names = append(names, n...)
	}
	io.RestrictOutputs(names)
	err := io.ReadInputsInto(in)
	if err == nil {
		return nil
	}
	// A config-path that did not read is that input's error, never the
	// default path's "no file" (its field is empty then).
	if c, ok := in.(interface{ configPath() string }); ok && !inputFailed(err, "config-path") {
		if _, cfgErr := Config(io, c.configPath()); cfgErr != nil {
			return cfgErr
		}
	}
	return err
}

// inputFailed reports whether err (ReadInputs' joined errors) holds an
// *actionio.InputError of the named input.
func inputFailed(err error, name string) bool {
	var ie *actionio.InputError
	if errors.As(err, &ie) && ie.Input == name {
		return true
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if inputFailed(e, name) {
				return true
			}
		}
	}
	return false
}

// ExitUsage is the exit status of a multi-call binary started without a
// known role: a broken action.yml or image, not a failed action (1).
const ExitUsage = 2

// RunRole is the image's one multi-call program: args[1], which each
// action.yml passes through runs.args, names the action to run. It connects
// the action to the runner (getenv, stdout) and returns the exit status: 0,
// 1 with an error annotation when the action fails, ExitUsage for a role it
// does not know. The caller cancels ctx on SIGINT/SIGTERM, so cleanup paths run.
func RunRole(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, roles map[string]Action) int {
	aio := actionio.New(stdout, getenv, nil)
	a, err := Role(args, roles)
	if err != nil {
		aio.Errorf("%v", err)
		return ExitUsage
	}
	if err := a.Run(ctx, aio); err != nil {
		if _, placed := err.(annotatedError); placed {
			aio.Infof("Error: %v", err) // its annotations are already on the file
		} else {
			aio.Errorf("%v", err)
		}
		return 1
	}
	return 0
}

// Role picks the action args[1] names. Exactly one argument is accepted, so
// a runs.args that drifted from the role table fails at start, naming the roles.
func Role(args []string, roles map[string]Action) (Action, error) {
	names := make([]string, 0, len(roles))
	for name := range roles {
		names = append(names, name)
	}
	slices.Sort(names)
	prog := "runpod-gpu-actions"
	if len(args) > 0 {
		prog = args[0]
	}
	if len(args) != 2 {
		return nil, fmt.Errorf("%s: %d arguments %q: want exactly one, the action's role (%s), as its action.yml passes in runs.args",
			prog, max(len(args)-1, 0), args[min(1, len(args)):], strings.Join(names, ", "))
	}
	a, ok := roles[args[1]]
	if !ok || a == nil {
		return nil, fmt.Errorf("%s: role %q: want one of %s", prog, args[1], strings.Join(names, ", "))
	}
	return a, nil
}
