// Package actionkit builds what every action needs from its standard inputs and
// the runner's environment: the RunPod client, the GitHub client (App or
// token), the run's identity. Action mains call it so that each of them stays a
// screen long and the inputs mean the same thing in every action.
package actionkit

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// RunPodInputs are the inputs of an action that calls RunPod's management API.
type RunPodInputs struct {
	APIKey string              `input:"runpod-api-key,required,secret" want:"a RunPod API key (store it as a secret)" desc:"RunPod API key. Store it as a secret; it stays on the hosted runner and never reaches a pod."`
	APIURL actionio.ServiceURL `input:"runpod-api-url" default:"https://api.runpod.io" desc:"RunPod API base URL (override for proxies and tests): https, without user info (http only on a loopback host)."`
}

// RunPod builds the RunPod client from the RunPod inputs; extra options
// refine its request policy (the org reaper's reserve).
func RunPod(io *actionio.IO, in RunPodInputs, extra ...reqpolicy.Option) (*runpod.Client, *reqpolicy.Policy, error) {
	key := runpod.Key(in.APIKey)
	if key == "" { // an action whose key is optional in one mode declares it without required
		return nil, nil, &actionio.InputError{Input: "runpod-api-key", Expected: "a RunPod API key (store it as a secret)"}
	}
	policy := Policy(io, extra...)
	return runpod.New(in.APIURL.String(), key, runpod.WithPolicy(policy)), policy, nil
}

// Policy is an action's request policy: its retries are logged in the step's
// log with the action's secrets redacted; extra options refine it.
func Policy(io *actionio.IO, extra ...reqpolicy.Option) *reqpolicy.Policy {
	return reqpolicy.New(append([]reqpolicy.Option{reqpolicy.WithRedactor(io.Redactor()), reqpolicy.WithLogger(func(s string) { io.Infof("%s", s) })}, extra...)...)
}

// GitHubPolicy is Policy that also reads GitHub's rate-limit answers (a 403
// or 429 with its headers waits for the window, not a blind backoff).
func GitHubPolicy(io *actionio.IO, extra ...reqpolicy.Option) *reqpolicy.Policy {
	return Policy(io, append([]reqpolicy.Option{reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock.Wall{}))}, extra...)...)
}

// GitHubInputs are the inputs of an action that calls GitHub: a GitHub App
// installation, or a token. Each action's embedding field says, in
// `desc.<input>` tags, what it needs them for.
type GitHubInputs struct {
	Token          string `input:"github-token,secret" default:"${{ github.token }}" desc:"Token used when app-id is empty."`
	AppID          int64  `input:"app-id" default:"" desc:"GitHub App id to authenticate as instead of github-token."`
	InstallationID int64  `input:"app-installation-id" default:"" min:"1" desc:"The App's installation id (required with app-id)."`
	PrivateKey     string `input:"app-private-key,secret" default:"" desc:"The App's PEM private key (required with app-id). Store it as a secret."`
}

// GitHub builds the GitHub client: a GitHub App installation when app-id is
// set (needed for check runs branch protection trusts and for JIT configs),
// else github-token. The API URL comes from GITHUB_API_URL.
func GitHub(ctx context.Context, io *actionio.IO, in GitHubInputs, org string) (*ghapi.Client, error) {
	owner, repo, err := Repository(io)
	if err != nil {
		return nil, err
	}
	opts := ghapi.Options{BaseURL: io.Getenv("GITHUB_API_URL"), Owner: owner, Repo: repo, Org: org,
		Policy: GitHubPolicy(io), OnSecret: io.Mask} // minted installation tokens and JIT configs: ::add-mask:: before any use
	if in.AppID > 0 {
		if in.InstallationID == 0 {
			return nil, &actionio.InputError{Input: "app-installation-id", Expected: "the App's installation id (a positive integer) when app-id is set"}
		}
		if in.PrivateKey == "" {
			return nil, &actionio.InputError{Input: "app-private-key", Expected: "the App's PEM private key when app-id is set"}
		}
		opts.App = &ghapi.AppAuth{AppID: in.AppID, InstallationID: in.InstallationID, PrivateKeyPEM: []byte(in.PrivateKey)}
	} else {
		if in.Token == "" {
			return nil, &actionio.InputError{Input: "github-token", Expected: "a token, or app-id with app-installation-id and app-private-key"}
		}
		opts.Token = in.Token
	}
	return ghapi.New(ctx, opts)
}

// PodClients are what an action working on the run's pods opens before its
// work: the RunPod client and its policy, where the runners register, the
// GitHub client of that scope, and the run's identity.
type PodClients struct {
	RunPod *runpod.Client
	Policy *reqpolicy.Policy
	Scope  ghapi.Scope
	GitHub *ghapi.Client
	Run    Run
}

// OpenPodClients builds PodClients from the standard inputs, the first error
// naming its input or variable; extra options refine the RunPod policy.
func OpenPodClients(ctx context.Context, io *actionio.IO, rp RunPodInputs, gh GitHubInputs, runner RunnerInputs, extra ...reqpolicy.Option) (PodClients, error) {
	var c PodClients
	scope, org, err := RunnerScope(runner)
	if err != nil {
		return PodClients{}, err
	}
	c.Scope = scope
	if c.RunPod, c.Policy, err = RunPod(io, rp, extra...); err != nil {
		return PodClients{}, err
	}
	if c.GitHub, err = GitHub(ctx, io, gh, org); err != nil {
		return PodClients{}, err
	}
	if c.Run, err = CurrentRun(io); err != nil {
		return PodClients{}, err
	}
	return c, nil
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

// ConfigInput is the config-path input of an action that reads the
// repository's configuration; embedding it also makes the configuration's
// problems the first thing the action reports, before any other input's.
type ConfigInput struct {
	// ConfigPath is confined to the workspace: a path outside (or a link
	// out of it) could make the action read, and its errors describe, any
	// file the runner can reach.
	ConfigPath string `input:"config-path" default:".github/runpod-gpu.yml" path:"GITHUB_WORKSPACE" desc:"Path of the runpod-gpu configuration in the repository, inside the workspace (symbolic links resolved)."`
}

func (c *ConfigInput) configPath() string { return c.ConfigPath }

// Config loads the repository's runpod-gpu configuration from path (an
// action's config-path input), strictly validated, before any API call. On
// an error it has already written an annotation at each offending key and a
// job summary saying what to fix; Main then adds no second annotation.
func Config(io *actionio.IO, path string) (*config.Config, error) {
	path = cmp.Or(path, config.DefaultPath)
	cfg, err := config.LoadAs(path, repoPath(io, path))
	if err != nil {
		reportConfigError(io, path, err)
		return nil, annotatedError{fmt.Errorf("config: %w", err)}
	}
	return cfg, nil
}

// RunnerInputs say where an action's JIT runners register: the repository,
// or an organization.
type RunnerInputs struct {
	Scope ghapi.Scope `input:"runner-scope" default:"repo" desc:"Where the runner registers, repo or org."`
	Org   string      `input:"runner-org" default:"" desc:"Organization of org-scope runners (required when runner-scope is org)."`
}

// RunnerScope checks the runner inputs: runner-scope is repo or org (empty
// means repo), and org needs runner-org. It returns where JIT runners are
// minted, looked up and removed.
func RunnerScope(in RunnerInputs) (ghapi.Scope, string, error) {
	scope := cmp.Or(in.Scope, ghapi.ScopeRepo)
	switch {
	case scope != ghapi.ScopeRepo && scope != ghapi.ScopeOrg:
		return "", "", &actionio.InputError{Input: "runner-scope", Value: string(scope), Expected: fmt.Sprintf("%q or %q", ghapi.ScopeRepo, ghapi.ScopeOrg)}
	case scope == ghapi.ScopeOrg && in.Org == "":
		return "", "", &actionio.InputError{Input: "runner-org", Expected: "the organization of org-scope runners (required when runner-scope is org)"}
	}
	return scope, in.Org, nil
}

// TreeKeyInput is an input holding authorize's tree-key output, or empty.
type TreeKeyInput struct{ key *gatecheck.TreeKey }

// UnmarshalText accepts "tree:<sha>:lane:<digest>".
func (k *TreeKeyInput) UnmarshalText(text []byte) (err error) {
	k.key, err = gatecheck.ParseTreeKey(string(text))
	return err
}

// Key is the parsed key; nil when the input is empty.
func (k TreeKeyInput) Key() *gatecheck.TreeKey { return k.key }

// TreeKeyForm is what a tree-key input must hold.
const TreeKeyForm = "authorize's tree-key output (tree:<sha>:lane:<digest>), or empty"
