package githubsim

import (
	"encoding/base64"
	"maps"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// A repository's set-up, as an administrator makes it in the settings and
// runpod-gpu doctor reads it: environments with their deployment branch
// policies and secrets, branch protection, repository secrets and
// variables, files on branches and tags (the contents API), the workflows
// those files define, and organization runner groups.

// Environment is a deployment environment of a repository.
type Environment struct {
	Name string
	// Branches are the custom deployment branch policies (name patterns of
	// type branch); Tags those of type tag. With neither and
	// ProtectedBranches false, every branch and tag may deploy to it.
	Branches, Tags []string
	// ProtectedBranches lets every protected branch deploy to it.
	ProtectedBranches bool
	// CustomBranchPolicies limits it to Branches and Tags even while both
	// are empty (as GitHub keeps the setting before the first policy).
	CustomBranchPolicies bool
	// Secrets are the environment secrets' names (values are never read back).
	Secrets []string
	// Reviewers are the users a deployment to it waits for (a
	// required_reviewers protection rule); none: no such rule.
	Reviewers []string
}

// RequiredCheck is a status check branch protection requires, bound to the
// App AppID (0: any source, as GitHub's -1 or an omitted app_id).
type RequiredCheck struct {
	Context string
	AppID   int64
}

// RunnerGroup is an organization's runner group as its settings show it.
type RunnerGroup struct {
	ID   int64
	Name string
	// Visibility is all, selected or private.
	Visibility string
	// Repositories are the repositories (names without the owner) a
	// selected group admits.
	Repositories []string
	// AllowsPublicRepositories lets public repositories use the group.
	AllowsPublicRepositories bool
}

// repoSetup is one repository's set-up.
type repoSetup struct {
	environments map[string]Environment
	protection   map[string][]RequiredCheck // branch → required checks
	secrets      []string
	variables    map[string]string
	files        map[string]map[string]string // ref → path → content
}

// setupOf returns a repository's set-up, made on first use.
func (s *Server) setupOf(rp *repo) *repoSetup {
	return perRepo(&s.setups, rp, func() *repoSetup {
		return &repoSetup{environments: map[string]Environment{}, protection: map[string][]RequiredCheck{},
			variables: map[string]string{}, files: map[string]map[string]string{}}
	})
}

// perRepo is rp's value in *m, made by newValue on first use (the map too).
func perRepo[T any](m *map[string]*T, rp *repo, newValue func() *T) *T {
	if *m == nil {
		*m = map[string]*T{}
	}
	key := repoKey(rp.Owner, rp.Name)
	v, ok := (*m)[key]
	if !ok {
		v = newValue()
		(*m)[key] = v
	}
	return v
}

// withSetup runs f on the named repository's set-up under the lock.
func (s *Server) withSetup(fullName string, f func(rp *repo, st *repoSetup) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	return f(rp, s.setupOf(rp))
}

// SetEnvironment creates or replaces an environment.
func (s *Server) SetEnvironment(fullName string, env Environment) error {
	if env.Name == "" {
		return invalid("environment: a name is required")
	}
	return s.withSetup(fullName, func(_ *repo, st *repoSetup) error {
		env.Branches, env.Tags, env.Secrets = slices.Clone(env.Branches), slices.Clone(env.Tags), slices.Clone(env.Secrets)
		env.Reviewers = slices.Clone(env.Reviewers)
		st.environments[strings.ToLower(env.Name)] = env
		return nil
	})
}

// ProtectBranch protects branch, requiring checks (none: protected, nothing required).
func (s *Server) ProtectBranch(fullName, branch string, checks ...RequiredCheck) error {
	return s.withSetup(fullName, func(_ *repo, st *repoSetup) error {
		st.protection[branch] = slices.Clone(checks)
		return nil
	})
}

// UnprotectBranch removes branch's protection.
func (s *Server) UnprotectBranch(fullName, branch string) error {
	return s.withSetup(fullName, func(_ *repo, st *repoSetup) error {
		delete(st.protection, branch)
		return nil
	})
}

// SetRepoSecrets replaces the repository secrets' names.
func (s *Server) SetRepoSecrets(fullName string, names ...string) error {
	return s.withSetup(fullName, func(_ *repo, st *repoSetup) error {
		st.secrets = slices.Clone(names)
		return nil
	})
}

// SetVariable sets a repository variable; an empty value deletes it.
func (s *Server) SetVariable(fullName, name, value string) error {
	return s.withSetup(fullName, func(_ *repo, st *repoSetup) error {
		if value == "" {
			delete(st.variables, name)
		} else {
			st.variables[name] = value
		}
		return nil
	})
}

// SetFile puts a file on a branch or tag (ref "" is the default branch);
// empty content removes it.
func (s *Server) SetFile(fullName, ref, filePath, content string) error {
	return s.withSetup(fullName, func(rp *repo, st *repoSetup) error {
		if ref == "" {
			ref = rp.DefaultBranch
		}
		if st.files[ref] == nil {
			st.files[ref] = map[string]string{}
		}
		if content == "" {
			delete(st.files[ref], filePath)
		} else {
			st.files[ref][filePath] = content
		}
		return nil
	})
}

// SetRunnerGroup adds or replaces an organization's runner group; its id
// becomes valid for JIT configs, as AddRunnerGroup's.
func (s *Server) SetRunnerGroup(org string, g RunnerGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runnerGroups[g.ID] = g.Name
	if s.orgRunnerGroups == nil {
		s.orgRunnerGroups = map[string]RunnerGroup{}
	}
	g.Repositories = slices.Clone(g.Repositories)
	s.orgRunnerGroups[strings.ToLower(org)+"/"+itoa(g.ID)] = g
}

func (s *Server) setupRoutes() {
	s.handle("GET /repos/{owner}/{repo}", authToken, s.getRepository)
	s.handle("GET /repos/{owner}/{repo}/environments/{environment_name}", authToken, s.getEnvironment)
	s.handle("GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies", authToken, s.listBranchPolicies)
	s.handle("GET /repos/{owner}/{repo}/environments/{environment_name}/secrets", authToken, s.listEnvironmentSecrets)
	s.handle("GET /repos/{owner}/{repo}/branches/{branch}/protection", authToken, s.getBranchProtection)
	s.handle("GET /repos/{owner}/{repo}/actions/secrets", authToken, s.listRepoSecrets)
	s.handle("GET /repos/{owner}/{repo}/actions/variables", authToken, s.listRepoVariables)
	s.handle("GET /repos/{owner}/{repo}/contents/{path...}", authToken, s.getContents)
	s.handle("GET /repos/{owner}/{repo}/actions/workflows", authToken, s.listWorkflows)
	s.handle("GET /orgs/{org}/actions/runner-groups/{group_id}", authToken, s.getOrgRunnerGroup)
	s.handle("GET /orgs/{org}/actions/runner-groups/{group_id}/repositories", authToken, s.listRunnerGroupRepos)
}

// setupCall is a set-up endpoint's repository and its set-up.
func (c *call) setup() (*repo, *repoSetup, error) {
	rp, err := c.repo()
	if err != nil {
		return nil, nil, err
	}
	return rp, c.s.setupOf(rp), nil
}

// repoSetup is setup without the repository.
func (c *call) repoSetup() (*repoSetup, error) {
	_, st, err := c.setup()
	return st, err
}

func (s *Server) getRepository(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	visibility := "public"
	if rp.Private {
		visibility = "private"
	}
	owner := s.userFor(rp.Owner)
	c.writeJSON(http.StatusOK, map[string]any{
		"id": rp.id, "node_id": nodeID("R", rp.id), "name": rp.Name, "full_name": rp.FullName(),
		"owner":   map[string]any{"login": rp.Owner, "id": owner.id},
		"private": rp.Private, "visibility": visibility, "default_branch": rp.DefaultBranch,
		"url": c.repoAPIURL(rp), "html_url": s.webURL + "/" + rp.FullName(),
	})
	return nil
}

// environment finds the environment the path names.
func (c *call) environment(st *repoSetup) (Environment, error) {
	env, ok := st.environments[strings.ToLower(c.r.PathValue("environment_name"))]
	if !ok {
		return Environment{}, notFound("environment %q", c.r.PathValue("environment_name"))
	}
	return env, nil
}

// setupEnvironment is setup and the environment the path names.
func (c *call) setupEnvironment() (*repo, *repoSetup, Environment, error) {
	rp, st, err := c.setup()
	if err != nil {
		return nil, nil, Environment{}, err
	}
	env, err := c.environment(st)
	return rp, st, env, err
}

func (s *Server) getEnvironment(c *call) error {
	rp, _, env, err := c.setupEnvironment()
	if err != nil {
		return err
	}
	id := s.stableID("env:" + rp.FullName() + ":" + strings.ToLower(env.Name))
	var policy any // null: every branch may deploy
	if custom := env.CustomBranchPolicies || len(env.Branches)+len(env.Tags) > 0; custom || env.ProtectedBranches {
		policy = map[string]bool{"protected_branches": env.ProtectedBranches && !custom, "custom_branch_policies": custom}
	}
	c.writeJSON(http.StatusOK, map[string]any{
		"id": id, "node_id": nodeID("EN", id), "name": env.Name,
		"url":        c.repoAPIURL(rp) + "/environments/" + env.Name,
		"html_url":   s.webURL + "/" + rp.FullName() + "/deployments/activity_log?environments_filter=" + env.Name,
		"created_at": stamp(c.now), "updated_at": stamp(c.now),
		"protection_rules": s.protectionRules(rp, env), "deployment_branch_policy": policy,
	})
	return nil
}

// protectionRules are an environment's rules as GitHub lists them: a
// required_reviewers rule naming its users, when it has reviewers.
func (s *Server) protectionRules(rp *repo, env Environment) []any {
	rules := []any{}
	if len(env.Reviewers) == 0 {
		return rules
	}
	reviewers := []any{}
	for _, login := range env.Reviewers {
		u := s.userFor(login)
		reviewers = append(reviewers, map[string]any{"type": "User", "reviewer": map[string]any{"login": login, "id": u.id, "type": "User"}})
	}
	id := s.stableID("env-rule:" + rp.FullName() + ":" + strings.ToLower(env.Name) + ":required_reviewers")
	return append(rules, map[string]any{"id": id, "node_id": nodeID("GA", id), "type": "required_reviewers",
		"prevent_self_review": false, "reviewers": reviewers})
}

func (s *Server) listBranchPolicies(c *call) error {
	rp, _, env, err := c.setupEnvironment()
	if err != nil {
		return err
	}
	policies := []map[string]any{}
	for _, p := range []struct {
		kind  string
		names []string
	}{{"branch", env.Branches}, {"tag", env.Tags}} {
		for _, name := range p.names {
			id := s.stableID("policy:" + rp.FullName() + ":" + env.Name + ":" + p.kind + ":" + name)
			policies = append(policies, map[string]any{"id": id, "node_id": nodeID("DBP", id), "name": name, "type": p.kind})
		}
	}
	c.writeJSON(http.StatusOK, map[string]any{"total_count": len(policies), "branch_policies": policies})
	return nil
}

// secretsJSON is GitHub's list of secrets: names and times, never values.
func secretsJSON(c *call, names []string) map[string]any {
	list := []map[string]any{}
	for _, n := range names {
		list = append(list, map[string]any{"name": n, "created_at": stamp(c.now), "updated_at": stamp(c.now)})
	}
	return map[string]any{"total_count": len(list), "secrets": list}
}

func (s *Server) listEnvironmentSecrets(c *call) error {
	_, _, env, err := c.setupEnvironment()
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, secretsJSON(c, env.Secrets))
	return nil
}

func (s *Server) listRepoSecrets(c *call) error {
	return getOne(c, (*call).repoSetup, func(st *repoSetup) map[string]any { return secretsJSON(c, st.secrets) })
}

func (s *Server) listRepoVariables(c *call) error {
	return getOne(c, (*call).repoSetup, func(st *repoSetup) map[string]any { return variablesJSON(c, st.variables) })
}

// variablesJSON is GitHub's list of variables, by name.
func variablesJSON(c *call, vars map[string]string) map[string]any {
	list := []map[string]any{}
	for _, n := range slices.Sorted(maps.Keys(vars)) {
		list = append(list, map[string]any{"name": n, "value": vars[n], "created_at": stamp(c.now), "updated_at": stamp(c.now)})
	}
	return map[string]any{"total_count": len(list), "variables": list}
}

func (s *Server) getBranchProtection(c *call) error {
	rp, st, err := c.setup()
	if err != nil {
		return err
	}
	checks, ok := st.protection[c.r.PathValue("branch")]
	if !ok {
		// GitHub names this 404, unlike any other.
		c.writeJSON(http.StatusNotFound, errorBody{Message: "Branch not protected", DocumentationURL: docsURL, Status: "404"})
		return nil
	}
	contexts, list := []string{}, []map[string]any{}
	for _, ch := range checks {
		contexts = append(contexts, ch.Context)
		var app any
		if ch.AppID != 0 {
			app = ch.AppID
		}
		list = append(list, map[string]any{"context": ch.Context, "app_id": app})
	}
	url := c.repoAPIURL(rp) + "/branches/" + c.r.PathValue("branch") + "/protection"
	c.writeJSON(http.StatusOK, map[string]any{
		"url":                    url,
		"required_status_checks": map[string]any{"url": url + "/required_status_checks", "strict": true, "contexts": contexts, "checks": list},
		"enforce_admins":         map[string]any{"url": url + "/enforce_admins", "enabled": false},
	})
	return nil
}

// getContents answers a file (base64, as GitHub sends it) or a directory's
// entries at ?ref= (default: the default branch).
func (s *Server) getContents(c *call) error {
	rp, st, err := c.setup()
	if err != nil {
		return err
	}
	ref := c.r.URL.Query().Get("ref")
	if ref == "" {
		ref = rp.DefaultBranch
	}
	files, p := st.files[ref], strings.Trim(c.r.PathValue("path"), "/")
	entry := func(name, kind string, size int) map[string]any {
		return map[string]any{"type": kind, "name": path.Base(name), "path": name, "size": size,
			"sha": s.contentSHA(ref + ":" + name), "url": c.repoAPIURL(rp) + "/contents/" + name + "?ref=" + ref}
	}
	if content, ok := files[p]; ok {
		e := entry(p, "file", len(content))
		e["encoding"], e["content"] = "base64", base64.StdEncoding.EncodeToString([]byte(content))
		c.writeJSON(http.StatusOK, e)
		return nil
	}
	var dir []map[string]any
	seen := map[string]bool{}
	for name, content := range files {
		rest, ok := strings.CutPrefix(name, p+"/")
		if !ok {
			continue
		}
		child, _, isDir := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		if isDir {
			dir = append(dir, entry(p+"/"+child, "dir", 0))
		} else {
			dir = append(dir, entry(name, "file", len(content)))
		}
	}
	if dir == nil {
		return notFound("%s at %s", p, ref)
	}
	sort.Slice(dir, func(i, j int) bool { return dir[i]["name"].(string) < dir[j]["name"].(string) })
	c.writeJSON(http.StatusOK, dir)
	return nil
}

// contentSHA is a stable blob SHA for a file version.
func (s *Server) contentSHA(key string) string {
	const hex = "0123456789abcdef"
	id := s.stableID("blob:" + key)
	b := []byte(strings.Repeat("0", 40))
	for i := 39; i >= 0 && id > 0; i-- {
		b[i] = hex[id%16]
		id /= 16
	}
	return string(b)
}

// listWorkflows lists the workflows of the default branch's
// .github/workflows files (named by their name: key, else by their path),
// and any other workflow the simulation registered.
func (s *Server) listWorkflows(c *call) error {
	rp, st, err := c.setup()
	if err != nil {
		return err
	}
	list := []workflowJSON{}
	known := map[string]bool{}
	add := func(id int64, p, name string) {
		known[p] = true
		list = append(list, workflowJSON{ID: id, NodeID: nodeID("W", id), Name: name, Path: p, State: "active",
			CreatedAt: stamp(c.now), UpdatedAt: stamp(c.now), URL: c.repoAPIURL(rp) + "/actions/workflows/" + itoa(id),
			HTMLURL: s.webURL + "/" + rp.FullName() + "/blob/" + rp.DefaultBranch + "/" + p})
	}
	for _, w := range rp.workflows {
		add(w.id, w.path, w.name)
	}
	var paths []string
	for p := range st.files[rp.DefaultBranch] {
		if dir, file := path.Split(p); dir == ".github/workflows/" && (path.Ext(file) == ".yml" || path.Ext(file) == ".yaml") && !known[p] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		var doc struct {
			Name string `yaml:"name"`
		}
		_ = yaml.Unmarshal([]byte(st.files[rp.DefaultBranch][p]), &doc)
		if doc.Name == "" {
			doc.Name = p // GitHub names a workflow without name: by its path
		}
		add(s.stableID("workflow:"+rp.FullName()+":"+p), p, doc.Name)
	}
	c.writeJSON(http.StatusOK, map[string]any{"total_count": len(list), "workflows": list})
	return nil
}

// orgRunnerGroup finds the organization runner group the path names.
func (c *call) orgRunnerGroup() (RunnerGroup, error) {
	g, ok := c.s.orgRunnerGroups[strings.ToLower(c.r.PathValue("org"))+"/"+c.r.PathValue("group_id")]
	if !ok {
		return RunnerGroup{}, notFound("runner group %s of %s", c.r.PathValue("group_id"), c.r.PathValue("org"))
	}
	return g, nil
}

func (s *Server) getOrgRunnerGroup(c *call) error {
	g, err := c.orgRunnerGroup()
	if err != nil {
		return err
	}
	base := c.apiURL + "/orgs/" + c.r.PathValue("org") + "/actions/runner-groups/" + itoa(g.ID)
	c.writeJSON(http.StatusOK, map[string]any{
		"id": g.ID, "name": g.Name, "visibility": g.Visibility, "default": g.ID == 1, "inherited": false,
		"allows_public_repositories": g.AllowsPublicRepositories, "restricted_to_workflows": false,
		"selected_workflows": []string{}, "runners_url": base + "/runners", "selected_repositories_url": base + "/repositories",
	})
	return nil
}

func (s *Server) listRunnerGroupRepos(c *call) error {
	g, err := c.orgRunnerGroup()
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, name := range g.Repositories {
		full := c.r.PathValue("org") + "/" + name
		var id int64
		if rp, ok := s.repos[repoKey(c.r.PathValue("org"), name)]; ok {
			id = rp.id
		}
		list = append(list, map[string]any{"id": id, "name": name, "full_name": full})
	}
	c.writeJSON(http.StatusOK, map[string]any{"total_count": len(list), "repositories": list})
	return nil
}
