package devcli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ghsetup"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// The GitHub side init and app share: a plan of the repository's set-up
// (pkg/ghsetup) printed, then applied unless it is a dry run.

// githubTimeout bounds the whole GitHub side (reading, then each change).
const githubTimeout = 5 * callTimeout

// tokenStep is the step that remains without a GitHub token.
const tokenStep = "the GitHub side (environment, secrets, required check, pull request): set GH_TOKEN to a repository administrator's token (GH_TOKEN=$(gh auth token)) and run 'runpod-gpu init' again: it changes only what is missing"

// ghRepository is the repository the GitHub side sets up, with the token.
type ghRepository struct {
	owner, name, token string
}

// githubRepository finds the repository (--repo, else the checkout's
// origin) and the token (GH_TOKEN, else GITHUB_TOKEN). Without either it
// returns the step that remains (and the repository, when known); a bad
// --repo is a usage error.
func (a *app) githubRepository(repoFlag, dir string) (ghRepository, string, error) {
	repo := repoFlag
	if repo == "" {
		repo = originRepository(dir)
	}
	owner, name, ok := strings.Cut(repo, "/")
	if repo != "" && (!ok || owner == "" || name == "" || strings.Contains(name, "/")) {
		return ghRepository{}, "", fail(ExitUsage, "--repo %q: want OWNER/NAME", repo)
	}
	token := firstNonEmpty(a.env.Getenv("GH_TOKEN"), a.env.Getenv("GITHUB_TOKEN"))
	r := ghRepository{owner: owner, name: name, token: token}
	switch {
	case repo == "":
		return ghRepository{}, fmt.Sprintf("the GitHub side: no origin on github.com in %s; run the command again with --repo OWNER/NAME", dir), nil
	case token == "":
		return r, tokenStep, nil
	}
	return r, "", nil
}

// planner builds the set-up's planner with a request policy on the command's clock.
func (a *app) planner(ctx context.Context, r ghRepository) (*ghsetup.Planner, error) {
	policy := reqpolicy.New(reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep),
		reqpolicy.WithClassifier(ghapi.RateLimitClassifier(a.env.Clock)))
	apiURL, err := a.serviceURL("GITHUB_API_URL") // before the token is handed to a client
	if err != nil {
		return nil, err
	}
	c, err := ghapi.New(ctx, ghapi.Options{BaseURL: apiURL, HTTPClient: a.env.HTTPClient, Policy: policy,
		Token: r.token, Owner: r.owner, Repo: r.name})
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return ghsetup.New(c), nil
}

// setUpGitHub plans the repository's set-up, prints each change, and makes
// them unless dry. It returns the plan (for its remaining steps and pull request).
func (a *app) setUpGitHub(ctx context.Context, r ghRepository, req ghsetup.Request, dry bool) (*ghsetup.Plan, error) {
	ctx, cancel := a.bound(ctx, githubTimeout)
	defer cancel()
	p, err := a.planner(ctx, r)
	if err != nil {
		return nil, err
	}
	out := a.env.Stdout
	fmt.Fprintf(out, "\nGitHub, %s/%s:\n", r.owner, r.name)
	plan, err := p.Plan(ctx, req)
	if err != nil {
		return nil, githubFailure("read the repository's set-up", err)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
	if plan.Empty() {
		fmt.Fprintln(out, "  nothing to change")
	}
	if dry {
		for _, c := range plan.Changes {
			fmt.Fprintf(out, "  would %s\n", c.What)
		}
		return plan, nil
	}
	err = plan.Apply(ctx, func(c ghsetup.Change) { fmt.Fprintf(out, "  %s: done\n", c.What) })
	if err != nil {
		return nil, githubFailure("the GitHub set-up stopped (what is done stays done; run the command again to finish)", err)
	}
	return plan, nil
}

// githubFailure is a failed GitHub side as an exit error that says what to do.
func githubFailure(what string, err error) error {
	var scope *ghsetup.ScopeError
	switch {
	case errors.As(err, &scope):
		return fail(ExitFailure, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fail(ExitFailure, "%s: GitHub did not answer within %s", what, githubTimeout)
	case errors.Is(err, context.Canceled):
		return fail(ExitInterrupted, "%s: interrupted", what)
	}
	return fail(ExitFailure, "%s: %v", what, err)
}
