package history

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// commandLine is the cost-history program's parsed command line.
type commandLine struct {
	since, until string
	dir          string
	repo         string
	workflow     string
	apiURL       string
	runpodURL    string
	driftPercent float64
}

// RunCLI is the cost-history program (pkg/cmd/cost-history): with --since
// and --until it collects that range and reports, without them it regenerates
// the reports offline. A command line it cannot use is cmdline.ErrUsage.
func RunCLI(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, getenv, stderr)
	if err != nil {
		return err
	}
	opts := Options{Dir: o.dir, Workflow: o.workflow, DriftThreshold: o.driftPercent / 100,
		Logf: func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }}
	if o.since != "" {
		rng, err := ParseRange(o.since, o.until)
		if err != nil {
			return err
		}
		opts.Range = &rng
		if opts.GitHub, err = client(ctx, o, getenv); err != nil {
			return err
		}
		if key := runpod.KeyFromEnv(getenv); key != "" {
			opts.Billing = runpod.New(o.runpodURL, key)
		}
	}
	res, err := Run(ctx, opts)
	if err != nil {
		return err
	}
	t := res.Report.Totals
	fmt.Fprintf(stderr, "%d attempts, %d pods (%d with unknown cost), spend %s\n", t.Attempts, t.Pods, t.UnknownCostPods, t.Spend)
	for _, w := range res.BillingWarnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintln(stdout, res.MarkdownPath)
	fmt.Fprintln(stdout, res.JSONPath)
	fmt.Fprintln(stdout, res.ReputationPath) // for provision's reputation-file
	return nil
}

func parseArgs(args []string, getenv func(string) string, stderr io.Writer) (commandLine, error) {
	fs := flag.NewFlagSet("cost-history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o commandLine
	fs.StringVar(&o.since, "since", "", "first UTC `date` (YYYY-MM-DD) of runs to collect; omit both dates to regenerate offline")
	fs.StringVar(&o.until, "until", "", "last UTC `date` (YYYY-MM-DD) of runs to collect, inclusive")
	fs.StringVar(&o.dir, "directory", filepath.Join(os.TempDir(), "runpod-gpu-history"), "evidence `dir`ectory, outside any git repository")
	fs.StringVar(&o.repo, "repo", "", "repository as `owner/name` (default $GH_REPO, else $GITHUB_REPOSITORY)")
	fs.StringVar(&o.workflow, "workflow", DefaultWorkflow, "workflow `file`s whose runs are collected, comma-separated (the pod lane's and the Serverless lane's callers)")
	fs.StringVar(&o.apiURL, "api-url", "", "GitHub REST API `url` (default $GITHUB_API_URL, else "+ghapi.DefaultBaseURL+")")
	fs.StringVar(&o.runpodURL, "runpod-api-url", runpod.DefaultBaseURL, "RunPod API `url` whose billing is read when $RUNPOD_API_KEY is set")
	fs.Float64Var(&o.driftPercent, "drift-threshold-percent", DefaultDriftThreshold*100, "warn of a drift between estimate and bill above this `percent`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cost-history [--since DATE --until DATE --repo OWNER/NAME] [--directory DIR]")
		fmt.Fprintln(stderr, "environment: GH_TOKEN or GITHUB_TOKEN (to collect), GITHUB_API_URL, RUNPOD_API_KEY (to reconcile with RunPod's billing)")
		fs.PrintDefaults()
	}
	if err := cmdline.Parse(fs, args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, cmdline.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	case (o.since == "") != (o.until == ""):
		return o, cmdline.Usagef(fs, "--since and --until go together: give both to collect, neither to regenerate offline")
	case !(o.driftPercent > 0):
		return o, cmdline.Usagef(fs, "--drift-threshold-percent %v: want a percent above 0", o.driftPercent)
	case o.dir == "":
		return o, cmdline.Usagef(fs, "--directory: want a directory outside the repository")
	}
	o.repo = cmdline.Repository(o.repo, getenv)
	if o.repo == "" {
		o.repo = getenv("GITHUB_REPOSITORY")
	}
	if o.apiURL == "" {
		o.apiURL = getenv("GITHUB_API_URL")
	}
	return o, nil
}

// client builds the GitHub client that collection needs.
func client(ctx context.Context, o commandLine, getenv func(string) string) (*ghapi.Client, error) {
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("--repo %q: want owner/name (or set GH_REPO)", o.repo)
	}
	token, err := cmdline.Token(getenv)
	if err != nil {
		return nil, fmt.Errorf("%w to collect", err)
	}
	return ghapi.New(ctx, ghapi.Options{BaseURL: o.apiURL, Token: token, Owner: owner, Repo: name})
}
