package devcli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/rehearse"
)

// rehearseFlags are runpod-gpu rehearse's flags.
type rehearseFlags struct {
	dir       string
	asJSON    bool
	realSteps bool
}

func (a *app) rehearseCmd() *cobra.Command {
	f := rehearseFlags{}
	cmd := &cobra.Command{
		Use:   "rehearse [--dir DIR] [--real-steps] [--json]",
		Short: "Play the repository's own GPU lane workflows on the embedded simulated cloud, free and offline",
		Long: `rehearse plays the lane callers in --dir's .github/workflows (as init wrote them
or as you edited them, your own GPU job included) with .github/runpod-gpu.yml on
a simulated GitHub and RunPod inside this program: a pull request is opened, the
CI workflow the lane's workflow_run trigger names is in progress, the lane's
real action code runs each job's steps, and the GPU job runs on a simulated
pod's runner. It prints the jobs and their results, the gate the lane would
publish, and the worst-case cost of a run.

With --real-steps your own jobs' steps run for real on this machine: each
hosted job (your build job) in a copy of --dir, the GPU job in a directory
standing for the pod once its runner took it; run: steps are bash processes
with the job's environment, working directory and timeout-minutes, and
upload-artifact and download-artifact move the bytes through the simulated
GitHub. A job's container: is not started: its steps find their tools (make,
nvcc, a compiler) on this machine's PATH, so put them, or stand-ins for them,
there. The steps' output, secrets masked, goes to standard error; a step that
fails fails its job, and failed GPU tests fail the gate. Without it hosted
jobs stand done and the GPU job's steps pass as names.

First it checks the wiring and names every mistake with its fix, and then
plays nothing: a gpu-job-name or test-step-name that matches no job or step,
a permission a called job needs and the caller does not grant, a secret or
variable under a name the lane does not read, a job other than the GPU job on
the pod's runner label, a workflow_run trigger naming no workflow of the
repository.

No account, key or token is needed, and nothing leaves this machine: every
connection goes to a loopback address, any other is refused.

Exit status: 0 when the wiring is right and the gate is green, 1 otherwise.`,
		Example: `  runpod-gpu rehearse
  runpod-gpu rehearse --dir ../gpu-project --json
  PATH=$HOME/stand-ins:$PATH runpod-gpu rehearse --real-steps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runRehearse(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", ".", "the repository checkout whose workflows to play")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&f.realSteps, "real-steps", false, "run your own jobs' steps for real on this machine (a job's container: is not started: its tools come from PATH); their output goes to stderr")
	return cmd
}

func (a *app) runRehearse(cmd *cobra.Command, f rehearseFlags) error {
	o := rehearse.Options{Dir: f.dir}
	if f.realSteps {
		o.RealSteps, o.StepsLog = true, a.env.Stderr // stdout stays the report, JSON with --json
	}
	return a.rehearseDir(cmd.Context(), o, f.asJSON, "", true)
}

// rehearseDir plays o.Dir's lane callers offline, prints the report, and
// fails on a wiring mistake, and on a gate that is not green when
// greenGate (else it warns: init's callers of a copy of the suite play
// nothing the embedded suite knows); the failure ends with after.
// runpod-gpu rehearse and runpod-gpu init share it.
func (a *app) rehearseDir(ctx context.Context, o rehearse.Options, asJSON bool, after string, greenGate bool) error {
	r, err := rehearse.Run(ctx, o)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if asJSON {
		if r.Mistakes == nil {
			r.Mistakes = []rehearse.Mistake{} // scripts read "mistakes": [] for none, never null
		}
		enc := json.NewEncoder(a.env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return withCode(ExitFailure, err)
		}
	} else {
		r.WriteText(a.env.Stdout)
	}
	switch {
	case len(r.Mistakes) > 0:
		return fail(ExitFailure, "%d wiring mistake(s): fix them and rehearse again%s", len(r.Mistakes), after)
	case !r.OK() && greenGate:
		return fail(ExitFailure, "the rehearsed gate is not green%s", after)
	case !r.OK():
		fmt.Fprintln(a.env.Stderr, "runpod-gpu: warning: the rehearsed gate is not green (no wiring mistake): run 'runpod-gpu rehearse' for the report")
	}
	return nil
}
