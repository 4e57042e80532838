package ghapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/google/go-github/v66/github"
)

// BranchRule is one rule a ruleset applies to a branch, as
// GET /repos/{owner}/{repo}/rules/branches/{branch} lists it: the rules of
// every active ruleset, the repository's own and its organization's.
type BranchRule struct {
	// Type is the rule's type: required_status_checks, merge_queue, pull_request, …
	Type string `json:"type"`
	// Parameters are the rule's parameters, decoded by the caller per Type.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// RulesetSourceType is Repository or Organization; RulesetSource names it.
	RulesetSourceType string `json:"ruleset_source_type"`
	RulesetSource     string `json:"ruleset_source"`
	RulesetID         int64  `json:"ruleset_id"`
}

// RequiredStatusCheck is a check a required_status_checks rule requires,
// bound to the App IntegrationID (nil: any source).
type RequiredStatusCheck struct {
	Context       string `json:"context"`
	IntegrationID *int64 `json:"integration_id,omitempty"`
}

// RequiredStatusChecks decodes a required_status_checks rule's checks; nil
// for any other rule or parameters that do not decode.
func (r BranchRule) RequiredStatusChecks() []RequiredStatusCheck {
	if r.Type != "required_status_checks" || len(r.Parameters) == 0 {
		return nil
	}
	var p struct {
		RequiredStatusChecks []RequiredStatusCheck `json:"required_status_checks"`
	}
	if json.Unmarshal(r.Parameters, &p) != nil {
		return nil
	}
	return p.RequiredStatusChecks
}

// branchRulesPages bounds the rules listing (100 a page).
const branchRulesPages = 5

// ActiveBranchRules lists the rules active rulesets apply to branch. It
// decodes them itself: go-github's decoding dereferences absent parameters
// and knows only the rule types of its release.
func (c *Client) ActiveBranchRules(ctx context.Context, branch string) ([]BranchRule, error) {
	op := fmt.Sprintf("read the rules of %s", branch)
	return listPages(c, op, branchRulesPages, func(page int) ([]BranchRule, *github.Response, error) {
		req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/rules/branches/%s?per_page=100&page=%d",
			c.owner, c.repo, url.PathEscape(branch), page), nil)
		if err != nil {
			return nil, nil, err
		}
		var out []BranchRule
		resp, err := c.gh.Do(ctx, req, &out)
		return out, resp, err
	})
}

// BypassActor is one of a ruleset's bypass_actors: who may bypass it
// (ActorType RepositoryRole, Team, Integration, OrganizationAdmin or
// DeployKey, with its ActorID) and how (BypassMode always or pull_request).
type BypassActor struct {
	ActorID    int64  `json:"actor_id"`
	ActorType  string `json:"actor_type"`
	BypassMode string `json:"bypass_mode"`
}

// RulesetBypassActors reads the bypass list of the repository's ruleset id.
// It decodes only that list, as ActiveBranchRules decodes rules itself.
func (c *Client) RulesetBypassActors(ctx context.Context, id int64) ([]BypassActor, error) {
	op := fmt.Sprintf("read the ruleset %d", id)
	req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/rulesets/%d", c.owner, c.repo, id), nil)
	if err != nil {
		return nil, c.fail(op, err, nil)
	}
	var out struct {
		BypassActors []BypassActor `json:"bypass_actors"`
	}
	_, err = c.gh.Do(ctx, req, &out)
	return out.BypassActors, c.fail(op, err, nil)
}
