// Package actionkit builds what every action needs from its standard inputs and
// the runner's environment: the RunPod client, the GitHub client (App or
// token), the run's identity. Action mains call it so that each of them stays a
// screen long and the inputs mean the same thing in every action.
package actionkit

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Standard input names, shared by every action.yml.
const (
	InputRunPodKey     = "runpod-api-key"
	InputRunPodURL     = "runpod-api-url"
	InputGitHubToken   = "github-token"
	InputAppID         = "app-id"
	InputInstallation  = "app-installation-id"
	InputAppPrivateKey = "app-private-key"
)

// RunPod builds the RunPod client from runpod-api-key and runpod-api-url;
// extra options refine its request policy (the org reaper's reserve).
func RunPod(io *actionio.IO, extra ...reqpolicy.Option) (*runpod.Client, *reqpolicy.Policy, error) {
	key := io.SecretInput(InputRunPodKey)
	if key == "" {
		return nil, nil, &actionio.InputError{Input: InputRunPodKey, Expected: "a RunPod API key (store it as a secret)"}
	}
	policy := reqpolicy.New(append([]reqpolicy.Option{reqpolicy.WithRedactor(io.Redactor()), reqpolicy.WithLogger(func(s string) { io.Infof("%s", s) })}, extra...)...)
	return runpod.New(io.Input(InputRunPodURL), key, runpod.WithPolicy(policy)), policy, nil
}

// GitHub builds the GitHub client: a GitHub App installation when app-id is
// set (needed for check runs branch protection trusts and for JIT configs),
// else github-token. The API URL comes from GITHUB_API_URL.
func GitHub(ctx context.Context, io *actionio.IO, org string) (*ghapi.Client, error) {
	owner, repo, err := Repository(io)
	if err != nil {
		return nil, err
	}
	opts := ghapi.Options{BaseURL: io.Getenv("GITHUB_API_URL"), Owner: owner, Repo: repo, Org: org,
		Policy: reqpolicy.New(reqpolicy.WithRedactor(io.Redactor()), reqpolicy.WithLogger(func(s string) { io.Infof("%s", s) }),
			reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock.Wall{}))),
		OnSecret: io.Mask} // minted installation tokens and JIT configs: ::add-mask:: before any use
	appID, err := io.Int(InputAppID, 0, 0, 1<<53)
	if err != nil {
		return nil, err
	}
	if appID > 0 {
		inst, err := io.Int(InputInstallation, 0, 1, 1<<53)
		if err != nil || inst == 0 {
			return nil, &actionio.InputError{Input: InputInstallation, Expected: "the App's installation id (a positive integer) when app-id is set"}
		}
		key := io.SecretInput(InputAppPrivateKey)
		if key == "" {
			return nil, &actionio.InputError{Input: InputAppPrivateKey, Expected: "the App's PEM private key when app-id is set"}
		}
		opts.App = &ghapi.AppAuth{AppID: appID, InstallationID: inst, PrivateKeyPEM: []byte(key)}
	} else {
		opts.Token = io.SecretInput(InputGitHubToken)
		if opts.Token == "" {
			return nil, &actionio.InputError{Input: InputGitHubToken, Expected: "a token, or app-id with app-installation-id and app-private-key"}
		}
	}
	return ghapi.New(ctx, opts)
}

// Repository returns GITHUB_REPOSITORY split into owner and name.
func Repository(io *actionio.IO) (string, string, error) {
	full := io.Getenv("GITHUB_REPOSITORY")
	owner, repo, ok := strings.Cut(full, "/")
	if !ok || owner == "" || repo == "" {
		return "", "", fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name (is this running in GitHub Actions?)", full)
	}
	return owner, repo, nil
}

// Run identifies the workflow run an action belongs to.
type Run struct {
	Repository string // owner/name
	Workflow   string // .github/workflows/x.yml
	ID         int64
	Attempt    int
	ServerURL  string
}

// URL links the run's page.
func (r Run) URL() string {
	return fmt.Sprintf("%s/%s/actions/runs/%d/attempts/%d", r.ServerURL, r.Repository, r.ID, r.Attempt)
}

// CurrentRun reads the run identity from GITHUB_* variables; GITHUB_WORKFLOW_REF
// ("owner/repo/.github/workflows/x.yml@refs/heads/main") gives the workflow path.
func CurrentRun(io *actionio.IO) (Run, error) {
	r := Run{Repository: io.Getenv("GITHUB_REPOSITORY"), ServerURL: io.Getenv("GITHUB_SERVER_URL")}
	if r.ServerURL == "" {
		r.ServerURL = "https://github.com"
	}
	id, err1 := strconv.ParseInt(io.Getenv("GITHUB_RUN_ID"), 10, 64)
	attempt, err2 := strconv.Atoi(io.Getenv("GITHUB_RUN_ATTEMPT"))
	if err1 != nil || err2 != nil || id <= 0 || attempt <= 0 {
		return Run{}, fmt.Errorf("GITHUB_RUN_ID %q / GITHUB_RUN_ATTEMPT %q: want positive integers", io.Getenv("GITHUB_RUN_ID"), io.Getenv("GITHUB_RUN_ATTEMPT"))
	}
	r.ID, r.Attempt = id, attempt
	ref := io.Getenv("GITHUB_WORKFLOW_REF")
	path, _, _ := strings.Cut(strings.TrimPrefix(ref, r.Repository+"/"), "@")
	if !strings.HasPrefix(path, ".github/workflows/") {
		return Run{}, fmt.Errorf("GITHUB_WORKFLOW_REF %q: want %s/.github/workflows/<file>@<ref>", ref, r.Repository)
	}
	r.Workflow = path
	return r, nil
}

// Main is every action's main: it cancels the context on SIGINT/SIGTERM (so
// cleanup paths run), connects the action to the runner, and exits 1 with an
// error annotation when run fails.
func Main(run func(ctx context.Context, io *actionio.IO) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	io := actionio.New(os.Stdout, os.Getenv, nil)
	err := run(ctx, io)
	stop()
	if err != nil {
		if _, placed := err.(annotatedError); placed {
			io.Infof("Error: %v", err) // its annotations are already on the file
		} else {
			io.Errorf("%v", err)
		}
		os.Exit(1)
	}
}

// InputConfigPath names the config file input every action that reads the config takes.
const InputConfigPath = "config-path"

// Config loads the repository's runpod-gpu configuration from config-path
// (default config.DefaultPath), strictly validated, before any API call. On
// an error it has already written an annotation at each offending key and a
// job summary saying what to fix; Main then adds no second annotation.
func Config(io *actionio.IO) (*config.Config, error) {
	path := io.InputOr(InputConfigPath, config.DefaultPath)
	cfg, err := config.Load(path)
	if err != nil {
		reportConfigError(io, path, err)
		return nil, annotatedError{fmt.Errorf("config: %w", err)}
	}
	return cfg, nil
}

// RunnerScope reads runner-scope (repo or org; empty means repo) and, for org,
// the required runner-org: where JIT runners are minted, looked up and removed.
func RunnerScope(io *actionio.IO) (ghapi.Scope, string, error) {
	scope := ghapi.Scope(io.InputOr("runner-scope", string(ghapi.ScopeRepo)))
	org := io.Input("runner-org")
	switch {
	case scope != ghapi.ScopeRepo && scope != ghapi.ScopeOrg:
		return "", "", &actionio.InputError{Input: "runner-scope", Value: string(scope), Expected: fmt.Sprintf("%q or %q", ghapi.ScopeRepo, ghapi.ScopeOrg)}
	case scope == ghapi.ScopeOrg && org == "":
		return "", "", &actionio.InputError{Input: "runner-org", Expected: "the organization of org-scope runners (required when runner-scope is org)"}
	}
	return scope, org, nil
}
