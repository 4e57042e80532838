package ghapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The rules of a branch are read page by page, each rule decoded by its
// type: a required_status_checks rule's checks with their integration_id,
// any other rule (a merge queue, one newer than go-github, one without
// parameters) kept by its type; a 404 matches ErrNotFound.
func TestActiveBranchRules(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/rules/branches/main?per_page=100&page=1", withNextPage(2, 2, respond(http.StatusOK, `[
		{"type":"required_status_checks","ruleset_source_type":"Organization","ruleset_source":"acme","ruleset_id":7,
		 "parameters":{"required_status_checks":[{"context":"CI GPU gate","integration_id":901},{"context":"lint"}],"strict_required_status_checks_policy":false}},
		{"type":"deletion","ruleset_source_type":"Repository","ruleset_source":"acme/widgets","ruleset_id":8}]`)))
	env.fake.on("GET", "repos/acme/widgets/rules/branches/main?per_page=100&page=2", respond(http.StatusOK, `[
		{"type":"merge_queue","ruleset_source_type":"Repository","ruleset_source":"acme/widgets","ruleset_id":8,"parameters":{"merge_method":"MERGE"}},
		{"type":"required_deployments","ruleset_id":8},
		{"type":"a_rule_of_next_year","ruleset_id":8,"parameters":{"x":1}}]`))
	rules, err := env.client.ActiveBranchRules(context.Background(), "main")
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rules, 5))
	checks := rules[0].RequiredStatusChecks()
	assert.Assert(t, is.Len(checks, 2))
	assert.Check(t, is.Equal(checks[0].Context, "CI GPU gate"))
	assert.Check(t, is.Equal(*checks[0].IntegrationID, int64(901)))
	assert.Check(t, checks[1].IntegrationID == nil, "any source")
	assert.Check(t, is.Equal(rules[0].RulesetSource, "acme"))
	assert.Check(t, is.Equal(rules[2].Type, "merge_queue"))
	for _, r := range rules[1:] {
		assert.Check(t, r.RequiredStatusChecks() == nil, r.Type)
	}

	env.fake.on("GET", "repos/acme/widgets/rules/branches/gone?per_page=100&page=1", respond(http.StatusNotFound, `{"message":"Not Found"}`))
	_, err = env.client.ActiveBranchRules(context.Background(), "gone")
	assert.Check(t, is.ErrorIs(err, ErrNotFound))
}

// Whatever a rule's parameters hold, reading its checks never panics.
func FuzzBranchRuleRequiredStatusChecks(f *testing.F) {
	f.Add([]byte(`{"required_status_checks":[{"context":"CI GPU gate","integration_id":901}]}`))
	f.Add([]byte(`{"required_status_checks":null}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"required_status_checks":[{"context":7}]}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		rule := BranchRule{Type: "required_status_checks", Parameters: json.RawMessage(params)}
		for _, c := range rule.RequiredStatusChecks() {
			_ = c.Context
		}
	})
}
