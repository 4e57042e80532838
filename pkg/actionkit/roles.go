package actionkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
)

// RunFunc is an action's whole job: it reads the inputs and writes the
// outputs and job summary through io. Main and MainRoles run it.
type RunFunc = func(ctx context.Context, io *actionio.IO) error

// ExitUsage is the exit status of a multi-call binary started without a
// known role: a broken action.yml or image, not a failed action (1).
const ExitUsage = 2

// MainRoles is the image's one multi-call main: its first argument, which
// each action.yml passes through runs.args, names the action, and Main runs
// that action's function exactly as the action's own main would.
func MainRoles(roles map[string]RunFunc) {
	run, err := Role(os.Args, roles)
	if err != nil {
		actionio.New(os.Stdout, os.Getenv, nil).Errorf("%v", err)
		os.Exit(ExitUsage)
	}
	Main(run)
}

// Role picks the function args[1] names. Exactly one argument is accepted, so
// a runs.args that drifted from the role table fails at start, naming the roles.
func Role(args []string, roles map[string]RunFunc) (RunFunc, error) {
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
	run, ok := roles[args[1]]
	if !ok || run == nil {
		return nil, fmt.Errorf("%s: role %q: want one of %s", prog, args[1], strings.Join(names, ", "))
	}
	return run, nil
}
