package devcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Exit codes (see the package documentation).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitNoCapacity  = 3
	ExitBootFailed  = 4
	ExitUnconfirmed = 5
	ExitNotFound    = 6
	// ExitAttemptOpen: serverless refused, nothing created: an earlier
	// attempt still has a template or endpoint (clean it up first).
	ExitAttemptOpen = 7
	// ExitBudgetRefused: serverless refused, nothing created: the ledger's
	// caps leave no room for the reservation.
	ExitBudgetRefused = 8
	// ExitLedgerRefused: serverless refused, nothing created: the ledger was
	// edited outside the lane.
	ExitLedgerRefused = 9
	// ExitRecordRefused: repro refused a lane record, nothing created: no
	// lane job's log seals it, or it records another run.
	ExitRecordRefused = 10
	ExitInterrupted   = 130
)

// Env is everything the command line takes from its surroundings, so tests
// run it in-process on a virtual clock against the simulated cloud.
type Env struct {
	Args           []string
	Getenv         func(string) string
	Stdout, Stderr io.Writer
	// Stdin answers the questions down asks; nil answers none (so nothing
	// that needs a yes is deleted without --yes).
	Stdin io.Reader
	// Home is the user's home directory (~/.runpod/config.toml, ~/.ssh).
	Home string
	// User names the developer in the pod's ownership tag.
	User string
	// Clock and Sleep drive the request policy and the boot wait; nil means real time.
	Clock clock.Clock
	Sleep clock.Sleeper
	// HTTPClient carries the API requests; nil means the client's default.
	HTTPClient *http.Client
	// RunSSH runs ssh with argv (argv[0] is "ssh") and returns its exit
	// status; nil runs the ssh found on PATH with the terminal attached.
	RunSSH func(ctx context.Context, argv []string) (int, error)
	// Spawn starts runpod-gpu with args as a detached process (the serverless
	// cleanup watchdog); nil re-executes this binary in its own session.
	Spawn func(args []string) error
}

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// sshExit is ssh's own exit status, passed through without a message.
type sshExit struct{ code int }

func (e sshExit) Error() string { return fmt.Sprintf("ssh exited with status %d", e.code) }

// Main runs the command line and returns its exit code.
func Main(ctx context.Context, env Env) int {
	env = env.withDefaults()
	root := newRoot(ctx, &env)
	root.SetArgs(env.Args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	var se sshExit
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ee):
		fmt.Fprintf(env.Stderr, "runpod-gpu: %v\n", ee.err)
		return ee.code
	}
	// Anything else came from cobra itself: flags, arguments, unknown commands.
	fmt.Fprintf(env.Stderr, "runpod-gpu: %v\nRun 'runpod-gpu --help' for usage.\n", err)
	return ExitUsage
}

func (e Env) withDefaults() Env {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	if e.Stdin == nil {
		e.Stdin = strings.NewReader("")
	}
	if e.Clock == nil {
		e.Clock = clock.Wall{}
	}
	if e.Sleep == nil {
		e.Sleep = clock.SleepContext
	}
	if e.RunSSH == nil {
		e.RunSSH = execSSH
	}
	return e
}

// execSSH runs ssh attached to the terminal and returns its exit status.
func execSSH(ctx context.Context, argv []string) (int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("run ssh: %w", err)
	}
	return 0, nil
}

// callTimeout bounds each API call: on the policy's clock and in wall time.
const callTimeout = 30 * time.Second

// createTimeout bounds the one pod create (it is never re-sent).
const createTimeout = 60 * time.Second

// app is one invocation's shared state.
type app struct {
	env    *Env
	client *runpod.Client
	policy *reqpolicy.Policy
	cfg    fileConfig
	key    string // the RunPod API key connect read (apiKey); every client uses it
}

// connect reads the key and builds the client; every command that talks to
// RunPod calls it first, so usage errors are reported without a key.
func (a *app) connect() error {
	if a.client != nil {
		return nil
	}
	cfg, warning, err := loadConfig(a.env.Home)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if warning != "" {
		fmt.Fprintf(a.env.Stderr, "runpod-gpu: warning: %s\n", warning)
	}
	a.cfg = cfg
	if a.key == "" { // init may have read it from standard input
		a.key = apiKey(a.env.Getenv, cfg)
	}
	if a.key == "" {
		return fail(ExitFailure, "no RunPod API key: set RUNPOD_API_KEY, or api_key under [runpod] in %s (or under [default], as RunPod's own tools write it)", configPath(a.env.Home))
	}
	a.policy = reqpolicy.New(reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep))
	opts := []runpod.Option{runpod.WithPolicy(a.policy)}
	if a.env.HTTPClient != nil {
		opts = append(opts, runpod.WithHTTPClient(a.env.HTTPClient))
	}
	apiURL, err := a.serviceURL("RUNPOD_API_URL")
	if err != nil {
		return err
	}
	a.client = runpod.New(apiURL, a.key, opts...)
	return nil
}

// bound returns ctx limited to d for one API call.
func (a *app) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return reqpolicy.Bound(ctx, a.env.Clock, d)
}

// apiError turns a RunPod failure into an exit error with a hint.
func apiError(what string, err error) error {
	switch {
	case errors.Is(err, runpod.ErrUnauthorized):
		return fail(ExitFailure, "%s: RunPod refused the API key (401): check RUNPOD_API_KEY or ~/.runpod/config.toml", what)
	case errors.Is(err, context.Canceled):
		return fail(ExitInterrupted, "%s: interrupted", what)
	}
	return fail(ExitFailure, "%s: %v", what, err)
}

func newRoot(ctx context.Context, env *Env) *cobra.Command {
	a := &app{env: env}
	root := &cobra.Command{
		Use:   "runpod-gpu",
		Short: "Rent a RunPod GPU by hand: offers, pods, SSH and the CI allowlist",
		Long: `runpod-gpu finds the cheapest GPU in stock where you want it, starts a pod
with your SSH keys, shows how to connect, and deletes it when you are done.
It shares the CI lane's planner, RunPod client and ownership tags: pods it
starts are marked as developer pods, which the CI reaper never touches.

The API key comes from RUNPOD_API_KEY, else from api_key under [runpod] in
~/.runpod/config.toml, else from api_key under [default] there (what RunPod's
own tools write). It is never printed and never read from a flag; a config
file other users can read draws a warning.

Exit codes: 0 ok, 1 failure, 2 usage, 3 no capacity (nothing created),
4 boot failed (pod deleted), 5 a pod may still be billing (a deletion
unconfirmed, or a lost create answer whose pod never showed up), 6 no such
pod (repro: no lane record), 10 repro refused the lane record (not
sealed by the lane), 130 interrupted. down exits 2 for a deletion refused or not confirmed.`,
		Example: `  runpod-gpu offers --gpus RTX4090:1 --region europe
  runpod-gpu up --name dev --gpus RTX4090:1
  runpod-gpu ssh dev -- nvidia-smi
  runpod-gpu down dev`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(a.offersCmd(), a.upCmd(), a.lsCmd(), a.sshCmd(), a.downCmd(), a.allowlistCmd(), a.serverlessCmd())
	root.AddCommand(a.onboardingCmds()...)
	root.AddCommand(a.copySuiteCmd(), a.cleanupLegacyCmd(), a.reproCmd())
	return root
}
