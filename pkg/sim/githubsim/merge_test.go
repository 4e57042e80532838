package githubsim

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

const writerToken = "ghp_writer"

// Merging a pull request enforces the base branch's required checks as
// GitHub does: 405 naming the missing check unless it passed from the App
// it is bound to, or the merging actor may bypass (a ruleset's bypass actor
// in pull_request mode; an administrator under classic protection, whose
// enforce_admins is off). A merge moves the head's files to the base.
func TestMergeEnforcesRequiredChecksAndBypass(t *testing.T) {
	gate := RequiredCheck{Context: "CI GPU gate", AppID: gateAppID}
	adminBypass := []BypassActor{{ActorID: 5, ActorType: "RepositoryRole", BypassMode: "pull_request"}}
	for _, tc := range []struct {
		name       string
		ruleset    *Ruleset
		classic    bool
		checkApp   int64 // the App that publishes a green gate on the head; 0: none
		token      string
		wantStatus int
		wantErr    string
	}{
		{name: "no protection merges", token: writerToken, wantStatus: http.StatusOK},
		{name: "ruleset without the gate refuses an admin", ruleset: &Ruleset{}, token: userToken,
			wantStatus: http.StatusMethodNotAllowed, wantErr: `Required status check "CI GPU gate" is expected.`},
		{name: "ruleset's admin bypass lets an admin merge", ruleset: &Ruleset{BypassActors: adminBypass}, token: userToken, wantStatus: http.StatusOK},
		{name: "ruleset's admin bypass is not a writer's", ruleset: &Ruleset{BypassActors: adminBypass}, token: writerToken,
			wantStatus: http.StatusMethodNotAllowed, wantErr: `Required status check "CI GPU gate" is expected.`},
		{name: "the gate from its App lets a writer merge", ruleset: &Ruleset{}, checkApp: gateAppID, token: writerToken, wantStatus: http.StatusOK},
		{name: "the gate from another App does not count", ruleset: &Ruleset{}, checkApp: 777, token: writerToken,
			wantStatus: http.StatusMethodNotAllowed, wantErr: `Required status check "CI GPU gate" is expected.`},
		{name: "a merge queue refuses a direct merge", ruleset: &Ruleset{Rules: []RulesetRule{MergeQueueRule()}}, checkApp: gateAppID, token: writerToken,
			wantStatus: http.StatusMethodNotAllowed, wantErr: "Changes must be made through the merge queue."},
		{name: "classic protection lets an admin through", classic: true, token: userToken, wantStatus: http.StatusOK},
		{name: "classic protection refuses a writer", classic: true, token: writerToken,
			wantStatus: http.StatusMethodNotAllowed, wantErr: `Required status check "CI GPU gate" is expected.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, WithToken(writerToken, Identity{Login: "writer"}))
			assert.NilError(t, f.srv.SetRole(repoName, "maintainer", "admin"))
			assert.NilError(t, f.srv.SetRole(repoName, "writer", "write"))
			assert.NilError(t, f.srv.SetFile(repoName, "", "README.md", "hello\n"))
			head := sha('1')
			assert.NilError(t, f.srv.SetFile(repoName, "feature", ".github/runpod-gpu.yml", "gpus: [RTX4090]\n"))
			n, err := f.srv.AddPullRequest(repoName, PullRequestSpec{Title: "lane", Author: "writer", HeadRef: "feature", HeadSHA: head})
			assert.NilError(t, err)
			if tc.ruleset != nil {
				rs := *tc.ruleset
				rs.Name, rs.Include = "gate", []string{"~DEFAULT_BRANCH"}
				rs.Rules = append(rs.Rules, RequiredChecksRule(gate))
				_, err := f.srv.SetRuleset(repoName, rs)
				assert.NilError(t, err)
			}
			if tc.classic {
				assert.NilError(t, f.srv.ProtectBranch(repoName, "main", gate))
			}
			if tc.checkApp != 0 {
				_, err := f.srv.AddCheckRun(repoName, CheckRun{Name: gate.Context, HeadSHA: head, Status: "completed", Conclusion: "success", AppID: tc.checkApp})
				assert.NilError(t, err)
			}
			c := f.client(tc.token)
			res, _, err := c.PullRequests.Merge(ctx, "octo", "gpu-lib", n, "", &github.PullRequestOptions{SHA: head})
			if tc.wantErr != "" {
				assert.Check(t, is.Equal(statusOf(err), tc.wantStatus))
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				pr, _, err := c.PullRequests.Get(ctx, "octo", "gpu-lib", n)
				assert.NilError(t, err)
				assert.Check(t, !pr.GetMerged() && pr.GetState() == "open", "a refused merge changes nothing")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, res.GetMerged())
			pr, _, err := c.PullRequests.Get(ctx, "octo", "gpu-lib", n)
			assert.NilError(t, err)
			assert.Check(t, pr.GetMerged() && pr.GetState() == "closed")
			file, _, _, err := c.Repositories.GetContents(ctx, "octo", "gpu-lib", ".github/runpod-gpu.yml", nil)
			assert.NilError(t, err)
			text, _ := file.GetContent()
			assert.Check(t, is.Equal(text, "gpus: [RTX4090]\n"), "the head's files are on the default branch")
			_, _, err = c.PullRequests.Merge(ctx, "octo", "gpu-lib", n, "", nil)
			assert.Check(t, is.Equal(statusOf(err), http.StatusMethodNotAllowed), "a merged pull request merges once")
		})
	}
}

// A ruleset's bypass actors read back as GitHub answers them, with whether
// the caller may bypass; GitHub's refusals name the field.
func TestRulesetBypassActorsReadBack(t *testing.T) {
	f := newFixture(t)
	assert.NilError(t, f.srv.SetRole(repoName, "maintainer", "admin"))
	c := f.client(userToken)
	rs, _, err := c.Repositories.CreateRuleset(ctx, "octo", "gpu-lib", &github.Ruleset{Name: "gate", Enforcement: "active", Target: github.String("branch"),
		BypassActors: []*github.BypassActor{{ActorID: github.Int64(5), ActorType: github.String("RepositoryRole"), BypassMode: github.String("pull_request")}},
		Conditions:   &github.RulesetConditions{RefName: &github.RulesetRefConditionParameters{Include: []string{"~DEFAULT_BRANCH"}, Exclude: []string{}}},
		Rules:        []*github.RepositoryRule{github.NewRequiredStatusChecksRule(&github.RequiredStatusChecksRuleParameters{RequiredStatusChecks: []github.RuleRequiredStatusChecks{{Context: "CI GPU gate"}}})}})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rs.BypassActors, 1))
	assert.Check(t, is.Equal(rs.BypassActors[0].GetActorID(), int64(5)))
	assert.Check(t, is.Equal(rs.BypassActors[0].GetBypassMode(), "pull_request"))
	var raw map[string]any
	_, err = f.raw(t, c, http.MethodGet, "repos/octo/gpu-lib/rulesets/"+itoa(rs.GetID()), nil, &raw)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(raw["current_user_can_bypass"], "pull_requests_only"))

	for _, bad := range []struct{ actor, want string }{
		{`{"actor_id":5,"actor_type":"Robot","bypass_mode":"always"}`, "/bypass_actors/0/actor_type"},
		{`{"actor_id":5,"actor_type":"RepositoryRole","bypass_mode":"sometimes"}`, "/bypass_actors/0/bypass_mode"},
		{`{"actor_id":9,"actor_type":"RepositoryRole","bypass_mode":"always"}`, "/bypass_actors/0/actor_id"},
	} {
		rec, body := serveDirect(t, f.srv, http.MethodPut, "/repos/octo/gpu-lib/rulesets/"+itoa(rs.GetID()), userToken,
			json.RawMessage(`{"bypass_actors":[`+bad.actor+`]}`))
		assert.Check(t, is.Equal(rec.Code, http.StatusUnprocessableEntity), string(body))
		assert.Check(t, is.Contains(string(body), bad.want))
	}
}
