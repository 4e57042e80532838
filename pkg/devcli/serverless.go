package devcli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/spend"
)

// watchdogRetries bounds the watchdog's cleanup attempts after the deadline;
// watchdogRetryWait separates them. Until the deadline it reads the receipt
// every watchdogCheck and exits as soon as cleanup is confirmed.
const (
	watchdogRetries   = 5
	watchdogRetryWait = time.Minute
	watchdogCheck     = 30 * time.Second
)

// slsFlags are the flags the serverless subcommands share.
type slsFlags struct {
	state, ledger, payload, approved, output, source string
	workerURL, workerSHA, testCommand, minCUDA       string
	gpuPool, gpuType, image                          string
	dataCenters                                      []string
	execute, reseal                                  bool
}

// serverlessCmd is the serverless command: the Serverless lane by hand.
func (a *app) serverlessCmd() *cobra.Command {
	f := &slsFlags{}
	cmd := &cobra.Command{
		Use:   "serverless",
		Short: "Validate CUDA code with one RunPod Serverless job (setup, health, prepare, run, cleanup)",
		Long: `serverless runs the suite's Serverless lane by hand: a private template on a
digest-pinned image and an endpoint with 0–1 workers (setup), a read-only check
(health), a source-only payload whose SHA-256 you review (prepare), exactly one
approved job (run), and deletion confirmed by fresh listings (cleanup).

Use a new --state receipt for each attempt and the same --ledger across attempts:
the ledger reserves $1.36 for setup and $1.25 for the job, at least $1 and at most
$3 a stage and $10 in all, and never refunds; an attempt whose cleanup is not
confirmed blocks the next one. setup starts a detached cleanup watchdog with an
absolute 30-minute deadline; run arms another with the same deadline, so a job
never extends the resources' lifetime, and deletes the endpoint and template when
the job ends. A watchdog exits as soon as the receipt says cleanup was confirmed.

The job host is https://api.runpod.ai (RUNPOD_JOB_URL overrides it); the API key
must reach it as well as the management host.`,
		Example: `  runpod-gpu serverless setup --state ~/rpg/attempt-01.json --ledger ~/rpg/budget.json
  runpod-gpu serverless health --state ~/rpg/attempt-01.json
  runpod-gpu serverless prepare --payload ~/rpg/payload.json
  runpod-gpu serverless run --execute --state ~/rpg/attempt-01.json --payload ~/rpg/payload.json \
    --approved-payload-sha256 <payload_sha256> --ledger ~/rpg/budget.json --output ~/rpg/results --test-command "pytest -q"
  runpod-gpu serverless cleanup --state ~/rpg/attempt-01.json
  runpod-gpu serverless ledger --ledger ~/rpg/budget.json`,
	}
	cmd.AddCommand(a.slsSubcommands(f)...)
	return cmd
}

// slsSubcommands are serverless's stages (and the hidden watchdog), each
// with the flags it reads into f.
func (a *app) slsSubcommands(f *slsFlags) []*cobra.Command {
	state := func(c *cobra.Command) {
		c.Flags().StringVar(&f.state, "state", "", "the ownership receipt of this attempt (a new file for each setup)")
	}
	ledger := func(c *cobra.Command) {
		c.Flags().StringVar(&f.ledger, "ledger", "", "the budget ledger shared by every attempt")
	}
	payload := func(c *cobra.Command) {
		c.Flags().StringVar(&f.payload, "payload", "", "the payload file prepare writes")
	}
	settings := func(c *cobra.Command) {
		c.Flags().StringVar(&f.gpuPool, "gpu-pool", "AMPERE_16", "Serverless GPU pool of the one worker (AMPERE_16 is the A4000 class)")
		c.Flags().StringVar(&f.gpuType, "gpu-type", serverless.DefaultGPUType, "the one GPU type of the pool the worker may run on (the pool's other cards are excluded)")
		c.Flags().StringSliceVar(&f.dataCenters, "data-center", nil, "data center the worker may run in (e.g. EU-RO-1); repeatable; none lets RunPod choose")
		c.Flags().StringVar(&f.image, "image", serverless.DefaultImage, "the template's image, pinned by digest")
	}

	setup := &cobra.Command{Use: "setup", Short: "Create the template and a 0–1 worker endpoint; reserve the setup budget; start the watchdog", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.slsSetup(c.Context(), f) }}
	state(setup)
	ledger(setup)
	settings(setup)
	workerURL, workerSHA := workerDefaults(a.env.Getenv)
	setup.Flags().StringVar(&f.workerURL, "worker-url", workerURL, "HTTPS URL of the serverless-worker release asset (default: $"+EnvWorkerURL+", else the release's)")
	setup.Flags().StringVar(&f.workerSHA, "worker-sha256", workerSHA, "SHA-256 of the serverless-worker asset (default: $"+EnvWorkerSHA256+", else the release's)")

	health := &cobra.Command{Use: "health", Short: "Check that every setting setup asked for holds (a drifted endpoint is removed), the key works on the job host, and the endpoint has had no work", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.slsHealth(c.Context(), f) }}
	state(health)
	settings(health)

	prepare := &cobra.Command{Use: "prepare", Short: "Build the source-only payload and print its SHA-256 (no API call)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.slsPrepare(f) }}
	payload(prepare)
	prepare.Flags().StringVar(&f.source, "source", ".", "the source tree to archive")
	prepare.Flags().StringVar(&f.workerSHA, "worker-sha256", workerSHA, "SHA-256 of the serverless-worker asset, printed for review (default: $"+EnvWorkerSHA256+", else the release's)")

	run := &cobra.Command{Use: "run", Short: "Submit exactly one approved, billable job, collect its checked results, then delete the endpoint and template", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.slsRun(c.Context(), f) }}
	state(run)
	ledger(run)
	payload(run)
	settings(run)
	run.Flags().BoolVar(&f.execute, "execute", false, "submit the job (it is billed); without it nothing is submitted")
	run.Flags().StringVar(&f.approved, "approved-payload-sha256", "", "the payload_sha256 you reviewed; it must equal the payload's")
	run.Flags().StringVar(&f.output, "output", "", "results directory (new or empty)")
	run.Flags().StringVar(&f.testCommand, "test-command", "", "bash command the worker runs in the unpacked sources after the CUDA proof")
	run.Flags().StringVar(&f.minCUDA, "min-cuda", "", "the CUDA proof's driver floor (major.minor)")

	cleanup := &cobra.Command{Use: "cleanup", Short: "Delete the receipt's endpoint and template and confirm them gone", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.slsCleanup(c.Context(), f) }}
	state(cleanup)

	watchdog := &cobra.Command{Use: "watchdog", Hidden: true, Args: cobra.NoArgs,
		Short: "Wait for the receipt's deadline, then clean up; exit once cleanup is confirmed (started detached by setup and run)",
		RunE:  func(c *cobra.Command, _ []string) error { return a.slsWatchdog(c.Context(), f) }}
	state(watchdog)

	return []*cobra.Command{setup, health, prepare, run, cleanup, watchdog, a.slsLedgerCmd(f, ledger)}
}

// slsLedgerCmd is serverless ledger: the ledger shown, or resealed after an edit on purpose.
func (a *app) slsLedgerCmd(f *slsFlags, ledger func(*cobra.Command)) *cobra.Command {
	c := &cobra.Command{Use: "ledger", Short: "Show the budget ledger; --reseal accepts a ledger you edited on purpose", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.slsLedger(f) }}
	ledger(c)
	c.Flags().BoolVar(&f.reseal, "reseal", false, "accept the ledger as it is now (after an invoice reconciliation) and write its checksum")
	return c
}

// need refuses an empty required flag with its name and what it is for.
func need(flag, value, what string) error {
	if value == "" {
		return fail(ExitUsage, "--%s is required: %s", flag, what)
	}
	return nil
}

// lane builds the lane on this invocation's clients.
func (a *app) lane(f *slsFlags) (*serverless.Lane, error) {
	if err := need("state", f.state, "the attempt's ownership receipt"); err != nil {
		return nil, err
	}
	s := serverless.DefaultSettings()
	if f.image != "" {
		s.Image = f.image
	}
	if f.gpuPool != "" {
		s.GPUPool = f.gpuPool
	}
	if f.gpuType != "" {
		s.GPUType = f.gpuType
	}
	s.DataCenters = f.dataCenters
	if err := s.Validate(); err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if err := a.connect(); err != nil {
		return nil, err
	}
	opts := []runpod.Option{runpod.WithPolicy(a.policy)}
	if a.env.HTTPClient != nil {
		opts = append(opts, runpod.WithHTTPClient(a.env.HTTPClient))
	}
	jobURL, err := a.serviceURL("RUNPOD_JOB_URL")
	if err != nil {
		return nil, err
	}
	return &serverless.Lane{Mgmt: a.client, Jobs: runpod.NewJobClient(jobURL, a.key, opts...), Policy: a.policy,
		Settings: s, Receipt: f.state, Ledger: serverless.LedgerFile{Path: f.ledger, Caps: spend.DefaultLedgerCaps, LockWait: 30 * time.Second},
		Logf: func(format string, args ...any) { fmt.Fprintf(a.env.Stderr, format+"\n", args...) }}, nil
}

func (a *app) slsSetup(ctx context.Context, f *slsFlags) error {
	if err := need("ledger", f.ledger, "the budget ledger shared by every attempt"); err != nil {
		return err
	}
	l, err := a.lane(f)
	if err != nil {
		return err
	}
	if _, err := os.Stat(f.state); err == nil {
		return fail(ExitUsage, "--state %s already exists: it belongs to an earlier attempt; use a new receipt file (and run cleanup with the old one)", f.state)
	}
	repository := "dev/" + a.env.User
	attempt, err := ownership.ServerlessAttemptName(repository, a.env.Clock.Now().Unix(), 1)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	env, err := serverless.TemplateEnv(f.workerURL, f.workerSHA, repository, attempt)
	if err != nil {
		return withCode(ExitUsage, slsFlagError(err))
	}
	// The watchdog is armed as soon as the receipt exists, before the first
	// create, so a setup killed half-way is still cleaned up at the deadline.
	// A setup refused before its receipt (an attempt still open, the GPU
	// list unread) starts nothing, no watchdog either.
	armed := false
	l.Logf = func(format string, args ...any) {
		fmt.Fprintf(a.env.Stderr, format+"\n", args...)
		if _, err := os.Stat(f.state); !armed && err == nil {
			armed = true
			a.armWatchdog(f.state)
		}
	}
	r, err := l.Setup(ctx, serverless.SetupRequest{Attempt: attempt, Repository: repository, Args: serverless.BootstrapArgs, Env: env})
	if !armed && r != nil && !r.CleanupConfirmed {
		a.armWatchdog(f.state)
	}
	if err != nil {
		return slsError("setup", err)
	}
	fmt.Fprintf(a.env.Stdout, "endpoint %s (%s)\ntemplate %s\ncleanup deadline %s\n", r.Endpoint.ID, r.Endpoint.Name, r.Template.ID, r.Deadline.UTC().Format(time.RFC3339))
	return nil
}

func (a *app) slsHealth(ctx context.Context, f *slsFlags) error {
	l, err := a.lane(f)
	if err != nil {
		return err
	}
	if _, err := l.Health(ctx); err != nil {
		return slsError("health", err)
	}
	fmt.Fprintln(a.env.Stdout, "healthy: settings verified, the job host accepts the key, the endpoint has had no work")
	return nil
}

func (a *app) slsPrepare(f *slsFlags) error {
	if err := need("payload", f.payload, "where to write the payload file"); err != nil {
		return err
	}
	p, err := serverless.BuildPayload(f.source, jobwire.DefaultPayloadLimits)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if err := serverless.WritePayload(f.payload, p); err != nil {
		return withCode(ExitFailure, err)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(a.env.Stderr, "prepare: %s is a link or special file and is not sent\n", s)
	}
	fmt.Fprintf(a.env.Stdout, "payload_sha256 %s\nworker_sha256 %s\nfiles %d, %d bytes compressed, in %s\n",
		p.SHA256, orUnset(f.workerSHA), len(p.Files), p.Bytes, f.payload)
	return nil
}

func orUnset(s string) string {
	if s == "" {
		return "(unset: pass --worker-sha256 or set " + EnvWorkerSHA256 + ")"
	}
	return s
}

func (a *app) slsRun(ctx context.Context, f *slsFlags) error {
	// Refusals that need no key come first: nothing is read or billed.
	if !f.execute {
		return withCode(ExitUsage, fmt.Errorf("run needs --execute: %w", serverless.ErrNotExecuted))
	}
	for _, r := range [][3]string{
		{"payload", f.payload, "the payload file prepare wrote"},
		{"approved-payload-sha256", f.approved, "the payload_sha256 you reviewed"},
		{"ledger", f.ledger, "the budget ledger shared by every attempt"},
		{"output", f.output, "the results directory"},
	} {
		if err := need(r[0], r[1], r[2]); err != nil {
			return err
		}
	}
	p, err := serverless.ReadPayload(f.payload, jobwire.DefaultPayloadLimits)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	approved, err := serverless.Approve(p, f.approved)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("--approved-payload-sha256: %w", err))
	}
	job := jobwire.JobInput{TestCommand: f.testCommand, Smoke: jobwire.SmokeArgs{MinCUDA: f.minCUDA}}
	if err := serverless.CheckJob(job, f.output); err != nil {
		return withCode(ExitUsage, slsFlagError(err))
	}
	l, err := a.lane(f)
	if err != nil {
		return err
	}
	// The job never extends the lifetime: this watchdog has setup's deadline.
	a.armWatchdog(f.state)
	res, runErr := l.Run(ctx, serverless.RunRequest{Execute: true, Payload: approved, Output: f.output, Input: job})
	if res != nil {
		fmt.Fprintf(a.env.Stdout, "job %s ended %s; cuda_executed %t; %d result files in %s\n", res.JobID, res.State, res.CUDAExecuted, len(res.Files), f.output)
	}
	// The job ended (or never started): the endpoint and template go now, and
	// an unconfirmed deletion decides the exit code.
	if cerr := a.slsCleanup(context.WithoutCancel(ctx), f); cerr != nil {
		if runErr != nil {
			fmt.Fprintf(a.env.Stderr, "run: %v\n", runErr)
		}
		return cerr
	}
	if runErr != nil {
		return slsError("run", runErr)
	}
	return nil
}

func (a *app) slsCleanup(ctx context.Context, f *slsFlags) error {
	l, err := a.lane(f)
	if err != nil {
		return err
	}
	res, err := l.Cleanup(ctx)
	if err != nil {
		return withCode(ExitUnconfirmed, fmt.Errorf("%w; repeat cleanup later, and submit no job meanwhile", err))
	}
	fmt.Fprintf(a.env.Stdout, "cleanup confirmed: endpoint %q and template %q are gone (cleanup_confirmed true in %s)\n",
		res.Receipt.Endpoint.ID, res.Receipt.Template.ID, f.state)
	return nil
}

// slsWatchdog waits for the receipt's absolute deadline, fixed at setup, then
// cleans up unless the receipt already says cleanup was confirmed; cleanup is
// retried a bounded number of times.
func (a *app) slsWatchdog(ctx context.Context, f *slsFlags) error {
	l, err := a.lane(f)
	if err != nil {
		return err
	}
	r, err := serverless.LoadReceipt(f.state)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if wait := r.Deadline.Sub(a.env.Clock.Now()); wait > 0 {
		fmt.Fprintf(a.env.Stderr, "watchdog: waiting up to %s for the cleanup deadline %s\n", wait.Round(time.Second), r.Deadline.UTC().Format(time.RFC3339))
	}
	for {
		now, err := serverless.LoadReceipt(f.state)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return withCode(ExitFailure, fmt.Errorf("watchdog: the receipt %s is gone: nothing left to watch (or to clean up with)", f.state))
		case err == nil && now.CleanupConfirmed:
			fmt.Fprintln(a.env.Stderr, "watchdog: cleanup was confirmed; nothing left to watch")
			return nil
		}
		wait := r.Deadline.Sub(a.env.Clock.Now())
		if wait <= 0 {
			break
		}
		if err := a.env.Sleep(ctx, min(wait, watchdogCheck)); err != nil {
			return withCode(ExitInterrupted, fmt.Errorf("watchdog interrupted before the deadline: %w", err))
		}
	}
	var last error
	for i := 1; i <= watchdogRetries; i++ {
		r, err := serverless.LoadReceipt(f.state)
		if err == nil && r.CleanupConfirmed {
			fmt.Fprintln(a.env.Stderr, "watchdog: cleanup was already confirmed; nothing to do")
			return nil
		}
		if _, last = l.Cleanup(ctx); last == nil {
			fmt.Fprintln(a.env.Stderr, "watchdog: the deadline passed; endpoint and template deleted and confirmed")
			return nil
		}
		fmt.Fprintf(a.env.Stderr, "watchdog: cleanup attempt %d/%d: %v\n", i, watchdogRetries, last)
		if i < watchdogRetries {
			if err := a.env.Sleep(ctx, watchdogRetryWait); err != nil {
				break
			}
		}
	}
	return withCode(ExitUnconfirmed, last)
}

// slsLedger shows the ledger, and with --reseal accepts one edited on purpose.
func (a *app) slsLedger(f *slsFlags) error {
	if err := need("ledger", f.ledger, "the budget ledger"); err != nil {
		return err
	}
	lf := serverless.LedgerFile{Path: f.ledger, Caps: spend.DefaultLedgerCaps, LockWait: 30 * time.Second}
	var l *serverless.Ledger
	var err error
	if f.reseal {
		l, err = lf.Reseal()
	} else {
		l, err = serverless.ReadLedger(f.ledger)
	}
	if err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(a.env.Stdout, "ledger %s: %s reserved of the %s cap, %d reservations, %d attempts\n",
		f.ledger, l.TotalCents().Amount(), spend.DefaultLedgerCaps.Total, len(l.Reservations), len(l.Attempts))
	for _, at := range l.Attempts {
		state := "open: its cleanup is not confirmed"
		if !at.Open() {
			state = "closed " + at.ClosedAt.UTC().Format(time.RFC3339) + " (" + at.Note + ")"
		}
		fmt.Fprintf(a.env.Stdout, "  %s  %s  %s\n", at.Name, at.Receipt, state)
	}
	return nil
}

// armWatchdog starts the detached watchdog for the receipt; a failure to
// start it is reported, not fatal (cleanup and the receipt still hold).
func (a *app) armWatchdog(state string) {
	abs, err := filepath.Abs(state)
	if err != nil {
		abs = state
	}
	spawn := a.env.Spawn
	if spawn == nil {
		spawn = spawnDetached
	}
	if err := spawn([]string{"serverless", "watchdog", "--state", abs}); err != nil {
		fmt.Fprintf(a.env.Stderr, "warning: could not start the cleanup watchdog (%v): run cleanup yourself before the deadline\n", err)
		return
	}
	fmt.Fprintf(a.env.Stderr, "cleanup watchdog armed for %s\n", abs)
}

// spawnDetached re-executes this binary in its own session, so the terminal's
// Ctrl-C and the parent's exit leave it running; the key reaches it through
// the inherited environment, never its arguments. Its log is the receipt's
// file name plus ".watchdog.log".
func spawnDetached(args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := args[len(args)-1] + ".watchdog.log"
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// slsValueFlags are the flags that carry the values the lane's errors name.
var slsValueFlags = map[string]string{serverless.WorkerURLValue: "worker-url", serverless.WorkerSHA256Value: "worker-sha256",
	serverless.TestCommandValue: "test-command", serverless.MinCUDAValue: "min-cuda", serverless.OutputValue: "output"}

// slsFlagError names the flag of a value the lane refused (the lane names
// only what the value is).
func slsFlagError(err error) error {
	var bad *serverless.ValueError
	if errors.As(err, &bad) {
		if flag, ok := slsValueFlags[bad.Name]; ok {
			return fmt.Errorf("--%s %q: want %s", flag, bad.Value, bad.Want)
		}
	}
	return err
}

// slsError maps the lane's refusals to exit codes.
func slsError(stage string, err error) error {
	switch {
	case errors.Is(err, serverless.ErrNotApproved), errors.Is(err, serverless.ErrNotExecuted), errors.Is(err, serverless.ErrReceiptExists):
		return withCode(ExitUsage, err)
	case errors.Is(err, serverless.ErrAttemptOpen):
		return withCode(ExitAttemptOpen, err)
	case errors.Is(err, serverless.ErrBudget):
		return withCode(ExitBudgetRefused, err)
	case errors.Is(err, serverless.ErrTampered):
		return withCode(ExitLedgerRefused, err)
	case errors.Is(err, serverless.ErrUnresolved):
		return withCode(ExitUnconfirmed, err)
	case errors.Is(err, context.Canceled):
		return fail(ExitInterrupted, "%s: interrupted: %v", stage, err)
	case errors.Is(err, runpod.ErrUnauthorized):
		return fail(ExitFailure, "%s: %v", stage, err)
	}
	return withCode(ExitFailure, err)
}
