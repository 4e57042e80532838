package githubsim

import (
	"net/http"
	"strings"
	"time"
)

// A pull request's head history, as GitHub's GraphQL API shows it: the
// timeline's PullRequestCommit items (commits pushed onto the head branch) and
// HeadRefForcePushedEvent items (a force-push, with the commit before and after
// it). The REST timeline's head_ref_force_pushed event carries no SHAs (it is a
// plain state-change issue event), so GraphQL is the one source of a replaced
// head's SHA; the simulator answers exactly the query the lane sends:
//
//	query($owner: String!, $name: String!, $number: Int!, $last: Int!) {
//	  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
//	    timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT]) {
//	      nodes { __typename
//	        ... on HeadRefForcePushedEvent { createdAt beforeCommit { oid } afterCommit { oid } }
//	        ... on PullRequestCommit { commit { oid } } } } } } }
//
// with GitHub's GraphQL conventions: HTTP 200 for resolvable requests, with
// "errors" (type NOT_FOUND and a path) beside null data for what does not
// resolve; 100 is the most items one connection returns.

// headEvent is one push of a pull request's head.
type headEvent struct {
	force         bool
	before, after string // a force-push
	commit        string // a commit pushed onto the head branch
	at            time.Time
}

// ForcePushPullRequest changes a pull request like UpdatePullRequest, and records
// the new HeadSHA as a force-push from the old one (an amended commit, a rebase).
func (s *Server) ForcePushPullRequest(fullName string, number int, update func(*PullRequestSpec)) error {
	return s.updatePull(fullName, number, update, true)
}

// maxConnectionItems is GitHub's cap on first/last of a GraphQL connection.
const maxConnectionItems = 100

type graphqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

type graphqlError struct {
	Type    string   `json:"type,omitempty"`
	Path    []string `json:"path,omitempty"`
	Message string   `json:"message"`
}

type graphqlReply struct {
	Data   any            `json:"data"`
	Errors []graphqlError `json:"errors,omitempty"`
}

// graphql answers POST /graphql (GitHub Enterprise Server: /api/graphql).
func (s *Server) graphql(c *call) error {
	var req graphqlRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	q := strings.Join(strings.Fields(req.Query), " ")
	if !strings.Contains(q, "timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT])") {
		c.writeJSON(http.StatusOK, graphqlReply{Errors: []graphqlError{{Message: "the simulated GitHub answers only the pull request head-history query"}}})
		return nil
	}
	owner, _ := req.Variables["owner"].(string)
	name, _ := req.Variables["name"].(string)
	number, okN := req.Variables["number"].(float64)
	last, okL := req.Variables["last"].(float64)
	if !okN || !okL || last < 1 || last > maxConnectionItems {
		c.writeJSON(http.StatusOK, graphqlReply{Errors: []graphqlError{{Type: "INVALID_ARGUMENTS",
			Message: "Variables number and last are required; `last` must be between 1 and 100."}}})
		return nil
	}
	rp, ok := s.repos[repoKey(owner, name)]
	if !ok || c.inScope(rp) != nil {
		c.writeJSON(http.StatusOK, graphqlReply{Data: map[string]any{"repository": nil}, Errors: []graphqlError{{Type: "NOT_FOUND",
			Path: []string{"repository"}, Message: "Could not resolve to a Repository with the name '" + owner + "/" + name + "'."}}})
		return nil
	}
	p, ok := rp.pulls[int(number)]
	if !ok {
		c.writeJSON(http.StatusOK, graphqlReply{Data: map[string]any{"repository": map[string]any{"pullRequest": nil}}, Errors: []graphqlError{{
			Type: "NOT_FOUND", Path: []string{"repository", "pullRequest"},
			Message: "Could not resolve to a PullRequest with the number of " + itoa(int64(number)) + "."}}})
		return nil
	}
	items := p.timeline[max(0, len(p.timeline)-int(last)):]
	nodes := make([]map[string]any, 0, len(items))
	for _, ev := range items {
		nodes = append(nodes, s.timelineNode(ev))
	}
	c.writeJSON(http.StatusOK, graphqlReply{Data: map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
		"timelineItems": map[string]any{"nodes": nodes}}}}})
	return nil
}

func (s *Server) timelineNode(ev headEvent) map[string]any {
	oid := func(sha string) any {
		if sha == "" {
			return nil // a force-push's before or after commit GitHub no longer has is null
		}
		return map[string]any{"oid": sha}
	}
	if ev.force {
		return map[string]any{"__typename": "HeadRefForcePushedEvent", "createdAt": stamp(ev.at),
			"beforeCommit": oid(ev.before), "afterCommit": oid(ev.after)}
	}
	return map[string]any{"__typename": "PullRequestCommit", "commit": oid(ev.commit)}
}
