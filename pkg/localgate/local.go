package localgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/wire"
)

// DefaultWorkflow is the relay workflow's file name.
const DefaultWorkflow = "local-gpu-gate.yml"

// DefaultTimeout bounds the lane command; the PR's gate waits 330 minutes for
// the local publication, so a longer lane could never count.
const DefaultTimeout = 5 * time.Hour

// ErrLaneFailed matches a *LaneError.
var ErrLaneFailed = errors.New("GPU lane failed")

// LaneError reports a lane command that failed or ran out of time; nothing
// was posted or dispatched.
type LaneError struct {
	Command  string
	Duration time.Duration
	TimedOut bool
	Err      error
}

// Error says how the lane ended and that no evidence was posted.
func (e *LaneError) Error() string {
	how := fmt.Sprintf("failed after %s: %v", e.Duration, e.Err)
	if e.TimedOut {
		how = fmt.Sprintf("timed out after %s", e.Duration)
	}
	return fmt.Sprintf("GPU lane %s %s; no evidence posted, relay not dispatched", e.Command, how)
}

// Is reports whether target is ErrLaneFailed.
func (e *LaneError) Is(target error) bool { return target == ErrLaneFailed }

// Unwrap returns the program's error (an *exec.ExitError for a non-zero exit).
func (e *LaneError) Unwrap() error { return e.Err }

// LocalClient is what the local command needs from GitHub. *ghapi.Client has it.
type LocalClient interface {
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	CreateIssueComment(ctx context.Context, number int, body string) (*github.IssueComment, error)
	DispatchWorkflow(ctx context.Context, workflowFile, ref string, inputs map[string]any) error
}

// LocalOptions configures Run.
type LocalOptions struct {
	RepoDir    string   // the maintainer's checkout; "" is the current directory
	Repository string   // "owner/name" the PR belongs to
	PRNumber   int      // the pull request to validate
	Command    []string // the GPU lane command, run in the clean worktree
	// Workflow is the relay workflow file; default DefaultWorkflow.
	Workflow string
	// Ref is the branch to dispatch the relay on; default the repository's
	// default branch, as the PR's base repository reports it.
	Ref string
	// Timeout bounds the lane command; default DefaultTimeout.
	Timeout time.Duration
	// AllowFork lets a fork PR's head run on this machine: the maintainer has
	// reviewed it and accepts running outside code locally. Without it a fork is refused.
	AllowFork bool
	// TempDir holds the worktree; default os.TempDir().
	TempDir string
	// LaneOutput receives the lane's combined output as it runs; nil discards.
	LaneOutput io.Writer
	// LogFile, when set, also receives the lane's combined output: the bytes
	// whose SHA-256 the evidence states.
	LogFile string
	// Progress receives one line per step; nil discards.
	Progress io.Writer
	// Exec runs git, nvidia-smi and the lane; default OSExec{}.
	Exec Exec
	// Now is the clock timing the lane; default time.Now.
	Now func() time.Time
}

// Result is what Run posted and dispatched.
type Result struct {
	Evidence   Evidence
	CommentID  int64
	CommentURL string
	Workflow   string
	Ref        string
	// Inputs are the relay's dispatch inputs.
	Inputs map[string]any
}

// Run validates the PR's head on the local GPU and hands the evidence to the
// relay. It refuses (a *RefusedError) a dirty checkout, a HEAD that is not the
// PR's head, and a PR the relay would refuse; a failing lane (*LaneError)
// posts and dispatches nothing.
func Run(ctx context.Context, gh LocalClient, opts LocalOptions) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	progress := func(format string, args ...any) { fmt.Fprintf(opts.Progress, format+"\n", args...) }

	sha, err := cleanHead(ctx, opts)
	if err != nil {
		return Result{}, err
	}
	pr, err := gh.GetPullRequest(ctx, opts.PRNumber)
	if err != nil {
		return Result{}, fmt.Errorf("read PR #%d: %w", opts.PRNumber, err)
	}
	// Fail before a long run on what the relay would refuse anyway, and on a
	// fork nobody said they meant to run here.
	if err := checkPullRequest(pr, opts.Repository, sha, opts.AllowFork); err != nil {
		return Result{}, err
	}
	ref := opts.Ref
	if ref == "" {
		if ref = pr.GetBase().GetRepo().GetDefaultBranch(); ref == "" {
			return Result{}, fmt.Errorf("PR #%d: GitHub did not report the default branch; pass the relay's ref explicitly", opts.PRNumber)
		}
	}

	gpu, err := QueryGPU(ctx, opts.Exec)
	if err != nil {
		return Result{}, err
	}
	progress("GPU: %s, driver %s, CUDA %s", gpu.Name, gpu.Driver, gpu.CUDAVersion)

	lane, err := runLane(ctx, opts, sha, progress)
	if err != nil {
		return Result{}, err
	}

	// The lane may take hours: a push meanwhile makes this evidence useless to the relay.
	again, err := gh.GetPullRequest(ctx, opts.PRNumber)
	if err != nil {
		return Result{}, fmt.Errorf("re-read PR #%d after the lane: %w", opts.PRNumber, err)
	}
	if err := checkPullRequest(again, opts.Repository, sha, opts.AllowFork); err != nil {
		return Result{}, fmt.Errorf("the lane passed, but %w", err)
	}

	evidence := Evidence{
		SHA: sha, GPUName: gpu.Name, Driver: gpu.Driver, CUDAVersion: gpu.CUDAVersion,
		Duration: lane.duration, LogSHA256: lane.digest, Command: FormatCommand(opts.Command),
	}
	return postAndDispatch(ctx, gh, opts, ref, evidence, progress)
}

// postAndDispatch posts the evidence as a comment on the PR and dispatches the relay
// workflow on ref to publish the gate from it.
func postAndDispatch(ctx context.Context, gh LocalClient, opts LocalOptions, ref string, evidence Evidence, progress func(string, ...any)) (Result, error) {
	body, err := evidence.Comment()
	if err != nil {
		return Result{}, err
	}
	comment, err := gh.CreateIssueComment(ctx, opts.PRNumber, body)
	if err != nil {
		return Result{}, fmt.Errorf("post the evidence comment: %w", err)
	}
	progress("evidence posted: %s", comment.GetHTMLURL())

	res := Result{
		Evidence: evidence, CommentID: comment.GetID(), CommentURL: comment.GetHTMLURL(),
		Workflow: opts.Workflow, Ref: ref,
		Inputs: map[string]any{
			InputPRNumber:  strconv.Itoa(opts.PRNumber),
			InputSHA:       evidence.SHA,
			InputCommentID: strconv.FormatInt(comment.GetID(), 10),
		},
	}
	if err := gh.DispatchWorkflow(ctx, res.Workflow, res.Ref, res.Inputs); err != nil {
		return res, fmt.Errorf("evidence posted at %s, but dispatching %s failed (dispatch it by hand with pr-number=%d sha=%s comment-id=%d): %w",
			res.CommentURL, res.Workflow, opts.PRNumber, evidence.SHA, res.CommentID, err)
	}
	progress("relay %s dispatched on %s", res.Workflow, res.Ref)
	return res, nil
}

func (o LocalOptions) withDefaults() (LocalOptions, error) {
	switch {
	case !repositoryRE.MatchString(o.Repository):
		return o, fmt.Errorf("repository %q: want owner/name", o.Repository)
	case o.PRNumber <= 0:
		return o, fmt.Errorf("PR number %d: want a positive number", o.PRNumber)
	case len(o.Command) == 0 || o.Command[0] == "":
		return o, errors.New("lane command is empty: give the command that runs the GPU tests")
	case o.Timeout < 0:
		return o, fmt.Errorf("timeout %s: want a positive duration", o.Timeout)
	}
	if o.RepoDir == "" {
		o.RepoDir = "."
	}
	if o.Workflow == "" {
		o.Workflow = DefaultWorkflow
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.LaneOutput == nil {
		o.LaneOutput = io.Discard
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Exec == nil {
		o.Exec = OSExec{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// cleanHead returns HEAD's commit, refusing a checkout with any change: the
// evidence must describe exactly what was pushed.
func cleanHead(ctx context.Context, opts LocalOptions) (string, error) {
	status, err := output(ctx, opts.Exec, opts.RepoDir, "git", "status", "--porcelain")
	if err != nil {
		return "", fmt.Errorf("check the worktree: %w", err)
	}
	if status = strings.TrimRight(status, "\n"); status != "" {
		lines := strings.Split(status, "\n")
		shown := lines[:min(len(lines), 5)]
		more := ""
		if len(lines) > len(shown) {
			more = fmt.Sprintf(" (and %d more)", len(lines)-len(shown))
		}
		return "", refuse(CheckWorktreeClean, "the worktree %s has changes; commit and push them, or stash them: %s%s",
			opts.RepoDir, strings.Join(shown, "; "), more)
	}
	head, err := output(ctx, opts.Exec, opts.RepoDir, "git", "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", refuse(CheckLocalCommit, "the worktree %s has no commit at HEAD: %v", opts.RepoDir, err)
	}
	sha := strings.TrimSpace(head)
	if !wire.IsCommitSHA(sha) {
		return "", refuse(CheckLocalCommit, "git rev-parse HEAD printed %q; want a commit SHA", clipText(sha))
	}
	return sha, nil
}

// laneRun is a passed lane's measurements.
type laneRun struct {
	duration time.Duration
	digest   string
}

// runLane runs the lane command in a fresh detached worktree of sha, so
// nothing ignored or untracked in the maintainer's checkout can influence it.
func runLane(ctx context.Context, opts LocalOptions, sha string, progress func(string, ...any)) (laneRun, error) {
	tmp, err := os.MkdirTemp(opts.TempDir, "local-gpu-gate-")
	if err != nil {
		return laneRun{}, fmt.Errorf("create the worktree directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	worktree := filepath.Join(tmp, "worktree")
	if _, err := output(ctx, opts.Exec, opts.RepoDir, "git", "worktree", "add", "--detach", worktree, sha); err != nil {
		return laneRun{}, fmt.Errorf("create a clean worktree at %s: %w", sha, err)
	}
	defer func() {
		// A fresh context: the worktree must go even when ctx was cancelled.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, err := output(cleanup, opts.Exec, opts.RepoDir, "git", "worktree", "remove", "--force", worktree); err != nil {
			progress("warning: could not remove the worktree %s (run git worktree prune): %v", worktree, err)
		}
	}()

	digest := sha256.New()
	sinks := []io.Writer{digest, opts.LaneOutput}
	if opts.LogFile != "" {
		f, err := os.Create(opts.LogFile)
		if err != nil {
			return laneRun{}, fmt.Errorf("create the lane log: %w", err)
		}
		defer f.Close()
		sinks = append(sinks, f)
	}
	out := io.MultiWriter(sinks...)

	command := FormatCommand(opts.Command)
	progress("running %s in a clean worktree of %s (timeout %s)", command, sha, opts.Timeout)
	laneCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := opts.Now()
	err = opts.Exec.Run(laneCtx, Command{Dir: worktree, Name: opts.Command[0], Args: opts.Command[1:], Env: LaneEnv(os.Environ()),
		Stdout: out, Stderr: out})
	duration := opts.Now().Sub(start).Round(time.Second)
	if err != nil {
		timedOut := errors.Is(laneCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return laneRun{}, &LaneError{Command: command, Duration: duration, TimedOut: timedOut, Err: err}
	}
	run := laneRun{duration: duration, digest: hex.EncodeToString(digest.Sum(nil))}
	progress("lane passed in %s; log SHA-256 %s", run.duration, run.digest)
	return run, nil
}
