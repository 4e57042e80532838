package workflowplay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// Machine is where a job's steps really run, as a runner runs them: a directory of this
// host stands for the runner's (its workspace and temp), a run: step is a bash process
// with the job's environment, working directory and timeout-minutes, and
// actions/upload-artifact and actions/download-artifact move real bytes through the
// run's results service. actions/checkout leaves the workspace as it is (or calls
// Checkout). Any other action is Uses's, else an error: the player does not pretend to
// run it. A job's container: and services: are not started: the steps run on this host.
type Machine struct {
	// Workspace is GITHUB_WORKSPACE: every step's working directory, unless the step's
	// working-directory (relative to it) says otherwise.
	Workspace string
	// Temp is RUNNER_TEMP: each run step's script and file commands go there.
	Temp string
	// Env is the runner's own environment, under every step's (PATH, HOME, and the
	// GITHUB_* variables that the github context does not give).
	Env map[string]string
	// Clock measures timeout-minutes; nil is the wall clock. On a simclock.Virtual a step
	// outlives its timeout when the test advances the clock past it.
	Clock simclock.Clock
	// Artifacts is the run's results service; nil fails the artifact actions' steps.
	Artifacts *Artifacts
	// Checkout, if set, runs actions/checkout with its with: (else the workspace already
	// holds the repository).
	Checkout func(ctx context.Context, with map[string]string) error
	// Uses, if set, runs a uses: step of an action the machine does not run itself (its
	// with: evaluated); an error fails the step. Nil makes such a step the player's error.
	Uses func(ctx context.Context, uses string, with map[string]string) error
	// Started and Ended hear of each step (its index in the job's steps) as it really
	// starts and ends: a step whose if: is false only ends, skipped.
	Started func(step int)
	Ended   func(step int, conclusion string)
	// Stop, when closed, ends the job where it is: the running step's processes are
	// killed and no later step runs (the job was cancelled, or the machine went away).
	Stop <-chan struct{}
	// Log receives the steps' output and the runner's lines about them; nil discards it.
	Log io.Writer
}

// TimedOutLine is what the runner prints when a step outlives its timeout-minutes.
const TimedOutLine = "##[error]The action has timed out."

// StepName is a step's name as GitHub lists it: its name, else "Run " and the first line
// of its script or the action it uses.
func StepName(st WorkflowStep) string {
	switch {
	case st.Name != "":
		return st.Name
	case st.Run != "":
		first, _, _ := strings.Cut(strings.TrimSpace(st.Run), "\n")
		return "Run " + first
	}
	return "Run " + st.Uses
}

// jobState is one job's run on a machine: the contexts it grows and what it left running.
type jobState struct {
	m        *Machine
	job      *WorkflowJob
	ctx      Contexts
	env      map[string]string // the job's env context: workflow's, job's, GITHUB_ENV's
	path     []string          // GITHUB_PATH's additions, newest first
	groups   []int             // process groups the steps started, ended with the job
	out      *maskWriter       // the machine's log, the job's secrets masked
	stopped  bool
	deadline time.Time // the job's timeout-minutes, on the machine's clock
}

// RunJob runs job's steps on the machine, in order, with the contexts c (github, needs,
// inputs, matrix, secrets, vars, and env: the workflow's env). Each step runs when its
// if: holds (success() by default; always(), failure() and cancelled() see the steps
// before); a failing step fails the job unless it continues on error; a step past its
// timeout-minutes is killed and fails; Stop closing cancels the job. It returns the
// job's result (success, failure, cancelled) and its outputs.
func (m *Machine) RunJob(ctx context.Context, job *WorkflowJob, c Contexts) (JobRun, error) {
	j, err := m.newJob(job, c)
	if err != nil {
		return JobRun{}, err
	}
	defer j.out.flush()
	defer j.killGroups()
	failed, cancelled := false, false
	for i, st := range job.Steps {
		j.ctx.Status = Status{Success: !failed && !cancelled, Failure: failed, Cancelled: cancelled}
		conclusion, err := j.runStep(ctx, i, st)
		if err != nil {
			return JobRun{}, fmt.Errorf("step %s: %w", StepName(st), err)
		}
		failed = failed || conclusion == "failure"
		cancelled = cancelled || conclusion == "cancelled"
	}
	outputs := map[string]string{}
	for k, v := range job.Outputs {
		s, err := Interpolate(v, j.ctx)
		if err != nil {
			return JobRun{}, fmt.Errorf("outputs.%s: %w", k, err)
		}
		outputs[k] = s
	}
	result := "success"
	switch {
	case cancelled || j.stopped:
		result = "cancelled"
	case failed:
		result = "failure"
	}
	return JobRun{Result: result, Outputs: outputs}, nil
}

// newJob prepares a job's run: its directories, contexts, env and deadline.
func (m *Machine) newJob(job *WorkflowJob, c Contexts) (*jobState, error) {
	if m.Workspace == "" || m.Temp == "" {
		return nil, errors.New("the machine needs a Workspace and a Temp directory")
	}
	for _, d := range []string{m.Workspace, m.Temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	c.Values = maps.Clone(c.Values)
	c.Values["steps"] = map[string]any{}
	j := &jobState{m: m, job: job, ctx: c, env: map[string]string{}, out: &maskWriter{w: m.log()}}
	if secrets, ok := c.Values["secrets"].(map[string]any); ok {
		for _, v := range secrets {
			if s := exprString(v); s != "" {
				j.out.secrets = append(j.out.secrets, s)
			}
		}
	}
	if base, ok := c.Values["env"].(map[string]any); ok {
		for k, v := range base {
			j.env[k] = exprString(v)
		}
	}
	j.publishEnv()
	for _, k := range slices.Sorted(maps.Keys(job.Env)) {
		v, err := Interpolate(job.Env[k], j.ctx)
		if err != nil {
			return nil, fmt.Errorf("env.%s: %w", k, err)
		}
		j.env[k] = v
	}
	j.publishEnv()
	if d, err := minutes(job.TimeoutMinutes, j.ctx); err != nil {
		return nil, fmt.Errorf("timeout-minutes: %w", err)
	} else if d > 0 {
		j.deadline = m.clock().Now().Add(d)
	}
	return j, nil
}

// runStep runs step i when its if: holds, records it in the steps context and returns
// its conclusion (skipped when it did not run).
func (j *jobState) runStep(ctx context.Context, i int, st WorkflowStep) (string, error) {
	steps := j.ctx.Values["steps"].(map[string]any)
	record := func(outcome, conclusion string, outputs map[string]string) string {
		if st.ID != "" {
			steps[st.ID] = map[string]any{"outcome": outcome, "conclusion": conclusion, "outputs": stringMap(outputs)}
		}
		j.m.ended(i, conclusion)
		return conclusion
	}
	if j.stopped {
		return record("skipped", "skipped", nil), nil
	}
	run, err := Condition(st.If, j.ctx)
	if err != nil {
		return "", fmt.Errorf("if: %w", err)
	}
	if !run {
		return record("skipped", "skipped", nil), nil
	}
	outcome, outputs, err := j.step(ctx, i, st)
	if err != nil {
		return "", err
	}
	if outcome == "failure" && st.ContinueOnError {
		return record(outcome, "success", outputs), nil
	}
	return record(outcome, outcome, outputs), nil
}

func (m *Machine) clock() simclock.Clock {
	if m.Clock == nil {
		return simclock.Real{}
	}
	return m.Clock
}

func (m *Machine) log() io.Writer {
	if m.Log == nil {
		return io.Discard
	}
	return m.Log
}

func (m *Machine) ended(i int, conclusion string) {
	if m.Ended != nil {
		m.Ended(i, conclusion)
	}
}

// publishEnv makes the job's env the expressions' env context.
func (j *jobState) publishEnv() {
	j.ctx.Values["env"] = stringMap(j.env)
}

// minutes reads a timeout-minutes: a number or an expression giving one; 0 when absent.
func minutes(v any, c Contexts) (time.Duration, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int:
		s = strconv.Itoa(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		var err error
		if s, err = Interpolate(x, c); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("%v is not a number of minutes", v)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a positive number of minutes", s)
	}
	return time.Duration(f * float64(time.Minute)), nil
}

// step runs one step whose if: held and returns its outcome (success, failure,
// cancelled) and outputs. An error is the player's own failure, not the step's.
func (j *jobState) step(ctx context.Context, i int, st WorkflowStep) (string, map[string]string, error) {
	m := j.m
	env := maps.Clone(j.env)
	for _, k := range slices.Sorted(maps.Keys(st.Env)) {
		v, err := Interpolate(st.Env[k], j.ctx)
		if err != nil {
			return "", nil, fmt.Errorf("env.%s: %w", k, err)
		}
		env[k] = v
	}
	timeout, err := minutes(st.TimeoutMinutes, j.ctx)
	if err != nil {
		return "", nil, fmt.Errorf("timeout-minutes: %w", err)
	}
	onTimeout := "timeout"
	if !j.deadline.IsZero() {
		left := j.deadline.Sub(m.clock().Now())
		if timeout == 0 || left < timeout {
			timeout, onTimeout = max(left, time.Nanosecond), "job-timeout"
		}
	}
	sctx, reason, release := j.bound(ctx, timeout, onTimeout)
	defer release()
	var outputs map[string]string
	var stepErr error
	if st.Run != "" {
		outputs, stepErr = j.run(sctx, i, st, env)
	} else {
		if m.Started != nil {
			m.Started(i)
		}
		stepErr = j.action(sctx, st)
	}
	switch reason() {
	case "timeout":
		fmt.Fprintln(j.out, TimedOutLine)
		return "failure", outputs, nil
	case "job-timeout":
		// GitHub cancels a job past its timeout-minutes, with this annotation.
		j.stopped = true
		fmt.Fprintf(j.out, "##[error]The job has exceeded the maximum execution time of %v minutes.\n", j.job.TimeoutMinutes)
		return "cancelled", outputs, nil
	case "stop":
		j.stopped = true
		fmt.Fprintln(j.out, "##[error]The operation was canceled.")
		return "cancelled", outputs, nil
	}
	switch {
	case errors.Is(stepErr, errPlayer):
		return "", nil, stepErr
	case stepErr != nil:
		fmt.Fprintf(j.out, "##[error]%v\n", stepErr)
		return "failure", outputs, nil
	}
	return "success", outputs, nil
}

// bound gives a step's context: cancelled when the step's timeout passes on the machine's
// clock (reason onTimeout) or Stop closes ("stop"); reason says which, "" for neither.
func (j *jobState) bound(ctx context.Context, timeout time.Duration, onTimeout string) (context.Context, func() string, func()) {
	sctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	why := ""
	end := func(reason string) {
		mu.Lock()
		if why == "" {
			why = reason
		}
		mu.Unlock()
		cancel()
	}
	var timer simclock.Timer
	if timeout > 0 {
		timer = j.m.clock().AfterFunc(timeout, func() { end(onTimeout) })
	}
	go func() {
		select {
		case <-j.m.Stop:
			end("stop")
		case <-sctx.Done():
		}
	}()
	reason := func() string {
		mu.Lock()
		defer mu.Unlock()
		return why
	}
	return sctx, reason, func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
}

// errPlayer marks an error of the player (a step it cannot run), not of the step.
var errPlayer = errors.New("the player cannot run this step")

// shellCommand is the runner's command line for a run step's script file.
func shellCommand(shell, file string) ([]string, error) {
	switch shell {
	case "":
		return []string{"bash", "-e", file}, nil
	case "bash":
		return []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", file}, nil
	case "sh":
		return []string{"sh", "-e", file}, nil
	case "python":
		return []string{"python3", file}, nil
	}
	if !strings.Contains(shell, "{0}") {
		return nil, fmt.Errorf("shell %q: want bash, sh, python or a command with {0}: %w", shell, errPlayer)
	}
	var out []string
	for _, f := range strings.Fields(shell) {
		out = append(out, strings.ReplaceAll(f, "{0}", file))
	}
	return out, nil
}

// run runs a run: step's script as its shell's process, in its own process group so that
// a timeout or a stop kills everything it started.
func (j *jobState) run(ctx context.Context, i int, st WorkflowStep, env map[string]string) (map[string]string, error) {
	m := j.m
	cmd, files, err := j.command(i, st, env)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if m.Started != nil {
			m.Started(i)
		}
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	j.groups = append(j.groups, cmd.Process.Pid)
	if m.Started != nil {
		m.Started(i) // the process exists: the step has really started
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	}
	outputs, perr := ReadFileCommand(files["GITHUB_OUTPUT"])
	if perr != nil {
		return nil, fmt.Errorf("GITHUB_OUTPUT: %w", perr)
	}
	if werr != nil {
		return outputs, fmt.Errorf("Process completed with exit code %d.", cmd.ProcessState.ExitCode())
	}
	return outputs, j.takeFileCommands(files)
}

// command is a run step's process, not started, and its file commands' files.
func (j *jobState) command(i int, st WorkflowStep, env map[string]string) (*exec.Cmd, map[string]string, error) {
	m := j.m
	script, err := Interpolate(st.Run, j.ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("run: %w: %w", err, errPlayer)
	}
	file := filepath.Join(m.Temp, fmt.Sprintf("step-%d.sh", i+1))
	if err := os.WriteFile(file, []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	argv, err := shellCommand(cmp.Or(st.Shell, j.job.Defaults.Run.Shell), file)
	if err != nil {
		return nil, nil, err
	}
	dir := m.Workspace
	if wd := cmp.Or(st.WorkingDirectory, j.job.Defaults.Run.WorkingDirectory); wd != "" {
		if dir, err = Interpolate(wd, j.ctx); err != nil {
			return nil, nil, fmt.Errorf("working-directory: %w: %w", err, errPlayer)
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(m.Workspace, dir)
		}
	}
	files := map[string]string{}
	for _, name := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		files[name] = filepath.Join(m.Temp, fmt.Sprintf("%s-%d", strings.ToLower(name), i+1))
		if err := os.WriteFile(files[name], nil, 0o600); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = j.processEnv(env, files)
	cmd.Stdout, cmd.Stderr = j.out, j.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, files, nil
}

// takeFileCommands applies what a successful step wrote to GITHUB_ENV and GITHUB_PATH to
// the steps after it.
func (j *jobState) takeFileCommands(files map[string]string) error {
	added, err := ReadFileCommand(files["GITHUB_ENV"])
	if err != nil {
		return fmt.Errorf("GITHUB_ENV: %w", err)
	}
	maps.Copy(j.env, added)
	j.publishEnv()
	if data, err := os.ReadFile(files["GITHUB_PATH"]); err == nil {
		for _, p := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if p = strings.TrimSpace(p); p != "" {
				j.path = append([]string{p}, j.path...)
			}
		}
	}
	return nil
}

// processEnv is a run step's environment: the runner's, the github context's GITHUB_*
// variables, the job's and step's env, and the step's file commands.
func (j *jobState) processEnv(env, files map[string]string) []string {
	m := j.m
	all := map[string]string{"CI": "true", "GITHUB_ACTIONS": "true", "PATH": os.Getenv("PATH"), "HOME": m.Temp}
	gh, _ := j.ctx.Values["github"].(map[string]any)
	for name, key := range map[string]string{
		"GITHUB_REPOSITORY": "repository", "GITHUB_RUN_ID": "run_id", "GITHUB_RUN_ATTEMPT": "run_attempt",
		"GITHUB_EVENT_NAME": "event_name", "GITHUB_SHA": "sha", "GITHUB_REF": "ref", "GITHUB_ACTOR": "actor",
		"GITHUB_JOB": "job", "GITHUB_SERVER_URL": "server_url", "GITHUB_API_URL": "api_url", "GITHUB_WORKFLOW": "workflow",
	} {
		if v, ok := gh[key]; ok && v != nil {
			all[name] = exprString(v)
		}
	}
	maps.Copy(all, m.Env)
	all["GITHUB_WORKSPACE"], all["RUNNER_TEMP"] = m.Workspace, m.Temp
	maps.Copy(all, env)
	maps.Copy(all, files)
	if len(j.path) > 0 {
		all["PATH"] = strings.Join(j.path, ":") + ":" + all["PATH"]
	}
	out := make([]string, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, k+"="+all[k])
	}
	return out
}

// killGroups ends what the job's steps left running, as the runner does at a job's end.
func (j *jobState) killGroups() {
	for _, pgid := range j.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// action runs a uses: step the machine knows.
func (j *jobState) action(ctx context.Context, st WorkflowStep) error {
	m := j.m
	with := map[string]string{}
	for k, v := range st.With {
		s, err := Interpolate(v, j.ctx)
		if err != nil {
			return fmt.Errorf("with.%s: %w: %w", k, err, errPlayer)
		}
		with[k] = s
	}
	name, _, _ := strings.Cut(st.Uses, "@")
	switch name {
	case "actions/checkout":
		if m.Checkout != nil {
			return m.Checkout(ctx, with)
		}
		return nil
	case "actions/upload-artifact":
		return j.upload(ctx, with)
	case "actions/download-artifact":
		return j.download(ctx, with)
	}
	if m.Uses != nil {
		return m.Uses(ctx, st.Uses, with)
	}
	return fmt.Errorf("uses %s: %w (it runs actions/checkout, actions/upload-artifact and actions/download-artifact)", st.Uses, errPlayer)
}

func (j *jobState) upload(ctx context.Context, with map[string]string) error {
	m := j.m
	if m.Artifacts == nil {
		return errors.New("upload-artifact: the machine has no results service (Machine.Artifacts)")
	}
	if strings.TrimSpace(with["path"]) == "" {
		return errors.New("Input required and not supplied: path")
	}
	zipped, n, err := zipPaths(m.Workspace, with["path"])
	if err != nil {
		return err
	}
	if n == 0 {
		switch with["if-no-files-found"] {
		case "error":
			return fmt.Errorf("No files were found with the provided path: %s. No artifacts will be uploaded.", with["path"])
		case "ignore":
		default:
			fmt.Fprintf(j.out, "##[warning]No files were found with the provided path: %s. No artifacts will be uploaded.\n", with["path"])
		}
		return nil
	}
	name := cmp.Or(with["name"], "artifact")
	id, err := m.Artifacts.Upload(ctx, name, zipped)
	if err != nil {
		return err
	}
	fmt.Fprintf(j.out, "Artifact %s has been successfully uploaded! Final size is %d bytes. Artifact ID is %d\n", name, len(zipped), id)
	return nil
}

func (j *jobState) download(ctx context.Context, with map[string]string) error {
	m := j.m
	if m.Artifacts == nil {
		return errors.New("download-artifact: the machine has no results service (Machine.Artifacts)")
	}
	if with["run-id"] != "" || with["github-token"] != "" {
		return fmt.Errorf("download-artifact from another run (run-id, github-token): %w", errPlayer)
	}
	dir := m.Workspace
	if p := with["path"]; p != "" {
		dir = p
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(m.Workspace, p)
		}
	}
	names := []string{with["name"]}
	if with["name"] != "" {
		found, err := m.Artifacts.List(ctx, with["name"])
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("Unable to download artifact(s): Artifact not found for name: %s", with["name"])
		}
	} else {
		var err error
		if names, err = m.Artifacts.List(ctx, ""); err != nil {
			return err
		}
	}
	for _, name := range names {
		zipped, err := m.Artifacts.Download(ctx, name)
		if err != nil {
			return err
		}
		into := dir
		if with["name"] == "" && with["merge-multiple"] != "true" {
			into = filepath.Join(dir, name)
		}
		if err := unzipInto(zipped, into); err != nil {
			return err
		}
		fmt.Fprintf(j.out, "Artifact download completed successfully: %s\n", name)
	}
	return nil
}

// maskWriter writes a job's log line by line with every secret of the job replaced by
// ***, as the runner masks them.
type maskWriter struct {
	w       io.Writer
	secrets []string
	mu      sync.Mutex
	partial []byte
}

func (w *maskWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	if i := bytes.LastIndexByte(w.partial, '\n'); i >= 0 {
		if _, err := io.WriteString(w.w, w.mask(string(w.partial[:i+1]))); err != nil {
			return 0, err
		}
		w.partial = append(w.partial[:0], w.partial[i+1:]...)
	}
	return len(p), nil
}

// flush writes what is left of the last line.
func (w *maskWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		_, _ = io.WriteString(w.w, w.mask(string(w.partial)))
		w.partial = nil
	}
}

func (w *maskWriter) mask(s string) string {
	for _, secret := range w.secrets {
		s = strings.ReplaceAll(s, secret, "***")
	}
	return s
}
