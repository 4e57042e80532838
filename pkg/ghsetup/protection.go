package ghsetup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-github/v66/github"
)

// planProtection plans requiring GateCheck from the App on the default
// branch: a ruleset where rulesets are available, else classic branch
// protection. Without an App id it is left as a remaining step.
func (p *Planner) planProtection(ctx context.Context, plan *Plan, base string, appID int64, rules []*github.RepositoryRule, rulesetsStatus int) error {
	if appID <= 0 {
		plan.Remaining = append(plan.Remaining, fmt.Sprintf("require the check %q from the lane's App on %s: run 'runpod-gpu app' (it sets RUNPOD_GPU_APP_ID), then 'runpod-gpu init' again", GateCheck, base))
		return nil
	}
	if rulesetsStatus == 0 {
		if requiresGate(rules, appID) {
			return nil
		}
		return p.planRuleset(ctx, plan, base, appID)
	}
	if rulesetsStatus == http.StatusForbidden {
		// Anyone who can read a repository can read its branch rules: a 403
		// is the plan, which gates classic protection the same way.
		plan.Remaining = append(plan.Remaining, noProtectionStep(base))
		return nil
	}
	return p.planClassic(ctx, plan, base, appID, rulesetsStatus)
}

// noProtectionStep is what remains where the plan offers no protection.
func noProtectionStep(base string) string {
	return fmt.Sprintf("require %q on %s: GitHub offers neither rulesets nor branch protection for this private repository on its plan (403): make it public or move it to a paid plan, then run 'runpod-gpu init' again", GateCheck, base)
}

// requiresGate reports whether the rules require GateCheck from the App.
func requiresGate(rules []*github.RepositoryRule, appID int64) bool {
	for _, r := range rules {
		if r.Type != "required_status_checks" || r.Parameters == nil {
			continue
		}
		var params github.RequiredStatusChecksRuleParameters
		if json.Unmarshal(*r.Parameters, &params) != nil {
			continue
		}
		for _, c := range params.RequiredStatusChecks {
			if c.Context == GateCheck && c.IntegrationID != nil && *c.IntegrationID == appID {
				return true
			}
		}
	}
	return false
}

// AdminRoleID is GitHub's actor id of the repository role admin in a
// ruleset's bypass_actors.
const AdminRoleID = 5

// AdminBypass is the set-up ruleset's one bypass actor: repository
// administrators, in pull requests only. Without it nothing could merge
// init's own pull request, which adds the lane: GitHub runs the lane only
// from the default branch's files, so that pull request never gets a gate.
// An administrator merging past the gate is recorded on the pull request,
// as classic protection's default (enforce_admins off) allows too.
func AdminBypass() *github.BypassActor {
	return &github.BypassActor{ActorID: github.Int64(AdminRoleID), ActorType: github.String("RepositoryRole"), BypassMode: github.String("pull_request")}
}

// gateRuleset is the set-up's ruleset: GateCheck from the App on the
// default branch, administrators bypassing it in pull requests (AdminBypass).
func gateRuleset(appID int64) *github.Ruleset {
	return &github.Ruleset{
		Name: RulesetName, Target: github.String("branch"), Enforcement: "active",
		BypassActors: []*github.BypassActor{AdminBypass()},
		Conditions:   &github.RulesetConditions{RefName: &github.RulesetRefConditionParameters{Include: []string{"~DEFAULT_BRANCH"}, Exclude: []string{}}},
		Rules: []*github.RepositoryRule{github.NewRequiredStatusChecksRule(&github.RequiredStatusChecksRuleParameters{
			RequiredStatusChecks: []github.RuleRequiredStatusChecks{{Context: GateCheck, IntegrationID: github.Int64(appID)}},
		})},
	}
}

// planRuleset creates the set-up's ruleset, or updates the one of that name
// (disabled, or bound to another App).
func (p *Planner) planRuleset(ctx context.Context, plan *Plan, base string, appID int64) error {
	all, _, err := p.gh.Repositories.GetAllRulesets(ctx, p.owner, p.repo, false)
	if err != nil {
		return p.stepErr("protection", err)
	}
	for _, rs := range all {
		if rs.Name != RulesetName {
			continue
		}
		id := rs.GetID()
		plan.add("protection", fmt.Sprintf("update the ruleset %q: require %q from App %d on %s", RulesetName, GateCheck, appID, base), func(ctx context.Context) error {
			_, _, err := p.gh.Repositories.UpdateRuleset(ctx, p.owner, p.repo, id, gateRuleset(appID))
			return p.stepErr("protection", err)
		})
		return nil
	}
	plan.add("protection", fmt.Sprintf("create the ruleset %q: require %q from App %d on %s (administrators may merge a pull request past it, so init's own pull request can be merged)", RulesetName, GateCheck, appID, base), func(ctx context.Context) error {
		_, _, err := p.gh.Repositories.CreateRuleset(ctx, p.owner, p.repo, gateRuleset(appID))
		return p.stepErr("protection", err)
	})
	return nil
}

// planClassic adds GateCheck from the App to the default branch's classic
// protection, keeping the checks, review and admin settings it has.
func (p *Planner) planClassic(ctx context.Context, plan *Plan, base string, appID int64, rulesetsStatus int) error {
	prot, _, err := p.gh.Repositories.GetBranchProtection(ctx, p.owner, p.repo, base)
	switch {
	case errors.Is(err, github.ErrBranchNotProtected):
		prot = nil
	case statusOf(err) == http.StatusForbidden:
		plan.Remaining = append(plan.Remaining, noProtectionStep(base))
		return nil
	case err != nil:
		return p.stepErr("protection", err)
	}
	req := &github.ProtectionRequest{RequiredStatusChecks: &github.RequiredStatusChecks{Checks: &[]*github.RequiredStatusCheck{}}}
	if prot != nil {
		req.EnforceAdmins = prot.GetEnforceAdmins().Enabled
		if rs := prot.GetRequiredStatusChecks(); rs != nil {
			req.RequiredStatusChecks.Strict = rs.Strict
			for _, c := range rs.GetChecks() {
				if c.Context == GateCheck && c.GetAppID() == appID {
					return nil
				}
				if c.Context != GateCheck {
					*req.RequiredStatusChecks.Checks = append(*req.RequiredStatusChecks.Checks, c)
				}
			}
		}
		if r := prot.GetRequiredPullRequestReviews(); r != nil {
			req.RequiredPullRequestReviews = &github.PullRequestReviewsEnforcementRequest{
				DismissStaleReviews: r.DismissStaleReviews, RequireCodeOwnerReviews: r.RequireCodeOwnerReviews,
				RequiredApprovingReviewCount: r.RequiredApprovingReviewCount,
			}
		}
	}
	*req.RequiredStatusChecks.Checks = append(*req.RequiredStatusChecks.Checks, &github.RequiredStatusCheck{Context: GateCheck, AppID: github.Int64(appID)})
	plan.add("protection", fmt.Sprintf("require %q from App %d on %s through classic branch protection (rulesets are unavailable: GitHub answered %d)", GateCheck, appID, base, rulesetsStatus), func(ctx context.Context) error {
		_, _, err := p.gh.Repositories.UpdateBranchProtection(ctx, p.owner, p.repo, base, req)
		return p.stepErr("protection", err)
	})
	return nil
}
