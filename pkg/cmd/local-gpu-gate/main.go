// Command local-gpu-gate validates a pull request on the maintainer's own GPU.
//
//	local-gpu-gate -pr 123 -- make gpu-test
//
// It refuses a checkout with changes or whose HEAD is not the PR's pushed
// head, runs the lane command in a clean detached worktree of that commit,
// posts the SHA-bound evidence comment and dispatches the relay workflow
// (local-gpu-gate.yml) on the default branch, which publishes the CI GPU gate.
// A failing lane posts nothing. The token comes from GH_TOKEN or
// GITHUB_TOKEN; it needs to comment on pull requests and dispatch workflows.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/localgate"
)

// errUsage marks a command line that could not be understood (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "local-gpu-gate:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	opts   localgate.LocalOptions
	apiURL string
	token  string
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	owner, name, _ := strings.Cut(cfg.opts.Repository, "/")
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: cfg.apiURL, Token: cfg.token, Owner: owner, Repo: name})
	if err != nil {
		return err
	}
	cfg.opts.LaneOutput, cfg.opts.Progress = stdout, stderr
	res, err := localgate.Run(ctx, gh, cfg.opts)
	if err == nil || errors.Is(err, localgate.ErrLaneFailed) {
		fmt.Fprintf(stderr, "lane log: %s\n", cfg.opts.LogFile)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "done: the relay publishes the gate for %s once it verifies %s\n", res.Evidence.SHA, res.CommentURL)
	return nil
}

func parseArgs(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("local-gpu-gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	o := &cfg.opts
	fs.IntVar(&o.PRNumber, "pr", 0, "pull request `number` to validate (required)")
	fs.StringVar(&o.Repository, "repo", "", "repository as `owner/name` (default $GH_REPO, else the origin remote)")
	fs.StringVar(&o.RepoDir, "C", ".", "the checkout to validate (`dir`)")
	fs.StringVar(&o.Workflow, "workflow", localgate.DefaultWorkflow, "relay workflow `file` to dispatch")
	fs.StringVar(&o.Ref, "ref", "", "`branch` to dispatch the relay on (default: the repository's default branch)")
	fs.DurationVar(&o.Timeout, "timeout", localgate.DefaultTimeout, "lane command time limit")
	fs.BoolVar(&o.AllowFork, "allow-fork", false, "validate a fork PR: its code runs on this machine (review it first; prefer a VM without credentials)")
	fs.StringVar(&o.LogFile, "log", "", "also write the lane's output to `file` (default: a file in the temp directory)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: local-gpu-gate -pr NUMBER [flags] -- LANE COMMAND [ARGS...]")
		fmt.Fprintln(stderr, "environment: GH_TOKEN or GITHUB_TOKEN (required), GITHUB_API_URL (default https://api.github.com)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, errUsage
	}
	usage := func(format string, a ...any) (config, error) {
		fmt.Fprintf(stderr, "local-gpu-gate: "+format+"\n", a...)
		fs.Usage()
		return cfg, errUsage
	}
	o.Command = fs.Args()
	switch {
	case o.PRNumber <= 0:
		return usage("-pr: want the pull request number")
	case len(o.Command) == 0:
		return usage("no lane command: give it after the flags, e.g. -- make gpu-test")
	case o.Timeout <= 0:
		return usage("-timeout %s: want a positive duration", o.Timeout)
	}

	cfg.token = getenv("GH_TOKEN")
	if cfg.token == "" {
		cfg.token = getenv("GITHUB_TOKEN")
	}
	if cfg.token == "" {
		return cfg, errors.New("no token: set GH_TOKEN or GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token))")
	}
	cfg.apiURL = getenv("GITHUB_API_URL")
	if o.Repository == "" {
		o.Repository = getenv("GH_REPO")
	}
	if o.Repository == "" {
		remote, err := exec.CommandContext(ctx, "git", "-C", o.RepoDir, "remote", "get-url", "origin").Output()
		if err != nil {
			return cfg, fmt.Errorf("no -repo and no origin remote to read it from: %w", err)
		}
		if o.Repository, err = parseRemote(strings.TrimSpace(string(remote))); err != nil {
			return cfg, fmt.Errorf("%w; pass -repo owner/name", err)
		}
	}
	if o.LogFile == "" {
		o.LogFile = filepath.Join(os.TempDir(), fmt.Sprintf("local-gpu-gate-pr%d-%s.log", o.PRNumber, time.Now().UTC().Format("20060102T150405Z")))
	}
	return cfg, nil
}

// remoteRE takes owner/name from the end of an https, ssh or scp-style remote URL.
var remoteRE = regexp.MustCompile(`^(?:https?://[^/]+/|ssh://[^/]+/|[^@/:]+@[^:/]+:)([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)

// parseRemote reads "owner/name" from a GitHub remote URL.
func parseRemote(url string) (string, error) {
	m := remoteRE.FindStringSubmatch(url)
	if m == nil || m[2] == "" || m[1] == "." || m[1] == ".." || m[2] == "." || m[2] == ".." {
		return "", fmt.Errorf("origin remote %q: want a GitHub URL such as https://github.com/owner/name.git", url)
	}
	return m[1] + "/" + m[2], nil
}
