package localgate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lazyre"
)

// commandLine is the local-gpu-gate program's parsed command line.
type commandLine struct {
	opts   LocalOptions
	apiURL string
	token  string
}

// RunCLI is the local-gpu-gate program (pkg/cmd/local-gpu-gate): it parses
// `-pr N [flags] -- LANE COMMAND`, runs [Run] with the lane's output on stdout
// and progress on stderr. A command line it cannot use is cmdline.ErrUsage.
func RunCLI(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
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
	res, err := Run(ctx, gh, cfg.opts)
	if err == nil || errors.Is(err, ErrLaneFailed) {
		fmt.Fprintf(stderr, "lane log: %s\n", cfg.opts.LogFile)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "done: the relay publishes the gate for %s once it verifies %s\n", res.Evidence.SHA, res.CommentURL)
	return nil
}

func parseArgs(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (commandLine, error) {
	fs := flag.NewFlagSet("local-gpu-gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg commandLine
	o := &cfg.opts
	fs.IntVar(&o.PRNumber, "pr", 0, "pull request `number` to validate (required)")
	fs.StringVar(&o.Repository, "repo", "", "repository as `owner/name` (default $GH_REPO, else the origin remote)")
	fs.StringVar(&o.RepoDir, "C", ".", "the checkout to validate (`dir`)")
	fs.StringVar(&o.Workflow, "workflow", DefaultWorkflow, "relay workflow `file` to dispatch")
	fs.StringVar(&o.Ref, "ref", "", "`branch` to dispatch the relay on (default: the repository's default branch)")
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "lane command time limit")
	fs.BoolVar(&o.AllowFork, "allow-fork", false, "validate a fork PR: its code runs on this machine (review it first; prefer a VM without credentials)")
	fs.StringVar(&o.LogFile, "log", "", "also write the lane's output to `file` (default: a file in the temp directory)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: local-gpu-gate -pr NUMBER [flags] -- LANE COMMAND [ARGS...]")
		fmt.Fprintln(stderr, "environment: GH_TOKEN or GITHUB_TOKEN (required), GITHUB_API_URL (default https://api.github.com)")
		fs.PrintDefaults()
	}
	if err := cmdline.Parse(fs, args); err != nil {
		return cfg, err
	}
	o.Command = fs.Args()
	switch {
	case o.PRNumber <= 0:
		return cfg, cmdline.Usagef(fs, "-pr: want the pull request number")
	case len(o.Command) == 0:
		return cfg, cmdline.Usagef(fs, "no lane command: give it after the flags, e.g. -- make gpu-test")
	case o.Timeout <= 0:
		return cfg, cmdline.Usagef(fs, "-timeout %s: want a positive duration", o.Timeout)
	}

	var err error
	if cfg.token, err = cmdline.Token(getenv); err != nil {
		return cfg, err
	}
	cfg.apiURL = getenv("GITHUB_API_URL")
	o.Repository = cmdline.Repository(o.Repository, getenv)
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

// remoteRE takes owner/name from the end of an https, ssh or scp-style remote
// URL; lazy, as the image's one program links this package.
var remoteRE = lazyre.Regexp{Pattern: `^(?:https?://[^/]+/|ssh://[^/]+/|[^@/:]+@[^:/]+:)([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`}

// parseRemote reads "owner/name" from a GitHub remote URL.
func parseRemote(url string) (string, error) {
	m := remoteRE.FindStringSubmatch(url)
	if m == nil || m[2] == "" || m[1] == "." || m[1] == ".." || m[2] == "." || m[2] == ".." {
		return "", fmt.Errorf("origin remote %q: want a GitHub URL such as https://github.com/owner/name.git", url)
	}
	return m[1] + "/" + m[2], nil
}
