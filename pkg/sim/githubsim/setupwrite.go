package githubsim

import (
	"crypto/ecdh"
	"crypto/sha1" //nolint:gosec // a git commit id, not a security hash
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"sort"
	"strings"

	"golang.org/x/crypto/nacl/box"
)

// The set-up's writes, as runpod-gpu init makes them with an administrator's
// token: an environment and its deployment branch policies, environment
// secrets sealed with the environment's public key (libsodium's sealed box;
// the simulator opens them with its private key, and refuses what does not
// open), environment and repository variables, a branch with files committed
// through the contents API, a pull request, and classic branch protection.
// Tokens given scopes with WithTokenScopes answer X-OAuth-Scopes as GitHub
// does for classic tokens, and writes check those scopes.

// WithTokenScopes makes token a classic token with these OAuth scopes (for
// example "repo", "workflow"): every answer to it carries X-OAuth-Scopes,
// and a write its scopes do not cover is refused.
func WithTokenScopes(token string, scopes ...string) Option {
	return func(s *Server) {
		if s.tokenScopes == nil {
			s.tokenScopes = map[string][]string{}
		}
		s.tokenScopes[token] = slices.Clone(scopes)
	}
}

// repoWrites is what the set-up's writes keep beside the repository's set-up.
type repoWrites struct {
	secrets map[string]map[string]string // lower-case environment → secret → plaintext
	envVars map[string]map[string]string // lower-case environment → variable → value
}

// writesOf returns a repository's written values, made on first use.
func (s *Server) writesOf(rp *repo) *repoWrites {
	return perRepo(&s.setupWrites, rp, func() *repoWrites {
		return &repoWrites{secrets: map[string]map[string]string{}, envVars: map[string]map[string]string{}}
	})
}

// EnvironmentSecret returns the plaintext of an environment secret set
// through the API, as the simulator decrypted it.
func (s *Server) EnvironmentSecret(fullName, env, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return "", err
	}
	v, ok := s.writesOf(rp).secrets[strings.ToLower(env)][name]
	if !ok {
		return "", notFound("secret %s of environment %s", name, env)
	}
	return v, nil
}

// EnvironmentVariables returns an environment's variables.
func (s *Server) EnvironmentVariables(fullName, env string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range s.writesOf(rp).envVars[strings.ToLower(env)] {
		out[k] = v
	}
	return out, nil
}

// scopeHeader answers X-OAuth-Scopes for a classic token.
func (s *Server) scopeHeader(c *call) {
	if scopes, ok := s.tokenScopes[bearer(c.r)]; ok {
		c.header.Set("X-OAuth-Scopes", strings.Join(scopes, ", "))
	}
}

// needScope refuses a classic token without scope, as GitHub does.
func (c *call) needScope(scope string) error {
	scopes, ok := c.s.tokenScopes[bearer(c.r)]
	if !ok || slices.Contains(scopes, scope) {
		return nil
	}
	c.header.Set("X-Accepted-OAuth-Scopes", scope)
	if scope == "workflow" {
		return forbidden("refusing to allow an OAuth App to create or update workflow without `workflow` scope")
	}
	return forbidden("Resource not accessible by personal access token")
}

// writeSetup is a set-up write's repository, set-up and written values,
// after the caller's admin rights (and a classic token's "repo" scope) are checked.
func (c *call) writeSetup() (*repo, *repoSetup, *repoWrites, error) {
	rp, st, err := c.setup()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := c.adminOnly(rp); err != nil {
		return nil, nil, nil, err
	}
	return rp, st, c.s.writesOf(rp), nil
}

// writeEnvironment is writeSetup and the environment the path names.
func (c *call) writeEnvironment() (*repo, *repoSetup, *repoWrites, Environment, error) {
	rp, st, w, err := c.writeSetup()
	if err != nil {
		return nil, nil, nil, Environment{}, err
	}
	env, err := c.environment(st)
	return rp, st, w, env, err
}

func (s *Server) setupWriteRoutes() {
	s.handle("PUT /repos/{owner}/{repo}/environments/{environment_name}", authToken, s.putEnvironment)
	s.handle("POST /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies", authToken, s.createBranchPolicy)
	s.handle("GET /repos/{owner}/{repo}/environments/{environment_name}/secrets/public-key", authToken, s.getEnvironmentPublicKey)
	s.handle("PUT /repos/{owner}/{repo}/environments/{environment_name}/secrets/{secret_name}", authToken, s.putEnvironmentSecret)
	s.handle("GET /repos/{owner}/{repo}/environments/{environment_name}/variables", authToken, s.listEnvironmentVariables)
	s.handle("POST /repos/{owner}/{repo}/environments/{environment_name}/variables", authToken, s.createVariable)
	s.handle("PATCH /repos/{owner}/{repo}/environments/{environment_name}/variables/{name}", authToken, s.updateVariable)
	s.handle("POST /repos/{owner}/{repo}/actions/variables", authToken, s.createVariable)
	s.handle("PATCH /repos/{owner}/{repo}/actions/variables/{name}", authToken, s.updateVariable)
	s.handle("GET /repos/{owner}/{repo}/git/ref/{ref...}", authToken, s.getGitRef)
	s.handle("POST /repos/{owner}/{repo}/git/refs", authToken, s.createGitRef)
	s.handle("PUT /repos/{owner}/{repo}/contents/{path...}", authToken, s.putContents)
	s.handle("GET /repos/{owner}/{repo}/pulls", authToken, s.listPullRequests)
	s.handle("POST /repos/{owner}/{repo}/pulls", authToken, s.createPullRequest)
	s.handle("PUT /repos/{owner}/{repo}/branches/{branch}/protection", authToken, s.putBranchProtection)
}

func (s *Server) putEnvironment(c *call) error {
	_, st, _, err := c.writeSetup()
	if err != nil {
		return err
	}
	var body struct {
		WaitTimer *int `json:"wait_timer"`
		Policy    *struct {
			Protected bool `json:"protected_branches"`
			Custom    bool `json:"custom_branch_policies"`
		} `json:"deployment_branch_policy"`
	}
	if len(strings.TrimSpace(string(c.body))) > 0 {
		if err := c.decode(&body); err != nil {
			return err
		}
	}
	if body.WaitTimer != nil && (*body.WaitTimer < 0 || *body.WaitTimer > 43200) {
		return invalid("Invalid property /wait_timer: want 0 to 43200 minutes")
	}
	name := c.r.PathValue("environment_name")
	env, ok := st.environments[strings.ToLower(name)]
	if !ok {
		env = Environment{Name: name}
	}
	switch {
	case body.Policy == nil:
		env.Branches, env.Tags, env.ProtectedBranches, env.CustomBranchPolicies = nil, nil, false, false
	case body.Policy.Protected == body.Policy.Custom:
		return invalid("Validation Failed: exactly one of protected_branches and custom_branch_policies must be true")
	default:
		env.ProtectedBranches, env.CustomBranchPolicies = body.Policy.Protected, body.Policy.Custom
		if !env.CustomBranchPolicies {
			env.Branches, env.Tags = nil, nil
		}
	}
	st.environments[strings.ToLower(name)] = env
	return s.getEnvironment(c)
}

func (s *Server) createBranchPolicy(c *call) error {
	rp, st, _, env, err := c.writeEnvironment()
	if err != nil {
		return err
	}
	if !env.CustomBranchPolicies && len(env.Branches)+len(env.Tags) == 0 {
		// GitHub answers 404 while the environment does not use custom policies.
		return notFound("custom branch policies are not enabled for %s", env.Name)
	}
	var body struct{ Name, Type string }
	if err := c.decode(&body); err != nil {
		return err
	}
	if body.Type == "" {
		body.Type = "branch"
	}
	list := &env.Branches
	switch {
	case strings.TrimSpace(body.Name) == "":
		return invalid("Invalid property /name: a name pattern is required")
	case body.Type == "tag":
		list = &env.Tags
	case body.Type != "branch":
		return invalid("Invalid property /type: %q is not a possible value. Must be one of: branch, tag.", body.Type)
	}
	if slices.Contains(*list, body.Name) {
		return invalid("Validation Failed: Name has already been taken")
	}
	*list = append(*list, body.Name)
	st.environments[strings.ToLower(env.Name)] = env
	id := s.stableID("policy:" + rp.FullName() + ":" + env.Name + ":" + body.Type + ":" + body.Name)
	c.writeJSON(http.StatusOK, map[string]any{"id": id, "node_id": nodeID("DBP", id), "name": body.Name, "type": body.Type})
	return nil
}

// environmentKey is the environment's sealed-box key pair, derived from the
// seed so runs repeat.
func (s *Server) environmentKey(rp *repo, env string) (pub, priv *[32]byte, keyID string) {
	sum := sha256.Sum256([]byte(itoa(int64(s.seed)) + ":environment-key:" + rp.FullName() + ":" + strings.ToLower(env)))
	k, err := ecdh.X25519().NewPrivateKey(sum[:])
	if err != nil {
		panic(err) // any 32 bytes are an X25519 key
	}
	pub, priv = new([32]byte), new([32]byte)
	copy(pub[:], k.PublicKey().Bytes())
	copy(priv[:], k.Bytes())
	return pub, priv, itoa(s.stableID("environment-key:" + rp.FullName() + ":" + strings.ToLower(env)))
}

func (s *Server) getEnvironmentPublicKey(c *call) error {
	rp, _, env, err := c.setupEnvironment()
	if err != nil {
		return err
	}
	pub, _, keyID := s.environmentKey(rp, env.Name)
	c.writeJSON(http.StatusOK, map[string]string{"key_id": keyID, "key": base64.StdEncoding.EncodeToString(pub[:])})
	return nil
}

func (s *Server) putEnvironmentSecret(c *call) error {
	rp, st, w, env, err := c.writeEnvironment()
	if err != nil {
		return err
	}
	var body struct {
		EncryptedValue string `json:"encrypted_value"`
		KeyID          string `json:"key_id"`
	}
	if err := c.decode(&body); err != nil {
		return err
	}
	name := c.r.PathValue("secret_name")
	pub, priv, keyID := s.environmentKey(rp, env.Name)
	sealed, err := base64.StdEncoding.DecodeString(body.EncryptedValue)
	switch {
	case !secretNamePattern(name):
		return invalid("Invalid secret name %q: letters, digits and '_', not starting with a digit or GITHUB_", name)
	case body.KeyID != keyID:
		return invalid("Invalid property /key_id: %q is not the environment's public key id", body.KeyID)
	case err != nil:
		return invalid("Invalid property /encrypted_value: not base64")
	}
	plain, ok := box.OpenAnonymous(nil, sealed, pub, priv)
	if !ok {
		return invalid("Invalid property /encrypted_value: it does not open with the environment's key (seal it with libsodium's sealed box)")
	}
	if w.secrets[strings.ToLower(env.Name)] == nil {
		w.secrets[strings.ToLower(env.Name)] = map[string]string{}
	}
	w.secrets[strings.ToLower(env.Name)][name] = string(plain)
	if slices.Contains(env.Secrets, name) {
		c.noContent(http.StatusNoContent)
		return nil
	}
	env.Secrets = append(env.Secrets, name)
	st.environments[strings.ToLower(env.Name)] = env
	c.noContent(http.StatusCreated)
	return nil
}

// secretNamePattern is GitHub's rule for secret and variable names.
func secretNamePattern(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') || strings.HasPrefix(strings.ToUpper(name), "GITHUB_") {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// writeVariables is writeSetup and the variables the path names.
func (c *call) writeVariables() (map[string]string, error) {
	_, st, w, err := c.writeSetup()
	if err != nil {
		return nil, err
	}
	return c.variablesAt(st, w)
}

// variablesAt returns the variables the path names: an environment's
// (made on first use) or the repository's.
func (c *call) variablesAt(st *repoSetup, w *repoWrites) (map[string]string, error) {
	if c.r.PathValue("environment_name") == "" {
		return st.variables, nil
	}
	env, err := c.environment(st)
	if err != nil {
		return nil, err
	}
	key := strings.ToLower(env.Name)
	if w.envVars[key] == nil {
		w.envVars[key] = map[string]string{}
	}
	return w.envVars[key], nil
}

func (s *Server) listEnvironmentVariables(c *call) error {
	rp, st, err := c.setup()
	if err != nil {
		return err
	}
	vars, err := c.variablesAt(st, s.writesOf(rp))
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, variablesJSON(c, vars))
	return nil
}

func (s *Server) createVariable(c *call) error {
	vars, err := c.writeVariables()
	if err != nil {
		return err
	}
	var body struct{ Name, Value string }
	if err := c.decode(&body); err != nil {
		return err
	}
	switch _, exists := vars[body.Name]; {
	case !secretNamePattern(body.Name):
		return invalid("Invalid variable name %q: letters, digits and '_', not starting with a digit or GITHUB_", body.Name)
	case body.Value == "":
		return invalid("Invalid property /value: a value is required")
	case exists:
		return alreadyExists("Already exists - Variable already exists")
	}
	vars[body.Name] = body.Value
	c.writeJSON(http.StatusCreated, map[string]any{})
	return nil
}

func (s *Server) updateVariable(c *call) error {
	vars, err := c.writeVariables()
	if err != nil {
		return err
	}
	name := c.r.PathValue("name")
	if _, ok := vars[name]; !ok {
		return notFound("variable %s", name)
	}
	var body struct{ Name, Value string }
	if err := c.decode(&body); err != nil {
		return err
	}
	if body.Value == "" {
		return invalid("Invalid property /value: a value is required")
	}
	vars[name] = body.Value
	c.noContent(http.StatusNoContent)
	return nil
}

// refJSON is a git ref as GitHub answers it.
func refJSON(c *call, rp *repo, branch, sha string) map[string]any {
	return map[string]any{"ref": "refs/heads/" + branch, "node_id": nodeID("REF", c.s.stableID("ref:"+rp.FullName()+":"+branch)),
		"url":    c.repoAPIURL(rp) + "/git/refs/heads/" + branch,
		"object": map[string]any{"type": "commit", "sha": sha, "url": c.repoAPIURL(rp) + "/git/commits/" + sha}}
}

func (s *Server) getGitRef(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	branch, ok := strings.CutPrefix(c.r.PathValue("ref"), "heads/")
	sha, found := rp.branches[branch]
	if !ok || !found {
		return notFound("ref %s", c.r.PathValue("ref"))
	}
	c.writeJSON(http.StatusOK, refJSON(c, rp, branch, sha))
	return nil
}

func (s *Server) createGitRef(c *call) error {
	rp, st, _, err := c.writeSetup()
	if err != nil {
		return err
	}
	var body struct{ Ref, SHA string }
	if err := c.decode(&body); err != nil {
		return err
	}
	branch, ok := strings.CutPrefix(body.Ref, "refs/heads/")
	switch {
	case !ok || branch == "":
		return invalid("Reference name %q: want refs/heads/NAME", body.Ref)
	case rp.branches[branch] != "":
		return invalid("Reference already exists")
	}
	var from string
	for b, sha := range rp.branches {
		if sha == body.SHA && (from == "" || b == rp.DefaultBranch) {
			from = b
		}
	}
	if from == "" {
		return invalid("Object does not exist")
	}
	rp.branches[branch] = body.SHA
	files := map[string]string{}
	for p, text := range st.files[from] {
		files[p] = text
	}
	st.files[branch] = files
	c.writeJSON(http.StatusCreated, refJSON(c, rp, branch, body.SHA))
	return nil
}

func (s *Server) putContents(c *call) error {
	rp, st, _, err := c.writeSetup()
	if err != nil {
		return err
	}
	p := strings.Trim(c.r.PathValue("path"), "/")
	if strings.HasPrefix(p, ".github/workflows/") {
		if err := c.needScope("workflow"); err != nil {
			return err
		}
	}
	var body struct{ Message, Content, SHA, Branch string }
	if err := c.decode(&body); err != nil {
		return err
	}
	if body.Branch == "" {
		body.Branch = rp.DefaultBranch
	}
	content, decodeErr := base64.StdEncoding.DecodeString(body.Content)
	head, ok := rp.branches[body.Branch]
	_, exists := st.files[body.Branch][p]
	current := s.contentSHA(body.Branch + ":" + p)
	switch {
	case body.Message == "":
		return invalid("Invalid request.\n\n\"message\" wasn't supplied.")
	case decodeErr != nil:
		return invalid("content is not valid Base64")
	case !ok:
		return notFound("Branch %s not found", body.Branch)
	case exists && body.SHA == "":
		return invalid("Invalid request.\n\n\"sha\" wasn't supplied.")
	case exists && body.SHA != current:
		return conflict("%s does not match %s", p, body.SHA)
	}
	sum := sha1.Sum([]byte(head + "\x00" + p + "\x00" + string(content))) //nolint:gosec // a commit id
	commit := hex.EncodeToString(sum[:])
	rp.branches[body.Branch] = commit
	if st.files[body.Branch] == nil {
		st.files[body.Branch] = map[string]string{}
	}
	st.files[body.Branch][p] = string(content)
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	c.writeJSON(status, map[string]any{
		"content": map[string]any{"name": p[strings.LastIndex(p, "/")+1:], "path": p, "sha": current, "type": "file"},
		"commit":  map[string]any{"sha": commit, "message": body.Message},
	})
	return nil
}

func (s *Server) listPullRequests(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	numbers := make([]int, 0, len(rp.pulls))
	for n := range rp.pulls {
		numbers = append(numbers, n)
	}
	sort.Ints(numbers)
	list := []pullJSON{}
	for _, n := range numbers {
		p := rp.pulls[n]
		headOwner := rp.Owner
		if p.HeadRepo != "" {
			headOwner, _, _ = strings.Cut(p.HeadRepo, "/")
		}
		switch {
		case state != "all" && p.State != state:
		case q.Get("head") != "" && !strings.EqualFold(q.Get("head"), headOwner+":"+p.HeadRef):
		case q.Get("base") != "" && q.Get("base") != p.BaseRef:
		default:
			list = append(list, s.pullJSON(c, rp, p))
		}
	}
	c.writeJSON(http.StatusOK, list)
	return nil
}

func (s *Server) createPullRequest(c *call) error {
	rp, st, _, err := c.writeSetup()
	if err != nil {
		return err
	}
	var body struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := c.decode(&body); err != nil {
		return err
	}
	head := body.Head
	if owner, branch, ok := strings.Cut(body.Head, ":"); ok && strings.EqualFold(owner, rp.Owner) {
		head = branch
	}
	for _, p := range rp.pulls {
		if p.State == "open" && p.HeadRepo == "" && p.HeadRef == head && p.BaseRef == body.Base {
			return invalid("Validation Failed: A pull request already exists for %s:%s.", rp.Owner, head)
		}
	}
	switch {
	case body.Title == "":
		return invalid("Validation Failed: title is required")
	case rp.branches[head] == "" || rp.branches[body.Base] == "":
		return invalid("Validation Failed: head %q and base %q must be branches of %s", body.Head, body.Base, rp.FullName())
	case rp.branches[head] == rp.branches[body.Base]:
		return invalid("Validation Failed: No commits between %s and %s", body.Base, head)
	}
	var changed []string
	for p, text := range st.files[head] {
		if base, ok := st.files[body.Base][p]; !ok || base != text {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	number, err := s.addPull(rp, PullRequestSpec{Title: body.Title, Author: c.who.Login, HeadRef: head,
		HeadSHA: rp.branches[head], BaseRef: body.Base, Draft: body.Draft, Files: changed})
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusCreated, s.pullJSON(c, rp, rp.pulls[number]))
	return nil
}

func (s *Server) putBranchProtection(c *call) error {
	rp, st, _, err := c.writeSetup()
	if err != nil {
		return err
	}
	if s.rulesOf(rp).unavailable == http.StatusForbidden {
		return forbidden(rulesetPlanMessage)
	}
	if rp.branches[c.r.PathValue("branch")] == "" {
		return notFound("Branch not found")
	}
	var body struct {
		Checks *struct {
			Strict   bool     `json:"strict"`
			Contexts []string `json:"contexts"`
			Checks   []struct {
				Context string `json:"context"`
				AppID   *int64 `json:"app_id"`
			} `json:"checks"`
		} `json:"required_status_checks"`
	}
	if err := c.decode(&body); err != nil {
		return err
	}
	checks := []RequiredCheck{}
	if body.Checks != nil {
		for _, ctx := range body.Checks.Contexts {
			checks = append(checks, RequiredCheck{Context: ctx})
		}
		for _, ch := range body.Checks.Checks {
			rc := RequiredCheck{Context: ch.Context}
			if ch.AppID != nil && *ch.AppID > 0 {
				rc.AppID = *ch.AppID
			}
			checks = append(checks, rc)
		}
	}
	st.protection[c.r.PathValue("branch")] = checks
	return s.getBranchProtection(c)
}

// AddInstallation installs a registered App (one CreateAppFromManifest
// made, or WithApp's) on an account, as the user's click on "Install" does.
func (s *Server) AddInstallation(inst Installation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[inst.AppID]; !ok {
		return notFound("app %d", inst.AppID)
	}
	if inst.ID <= 0 || inst.Account == "" {
		return invalid("installation: a positive ID and an Account are required")
	}
	if s.installations == nil {
		s.installations = map[int64]Installation{}
	}
	inst.Repositories = slices.Clone(inst.Repositories)
	s.installations[inst.ID] = inst
	return nil
}
