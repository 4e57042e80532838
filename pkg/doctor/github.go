package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

const (
	titleApp         = "GitHub App installed with the permissions each job needs"
	titleEnvironment = "environment deploys from the default branch only"
	titleSecrets     = "secrets and variables present (names only)"
	titleProtection  = "default branch protected, the gate required from the App"
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
		return fix(CheckApp, titleApp, "read the repository variables (%v): run doctor with a token of a repository administrator", f.variablesErr)
	}
	var found []string
	for _, a := range f.appNeeds() {
		appID, ok := f.intVar(a.idVar)
		if !ok {
			return fix(CheckApp, titleApp, "set the repository variable %s to the %s's id (create it with 'runpod-gpu app'; Settings → Secrets and variables → Actions → Variables)", a.idVar, a.role)
		}
		if d.Apps == nil {
			return fix(CheckApp, titleApp, "pass %s with the %s's private key (the .pem GitHub gave when it was created): only the App itself can read its installation's permissions", a.keyFlag, a.role)
		}
		client, err := d.Apps(appID, a.role != "App")
		if err != nil || client == nil {
			return fix(CheckApp, titleApp, "pass %s with the private key of the %s %d: %v", a.keyFlag, a.role, appID, err)
		}
		inst, err := client.RepoInstallationDetails(ctx, f.owner, f.repo)
		switch {
		case errors.Is(err, ghapi.ErrNotFound):
			return fix(CheckApp, titleApp, "install the %s %d on %s (its page on GitHub → Install App → Only select repositories → %s)", a.role, appID, f.fullName, f.repo)
		case err != nil:
			return fix(CheckApp, titleApp, "read the %s %d's installation: %v (is %s the key of that App?)", a.role, appID, err, a.keyFlag)
		}
		if want, ok := f.intVar(a.instVar); !ok || want != inst.GetID() {
			return fix(CheckApp, titleApp, "set the repository variable %s to %d, the %s's installation on %s (it is %q)", a.instVar, inst.GetID(), a.role, f.fullName, f.variables[a.instVar])
		}
		have := installationLevels(inst.GetPermissions())
		if missing := callers.Missing(have, a.need); len(missing) > 0 {
			return fix(CheckApp, titleApp, "grant the %s %d %s (App settings → Permissions & events), then accept the new permissions on its installation", a.role, appID, missing)
		}
		found = append(found, fmt.Sprintf("%s %d, installation %d: %s", a.role, appID, inst.GetID(), a.need))
	}
	return ok(CheckApp, titleApp, "%s", strings.Join(found, "; "))
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

func checkEnvironment(ctx context.Context, d Deps, f *facts) Check {
	name, branch := f.environment(), f.defaultBranch
	env, err := d.GitHub.Environment(ctx, name)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return fix(CheckEnvironment, titleEnvironment, "create the environment %s (Settings → Environments → New environment), deployment branches: %s only", name, branch)
	case err != nil:
		return fix(CheckEnvironment, titleEnvironment, "read the environment %s: %v", name, err)
	}
	for _, rule := range env.ProtectionRules {
		if rule.GetType() == "required_reviewers" {
			return fix(CheckEnvironment, titleEnvironment, "remove the required reviewers of %s: every job of the lane would wait for one", name)
		}
	}
	policy := env.DeploymentBranchPolicy
	if policy == nil || policy.GetProtectedBranches() || !policy.GetCustomBranchPolicies() {
		what := "every branch"
		if policy != nil && policy.GetProtectedBranches() {
			what = "every protected branch"
		}
		return fix(CheckEnvironment, titleEnvironment, "%s lets %s deploy to it, and so read its secrets: Settings → Environments → %s → Deployment branches and tags → Selected branches and tags → add %s only", name, what, name, branch)
	}
	policies, err := d.GitHub.DeploymentBranchPolicies(ctx, name)
	if err != nil {
		return fix(CheckEnvironment, titleEnvironment, "read the deployment branch policies of %s: %v", name, err)
	}
	var others []string
	hasDefault := false
	for _, p := range policies {
		if p.GetType() != "tag" && p.GetName() == branch {
			hasDefault = true
			continue
		}
		others = append(others, fmt.Sprintf("%s %q", cmpOr(p.GetType(), "branch"), p.GetName()))
	}
	switch {
	case len(others) > 0:
		return fix(CheckEnvironment, titleEnvironment, "remove %s from the deployment branches of %s: only %s may read its secrets", strings.Join(others, ", "), name, branch)
	case !hasDefault:
		return fix(CheckEnvironment, titleEnvironment, "add %s to the deployment branches of %s: the lane runs there", branch, name)
	}
	return ok(CheckEnvironment, titleEnvironment, "%s: %s only", name, branch)
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func checkSecrets(ctx context.Context, d Deps, f *facts) Check {
	env := f.environment()
	secrets := []string{secretRunPodKey, secretAppKey}
	vars := []string{varAppID, varInstallationID}
	if f.runnerApp() {
		secrets, vars = append(secrets, secretRunnerAppKey), append(vars, varRunnerAppID, varRunnerInstallID)
	}
	have, err := d.GitHub.EnvironmentSecretNames(ctx, env)
	if err != nil {
		return fix(CheckSecrets, titleSecrets, "list the secrets of the environment %s: %v (create the environment first)", env, err)
	}
	var problems []string
	for _, s := range secrets {
		if !slices.Contains(have, s) {
			problems = append(problems, fmt.Sprintf("add the secret %s to the environment %s", s, env))
		}
	}
	repoSecrets, err := d.GitHub.RepositorySecretNames(ctx)
	if err != nil {
		problems = append(problems, fmt.Sprintf("list the repository secrets: %v", err))
	}
	for _, s := range repoSecrets {
		if slices.Contains(secrets, s) || s == "RUNPOD_GPU_TOKEN" {
			problems = append(problems, fmt.Sprintf("delete the repository secret %s (keep it in the environment only: a workflow on any branch can read a repository secret)", s))
		}
	}
	for _, v := range vars {
		if _, ok := f.variables[v]; !ok && f.variablesErr == nil {
			problems = append(problems, fmt.Sprintf("set the repository variable %s", v))
		}
	}
	if len(problems) > 0 {
		return fix(CheckSecrets, titleSecrets, "%s", strings.Join(problems, "; "))
	}
	return ok(CheckSecrets, titleSecrets, "%s in %s; variables %s", strings.Join(secrets, ", "), env, strings.Join(vars, ", "))
}

func checkBranchProtection(ctx context.Context, d Deps, f *facts) Check {
	name := f.lane.input("check-name", defaultCheckName)
	appID, appKnown := f.intVar(varAppID)
	bind := "your App"
	if appKnown {
		bind = fmt.Sprintf("your App (app_id %d)", appID)
	}
	p, err := d.GitHub.BranchProtection(ctx, f.defaultBranch)
	switch {
	case errors.Is(err, ghapi.ErrBranchNotProtected), errors.Is(err, ghapi.ErrNotFound):
		return fix(CheckBranchProtection, titleProtection, "protect %s (Settings → Branches → Add rule) and require the status check %q with expected source %s: without protection the environment protects nothing", f.defaultBranch, name, bind)
	case err != nil:
		return fix(CheckBranchProtection, titleProtection, "read the protection of %s: %v (it needs a repository administrator's token)", f.defaultBranch, err)
	}
	var checks []string
	if rsc := p.GetRequiredStatusChecks(); rsc != nil && rsc.Checks != nil {
		for _, c := range *rsc.Checks {
			if c.Context != name {
				continue
			}
			if appKnown && c.AppID != nil && *c.AppID == appID {
				return ok(CheckBranchProtection, titleProtection, "%s requires %q from App %d", f.defaultBranch, name, appID)
			}
			source := "any source"
			if c.AppID != nil && *c.AppID != -1 {
				source = fmt.Sprintf("App %d", *c.AppID)
			}
			checks = append(checks, source)
		}
	}
	if len(checks) > 0 {
		return fix(CheckBranchProtection, titleProtection, "bind the required check %q to %s: it accepts %s, so another workflow's token could satisfy it", name, bind, strings.Join(checks, ", "))
	}
	return fix(CheckBranchProtection, titleProtection, "require the status check %q on %s with expected source %s", name, f.defaultBranch, bind)
}

func checkCallers(_ context.Context, _ Deps, f *facts) Check {
	if f.workflowsErr != nil {
		return fix(CheckCallers, titleCallers, "read %s on %s: %v; merge the callers ('runpod-gpu init' writes them) to %s", workflowsDir, f.defaultBranch, f.workflowsErr, f.defaultBranch)
	}
	var problems []string
	for _, c := range []struct {
		found *caller
		what  string
	}{{f.lane, "the lane's caller (it calls gpu-lane.yml)"}, {f.reap, "the reaper's caller (reap.yml)"}, {f.costs, "the cost history's caller (cost-history.yml)"}} {
		if c.found == nil {
			problems = append(problems, fmt.Sprintf("merge %s to %s: GitHub starts workflow_run and scheduled workflows only from the default branch", c.what, f.defaultBranch))
		}
	}
	for _, p := range sortedPaths(f.workflows) {
		if c := parseCaller(p, f.workflows[p]); c != nil {
			for _, problem := range callers.PermissionProblems(c.text, callers.SuiteNeedsOf) {
				problems = append(problems, c.path+": "+problem)
			}
		}
	}
	switch {
	case errors.Is(f.configErr, ghapi.ErrNotFound):
		problems = append(problems, fmt.Sprintf("merge %s to %s: the lane reads the reviewed allowlist from there", f.lane.input("config-path", callers.ConfigPath), f.defaultBranch))
	case f.configErr != nil:
		problems = append(problems, f.configErr.Error())
	}
	if len(problems) > 0 {
		return fix(CheckCallers, titleCallers, "%s", strings.Join(problems, "; "))
	}
	return ok(CheckCallers, titleCallers, "%s, %s, %s and the configuration (%d GPU tier(s))", f.lane.path, f.reap.path, f.costs.path, len(f.config.GPUTiers))
}

func checkWorkflowNames(ctx context.Context, d Deps, f *facts) Check {
	if f.lane == nil {
		return fix(CheckWorkflowNames, titleNames, "merge the lane's caller to %s first (see callers)", f.defaultBranch)
	}
	if f.lane.triggers == nil {
		return ok(CheckWorkflowNames, titleNames, "%s has no workflow_run trigger (dispatched by hand)", f.lane.path)
	}
	wfs, err := d.GitHub.ListWorkflows(ctx)
	if err != nil {
		return fix(CheckWorkflowNames, titleNames, "list the workflows: %v", err)
	}
	var names []string
	for _, w := range wfs {
		names = append(names, w.GetName())
	}
	sort.Strings(names)
	if len(f.lane.triggers) == 0 {
		return fix(CheckWorkflowNames, titleNames, "%s: name your CI workflow under workflow_run's workflows: (one of %s)", f.lane.path, quoteAll(names))
	}
	for _, t := range f.lane.triggers {
		if !slices.Contains(names, t) {
			return fix(CheckWorkflowNames, titleNames, "%s starts on workflow_run of %q, which is no workflow's name: (the lane starts by name, not file name); write one of %s", f.lane.path, t, quoteAll(names))
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
