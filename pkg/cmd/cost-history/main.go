// Command cost-history reports what the GPU workflow's pods cost across runs.
//
//	cost-history --since 2026-10-06 --until 2026-10-09 --repo owner/name --directory /tmp/runpod-gpu-history
//	cost-history --directory /tmp/runpod-gpu-history
//
// With dates it collects every attempt of the workflow created in that
// inclusive UTC range — logs and the small cost artifacts — into the
// directory, which must lie outside any git repository, and writes
// report.json and report.md there, with reputation.json, the record provision's
// reputation-file input reads (it prints the three paths). Without dates it regenerates the reports
// from the saved evidence with no network access. Collecting reads the token
// from GH_TOKEN or GITHUB_TOKEN; it needs read access to Actions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/history"
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
		fmt.Fprintln(os.Stderr, "cost-history:", err)
		os.Exit(1)
	}
}

// options is the parsed command line.
type options struct {
	since, until string
	dir          string
	repo         string
	workflow     string
	apiURL       string
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, getenv, stderr)
	if err != nil {
		return err
	}
	opts := history.Options{Dir: o.dir, Workflow: o.workflow,
		Logf: func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }}
	if o.since != "" {
		rng, err := history.ParseRange(o.since, o.until)
		if err != nil {
			return err
		}
		opts.Range = &rng
		if opts.GitHub, err = client(ctx, o, getenv); err != nil {
			return err
		}
	}
	res, err := history.Run(ctx, opts)
	if err != nil {
		return err
	}
	t := res.Report.Totals
	fmt.Fprintf(stderr, "%d attempts, %d pods (%d with unknown cost), spend %s\n", t.Attempts, t.Pods, t.UnknownCostPods, t.Spend)
	fmt.Fprintln(stdout, res.MarkdownPath)
	fmt.Fprintln(stdout, res.JSONPath)
	fmt.Fprintln(stdout, res.ReputationPath) // for provision's reputation-file
	return nil
}

func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("cost-history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.since, "since", "", "first UTC `date` (YYYY-MM-DD) of runs to collect; omit both dates to regenerate offline")
	fs.StringVar(&o.until, "until", "", "last UTC `date` (YYYY-MM-DD) of runs to collect, inclusive")
	fs.StringVar(&o.dir, "directory", filepath.Join(os.TempDir(), "runpod-gpu-history"), "evidence `dir`ectory, outside any git repository")
	fs.StringVar(&o.repo, "repo", "", "repository as `owner/name` (default $GH_REPO, else $GITHUB_REPOSITORY)")
	fs.StringVar(&o.workflow, "workflow", history.DefaultWorkflow, "workflow `file` whose runs are collected")
	fs.StringVar(&o.apiURL, "api-url", "", "GitHub REST API `url` (default $GITHUB_API_URL, else "+ghapi.DefaultBaseURL+")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cost-history [--since DATE --until DATE --repo OWNER/NAME] [--directory DIR]")
		fmt.Fprintln(stderr, "environment: GH_TOKEN or GITHUB_TOKEN (to collect), GITHUB_API_URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, errUsage
	}
	usage := func(format string, a ...any) (options, error) {
		fmt.Fprintf(stderr, "cost-history: "+format+"\n", a...)
		fs.Usage()
		return o, errUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case (o.since == "") != (o.until == ""):
		return usage("--since and --until go together: give both to collect, neither to regenerate offline")
	case o.dir == "":
		return usage("--directory: want a directory outside the repository")
	}
	if o.repo == "" {
		o.repo = getenv("GH_REPO")
	}
	if o.repo == "" {
		o.repo = getenv("GITHUB_REPOSITORY")
	}
	if o.apiURL == "" {
		o.apiURL = getenv("GITHUB_API_URL")
	}
	return o, nil
}

// client builds the GitHub client that collection needs.
func client(ctx context.Context, o options, getenv func(string) string) (*ghapi.Client, error) {
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("--repo %q: want owner/name (or set GH_REPO)", o.repo)
	}
	token := getenv("GH_TOKEN")
	if token == "" {
		token = getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return nil, errors.New("no token: set GH_TOKEN or GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token)) to collect")
	}
	return ghapi.New(ctx, ghapi.Options{BaseURL: o.apiURL, Token: token, Owner: owner, Repo: name})
}
