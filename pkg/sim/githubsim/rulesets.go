package githubsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Repository rulesets (GitHub's "Rules" API): named sets of rules, such as
// required status checks or a merge queue, enforced on the branches their
// ref_name conditions match. A repository without them (a private one on
// the Free plan, an older GitHub Enterprise Server) answers the rulesets
// endpoints with 403 or 404; see SetRulesetsUnavailable.

// Ruleset is a repository ruleset as its settings page makes it.
type Ruleset struct {
	// ID is given by the server; SetRuleset with a known ID replaces that ruleset.
	ID   int64
	Name string
	// Target is branch (the default), tag or push.
	Target string
	// Enforcement is active (the default), evaluate or disabled; only active
	// rulesets bind a branch.
	Enforcement string
	// Include and Exclude are conditions.ref_name's patterns: "~DEFAULT_BRANCH",
	// "~ALL", or fnmatch patterns on full refs such as "refs/heads/release/*".
	Include, Exclude []string
	Rules            []RulesetRule
	// BypassActors may merge a pull request (bypass mode pull_request) or
	// push (always) past the rules.
	BypassActors []BypassActor
}

// BypassActor is one of a ruleset's bypass_actors: a repository role
// (actor_type RepositoryRole; ActorID 5 admin, 2 maintain, 4 write), an
// Integration (an App id) or OrganizationAdmin, with its bypass_mode.
type BypassActor struct {
	ActorID    int64
	ActorType  string
	BypassMode string
}

// repositoryRoleIDs are GitHub's actor ids of the built-in repository roles
// in bypass_actors.
var repositoryRoleIDs = map[int64]string{5: "admin", 2: "maintain", 4: "write"}

// bypassMode says how login (or the App appID) may bypass the ruleset on
// rp: "always", "pull_request" or "" (never).
func (rs *Ruleset) bypassMode(rp *repo, login string, appID int64) string {
	best := ""
	for _, a := range rs.BypassActors {
		ok := false
		switch a.ActorType {
		case "RepositoryRole":
			ok = appID == 0 && repositoryRoleIDs[a.ActorID] != "" && roleAtLeast(rp, login, repositoryRoleIDs[a.ActorID])
		case "Integration":
			ok = appID != 0 && a.ActorID == appID
		case "OrganizationAdmin":
			ok = appID == 0 && roleAtLeast(rp, login, "admin")
		}
		if ok && (best == "" || a.BypassMode == "always") {
			best = a.BypassMode
		}
	}
	return best
}

// roleRank orders the built-in roles a bypass actor names.
var roleRank = map[string]int{"write": 1, "maintain": 2, "admin": 3}

// roleAtLeast says whether login's role on rp is want or above; the
// repository's owner is its admin.
func roleAtLeast(rp *repo, login, want string) bool {
	if strings.EqualFold(login, rp.Owner) {
		return true
	}
	return roleRank[rp.permissionOf(login).name] >= roleRank[want]
}

// RulesetRule is one rule of a ruleset: its type and GitHub's parameters
// object for that type (nil for rules without parameters, such as deletion).
type RulesetRule struct {
	Type       string
	Parameters json.RawMessage
}

// RequiredChecksRule is a required_status_checks rule requiring checks; an
// AppID binds a check to that App (integration_id), 0 to any source.
func RequiredChecksRule(checks ...RequiredCheck) RulesetRule {
	list := []map[string]any{}
	for _, ch := range checks {
		entry := map[string]any{"context": ch.Context}
		if ch.AppID != 0 {
			entry["integration_id"] = ch.AppID
		}
		list = append(list, entry)
	}
	params, _ := json.Marshal(map[string]any{
		"required_status_checks": list, "strict_required_status_checks_policy": false,
		"do_not_enforce_on_create": false,
	})
	return RulesetRule{Type: "required_status_checks", Parameters: params}
}

// MergeQueueRule is a merge_queue rule with GitHub's default settings: the
// repository merges through a queue whose groups run on
// gh-readonly-queue/<base>/* branches.
func MergeQueueRule() RulesetRule {
	params, _ := json.Marshal(map[string]any{
		"check_response_timeout_minutes": 60, "grouping_strategy": "ALLGREEN",
		"max_entries_to_build": 5, "max_entries_to_merge": 5, "merge_method": "MERGE",
		"min_entries_to_merge": 1, "min_entries_to_merge_wait_minutes": 5,
	})
	return RulesetRule{Type: "merge_queue", Parameters: params}
}

// rulesetPlanMessage is GitHub's answer where the plan has no rulesets.
const rulesetPlanMessage = "Upgrade to GitHub Pro or make this repository public to enable this feature."

// repoRules is one repository's rulesets.
type repoRules struct {
	rulesets []*Ruleset
	// unavailable is the status the rulesets endpoints answer (403 or 404); 0: available.
	unavailable int
}

// rulesOf returns a repository's rulesets, made on first use.
func (s *Server) rulesOf(rp *repo) *repoRules {
	return perRepo(&s.rulesets, rp, func() *repoRules { return &repoRules{} })
}

// SetRuleset adds a ruleset to a repository (rs.ID 0) or replaces the one
// with rs.ID, and returns its id. A ruleset GitHub would refuse is an error.
func (s *Server) SetRuleset(fullName string, rs Ruleset) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	rr := s.rulesOf(rp)
	rs = rs.normalized()
	if err := rs.validate(rr); err != nil {
		return 0, err
	}
	if rs.ID == 0 {
		rs.ID = s.nextID()
		rr.rulesets = append(rr.rulesets, &rs)
		return rs.ID, nil
	}
	for i, old := range rr.rulesets {
		if old.ID == rs.ID {
			rr.rulesets[i] = &rs
			return rs.ID, nil
		}
	}
	return 0, notFound("ruleset %d", rs.ID)
}

// Rulesets returns a repository's rulesets, oldest first.
func (s *Server) Rulesets(fullName string) ([]Ruleset, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	var out []Ruleset
	for _, rs := range s.rulesOf(rp).rulesets {
		out = append(out, rs.clone())
	}
	return out, nil
}

// SetRulesetsUnavailable makes the repository's rulesets endpoints answer
// status: 403 as for a private repository on the Free plan, 404 as on a
// GitHub Enterprise Server without rulesets; 0 makes them available again.
func (s *Server) SetRulesetsUnavailable(fullName string, status int) error {
	if status != 0 && status != http.StatusForbidden && status != http.StatusNotFound {
		return invalid("rulesets unavailable: status %d, want 0, 403 or 404", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	s.rulesOf(rp).unavailable = status
	return nil
}

func (rs Ruleset) normalized() Ruleset {
	if rs.Target == "" {
		rs.Target = "branch"
	}
	if rs.Enforcement == "" {
		rs.Enforcement = "active"
	}
	return rs.clone()
}

func (rs Ruleset) clone() Ruleset {
	rs.Include, rs.Exclude = slices.Clone(rs.Include), slices.Clone(rs.Exclude)
	rules := make([]RulesetRule, len(rs.Rules))
	for i, r := range rs.Rules {
		rules[i] = RulesetRule{Type: r.Type, Parameters: slices.Clone(r.Parameters)}
	}
	rs.Rules = rules
	rs.BypassActors = slices.Clone(rs.BypassActors)
	return rs
}

// rulesWithParameters are the rule types whose parameters GitHub requires.
var rulesWithParameters = map[string]bool{
	"required_status_checks": true, "pull_request": true, "required_deployments": true,
	"commit_message_pattern": true, "commit_author_email_pattern": true, "committer_email_pattern": true,
	"branch_name_pattern": true, "tag_name_pattern": true, "workflows": true, "code_scanning": true,
}

// validate refuses what GitHub refuses, naming the field.
func (rs Ruleset) validate(rr *repoRules) error {
	switch {
	case strings.TrimSpace(rs.Name) == "":
		return invalid("Invalid request.\n\nNo subschema in \"anyOf\" matched: name is required.")
	case !slices.Contains([]string{"branch", "tag", "push"}, rs.Target):
		return invalid("Invalid property /target: %q is not a possible value. Must be one of: branch, tag, push.", rs.Target)
	case !slices.Contains([]string{"active", "evaluate", "disabled"}, rs.Enforcement):
		return invalid("Invalid property /enforcement: %q is not a possible value. Must be one of: disabled, active, evaluate.", rs.Enforcement)
	}
	for _, other := range rr.rulesets {
		if other.ID != rs.ID && strings.EqualFold(other.Name, rs.Name) {
			return invalid("Validation Failed: Name must be unique")
		}
	}
	for i, a := range rs.BypassActors {
		switch {
		case !slices.Contains([]string{"RepositoryRole", "Team", "Integration", "OrganizationAdmin", "DeployKey"}, a.ActorType):
			return invalid("Invalid property /bypass_actors/%d/actor_type: %q is not a possible value. Must be one of: RepositoryRole, Team, Integration, OrganizationAdmin, DeployKey.", i, a.ActorType)
		case !slices.Contains([]string{"always", "pull_request"}, a.BypassMode):
			return invalid("Invalid property /bypass_actors/%d/bypass_mode: %q is not a possible value. Must be one of: always, pull_request.", i, a.BypassMode)
		case a.ActorType == "RepositoryRole" && repositoryRoleIDs[a.ActorID] == "":
			return invalid("Invalid property /bypass_actors/%d/actor_id: %d is not a repository role", i, a.ActorID)
		}
	}
	for i, r := range rs.Rules {
		if r.Type == "" {
			return invalid("Invalid property /rules/%d: type is required", i)
		}
		if rulesWithParameters[r.Type] && len(r.Parameters) == 0 {
			return invalid("Invalid property /rules/%d: parameters are required for %s", i, r.Type)
		}
		if len(r.Parameters) > 0 && !json.Valid(r.Parameters) {
			return invalid("Invalid property /rules/%d/parameters: not JSON", i)
		}
		if r.Type == "required_status_checks" {
			var p struct {
				Checks []struct {
					Context string `json:"context"`
				} `json:"required_status_checks"`
			}
			if err := json.Unmarshal(r.Parameters, &p); err != nil || p.Checks == nil {
				return invalid("Invalid property /rules/%d/parameters: required_status_checks is required", i)
			}
			for _, ch := range p.Checks {
				if ch.Context == "" {
					return invalid("Invalid property /rules/%d/parameters/required_status_checks: context is required", i)
				}
			}
		}
	}
	return nil
}

// appliesTo says whether the ruleset's conditions match the branch.
func (rs *Ruleset) appliesTo(branch, defaultBranch string) bool {
	if rs.Target != "branch" {
		return false
	}
	matches := func(patterns []string) bool {
		for _, p := range patterns {
			switch {
			case p == "~ALL", p == "~DEFAULT_BRANCH" && branch == defaultBranch:
				return true
			case refPatternMatch(p, "refs/heads/"+branch):
				return true
			}
		}
		return false
	}
	return matches(rs.Include) && !matches(rs.Exclude)
}

// refPatternMatch is GitHub's fnmatch on refs: "*" matches within one path
// segment, "**" across segments, "?" one character.
func refPatternMatch(pattern, ref string) bool {
	if pattern == "" {
		return ref == ""
	}
	switch {
	case strings.HasPrefix(pattern, "**"):
		rest := pattern[2:]
		for i := 0; i <= len(ref); i++ {
			if refPatternMatch(rest, ref[i:]) {
				return true
			}
		}
		return false
	case pattern[0] == '*':
		rest := pattern[1:]
		for i := 0; i <= len(ref); i++ {
			if refPatternMatch(rest, ref[i:]) {
				return true
			}
			if i < len(ref) && ref[i] == '/' {
				return false
			}
		}
		return false
	case ref == "":
		return false
	case pattern[0] == '?' && ref[0] != '/', pattern[0] == ref[0]:
		return refPatternMatch(pattern[1:], ref[1:])
	}
	return false
}

func (s *Server) rulesetRoutes() {
	s.handle("GET /repos/{owner}/{repo}/rulesets", authToken, s.listRulesets)
	s.handle("POST /repos/{owner}/{repo}/rulesets", authToken, s.createRuleset)
	s.handle("GET /repos/{owner}/{repo}/rulesets/{ruleset_id}", authToken, s.getRuleset)
	s.handle("PUT /repos/{owner}/{repo}/rulesets/{ruleset_id}", authToken, s.updateRuleset)
	s.handle("GET /repos/{owner}/{repo}/rules/branches/{branch...}", authToken, s.getRulesForBranch)
}

// rules finds the repository a path names and its rulesets, refusing as
// GitHub does where rulesets are unavailable.
func (c *call) rules() (*repo, *repoRules, error) {
	rp, err := c.repo()
	if err != nil {
		return nil, nil, err
	}
	rr := c.s.rulesOf(rp)
	switch rr.unavailable {
	case http.StatusForbidden:
		return nil, nil, forbidden(rulesetPlanMessage)
	case http.StatusNotFound:
		return nil, nil, notFound("rulesets of %s", rp.FullName())
	}
	return rp, rr, nil
}

// rulesetJSON is a ruleset as GitHub answers it; full adds conditions and rules.
func (c *call) rulesetJSON(rp *repo, rs *Ruleset, full bool) map[string]any {
	url := c.repoAPIURL(rp) + "/rulesets/" + itoa(rs.ID)
	out := map[string]any{
		"id": rs.ID, "name": rs.Name, "target": rs.Target, "source_type": "Repository",
		"source": rp.FullName(), "enforcement": rs.Enforcement, "node_id": nodeID("RRS", rs.ID),
		"_links": map[string]any{
			"self": map[string]string{"href": url},
			"html": map[string]string{"href": c.s.webURL + "/" + rp.FullName() + "/rules/" + itoa(rs.ID)},
		},
		"created_at": stamp(c.now), "updated_at": stamp(c.now),
	}
	if full {
		include, exclude := rs.Include, rs.Exclude
		if include == nil {
			include = []string{}
		}
		if exclude == nil {
			exclude = []string{}
		}
		out["conditions"] = map[string]any{"ref_name": map[string]any{"include": include, "exclude": exclude}}
		out["rules"] = rulesJSON(rs.Rules, nil)
		actors := []map[string]any{}
		for _, a := range rs.BypassActors {
			actors = append(actors, map[string]any{"actor_id": a.ActorID, "actor_type": a.ActorType, "bypass_mode": a.BypassMode})
		}
		out["bypass_actors"] = actors
		can := map[string]string{"": "never", "pull_request": "pull_requests_only", "always": "always"}
		out["current_user_can_bypass"] = can[rs.bypassMode(rp, c.who.Login, c.who.AppID)]
	}
	return out
}

// rulesJSON is rules as GitHub lists them; extra adds fields to each.
func rulesJSON(rules []RulesetRule, extra map[string]any) []map[string]any {
	list := []map[string]any{}
	for _, r := range rules {
		entry := map[string]any{"type": r.Type}
		if len(r.Parameters) > 0 {
			entry["parameters"] = json.RawMessage(r.Parameters)
		}
		for k, v := range extra {
			entry[k] = v
		}
		list = append(list, entry)
	}
	return list
}

func (s *Server) listRulesets(c *call) error {
	rp, rr, err := c.rules()
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, rs := range rr.rulesets {
		list = append(list, c.rulesetJSON(rp, rs, false))
	}
	c.writeJSON(http.StatusOK, list)
	return nil
}

// ruleset finds the ruleset the path names.
func (c *call) ruleset(rr *repoRules) (*Ruleset, error) {
	id, err := pathInt(c, "ruleset_id")
	if err != nil {
		return nil, err
	}
	for _, rs := range rr.rulesets {
		if rs.ID == id {
			return rs, nil
		}
	}
	return nil, notFound("ruleset %d", id)
}

func (s *Server) getRuleset(c *call) error {
	rp, rr, err := c.rules()
	if err != nil {
		return err
	}
	rs, err := c.ruleset(rr)
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, c.rulesetJSON(rp, rs, true))
	return nil
}

// rulesetBody is a create or update request; absent fields keep their value on update.
type rulesetBody struct {
	Name        *string `json:"name"`
	Target      *string `json:"target"`
	Enforcement *string `json:"enforcement"`
	Conditions  *struct {
		RefName *struct {
			Include []string `json:"include"`
			Exclude []string `json:"exclude"`
		} `json:"ref_name"`
	} `json:"conditions"`
	Rules *[]struct {
		Type       string          `json:"type"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"rules"`
	BypassActors *[]struct {
		ActorID    int64  `json:"actor_id"`
		ActorType  string `json:"actor_type"`
		BypassMode string `json:"bypass_mode"`
	} `json:"bypass_actors"`
}

// apply sets the body's fields on rs.
func (b rulesetBody) apply(rs *Ruleset) {
	if b.Name != nil {
		rs.Name = *b.Name
	}
	if b.Target != nil {
		rs.Target = *b.Target
	}
	if b.Enforcement != nil {
		rs.Enforcement = *b.Enforcement
	}
	if b.Conditions != nil && b.Conditions.RefName != nil {
		rs.Include, rs.Exclude = b.Conditions.RefName.Include, b.Conditions.RefName.Exclude
	}
	if b.Rules != nil {
		rs.Rules = nil
		for _, r := range *b.Rules {
			params := r.Parameters
			if string(params) == "null" {
				params = nil
			}
			rs.Rules = append(rs.Rules, RulesetRule{Type: r.Type, Parameters: params})
		}
	}
	if b.BypassActors != nil {
		rs.BypassActors = nil
		for _, a := range *b.BypassActors {
			mode := a.BypassMode
			if mode == "" {
				mode = "always" // GitHub's default
			}
			rs.BypassActors = append(rs.BypassActors, BypassActor{ActorID: a.ActorID, ActorType: a.ActorType, BypassMode: mode})
		}
	}
}

// adminOnly refuses App tokens without administration permission, classic
// tokens without the repo scope and anyone but an administrator, as GitHub
// does for every settings write.
func (c *call) adminOnly(rp *repo) error {
	if err := c.needScope("repo"); err != nil {
		return err
	}
	if c.who.AppID != 0 {
		inst, ok := c.s.installationFor(c.who.AppID, rp.Owner, rp.Name)
		if !ok || inst.permissions()["administration"] != "write" {
			return forbidden("Resource not accessible by integration")
		}
		return nil
	}
	if r, ok := rp.roles[strings.ToLower(c.who.Login)]; ok && r.permission != "admin" {
		return forbidden("Must have admin rights to Repository.")
	}
	return nil
}

// writeRules is a ruleset write's repository and rulesets, after the caller's
// admin rights (and a classic token's "repo" scope) are checked.
func (c *call) writeRules() (*repo, *repoRules, error) {
	rp, rr, err := c.rules()
	if err != nil {
		return nil, nil, err
	}
	return rp, rr, c.adminOnly(rp)
}

func (s *Server) createRuleset(c *call) error {
	rp, rr, err := c.writeRules()
	if err != nil {
		return err
	}
	var body rulesetBody
	if err := c.decode(&body); err != nil {
		return err
	}
	var rs Ruleset
	body.apply(&rs)
	rs = rs.normalized()
	if err := rs.validate(rr); err != nil {
		return err
	}
	rs.ID = s.nextID()
	rr.rulesets = append(rr.rulesets, &rs)
	c.writeJSON(http.StatusCreated, c.rulesetJSON(rp, &rs, true))
	return nil
}

func (s *Server) updateRuleset(c *call) error {
	rp, rr, err := c.writeRules()
	if err != nil {
		return err
	}
	old, err := c.ruleset(rr)
	if err != nil {
		return err
	}
	var body rulesetBody
	if err := c.decode(&body); err != nil {
		return err
	}
	rs := old.clone()
	body.apply(&rs)
	rs = rs.normalized()
	if err := rs.validate(rr); err != nil {
		return err
	}
	*old = rs
	c.writeJSON(http.StatusOK, c.rulesetJSON(rp, old, true))
	return nil
}

// getRulesForBranch answers the rules of every active ruleset that applies
// to the branch, each with the ruleset it comes from.
func (s *Server) getRulesForBranch(c *call) error {
	rp, rr, err := c.rules()
	if err != nil {
		return err
	}
	branch := c.r.PathValue("branch")
	list := []map[string]any{}
	for _, rs := range rr.rulesets {
		if rs.Enforcement != "active" || !rs.appliesTo(branch, rp.DefaultBranch) {
			continue
		}
		list = append(list, rulesJSON(rs.Rules, map[string]any{
			"ruleset_source_type": "Repository", "ruleset_source": rp.FullName(), "ruleset_id": rs.ID,
		})...)
	}
	c.writeJSON(http.StatusOK, list)
	return nil
}
