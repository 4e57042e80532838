package devcli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/doctor"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// doctorFlags are runpod-gpu doctor's flags.
type doctorFlags struct {
	repo, dir, appKey, runnerAppKey string
	asJSON                          bool
}

func (a *app) doctorCmd() *cobra.Command {
	f := doctorFlags{}
	cmd := &cobra.Command{
		Use:   "doctor [--repo OWNER/NAME] [--app-key-file PEM] [--json]",
		Short: "Check a repository's set-up for the GPU lane and say exactly what to fix",
		Long: `doctor reads a repository's set-up before its first pull request and prints a
row per check: ok with what it found, FIX with what is wrong and exactly what
to do, or ? for a check it could not make with what it was given:

  app                the App installed, with the permissions each job needs (needs the App's key)
  environment        the environment deploys from the default branch only (and the merge
                     queue's gh-readonly-queue/<default>/* when a ruleset has a merge queue)
  secrets            the environment's secrets and the repository variables (names only)
  branch-protection  a ruleset or branch protection requires the CI GPU gate from the App
  callers            the callers and the configuration on the default branch
  workflow-names     the lane's workflow_run workflows: match real workflow names
  image              the action image pulls without credentials
  release            the suite's release environment has required reviewers
  runpod             the RunPod key is valid (REST)
  balance            optional: the balance covers a run (GraphQL; unknown when unread)
  runner-group       the runner group admits the repository

It only reads. GitHub is read with GH_TOKEN (or GITHUB_TOKEN), a repository
administrator's token; the App's installation with the App's own private key
(--app-key-file, and --runner-app-key-file for the two-App split); RunPod with
RUNPOD_API_KEY or ~/.runpod/config.toml. GITHUB_API_URL and RUNPOD_API_URL
override the API hosts, RUNPOD_GPU_REGISTRY_URL the image registry's. A read
GitHub refuses says what to do (refresh the token, grant a scope, create what
is missing, retry later), never a status line.

--json prints {repository, defaultBranch, ok, checks: [{id, title, status,
message, fix}]}, status being ok, fix or unknown.

Exit status: 0 when no check needs a fix (a ? does not), 1 when one does.`,
		Example: `  runpod-gpu doctor --repo my-org/gpu-project --app-key-file ~/Downloads/my-app.private-key.pem
  runpod-gpu doctor --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runDoctor(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", "", "the repository, OWNER/NAME (default: the origin of --dir's checkout)")
	fl.StringVar(&f.dir, "dir", ".", "a checkout whose origin names the repository")
	fl.StringVar(&f.appKey, "app-key-file", "", "the App's private key (PEM), to read its installation")
	fl.StringVar(&f.runnerAppKey, "runner-app-key-file", "", "the runner App's private key (PEM), with the two-App split")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	return cmd
}

func (a *app) runDoctor(cmd *cobra.Command, f doctorFlags) error {
	repo := f.repo
	if repo == "" {
		repo = originRepository(f.dir)
	}
	owner, name, okRepo := strings.Cut(repo, "/")
	if !okRepo || owner == "" || name == "" || strings.Contains(name, "/") {
		return fail(ExitUsage, "--repo %q: want OWNER/NAME (no origin on github.com found in %s)", repo, f.dir)
	}
	token := firstNonEmpty(a.env.Getenv("GH_TOKEN"), a.env.Getenv("GITHUB_TOKEN"))
	if token == "" {
		return fail(ExitUsage, "no GitHub token: set GH_TOKEN (e.g. GH_TOKEN=$(gh auth token)) to a token of a repository administrator")
	}
	deps, err := a.doctorDeps(cmd, f, owner, name, token)
	if err != nil {
		return err
	}
	ctx, cancel := a.bound(cmd.Context(), 5*callTimeout)
	defer cancel()
	rep, err := doctor.Run(ctx, deps)
	if err != nil {
		return fail(ExitFailure, "%v", err)
	}
	if f.asJSON {
		if err := writeJSON(a.env.Stdout, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprint(a.env.Stdout, terminalSafeLines(rep.Text())) // the report quotes GitHub's and RunPod's answers
	}
	if !rep.OK {
		return fail(ExitFailure, "%d of %d checks need a fix", rep.Failed(), len(rep.Checks))
	}
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// doctorDeps builds the clients, each with its own request policy on the
// command's clock.
func (a *app) doctorDeps(cmd *cobra.Command, f doctorFlags, owner, name, token string) (doctor.Deps, error) {
	newPolicy := func(opts ...reqpolicy.Option) *reqpolicy.Policy {
		return reqpolicy.New(append([]reqpolicy.Option{reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep)}, opts...)...)
	}
	// Both URLs are checked before any client exists: the token and the
	// key never reach a plain-http or user-info URL.
	ghURL, err := a.serviceURL("GITHUB_API_URL")
	if err != nil {
		return doctor.Deps{}, err
	}
	runpodURL, err := a.serviceURL("RUNPOD_API_URL")
	if err != nil {
		return doctor.Deps{}, err
	}
	ghOpts := func() ghapi.Options {
		return ghapi.Options{BaseURL: ghURL, HTTPClient: a.env.HTTPClient,
			Policy: newPolicy(reqpolicy.WithClassifier(ghapi.RateLimitClassifier(a.env.Clock)))}
	}
	o := ghOpts()
	o.Token, o.Owner, o.Repo = token, owner, name
	gh, err := ghapi.New(cmd.Context(), o)
	if err != nil {
		return doctor.Deps{}, withCode(ExitUsage, err)
	}
	d := doctor.Deps{GitHub: gh, Images: &registry.Resolver{APIURL: a.env.Getenv("RUNPOD_GPU_REGISTRY_URL"), Policy: newPolicy()}}
	if f.appKey != "" || f.runnerAppKey != "" {
		d.Apps = func(appID int64, runner bool) (*ghapi.AppClient, error) {
			path := f.appKey
			if runner {
				path = f.runnerAppKey
			}
			if path == "" {
				return nil, fmt.Errorf("no key file given")
			}
			pem, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			o := ghOpts()
			o.App = &ghapi.AppAuth{AppID: appID, PrivateKeyPEM: pem}
			return ghapi.NewAppClient(o)
		}
	}
	cfg, warning, err := loadConfig(a.env.Home)
	if err != nil {
		return doctor.Deps{}, withCode(ExitFailure, err)
	}
	if warning != "" {
		fmt.Fprintf(a.env.Stderr, "runpod-gpu: warning: %s\n", warning)
	}
	if key := apiKey(a.env.Getenv, cfg); key != "" {
		opts := []runpod.Option{runpod.WithPolicy(newPolicy())}
		if a.env.HTTPClient != nil {
			opts = append(opts, runpod.WithHTTPClient(a.env.HTTPClient))
		}
		d.RunPod = runpod.New(runpodURL, key, opts...)
	}
	return d, nil
}

// originURL reads a GitHub repository from a git remote URL:
// git@github.com:OWNER/NAME.git or https://github.com/OWNER/NAME(.git).
var originURL = regexp.MustCompile(`github\.com[:/]+([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)

// originRepository returns OWNER/NAME of the checkout's origin remote, or "".
func originRepository(dir string) string {
	file, err := os.Open(filepath.Join(dir, ".git", "config"))
	if err != nil {
		return ""
	}
	defer file.Close()
	inOrigin := false
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		if key, value, ok := strings.Cut(line, "="); inOrigin && ok && strings.TrimSpace(key) == "url" {
			if m := originURL.FindStringSubmatch(strings.TrimSpace(value)); m != nil {
				return m[1] + "/" + m[2]
			}
		}
	}
	return ""
}
