package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

const (
	titleApp         = "GitHub App installed with the permissions each job needs"
	titleEnvironment = "environment deploys from the default branch only"
	titleSecrets     = "secrets and variables present (names only)"
	titleProtection  = "the default branch requires the gate from the App (a ruleset or branch protection)"
	titleCallers     = "callers and configuration on the default branch"
	titleNames       = "the lane's workflows: match real workflow names"
)

// appNeed is one App the set-up uses and what it must be granted.
type appNeed struct {
	role            string // "App" or "runner App"
	idVar, instVar  string
	need            callers.Levels
	keyFlag, secret string
}

// appNeeds are the Apps the lane's caller uses and their permissions.
func (f *facts) appNeeds() []appNeed {
	org := f.lane.input("runner-scope", "repo") == "org"
	grant := func(l callers.Levels, extra bool) callers.Levels {
		out := callers.Levels{}
		for k, v := range l {
			out[k] = v
		}
		if extra {
			for k, v := range callers.OrgRunners {
				out[k] = v
			}
		}
		return out
	}
	if !f.runnerApp() {
		return []appNeed{{role: "App", idVar: varAppID, instVar: varInstallationID, need: grant(callers.OneApp, org), keyFlag: "--app-key-file", secret: secretAppKey}}
	}
	return []appNeed{
		{role: "App", idVar: varAppID, instVar: varInstallationID, need: grant(callers.ChecksApp, false), keyFlag: "--app-key-file", secret: secretAppKey},
		{role: "runner App", idVar: varRunnerAppID, instVar: varRunnerInstallID, need: grant(callers.RunnerApp, org), keyFlag: "--runner-app-key-file", secret: secretRunnerAppKey},
	}
}

func checkApp(ctx context.Context, d Deps, f *facts) Check {
	if f.variablesErr != nil {
		problem, todo := failure(f.variablesErr, f.variablesRead())
		return fix(CheckApp, titleApp, problem, todo)
	}
	var found []string
	for _, a := range f.appNeeds() {
		appID, ok := f.intVar(a.idVar)
		if !ok {
			return fix(CheckApp, titleApp, fmt.Sprintf("the repository variable %s is not the %s's id (it is %q)", a.idVar, a.role, f.variables[a.idVar]),
				fmt.Sprintf("run 'runpod-gpu app' (it sets it), or set %s to the App id (Settings → Secrets and variables → Actions → Variables)", a.idVar))
		}
		if d.Apps == nil {
			return unknown(CheckApp, titleApp, fmt.Sprintf("the %s %d's installation and permissions are readable only with the App's own private key, which doctor was not given", a.role, appID),
				fmt.Sprintf("pass %s with the key ('runpod-gpu app --save-key FILE' keeps one; the App's settings → Private keys → Generate makes another)", a.keyFlag))
		}
		client, err := d.Apps(appID, a.role != "App")
		if err != nil || client == nil {
			return fix(CheckApp, titleApp, fmt.Sprintf("the %s's private key could not be used: %v", a.role, err),
				fmt.Sprintf("pass %s with the private key (PEM) of the %s %d", a.keyFlag, a.role, appID))
		}
		inst, err := client.RepoInstallationDetails(ctx, f.owner, f.repo)
		var ge *ghapi.Error
		switch {
		case errors.Is(err, ghapi.ErrNotFound):
			return fix(CheckApp, titleApp, fmt.Sprintf("the %s %d is not installed on %s", a.role, appID, f.fullName),
				fmt.Sprintf("install it: its page on GitHub → Install App → Only select repositories → %s", f.repo))
		case errors.As(err, &ge) && (ge.StatusCode == http.StatusUnauthorized || ge.StatusCode == http.StatusForbidden):
			return fix(CheckApp, titleApp, fmt.Sprintf("GitHub refused the key of %s as the %s %d's", a.keyFlag, a.role, appID),
				fmt.Sprintf("pass the key of the App %d (the variable %s names it), or set %s to the id of the App whose key you pass", appID, a.idVar, a.idVar))
		case err != nil:
			problem, todo := failure(err, read{what: fmt.Sprintf("the %s %d's installation on %s", a.role, appID, f.fullName),
				missing: "check that the App is installed on the repository"})
			return fix(CheckApp, titleApp, problem, todo)
		}
		if want, ok := f.intVar(a.instVar); !ok || want != inst.GetID() {
			return fix(CheckApp, titleApp, fmt.Sprintf("the repository variable %s is %q, not %d, the %s's installation on %s", a.instVar, f.variables[a.instVar], inst.GetID(), a.role, f.fullName),
				fmt.Sprintf("set the repository variable %s to %d", a.instVar, inst.GetID()))
		}
		have := installationLevels(inst.GetPermissions())
		if missing := callers.Missing(have, a.need); len(missing) > 0 {
			return fix(CheckApp, titleApp, fmt.Sprintf("the %s %d lacks %s", a.role, appID, missing),
				fmt.Sprintf("grant the %s %d %s (App settings → Permissions & events), then accept the new permissions on its installation", a.role, appID, missing))
		}
		found = append(found, fmt.Sprintf("%s %d, installation %d: %s", a.role, appID, inst.GetID(), a.need))
	}
	return ok(CheckApp, titleApp, "%s", strings.Join(found, "; "))
}

// variablesRead is the repository variables' read, for its failure.
func (f *facts) variablesRead() read {
	return read{what: "the repository variables of " + f.fullName, scope: "repo", permission: "Variables: read",
		missing: "check the repository's name"}
}

// installationLevels reads an installation's permissions by their API names.
func installationLevels(p interface {
	GetActions() string
	GetAdministration() string
	GetChecks() string
	GetContents() string
	GetPullRequests() string
	GetMetadata() string
	GetOrganizationSelfHostedRunners() string
}) callers.Levels {
	out := callers.Levels{}
	for scope, level := range map[string]string{
		"actions": p.GetActions(), "administration": p.GetAdministration(), "checks": p.GetChecks(),
		"contents": p.GetContents(), "pull_requests": p.GetPullRequests(), "metadata": p.GetMetadata(),
		"organization_self_hosted_runners": p.GetOrganizationSelfHostedRunners(),
	} {
		if level != "" {
			out[scope] = level
		}
	}
	return out
}

// queuePattern is the deployment branch a merge queue's runs need: the
// queue's temporary branches into the default branch.
func queuePattern(branch string) string { return "gh-readonly-queue/" + branch + "/*" }

func checkEnvironment(ctx context.Context, d Deps, f *facts) Check {
	name, branch := f.environment(), f.defaultBranch
	allowed := branch
	if f.mergeQueue {
		allowed = branch + " and " + queuePattern(branch) + " (the merge queue)"
	}
	env, err := d.GitHub.Environment(ctx, name)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("%s has no environment %s (or the token cannot see it)", f.fullName, name),
			fmt.Sprintf("run 'runpod-gpu init', or create it: Settings → Environments → New environment %s, deployment branches: %s only", name, allowed))
	case err != nil:
		problem, todo := failure(err, read{what: "the environment " + name + " of " + f.fullName, scope: "repo", permission: "Environments: read",
			missing: "check that the environment " + name + " exists"})
		return fix(CheckEnvironment, titleEnvironment, problem, todo)
	}
	for _, rule := range env.ProtectionRules {
		if rule.GetType() == "required_reviewers" {
			return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("the environment %s has required reviewers: every job of the lane would wait for one", name),
				fmt.Sprintf("remove them: Settings → Environments → %s → Required reviewers", name))
		}
	}
	policy := env.DeploymentBranchPolicy
	if policy == nil || policy.GetProtectedBranches() || !policy.GetCustomBranchPolicies() {
		what := "every branch"
		if policy != nil && policy.GetProtectedBranches() {
			what = "every protected branch"
		}
		return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("the environment %s lets %s deploy to it, and so read its secrets", name, what),
			fmt.Sprintf("Settings → Environments → %s → Deployment branches and tags → Selected branches and tags → add %s only", name, allowed))
	}
	policies, err := d.GitHub.DeploymentBranchPolicies(ctx, name)
	if err != nil {
		problem, todo := failure(err, read{what: "the deployment branches of the environment " + name, scope: "repo", permission: "Environments: read",
			missing: "check that the environment " + name + " exists"})
		return fix(CheckEnvironment, titleEnvironment, problem, todo)
	}
	return judgeBranchPolicies(f, name, allowed, policies)
}

// judgeBranchPolicies checks an environment's deployment branches: the
// default branch, the merge queue's when one is in use, and nothing else.
func judgeBranchPolicies(f *facts, name, allowed string, policies []*github.DeploymentBranchPolicy) Check {
	branch := f.defaultBranch
	var others []string
	hasDefault, hasQueue := false, false
	for _, p := range policies {
		isBranch := p.GetType() != "tag"
		switch {
		case isBranch && p.GetName() == branch:
			hasDefault = true
		case isBranch && p.GetName() == queuePattern(branch):
			// What the merge queue's section of pull-requests.md tells a
			// repository to add: the queue's runs of the default branch.
			hasQueue = true
		default:
			others = append(others, fmt.Sprintf("%s %q", cmp.Or(p.GetType(), "branch"), p.GetName()))
		}
	}
	if hasQueue && !f.mergeQueue {
		allowed += " and " + queuePattern(branch)
	}
	switch {
	case len(others) > 0:
		return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("the environment %s also serves %s: a workflow there could read its secrets", name, strings.Join(others, ", ")),
			fmt.Sprintf("remove %s from the deployment branches of %s (Settings → Environments → %s), keeping %s", strings.Join(others, ", "), name, name, allowed))
	case !hasDefault:
		return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("the environment %s does not serve %s, where the lane runs", name, branch),
			fmt.Sprintf("add %s to the deployment branches of %s (Settings → Environments → %s)", branch, name, name))
	case f.mergeQueue && !hasQueue:
		return fix(CheckEnvironment, titleEnvironment, fmt.Sprintf("%s merges through a merge queue, whose runs the environment %s refuses", branch, name),
			fmt.Sprintf("add %s to the deployment branches of %s: the lane runs on each merge group's head there", queuePattern(branch), name))
	case hasQueue:
		return ok(CheckEnvironment, titleEnvironment, "%s: %s and the merge queue's %s only", name, branch, queuePattern(branch))
	}
	return ok(CheckEnvironment, titleEnvironment, "%s: %s only", name, branch)
}

func checkSecrets(ctx context.Context, d Deps, f *facts) Check {
	env := f.environment()
	secrets := []string{secretRunPodKey, secretAppKey}
	vars := []string{varAppID, varInstallationID}
	if f.runnerApp() {
		secrets, vars = append(secrets, secretRunnerAppKey), append(vars, varRunnerAppID, varRunnerInstallID)
	}
	have, err := d.GitHub.EnvironmentSecretNames(ctx, env)
	if errors.Is(err, ghapi.ErrNotFound) {
		return fix(CheckSecrets, titleSecrets, fmt.Sprintf("the environment %s, which holds the secrets %s, does not exist (or the token cannot see it)", env, strings.Join(secrets, ", ")),
			fmt.Sprintf("run 'runpod-gpu init' (it creates the environment %s and sets its secrets), or create it and add them with gh secret set NAME --env %s", env, env))
	}
	if err != nil {
		problem, todo := failure(err, read{what: "the secrets of the environment " + env, scope: "repo", permission: "Secrets: read",
			missing: "check that the environment " + env + " exists"})
		return fix(CheckSecrets, titleSecrets, problem, todo)
	}
	var problems, todos []string
	for _, s := range secrets {
		if !slices.Contains(have, s) {
			problems = append(problems, fmt.Sprintf("the environment %s has no secret %s", env, s))
			todos = append(todos, fmt.Sprintf("add the secret %s to the environment %s (gh secret set %s --env %s)", s, env, s, env))
		}
	}
	repoSecrets, err := d.GitHub.RepositorySecretNames(ctx)
	if err != nil {
		problem, todo := failure(err, read{what: "the repository secrets of " + f.fullName, scope: "repo", permission: "Secrets: read",
			missing: "check the repository's name"})
		problems, todos = append(problems, problem), append(todos, todo)
	}
	for _, s := range repoSecrets {
		if slices.Contains(secrets, s) || s == "RUNPOD_GPU_TOKEN" {
			problems = append(problems, fmt.Sprintf("the repository secret %s, which a workflow on any branch can read, shadows the environment %s's", s, env))
			todos = append(todos, fmt.Sprintf("delete the repository secret %s (gh secret delete %s) and keep it in the environment %s only", s, s, env))
		}
	}
	for _, v := range vars {
		if _, ok := f.variables[v]; !ok && f.variablesErr == nil {
			problems = append(problems, fmt.Sprintf("no repository variable %s", v))
			todos = append(todos, fmt.Sprintf("set the repository variable %s (gh variable set %s: a repository variable, not one of the environment %s, since the callers read it before any job enters the environment)", v, v, env))
		}
	}
	if len(problems) > 0 {
		return fix(CheckSecrets, titleSecrets, strings.Join(problems, "; "), strings.Join(todos, "; "))
	}
	return ok(CheckSecrets, titleSecrets, "%s in the environment %s; repository variables %s", strings.Join(secrets, ", "), env, strings.Join(vars, ", "))
}

// gateRequirement is what a check's requirement of the gate looks like:
// the check's name, the App it must come from, and how to say it.
type gateRequirement struct {
	name, bind string
	appID      int64
	appKnown   bool
}

// bound reports whether a required check is bound to the App.
func (g gateRequirement) bound(id *int64) bool { return g.appKnown && id != nil && *id == g.appID }

// source names where a required check may come from.
func source(id *int64) string {
	if id == nil || *id <= 0 {
		return "any source"
	}
	return fmt.Sprintf("App %d", *id)
}

func checkBranchProtection(ctx context.Context, d Deps, f *facts) Check {
	g := gateRequirement{name: f.lane.input("check-name", defaultCheckName), bind: "your App"}
	g.appID, g.appKnown = f.intVar(varAppID)
	if g.appKnown {
		g.bind = fmt.Sprintf("your App (app_id %d)", g.appID)
	}
	branch := f.defaultBranch
	// Sources that require the check but accept it from another source.
	var loose []string
	// Rulesets first: what init creates, and what an organization may
	// impose on every repository (the rules endpoint lists both).
	for _, rule := range f.rules {
		for _, c := range rule.RequiredStatusChecks() {
			if c.Context != g.name {
				continue
			}
			where := fmt.Sprintf("the ruleset %d", rule.RulesetID)
			if rule.RulesetSource != "" {
				where = fmt.Sprintf("the ruleset %d of %s", rule.RulesetID, rule.RulesetSource)
			}
			if g.bound(c.IntegrationID) {
				found := ok(CheckBranchProtection, titleProtection, "%s requires %q from App %d through %s", branch, g.name, g.appID, where)
				if rule.RulesetSourceType != "Repository" {
					return found // an organization's ruleset: its bypass list is the organization's to read
				}
				return rulesetBypass(ctx, d, f, rule.RulesetID, g.name, found)
			}
			loose = append(loose, fmt.Sprintf("%s (%s)", where, source(c.IntegrationID)))
		}
	}
	p, err := d.GitHub.BranchProtection(ctx, branch)
	if rsc := p.GetRequiredStatusChecks(); err == nil && rsc != nil && rsc.Checks != nil {
		for _, c := range *rsc.Checks {
			if c.Context != g.name {
				continue
			}
			if g.bound(c.AppID) {
				return ok(CheckBranchProtection, titleProtection, "%s requires %q from App %d through branch protection", branch, g.name, g.appID)
			}
			loose = append(loose, "branch protection ("+source(c.AppID)+")")
		}
	}
	if len(loose) > 0 {
		return fix(CheckBranchProtection, titleProtection, fmt.Sprintf("%q is required by %s: another app's or workflow's status could meet it", g.name, strings.Join(loose, ", ")),
			fmt.Sprintf("bind the required check %q to %s: in the ruleset, Require status checks → %q → its source; in branch protection, its expected source", g.name, g.bind, g.name))
	}
	return gateNotRequired(f, g, err)
}

// adminRoleID is GitHub's actor id of the repository role admin in a
// ruleset's bypass_actors (init's ruleset lists it, pull requests only).
const adminRoleID = 5

// rulesetBypass judges the bypass list of the repository's ruleset id that
// requires the gate, found being the row so far. Administrators bypassing
// it pass (init's ruleset lets them merge its own pull request, which no
// gate can pass); anyone else bypassing it could merge without the gate; and
// with nobody to bypass it while the lane's files are not yet on the default
// branch, nothing can merge init's pull request.
func rulesetBypass(ctx context.Context, d Deps, f *facts, id int64, gate string, found Check) Check {
	actors, err := d.GitHub.RulesetBypassActors(ctx, id)
	if err != nil {
		found.Message += " (its bypass list was unreadable)"
		return found
	}
	var admins, others []string
	for _, a := range actors {
		switch {
		case a.ActorType == "RepositoryRole" && a.ActorID == adminRoleID, a.ActorType == "OrganizationAdmin":
			admins = append(admins, a.BypassMode)
		default:
			others = append(others, fmt.Sprintf("%s %d (%s)", a.ActorType, a.ActorID, a.BypassMode))
		}
	}
	switch {
	case len(others) > 0:
		return fix(CheckBranchProtection, titleProtection,
			fmt.Sprintf("the ruleset %d lets %s bypass it: they could merge without %q", id, strings.Join(others, ", "), gate),
			fmt.Sprintf("remove them from its bypass list: Settings → Rules → Rulesets → the ruleset %d → Bypass list (repository admins, for pull requests only, is what runpod-gpu init sets)", id))
	case len(admins) > 0 && slices.Contains(admins, "always"):
		found.Message += "; administrators may bypass it, in pull requests and pushes"
	case len(admins) > 0:
		found.Message += "; administrators may merge a pull request past it, visibly (init's default, so its own pull request can be merged)"
	case f.lane == nil && f.workflowsErr == nil:
		return fix(CheckBranchProtection, titleProtection,
			fmt.Sprintf("the ruleset %d requires the gate and nobody may bypass it, while the lane is not on the default branch: no pull request, init's included, can get the gate, so nothing can be merged", id),
			fmt.Sprintf("add repository admins to its bypass list, for pull requests only: Settings → Rules → Rulesets → the ruleset %d → Bypass list → Repository admin → For pull requests only (then merge init's pull request)", id))
	}
	return found
}

// gateNotRequired is the row when neither a ruleset nor branch protection
// requires the gate. A read that failed may have hidden it; a plan without
// rulesets (a private repository on the Free plan answers 403, a server
// without them 404) leaves branch protection to use.
func gateNotRequired(f *facts, g gateRequirement, protectionErr error) Check {
	branch := f.defaultBranch
	protected := protectionErr == nil
	var ge *ghapi.Error
	rulesUnavailable := errors.As(f.rulesErr, &ge) && (ge.StatusCode == http.StatusForbidden || ge.StatusCode == http.StatusNotFound) &&
		(protected || errors.Is(protectionErr, ghapi.ErrBranchNotProtected))
	for _, failed := range []struct {
		err error
		r   read
	}{
		{f.rulesErr, read{what: "the rules of " + branch, scope: "repo", permission: "Metadata: read", missing: "check that the branch " + branch + " exists"}},
		{protectionErr, read{what: "the branch protection of " + branch, scope: "repo", permission: "Administration: read", missing: "check that the branch " + branch + " exists"}},
	} {
		if failed.err != nil && !errors.Is(failed.err, ghapi.ErrBranchNotProtected) && !(rulesUnavailable && failed.err == f.rulesErr) {
			problem, todo := failure(failed.err, failed.r)
			return fix(CheckBranchProtection, titleProtection, problem+fmt.Sprintf("; nothing else doctor read requires %q", g.name), todo)
		}
	}
	what := fmt.Sprintf("neither a ruleset nor branch protection of %s requires %q", branch, g.name)
	if protected {
		what = fmt.Sprintf("no ruleset requires %q, and the branch protection of %s does not", g.name, branch)
	}
	what += ": without it a red or missing gate does not stop a merge"
	if rulesUnavailable {
		return fix(CheckBranchProtection, titleProtection, what+" (rulesets are unavailable to this repository)",
			fmt.Sprintf("run 'runpod-gpu init', or protect %s: Settings → Branches → Add branch protection rule → Require status checks → %q with expected source %s", branch, g.name, g.bind))
	}
	return fix(CheckBranchProtection, titleProtection, what,
		fmt.Sprintf("run 'runpod-gpu init', or add a ruleset: Settings → Rules → Rulesets → New branch ruleset, target %s, Require status checks to pass → %q from %s", branch, g.name, g.bind))
}

func checkCallers(_ context.Context, _ Deps, f *facts) Check {
	merge := fmt.Sprintf("run 'runpod-gpu init' and merge its pull request: GitHub starts workflow_run and scheduled workflows only from %s's files", f.defaultBranch)
	switch {
	case errors.Is(f.workflowsErr, ghapi.ErrNotFound):
		return fix(CheckCallers, titleCallers, fmt.Sprintf("%s has no %s", f.defaultBranch, workflowsDir), merge)
	case f.workflowsErr != nil:
		problem, todo := failure(f.workflowsErr, read{what: workflowsDir + " on " + f.defaultBranch, scope: "repo", permission: "Contents: read",
			missing: "check that " + f.defaultBranch + " has the callers"})
		return fix(CheckCallers, titleCallers, problem, todo)
	}
	var problems, todos []string
	for _, c := range []struct {
		found *caller
		what  string
	}{{f.lane, "the lane's caller (it calls gpu-lane.yml)"}, {f.reap, "the reaper's caller (reap.yml)"}, {f.costs, "the cost history's caller (cost-history.yml)"}} {
		if c.found == nil {
			problems = append(problems, fmt.Sprintf("%s is not on %s", c.what, f.defaultBranch))
			todos = append(todos, fmt.Sprintf("merge %s to %s: GitHub starts workflow_run and scheduled workflows only from the default branch", c.what, f.defaultBranch))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(f.workflows)) {
		if c := parseCaller(p, f.workflows[p]); c != nil {
			for _, problem := range callers.PermissionProblems(c.text, callers.SuiteNeedsOf) {
				problems = append(problems, c.path+": "+problem)
				todos = append(todos, c.path+": grant what the called workflow's jobs declare ('runpod-gpu init' writes them)")
			}
		}
	}
	configPath := f.lane.input("config-path", callers.ConfigPath)
	var ge *ghapi.Error
	switch {
	case errors.Is(f.configErr, ghapi.ErrNotFound):
		problems = append(problems, fmt.Sprintf("%s is not on %s", configPath, f.defaultBranch))
		todos = append(todos, fmt.Sprintf("merge %s to %s: the lane reads the reviewed allowlist from there", configPath, f.defaultBranch))
	case errors.As(f.configErr, &ge):
		problem, todo := failure(f.configErr, read{what: configPath + " on " + f.defaultBranch, scope: "repo", permission: "Contents: read",
			missing: "check that " + configPath + " is on " + f.defaultBranch})
		problems, todos = append(problems, problem), append(todos, todo)
	case f.configErr != nil:
		problems = append(problems, f.configErr.Error())
		todos = append(todos, fmt.Sprintf("correct %s (every key: .github/docs/configuration.md)", configPath))
	}
	if len(problems) > 0 {
		return fix(CheckCallers, titleCallers, strings.Join(problems, "; "), strings.Join(todos, "; "))
	}
	return ok(CheckCallers, titleCallers, "%s, %s, %s and the configuration (%d GPU tier(s))", f.lane.path, f.reap.path, f.costs.path, len(f.config.GPUTiers))
}

func checkWorkflowNames(ctx context.Context, d Deps, f *facts) Check {
	if f.lane == nil {
		return fix(CheckWorkflowNames, titleNames, fmt.Sprintf("no lane caller on %s", f.defaultBranch), "merge the lane's caller first (see callers)")
	}
	if f.lane.triggers == nil {
		return ok(CheckWorkflowNames, titleNames, "%s has no workflow_run trigger (dispatched by hand)", f.lane.path)
	}
	wfs, err := d.GitHub.ListWorkflows(ctx)
	if err != nil {
		problem, todo := failure(err, read{what: "the workflows of " + f.fullName, scope: "repo", permission: "Actions: read",
			missing: "check the repository's name"})
		return fix(CheckWorkflowNames, titleNames, problem, todo)
	}
	var names []string
	for _, w := range wfs {
		names = append(names, w.GetName())
	}
	sort.Strings(names)
	if len(f.lane.triggers) == 0 {
		return fix(CheckWorkflowNames, titleNames, fmt.Sprintf("%s starts on workflow_run of no workflow", f.lane.path),
			fmt.Sprintf("name your CI workflow under workflow_run's workflows: (one of %s)", quoteAll(names)))
	}
	for _, t := range f.lane.triggers {
		if !slices.Contains(names, t) {
			return fix(CheckWorkflowNames, titleNames, fmt.Sprintf("%s starts on workflow_run of %q, which is no workflow's name: (the lane starts by name, not file name)", f.lane.path, t),
				fmt.Sprintf("write one of %s under workflow_run's workflows:", quoteAll(names)))
		}
	}
	return ok(CheckWorkflowNames, titleNames, "%s", quoteAll(f.lane.triggers))
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
