package ghsetup

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Plan reads the repository and lists the changes that make it what req
// asks, changing nothing. The token's scopes are checked first.
func (p *Planner) Plan(ctx context.Context, req Request) (*Plan, error) {
	plan := &Plan{Repository: p.owner + "/" + p.repo}
	repo, err := p.checkToken(ctx, req, plan)
	if err != nil {
		return nil, err
	}
	base := repo.GetDefaultBranch()
	rules, rulesetsStatus, err := p.branchRules(ctx, base)
	if err != nil {
		return nil, err
	}
	queue := slices.ContainsFunc(rules, func(r *github.RepositoryRule) bool { return r.Type == "merge_queue" })
	envExists, err := p.planEnvironment(ctx, plan, base, queue)
	if err != nil {
		return nil, err
	}
	if err := p.planSecrets(ctx, plan, req, envExists); err != nil {
		return nil, err
	}
	current, err := p.planVariables(ctx, plan, req)
	if err != nil {
		return nil, err
	}
	appID := req.AppID
	if appID == 0 {
		appID, _ = strconv.ParseInt(firstNonEmpty(req.Variables["RUNPOD_GPU_APP_ID"], current["RUNPOD_GPU_APP_ID"]), 10, 64)
	}
	if err := p.planProtection(ctx, plan, base, appID, rules, rulesetsStatus); err != nil {
		return nil, err
	}
	if err := p.planFiles(ctx, plan, base, req); err != nil {
		return nil, err
	}
	return plan, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// add appends a change to the plan.
func (plan *Plan) add(step, what string, apply func(ctx context.Context) error) {
	plan.Changes = append(plan.Changes, Change{Step: step, What: what, apply: apply})
}

// CheckAccess checks the token as Plan does first (the scopes a set-up
// without files needs, the user's admin rights), changing nothing: a
// command that creates something GitHub cannot show again (an App's key)
// calls it before.
func (p *Planner) CheckAccess(ctx context.Context) error {
	_, err := p.checkToken(ctx, Request{}, &Plan{})
	return err
}

// checkToken reads the repository and, for a classic token (one GitHub
// answers X-OAuth-Scopes for), names each scope the set-up needs that it
// lacks; a fine-grained token's permissions are not readable, so the plan
// notes what it needs and a refusal later names it.
func (p *Planner) checkToken(ctx context.Context, req Request, plan *Plan) (*github.Repository, error) {
	repo, resp, err := p.gh.Repositories.Get(ctx, p.owner, p.repo)
	if err != nil {
		return nil, p.stepErr("repository", err)
	}
	if scopes, classic := resp.Header[http.CanonicalHeaderKey("X-OAuth-Scopes")]; classic {
		have := map[string]bool{}
		for _, s := range strings.Split(strings.Join(scopes, ","), ",") {
			have[strings.TrimSpace(s)] = true
		}
		var missing []string
		for _, need := range neededScopes(req) {
			if !have[need] {
				missing = append(missing, need)
			}
		}
		if len(missing) > 0 {
			return nil, &ScopeError{Missing: missing}
		}
	} else {
		plan.Notes = append(plan.Notes, fmt.Sprintf("the token is fine-grained (GitHub shows no scopes for it): on %s it needs Administration, Environments, Secrets, Variables, Contents, Workflows and Pull requests: write; a missing one stops the set-up at its step, naming it", plan.Repository))
	}
	if repo.Permissions != nil && !repo.Permissions["admin"] {
		return nil, &StepError{Step: "repository", Status: http.StatusForbidden, Err: fmt.Errorf("the token's user is not an administrator of %s", plan.Repository),
			Hint: "environments, secrets, variables and rulesets need admin rights: ask an administrator to run runpod-gpu init"}
	}
	return repo, nil
}

// neededScopes are the classic scopes the request needs: repo, and
// workflow to commit workflow files.
func neededScopes(req Request) []string {
	scopes := []string{"repo"}
	if slices.ContainsFunc(req.Files, func(f File) bool { return strings.HasPrefix(f.Path, ".github/workflows/") }) {
		scopes = append(scopes, "workflow")
	}
	return scopes
}

// branchRules reads the rules binding branch; where rulesets are
// unavailable (403 on a plan without them, 404 on a server without them)
// it returns no rules and that status.
func (p *Planner) branchRules(ctx context.Context, branch string) ([]*github.RepositoryRule, int, error) {
	rules, _, err := p.gh.Repositories.GetRulesForBranch(ctx, p.owner, p.repo, branch)
	if s := statusOf(err); s == http.StatusForbidden || s == http.StatusNotFound {
		return nil, s, nil
	}
	if err != nil {
		return nil, 0, p.stepErr("protection", err)
	}
	return rules, 0, nil
}

// planEnvironment plans the environment with custom deployment branch
// policies: the default branch, and the merge queue's branches when the
// repository merges through one.
func (p *Planner) planEnvironment(ctx context.Context, plan *Plan, base string, queue bool) (bool, error) {
	env, _, err := p.gh.Repositories.GetEnvironment(ctx, p.owner, p.repo, Environment)
	exists := err == nil
	if err != nil && statusOf(err) != http.StatusNotFound {
		return false, p.stepErr("environment", err)
	}
	custom := exists && env.DeploymentBranchPolicy != nil && env.DeploymentBranchPolicy.GetCustomBranchPolicies()
	if !custom {
		what := "create the environment " + Environment + " with custom deployment branches"
		if exists {
			what = "limit the environment " + Environment + " to custom deployment branches (it lets every branch deploy)"
		}
		plan.add("environment", what, func(ctx context.Context) error {
			_, _, err := p.gh.Repositories.CreateUpdateEnvironment(ctx, p.owner, p.repo, Environment, &github.CreateUpdateEnvironment{
				DeploymentBranchPolicy: &github.BranchPolicy{ProtectedBranches: github.Bool(false), CustomBranchPolicies: github.Bool(true)},
			})
			return p.stepErr("environment", err)
		})
	}
	want := []string{base}
	if queue {
		want = append(want, "gh-readonly-queue/"+base+"/*")
	}
	have := map[string]bool{}
	if custom {
		list, _, err := p.gh.Repositories.ListDeploymentBranchPolicies(ctx, p.owner, p.repo, Environment)
		if err != nil {
			return false, p.stepErr("environment", err)
		}
		for _, bp := range list.BranchPolicies {
			if bp.GetType() != "tag" {
				have[bp.GetName()] = true
			}
		}
	}
	for _, name := range want {
		if have[name] {
			continue
		}
		plan.add("environment", fmt.Sprintf("let the branches %q deploy to %s", name, Environment), func(ctx context.Context) error {
			_, _, err := p.gh.Repositories.CreateDeploymentBranchPolicy(ctx, p.owner, p.repo, Environment,
				&github.DeploymentBranchPolicyRequest{Name: github.String(name), Type: github.String("branch")})
			return p.stepErr("environment", err)
		})
	}
	return exists, nil
}

// Variables returns the repository's variables (name → value); init reads
// RUNPOD_GPU_APP_ID there to know whether the lane's App exists.
func (p *Planner) Variables(ctx context.Context) (map[string]string, error) {
	current := map[string]string{}
	opts := &github.ListOptions{PerPage: 100}
	for page := 0; page < 10; page++ {
		vars, resp, err := p.gh.Actions.ListRepoVariables(ctx, p.owner, p.repo, opts)
		if err != nil {
			return nil, p.stepErr("variable", err)
		}
		for _, v := range vars.Variables {
			current[v.Name] = v.Value
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return current, nil
}

// planVariables plans the repository variables that are missing or differ,
// and returns the current ones.
func (p *Planner) planVariables(ctx context.Context, plan *Plan, req Request) (map[string]string, error) {
	current, err := p.Variables(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(req.Variables)) {
		value, had := current[name]
		switch {
		case had && value == req.Variables[name]:
		case had:
			plan.add("variable", fmt.Sprintf("change the repository variable %s from %q to %q", name, value, req.Variables[name]), func(ctx context.Context) error {
				_, err := p.gh.Actions.UpdateRepoVariable(ctx, p.owner, p.repo, &github.ActionsVariable{Name: name, Value: req.Variables[name]})
				return p.stepErr("variable", err)
			})
		default:
			plan.add("variable", fmt.Sprintf("set the repository variable %s to %q", name, req.Variables[name]), func(ctx context.Context) error {
				_, err := p.gh.Actions.CreateRepoVariable(ctx, p.owner, p.repo, &github.ActionsVariable{Name: name, Value: req.Variables[name]})
				return p.stepErr("variable", err)
			})
		}
	}
	return current, nil
}
