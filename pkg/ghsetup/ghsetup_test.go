package ghsetup

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	adminToken = "ghp_admin"
	repoName   = "octo/gpu-lib"
	appID      = int64(901)
	runpodKey  = "rpa_SETUP_SECRET_42"
	appKey     = "-----BEGIN RSA PRIVATE KEY-----\nnot-a-real-key\n-----END RSA PRIVATE KEY-----\n"
)

type world struct {
	srv *githubsim.Server
	url string
}

func newWorld(t *testing.T, opts ...githubsim.Option) *world {
	t.Helper()
	base := []githubsim.Option{githubsim.WithClock(simclock.NewVirtual(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))), githubsim.WithSeed(7),
		githubsim.WithToken(adminToken, githubsim.Identity{Login: "octo"}), githubsim.WithTokenScopes(adminToken, "repo", "workflow", "read:org")}
	srv := githubsim.New(append(base, opts...)...)
	assert.NilError(t, srv.AddRepo(githubsim.Repo{Owner: "octo", Name: "gpu-lib"}))
	assert.NilError(t, srv.SetFile(repoName, "", "README.md", "# gpu-lib\n"))
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &world{srv: srv, url: ts.URL}
}

func (w *world) planner(t *testing.T, token string) *Planner {
	t.Helper()
	c, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: w.url, Token: token, Owner: "octo", Repo: "gpu-lib"})
	assert.NilError(t, err)
	return New(c)
}

func fullRequest() Request {
	return Request{
		Secrets:   map[string]string{"RUNPOD_API_KEY": runpodKey, "RUNPOD_GPU_APP_PRIVATE_KEY": appKey},
		Variables: map[string]string{"RUNPOD_GPU_APP_ID": "901", "RUNPOD_GPU_APP_INSTALLATION_ID": "5001"},
		Files: []File{{Path: ".github/workflows/runpod-gpu.yml", Text: "name: runpod-gpu\non: workflow_run\n"},
			{Path: ".github/runpod-gpu.yml", Text: "gpu_tiers: []\n"}},
	}
}

func steps(p *Plan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, c.Step+": "+c.What)
	}
	return out
}

// From nothing, the plan lists every change in the order it can be made;
// applying it leaves the repository set up (secrets the simulated GitHub
// opens with its private key, the merge queue's branches allowed, the gate
// required from the App, the files on the branch and a pull request); a
// second plan is empty.
func TestSetupPlansAppliesAndThenFindsNothing(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	_, err := w.srv.SetRuleset(repoName, githubsim.Ruleset{Name: "queue", Include: []string{"~DEFAULT_BRANCH"}, Rules: []githubsim.RulesetRule{githubsim.MergeQueueRule()}})
	assert.NilError(t, err)
	p := w.planner(t, adminToken)
	plan, err := p.Plan(ctx, fullRequest())
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(steps(plan), []string{
		"environment: create the environment runpod-gpu with custom deployment branches",
		`environment: let the branches "main" deploy to runpod-gpu`,
		`environment: let the branches "gh-readonly-queue/main/*" deploy to runpod-gpu`,
		"secret: set the secret RUNPOD_API_KEY of the environment runpod-gpu (sealed with its public key)",
		"secret: set the secret RUNPOD_GPU_APP_PRIVATE_KEY of the environment runpod-gpu (sealed with its public key)",
		`variable: set the repository variable RUNPOD_GPU_APP_ID to "901"`,
		`variable: set the repository variable RUNPOD_GPU_APP_INSTALLATION_ID to "5001"`,
		`protection: create the ruleset "runpod-gpu: require CI GPU gate": require "CI GPU gate" from App 901 on main (administrators may merge a pull request past it, so init's own pull request can be merged)`,
		"branch: create the branch runpod-gpu/setup from main",
		"file: commit .github/workflows/runpod-gpu.yml on runpod-gpu/setup",
		"file: commit .github/runpod-gpu.yml on runpod-gpu/setup",
		`pull request: open a pull request "Set up the runpod-gpu GPU lane" from runpod-gpu/setup to main`,
	}))
	assert.Check(t, is.Len(plan.Notes, 0), "a classic token: its scopes were read")
	writes := func() int {
		n := 0
		for _, r := range w.srv.Requests() {
			if r.Method != http.MethodGet {
				n++
			}
		}
		return n
	}
	assert.Check(t, is.Equal(writes(), 0), "planning writes nothing")

	var done []string
	assert.NilError(t, plan.Apply(ctx, func(c Change) { done = append(done, c.Step) }))
	assert.Check(t, is.Len(done, len(plan.Changes)))
	assert.Check(t, strings.HasSuffix(plan.PullURL, "/octo/gpu-lib/pull/1"), plan.PullURL)

	for name, want := range fullRequest().Secrets {
		got, err := w.srv.EnvironmentSecret(repoName, Environment, name)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(got, want), "the simulated GitHub opened %s with its private key", name)
	}
	rulesets, err := w.srv.Rulesets(repoName)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rulesets, 2))
	assert.Check(t, is.Contains(string(rulesets[1].Rules[0].Parameters), `"integration_id":901`))

	again, err := p.Plan(ctx, fullRequest())
	assert.NilError(t, err)
	assert.Check(t, again.Empty(), "%v", steps(again))
	assert.Check(t, is.Equal(again.PullURL, plan.PullURL), "the open pull request is reused")

	replace := fullRequest()
	replace.ReplaceSecrets = true
	replace.Variables["RUNPOD_GPU_APP_INSTALLATION_ID"] = "5002"
	third, err := p.Plan(ctx, replace)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(steps(third), []string{
		"secret: replace the secret RUNPOD_API_KEY of the environment runpod-gpu (sealed with its public key)",
		"secret: replace the secret RUNPOD_GPU_APP_PRIVATE_KEY of the environment runpod-gpu (sealed with its public key)",
		`variable: change the repository variable RUNPOD_GPU_APP_INSTALLATION_ID from "5001" to "5002"`,
	}))
}

// A classic token lacking a scope the set-up needs is refused before
// anything is planned, naming each missing scope; a fine-grained token (no
// scopes header) is told what it needs and goes on.
func TestSetupChecksTokenScopesFirst(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		scopes      []string
		wantMissing []string
	}{
		{"no workflow scope", "ghp_noworkflow", []string{"repo"}, []string{"workflow"}},
		{"no scope at all", "ghp_none", []string{""}, []string{"repo", "workflow"}},
		{"public_repo is not repo", "ghp_public", []string{"public_repo", "workflow"}, []string{"repo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, githubsim.WithToken(tc.token, githubsim.Identity{Login: "octo"}), githubsim.WithTokenScopes(tc.token, tc.scopes...))
			_, err := w.planner(t, tc.token).Plan(context.Background(), fullRequest())
			var se *ScopeError
			assert.Assert(t, errors.As(err, &se), "%v", err)
			assert.Check(t, is.DeepEqual(se.Missing, tc.wantMissing))
			for _, m := range tc.wantMissing {
				assert.Check(t, is.Contains(err.Error(), m))
			}
			assert.Check(t, is.Equal(w.srv.CountRequests("", "/repos/*/*/environments/*"), 0), "nothing planned")
		})
	}
	w := newWorld(t, githubsim.WithToken("github_pat_fine", githubsim.Identity{Login: "octo"}))
	plan, err := w.planner(t, "github_pat_fine").Plan(context.Background(), fullRequest())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(plan.Notes, 1))
	assert.Check(t, is.Contains(plan.Notes[0], "Secrets"))
}

// Where rulesets are unavailable the gate goes into classic protection,
// keeping the checks already required; where the plan offers neither, the
// step is left to the user with the reason.
func TestSetupFallsBackToClassicProtection(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	assert.NilError(t, w.srv.SetRulesetsUnavailable(repoName, http.StatusNotFound))
	assert.NilError(t, w.srv.ProtectBranch(repoName, "main", githubsim.RequiredCheck{Context: "lint"}))
	p := w.planner(t, adminToken)
	plan, err := p.Plan(ctx, Request{AppID: appID})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(strings.Join(steps(plan), "\n"), "through classic branch protection (rulesets are unavailable: GitHub answered 404)"))
	assert.NilError(t, plan.Apply(ctx, nil))
	again, err := p.Plan(ctx, Request{AppID: appID})
	assert.NilError(t, err)
	assert.Check(t, again.Empty(), "%v", steps(again))

	w = newWorld(t)
	assert.NilError(t, w.srv.SetRulesetsUnavailable(repoName, http.StatusForbidden))
	plan, err = w.planner(t, adminToken).Plan(ctx, Request{AppID: appID})
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(strings.Join(steps(plan), "\n"), "protection"), "no protection change")
	assert.Assert(t, is.Len(plan.Remaining, 1))
	assert.Check(t, is.Contains(plan.Remaining[0], "make it public or move it to a paid plan"))

	plan, err = w.planner(t, adminToken).Plan(ctx, Request{})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(plan.Remaining[0], "run 'runpod-gpu app'"), "no App id: the gate is a remaining step")
}

// A refusal stops the set-up at its step with what to do, and no error
// carries a secret.
func TestSetupStopsAtTheFirstRefusalWithWhatToDo(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, githubsim.WithApp(githubsim.App{ID: 555}), githubsim.WithToken("ghs_app", githubsim.Identity{AppID: 555}))
	plan, err := w.planner(t, "ghs_app").Plan(ctx, fullRequest())
	assert.NilError(t, err)
	err = plan.Apply(ctx, nil)
	var se *StepError
	assert.Assert(t, errors.As(err, &se), "%v", err)
	assert.Check(t, is.Equal(se.Step, "environment"))
	assert.Check(t, is.Equal(se.Status, http.StatusForbidden))
	assert.Check(t, is.Contains(err.Error(), "Administration: write"))
	assert.Check(t, !strings.Contains(err.Error(), runpodKey))
}

// The ruleset the set-up makes lets repository administrators merge a pull
// request past the gate, so init's own pull request (whose lane cannot run
// before it is on the default branch) can be merged; anyone else still needs
// the gate. The simulated GitHub enforces it on its merge endpoint.
func TestSetupRulesetLetsAdministratorsMergeTheSetupPullRequest(t *testing.T) {
	ctx := context.Background()
	const writerToken = "ghp_writer"
	w := newWorld(t, githubsim.WithToken(writerToken, githubsim.Identity{Login: "wanda"}), githubsim.WithTokenScopes(writerToken, "repo"))
	assert.NilError(t, w.srv.SetRole(repoName, "wanda", "write"))
	p := w.planner(t, adminToken)
	req := fullRequest()
	req.Files = []File{{Path: ".github/runpod-gpu.yml", Text: "gpu_tiers: []\n"}}
	plan, err := p.Plan(ctx, req)
	assert.NilError(t, err)
	assert.NilError(t, plan.Apply(ctx, nil))
	rulesets, err := w.srv.Rulesets(repoName)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rulesets, 1))
	assert.Check(t, is.DeepEqual(rulesets[0].BypassActors, []githubsim.BypassActor{{ActorID: AdminRoleID, ActorType: "RepositoryRole", BypassMode: "pull_request"}}))

	writer := w.planner(t, writerToken).gh
	_, _, err = writer.PullRequests.Merge(ctx, "octo", "gpu-lib", 1, "", nil)
	assert.Check(t, is.Equal(statusOf(err), http.StatusMethodNotAllowed), "a writer needs the gate")
	assert.Check(t, is.ErrorContains(err, `Required status check "CI GPU gate" is expected`))
	res, _, err := p.gh.PullRequests.Merge(ctx, "octo", "gpu-lib", 1, "", nil)
	assert.NilError(t, err, "an administrator merges init's pull request")
	assert.Check(t, res.GetMerged())
}
