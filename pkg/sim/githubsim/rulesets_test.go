package githubsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A ruleset made through the API reads back as GitHub answers it: the list
// without rules, the ruleset with its conditions and rules, an update that
// keeps what it does not name, and the rules binding a branch from active
// rulesets only, each naming its ruleset.
func TestRulesetsReadBackAsGitHubAnswers(t *testing.T) {
	f := newFixture(t)
	c := f.client(userToken)
	gate := github.NewRequiredStatusChecksRule(&github.RequiredStatusChecksRuleParameters{
		RequiredStatusChecks: []github.RuleRequiredStatusChecks{{Context: "CI GPU gate", IntegrationID: github.Int64(gateAppID)}},
	})
	created, resp, err := c.Repositories.CreateRuleset(ctx, "octo", "gpu-lib", &github.Ruleset{
		Name: "runpod-gpu gate", Target: github.String("branch"), Enforcement: "active",
		Conditions: &github.RulesetConditions{RefName: &github.RulesetRefConditionParameters{Include: []string{"~DEFAULT_BRANCH"}, Exclude: []string{}}},
		Rules:      []*github.RepositoryRule{gate},
	})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(resp.StatusCode, http.StatusCreated))
	assert.Check(t, created.GetID() != 0)
	assert.Check(t, is.Equal(created.GetSourceType(), "Repository"))

	queueID, err := f.srv.SetRuleset(repoName, Ruleset{Name: "queue", Include: []string{"refs/heads/main"}, Rules: []RulesetRule{MergeQueueRule()}})
	assert.NilError(t, err)
	_, err = f.srv.SetRuleset(repoName, Ruleset{Name: "trial", Enforcement: "evaluate", Include: []string{"~ALL"}, Rules: []RulesetRule{{Type: "deletion"}}})
	assert.NilError(t, err)
	_, err = f.srv.SetRuleset(repoName, Ruleset{Name: "releases", Include: []string{"refs/heads/release/*"}, Exclude: []string{"refs/heads/release/old"}, Rules: []RulesetRule{{Type: "non_fast_forward"}}})
	assert.NilError(t, err)

	all, _, err := c.Repositories.GetAllRulesets(ctx, "octo", "gpu-lib", false)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(all, 4))
	assert.Check(t, is.Equal(all[0].Name, "runpod-gpu gate"))
	assert.Check(t, all[0].Rules == nil && all[0].Conditions == nil, "the list has no rules or conditions")

	got, _, err := c.Repositories.GetRuleset(ctx, "octo", "gpu-lib", created.GetID(), false)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got.Conditions.RefName.Include, []string{"~DEFAULT_BRANCH"}))
	var params github.RequiredStatusChecksRuleParameters
	assert.NilError(t, json.Unmarshal(*got.Rules[0].Parameters, &params))
	assert.Check(t, is.Equal(params.RequiredStatusChecks[0].Context, "CI GPU gate"))
	assert.Check(t, is.Equal(*params.RequiredStatusChecks[0].IntegrationID, gateAppID))

	updated, _, err := c.Repositories.UpdateRuleset(ctx, "octo", "gpu-lib", created.GetID(), &github.Ruleset{Name: "gate", Enforcement: "active"})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(updated.Name, "gate"))
	assert.Check(t, is.Len(updated.Rules, 1), "rules not named in the update are kept")

	for _, tc := range []struct {
		branch    string
		wantTypes []string
		wantIDs   []int64
	}{
		{"main", []string{"required_status_checks", "merge_queue"}, []int64{created.GetID(), queueID}},
		{"release/2", []string{"non_fast_forward"}, nil},
		{"release/old", nil, nil},
		{"release/2/x", nil, nil},
		{"feature", nil, nil},
	} {
		rules, _, err := c.Repositories.GetRulesForBranch(ctx, "octo", "gpu-lib", tc.branch)
		assert.NilError(t, err)
		var types []string
		var ids []int64
		for _, r := range rules {
			types = append(types, r.Type)
			ids = append(ids, r.RulesetID)
			assert.Check(t, is.Equal(r.RulesetSource, repoName))
		}
		assert.Check(t, is.DeepEqual(types, tc.wantTypes), tc.branch)
		if tc.wantIDs != nil {
			assert.Check(t, is.DeepEqual(ids, tc.wantIDs), tc.branch)
		}
	}
}

// A ruleset GitHub would refuse is refused with 422 naming the field, the
// same through the API and through SetRuleset.
func TestRulesetsRefuseWhatGitHubRefuses(t *testing.T) {
	f := newFixture(t)
	_, err := f.srv.SetRuleset(repoName, Ruleset{Name: "taken", Include: []string{"~ALL"}})
	assert.NilError(t, err)
	for _, tc := range []struct {
		name    string
		rs      Ruleset
		wantErr string
	}{
		{"no name", Ruleset{}, "name is required"},
		{"bad enforcement", Ruleset{Name: "x", Enforcement: "on"}, "/enforcement"},
		{"bad target", Ruleset{Name: "x", Target: "ref"}, "/target"},
		{"same name", Ruleset{Name: "TAKEN"}, "Name must be unique"},
		{"rule without type", Ruleset{Name: "x", Rules: []RulesetRule{{}}}, "/rules/0: type is required"},
		{"checks without parameters", Ruleset{Name: "x", Rules: []RulesetRule{{Type: "required_status_checks"}}}, "parameters are required"},
		{"checks without list", Ruleset{Name: "x", Rules: []RulesetRule{{Type: "required_status_checks", Parameters: json.RawMessage(`{}`)}}}, "required_status_checks is required"},
		{"check without context", Ruleset{Name: "x", Rules: []RulesetRule{RequiredChecksRule(RequiredCheck{})}}, "context is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.srv.SetRuleset(repoName, tc.rs)
			assert.Check(t, is.ErrorIs(err, ErrInvalid))
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			rec, _ := serveDirect(t, f.srv, http.MethodPost, "/repos/octo/gpu-lib/rulesets", userToken, rulesetWire(tc.rs))
			assert.Check(t, is.Equal(rec.Code, http.StatusUnprocessableEntity))
		})
	}
	_, err = f.srv.SetRuleset(repoName, Ruleset{ID: 999999, Name: "y"})
	assert.Check(t, is.ErrorIs(err, ErrNotFound))
}

// rulesetWire is a Ruleset as a client sends it.
func rulesetWire(rs Ruleset) map[string]any {
	body := map[string]any{"name": rs.Name, "conditions": map[string]any{"ref_name": map[string]any{"include": rs.Include, "exclude": rs.Exclude}}}
	if rs.Target != "" {
		body["target"] = rs.Target
	}
	if rs.Enforcement != "" {
		body["enforcement"] = rs.Enforcement
	}
	rules := []map[string]any{}
	for _, r := range rs.Rules {
		entry := map[string]any{"type": r.Type}
		if r.Parameters != nil {
			entry["parameters"] = r.Parameters
		}
		rules = append(rules, entry)
	}
	body["rules"] = rules
	return body
}

// Where rulesets are unavailable every rulesets endpoint answers as GitHub
// does: 403 with the plan's message, or 404 on a server without them; an
// App without administration permission and a non-admin user may not write.
func TestRulesetsUnavailableAndForbidden(t *testing.T) {
	for _, tc := range []struct {
		name, target, method, token string
		unavailable, wantStatus     int
	}{
		{"plan list", "/repos/octo/gpu-lib/rulesets", http.MethodGet, userToken, 403, 403},
		{"plan create", "/repos/octo/gpu-lib/rulesets", http.MethodPost, userToken, 403, 403},
		{"plan branch rules", "/repos/octo/gpu-lib/rules/branches/main", http.MethodGet, userToken, 403, 403},
		{"server list", "/repos/octo/gpu-lib/rulesets", http.MethodGet, userToken, 404, 404},
		{"app without administration", "/repos/octo/gpu-lib/rulesets", http.MethodPost, appToken, 0, 403},
		{"available", "/repos/octo/gpu-lib/rulesets", http.MethodGet, userToken, 0, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, WithApp(App{ID: gateAppID}))
			assert.NilError(t, f.srv.SetRulesetsUnavailable(repoName, tc.unavailable))
			rec, body := serveDirect(t, f.srv, tc.method, tc.target, tc.token, rulesetWire(Ruleset{Name: "x", Include: []string{"~ALL"}}))
			assert.Check(t, is.Equal(rec.Code, tc.wantStatus), string(body))
			if tc.wantStatus == 403 && tc.unavailable == 403 {
				assert.Check(t, is.Contains(string(body), "Upgrade to GitHub Pro"))
			}
		})
	}
	f := newFixture(t)
	assert.Check(t, is.ErrorContains(f.srv.SetRulesetsUnavailable(repoName, 500), "want 0, 403 or 404"))
}

func TestRefPatternMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, ref string
		want         bool
	}{
		{"refs/heads/main", "refs/heads/main", true},
		{"refs/heads/main", "refs/heads/main2", false},
		{"refs/heads/*", "refs/heads/main", true},
		{"refs/heads/*", "refs/heads/a/b", false},
		{"refs/heads/**", "refs/heads/a/b", true},
		{"refs/heads/**/x", "refs/heads/a/b/x", true},
		{"refs/heads/ma?n", "refs/heads/main", true},
		{"refs/heads/?", "refs/heads//", false},
		{"gh-readonly-queue/*/*", "gh-readonly-queue/main/pr-1", true},
		{"", "", true},
		{"*", "", true},
	} {
		assert.Check(t, is.Equal(refPatternMatch(tc.pattern, tc.ref), tc.want), "%q ~ %q", tc.pattern, tc.ref)
	}
}

// FuzzRefPatternMatch: a pattern from a request never panics the matcher,
// and a pattern without wildcards matches only itself.
func FuzzRefPatternMatch(f *testing.F) {
	f.Add("refs/heads/**/x*", "refs/heads/a/b/xy")
	f.Add("refs/heads/main", "refs/heads/main")
	f.Fuzz(func(t *testing.T, pattern, ref string) {
		if len(pattern) > 24 || len(ref) > 24 {
			return
		}
		got := refPatternMatch(pattern, ref)
		if !strings.ContainsAny(pattern, "*?") && got != (pattern == ref) {
			t.Fatalf("literal %q ~ %q = %v", pattern, ref, got)
		}
	})
}
