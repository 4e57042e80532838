package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/runpod"
)

const (
	titleImage       = "the action image pullable without credentials"
	titleRunPod      = "RunPod key valid, with balance"
	titleRunnerGroup = "runner group admits the repository"
	// minBalanceUSD is the balance below which no run can be trusted to
	// finish when the configuration sets no per-run bound.
	minBalanceUSD = 1.0
)

// probeAction is the action whose image the doctor pulls: every action of a
// release names the same image digest.
const probeAction = "actions/provision/action.yml"

func checkImage(ctx context.Context, d Deps, f *facts) Check {
	if f.lane == nil {
		return fix(CheckImage, titleImage, "merge the lane's caller to %s first (see callers)", f.defaultBranch)
	}
	owner, name, _ := strings.Cut(f.lane.suite, "/")
	suite, err := d.GitHub.ForRepository(owner, name)
	if err != nil {
		return fix(CheckImage, titleImage, "%v", err)
	}
	data, err := suite.FileAt(ctx, probeAction, f.lane.ref)
	if err != nil {
		return fix(CheckImage, titleImage, "read %s at %s in %s: %v; publish your copy and its release %s (README, step 0: your copy of the suite), or pin a release that exists",
			probeAction, f.lane.ref, f.lane.suite, err, f.lane.ref)
	}
	var action struct {
		Runs struct {
			Image string `yaml:"image"`
		} `yaml:"runs"`
	}
	_ = yaml.Unmarshal(data, &action)
	image, isImage := strings.CutPrefix(action.Runs.Image, "docker://")
	if !isImage {
		return fix(CheckImage, titleImage, "%s@%s is not a release: its actions build from the Dockerfile (image %q) on every run; pin a release tag (vN) in the callers", f.lane.suite, f.lane.ref, action.Runs.Image)
	}
	if err := d.Images.Pullable(ctx, image); err != nil {
		return fix(CheckImage, titleImage, "make the package %s public (your profile or organization → Packages → runpod-gpu → Package settings → Change visibility → Public): GitHub's runner pulls it without credentials, and today the registry refuses that (denied): %v",
			strings.Split(image, "@")[0], err)
	}
	return ok(CheckImage, titleImage, "%s (from %s@%s)", image, f.lane.suite, f.lane.ref)
}

func checkRunPod(ctx context.Context, d Deps, f *facts) Check {
	if d.RunPod == nil {
		return fix(CheckRunPod, titleRunPod, "set RUNPOD_API_KEY (or api_key in ~/.runpod/config.toml) to the key stored as the secret %s, so doctor can check it", secretRunPodKey)
	}
	b, err := d.RunPod.GetBalance(ctx)
	switch {
	case errors.Is(err, runpod.ErrUnauthorized):
		return fix(CheckRunPod, titleRunPod, "RunPod refused the key (401): create one (RunPod console → Settings → API Keys) and store it as the secret %s of the environment %s", secretRunPodKey, f.environment())
	case err != nil:
		return fix(CheckRunPod, titleRunPod, "read the account's balance: %v", err)
	}
	need, why := minBalanceUSD, "$1"
	if f.config != nil && f.config.MaxRunSpendUSD != nil && *f.config.MaxRunSpendUSD > need {
		need = *f.config.MaxRunSpendUSD
		why = fmt.Sprintf("one run's bound, max_run_spend_usd $%s", strconv.FormatFloat(need, 'f', -1, 64))
	}
	if b.ClientBalance < need {
		return fix(CheckRunPod, titleRunPod, "add credit (RunPod console → Billing): the balance, $%.2f, is below %s; with none left RunPod refuses every pod (402)", b.ClientBalance, why)
	}
	return ok(CheckRunPod, titleRunPod, "balance $%.2f, spending $%.2f/h now, spend limit $%.2f/h (the key doctor used: make sure it is the one stored as %s)",
		b.ClientBalance, b.CurrentSpendPerHr, b.SpendLimit, secretRunPodKey)
}

func checkRunnerGroup(ctx context.Context, d Deps, f *facts) Check {
	scope := f.lane.input("runner-scope", "repo")
	group, err := strconv.ParseInt(f.lane.input("runner-group-id", "1"), 10, 64)
	if err != nil || group < 1 {
		return fix(CheckRunnerGroup, titleRunnerGroup, "runner-group-id %q: want a runner group's numeric id (1 is Default)", f.lane.input("runner-group-id", ""))
	}
	if scope != "org" {
		if group != 1 {
			return fix(CheckRunnerGroup, titleRunnerGroup, "runner-group-id %d: a repository's runners join its Default group (1) only; remove the input, or use runner-scope: org with an organization's group", group)
		}
		return ok(CheckRunnerGroup, titleRunnerGroup, "repository runners join the Default group (1)")
	}
	org := f.lane.input("runner-org", f.owner)
	g, repos, err := d.GitHub.OrgRunnerGroup(ctx, org, group)
	if err != nil {
		return fix(CheckRunnerGroup, titleRunnerGroup, "read runner group %d of %s: %v (it must exist, and doctor's token needs the organization's self-hosted runners: read)", group, org, err)
	}
	if g.GetVisibility() == "selected" && !slices.ContainsFunc(repos, func(r string) bool { return strings.EqualFold(r, f.fullName) }) {
		return fix(CheckRunnerGroup, titleRunnerGroup, "add %s to the repositories of runner group %q (%s → Settings → Actions → Runner groups)", f.fullName, g.GetName(), org)
	}
	if g.GetVisibility() == "private" {
		return fix(CheckRunnerGroup, titleRunnerGroup, "runner group %q is private to %s's own repositories: give it access to %s", g.GetName(), org, f.fullName)
	}
	if !f.private && !g.GetAllowsPublicRepositories() {
		return fix(CheckRunnerGroup, titleRunnerGroup, "allow public repositories in runner group %q: %s is public", g.GetName(), f.fullName)
	}
	return ok(CheckRunnerGroup, titleRunnerGroup, "organization runner group %q (%d) of %s admits %s", g.GetName(), group, org, f.fullName)
}
