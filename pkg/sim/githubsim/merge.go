package githubsim

import (
	"crypto/sha1" //nolint:gosec // a commit id, as git's
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Merging a pull request (PUT /repos/{o}/{r}/pulls/{n}/merge) as GitHub's
// merge button does: the head branch's files move to the base branch, and
// the base branch's required checks (active rulesets and classic branch
// protection) are enforced first. A ruleset's bypass actor in pull_request
// or always mode merges past it; classic protection lets administrators
// through, as its default (enforce_admins off) does.

// mergeMethods are the merge_method values GitHub accepts.
var mergeMethods = map[string]bool{"merge": true, "squash": true, "rebase": true}

func (s *Server) mergeRoutes() {
	s.handle("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", authToken, s.mergePullRequest)
}

// notMergeable is GitHub's 405 for a pull request that cannot be merged.
func notMergeable(format string, args ...any) *Error {
	return newError(http.StatusMethodNotAllowed, ErrConflict, format, args...)
}

func (s *Server) mergePullRequest(c *call) error {
	rp, _, p, err := c.pull()
	if err != nil {
		return err
	}
	if err := c.needScope("repo"); err != nil {
		return err
	}
	if c.who.AppID == 0 && !roleAtLeast(rp, c.who.Login, "write") {
		return forbidden("Must have push access to merge pull requests.")
	}
	if c.who.AppID != 0 {
		inst, ok := c.s.installationFor(c.who.AppID, rp.Owner, rp.Name)
		if !ok || inst.permissions()["contents"] != "write" {
			return forbidden("Resource not accessible by integration")
		}
	}
	var body struct {
		CommitTitle string `json:"commit_title"`
		SHA         string `json:"sha"`
		MergeMethod string `json:"merge_method"`
	}
	if len(c.body) > 0 {
		if err := c.decode(&body); err != nil {
			return err
		}
	}
	if body.MergeMethod == "" {
		body.MergeMethod = "merge"
	}
	switch {
	case !mergeMethods[body.MergeMethod]:
		return invalid("Invalid property /merge_method: %q is not a possible value. Must be one of: merge, squash, rebase.", body.MergeMethod)
	case p.State != "open" || p.Merged:
		return notMergeable("Pull Request is not mergeable")
	case p.HeadRepo != "":
		return notMergeable("Pull Request is not mergeable: this simulation merges branches of the same repository only")
	case body.SHA != "" && body.SHA != p.HeadSHA:
		return conflict("Head branch was modified. Review and try the merge again.")
	}
	if err := s.enforceRequiredChecks(rp, p, c.who); err != nil {
		return err
	}
	st := s.setupOf(rp)
	if st.files[p.BaseRef] == nil {
		st.files[p.BaseRef] = map[string]string{}
	}
	for path, text := range st.files[p.HeadRef] {
		st.files[p.BaseRef][path] = text
	}
	sum := sha1.Sum([]byte(rp.branches[p.BaseRef] + "\x00" + p.HeadSHA + "\x00merge")) //nolint:gosec // a commit id
	merged := hex.EncodeToString(sum[:])
	rp.branches[p.BaseRef] = merged
	p.State, p.Merged, p.MergeCommitSHA = "closed", true, merged
	s.touchPull(rp, p, c.now)
	c.writeJSON(http.StatusOK, map[string]any{"sha": merged, "merged": true, "message": "Pull Request successfully merged"})
	return nil
}

// enforceRequiredChecks refuses the merge, as GitHub's 405, while a check
// the base branch requires has not succeeded on the pull request's head,
// unless who may bypass the rule that requires it.
func (s *Server) enforceRequiredChecks(rp *repo, p *pull, who Identity) error {
	var missing []string
	viaRuleset := false
	if rr := s.rulesOf(rp); rr.unavailable == 0 {
		for _, rs := range rr.rulesets {
			if rs.Enforcement != "active" || !rs.appliesTo(p.BaseRef, rp.DefaultBranch) || rs.bypassMode(rp, who.Login, who.AppID) != "" {
				continue
			}
			for _, r := range rs.Rules {
				switch r.Type {
				case "merge_queue":
					return notMergeable("Repository rule violations found\n\nChanges must be made through the merge queue.")
				case "required_status_checks":
					var params struct {
						Checks []struct {
							Context       string `json:"context"`
							IntegrationID int64  `json:"integration_id"`
						} `json:"required_status_checks"`
					}
					_ = json.Unmarshal(r.Parameters, &params)
					for _, ch := range params.Checks {
						if !s.checkPassed(rp, p.HeadSHA, RequiredCheck{Context: ch.Context, AppID: ch.IntegrationID}) {
							missing, viaRuleset = append(missing, ch.Context), true
						}
					}
				}
			}
		}
	}
	if !(who.AppID == 0 && roleAtLeast(rp, who.Login, "admin")) {
		for _, ch := range s.setupOf(rp).protection[p.BaseRef] {
			if !s.checkPassed(rp, p.HeadSHA, ch) {
				missing = append(missing, ch.Context)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	var lines []string
	for _, m := range missing {
		lines = append(lines, fmt.Sprintf("Required status check %q is expected.", m))
	}
	if viaRuleset {
		return notMergeable("Repository rule violations found\n\n%s", strings.Join(lines, "\n"))
	}
	return notMergeable("%s", strings.Join(lines, "\n"))
}

// checkPassed says whether the check's latest run on sha (from its App, when
// bound to one) completed as success, neutral or skipped.
func (s *Server) checkPassed(rp *repo, sha string, want RequiredCheck) bool {
	var latest *checkRun
	for _, cr := range s.checkRuns {
		if !strings.EqualFold(cr.Repo, rp.FullName()) || cr.HeadSHA != sha || cr.Name != want.Context {
			continue
		}
		if want.AppID != 0 && cr.AppID != want.AppID {
			continue
		}
		if latest == nil || cr.ID > latest.ID {
			latest = cr
		}
	}
	if latest == nil || latest.Status != "completed" {
		return false
	}
	switch latest.Conclusion {
	case "success", "neutral", "skipped":
		return true
	}
	return false
}
