package doctor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/registry"
)

const (
	titleImage       = "the action image pullable without credentials"
	titlePodImage    = "the default pod image pullable without credentials"
	titleRelease     = "the suite's releases wait for a reviewer"
	titleRunPod      = "RunPod key valid (REST)"
	titleBalance     = "RunPod balance (optional, GraphQL)"
	titleRunnerGroup = "runner group admits the repository"
	// minBalanceUSD is the balance below which no run can be trusted to
	// finish when the configuration sets no per-run bound.
	minBalanceUSD = money.Dollar
	// releaseEnvironment is where the suite's Release workflow publishes.
	releaseEnvironment = "release"
)

// probeAction is the action whose image the doctor pulls: every action of a
// release names the same image digest.
const probeAction = "actions/provision/action.yml"

// suiteClient is a client of the suite the lane's caller follows, or the
// check's FIX when there is no lane caller or its suite is no repository name.
func suiteClient(d Deps, f *facts, id, title string) (*ghapi.Client, *Check) {
	if f.lane == nil {
		c := fix(id, title, fmt.Sprintf("no lane caller on %s names the suite", f.defaultBranch), "merge the lane's caller first (see callers)")
		return nil, &c
	}
	owner, name, _ := strings.Cut(f.lane.suite, "/")
	suite, err := d.GitHub.ForRepository(owner, name)
	if err != nil {
		c := fix(id, title, fmt.Sprintf("the suite %s in %s is no repository name: %v", f.lane.suite, f.lane.path, err), "correct the uses: line of "+f.lane.path)
		return nil, &c
	}
	return suite, nil
}

// releasedImage is the action image a release of the suite names, read once
// per run: the image check pulls it, the pod-image check names the default
// pod image after it.
type releasedImage struct {
	// image is name@sha256:… (or name:tag); empty when there is none.
	image string
	// problem and todo say why there is none: the image check's FIX.
	problem, todo string
}

// actionImage reads the action image of the suite's release at the callers'
// ref from its provision action (every action of a release names the same
// one); the first call reads, later ones share its answer.
func (f *facts) actionImage(ctx context.Context, suite *ghapi.Client) *releasedImage {
	if f.released != nil {
		return f.released
	}
	f.released = &releasedImage{}
	data, err := suite.FileAt(ctx, probeAction, f.lane.ref)
	if err != nil {
		f.released.problem, f.released.todo = failure(err, read{what: fmt.Sprintf("%s at %s in %s", probeAction, f.lane.ref, f.lane.suite), scope: "public_repo", permission: "Contents: read",
			missing: fmt.Sprintf("check that %s has the release %s (pin one that exists in %s's uses: line)", f.lane.suite, f.lane.ref, f.lane.path)})
		return f.released
	}
	var action struct {
		Runs struct {
			Image string `yaml:"image"`
		} `yaml:"runs"`
	}
	_ = yaml.Unmarshal(data, &action)
	image, isImage := strings.CutPrefix(action.Runs.Image, "docker://")
	if !isImage {
		f.released.problem = fmt.Sprintf("%s@%s is not a release: its actions build from the Dockerfile (image %q) on every run", f.lane.suite, f.lane.ref, action.Runs.Image)
		f.released.todo = "pin a release tag (vN) in the callers"
		return f.released
	}
	f.released.image = image
	return f.released
}

// pullAnswer sorts an anonymous pull's failure by what the registry said.
type pullAnswer int

const (
	// pullUnanswered: a server error or a time-out.
	pullUnanswered pullAnswer = iota
	// pullDenied: the registry refused the anonymous pull (a private package).
	pullDenied
	// pullMissing: the registry has no such manifest.
	pullMissing
)

// classifyPull reads the status the registry's answer names in err.
func classifyPull(err error) pullAnswer {
	text := err.Error()
	switch {
	case strings.Contains(text, "401") || strings.Contains(text, "403") || strings.Contains(text, "denied"):
		return pullDenied
	case strings.Contains(text, "404"):
		return pullMissing
	}
	return pullUnanswered
}

// packageSettings is where a ghcr.io package's owner makes it public.
func packageSettings(pkg string) string {
	return fmt.Sprintf("the owner's Packages → %s → Package settings → Change visibility → Public", path.Base(pkg))
}

func checkImage(ctx context.Context, d Deps, f *facts) Check {
	suite, unread := suiteClient(d, f, CheckImage, titleImage)
	if unread != nil {
		return *unread
	}
	released := f.actionImage(ctx, suite)
	if released.image == "" {
		return fix(CheckImage, titleImage, released.problem, released.todo)
	}
	image := released.image
	if err := d.Images.Pullable(ctx, image); err != nil {
		pkg := strings.Split(image, "@")[0]
		switch classifyPull(err) {
		case pullDenied:
			return fix(CheckImage, titleImage, fmt.Sprintf("GitHub's runner pulls %s without credentials, and the registry refuses that (denied)", pkg),
				fmt.Sprintf("make the package %s public (%s)", pkg, packageSettings(pkg)))
		case pullMissing:
			return fix(CheckImage, titleImage, fmt.Sprintf("the registry has no %s", image),
				fmt.Sprintf("pin a release of %s whose image was pushed (its Release workflow's Publish job)", f.lane.suite))
		}
		return fix(CheckImage, titleImage, fmt.Sprintf("the registry did not answer for %s (a server error or a time-out)", pkg), "retry later")
	}
	return ok(CheckImage, titleImage, "%s (from %s@%s)", image, f.lane.suite, f.lane.ref)
}

// runnerImageCUDA is the lane's runner-image value that starts pods from the
// suite's CUDA runner image (actionkit.RunnerImageCUDA).
const runnerImageCUDA = "cuda"

// checkPodImage checks the image pods start from, which RunPod pulls without
// credentials: a private one is found only after a pod was created and
// billed. A release pushes its default pod image as <action image>-runner
// (and the CUDA one as …-runner-cuda) under the version and major tags the
// callers pin; a configuration's own image is checked as it is named.
func checkPodImage(ctx context.Context, d Deps, f *facts) Check {
	suite, unread := suiteClient(d, f, CheckPodImage, titlePodImage)
	if unread != nil {
		return *unread
	}
	if f.lane.workflow == "serverless-lane.yml" {
		return ok(CheckPodImage, titlePodImage, "not used: the Serverless lane (%s) starts workers from its template's image, not pods", f.lane.path)
	}
	suffix := "-runner"
	if f.lane.input("runner-image", "") == runnerImageCUDA {
		suffix = "-runner-cuda"
	} else {
		configPath := f.lane.input("config-path", callers.ConfigPath)
		if f.config == nil {
			return unknown(CheckPodImage, titlePodImage, fmt.Sprintf("%s could not be read, so the image pods start from is unknown (see callers)", configPath),
				"fix the callers row, then run doctor again")
		}
		if f.config.Image != config.DefaultImage {
			return checkConfiguredImage(ctx, d, f.config.Image, configPath)
		}
	}
	released := f.actionImage(ctx, suite)
	ref, err := registry.Parse(released.image)
	if released.image == "" || err != nil {
		return unknown(CheckPodImage, titlePodImage, fmt.Sprintf("the action image of %s@%s, which names the pod image, could not be read (see image)", f.lane.suite, f.lane.ref),
			"fix the image row, then run doctor again")
	}
	pkg := ref.Host + "/" + ref.Repository + suffix
	// A release's action image is pinned by digest and its pod image tagged
	// as the release (the callers' ref); an action image named by its tag
	// (a branch's actions, e.g. @main, name the major tag) gives its tag.
	tag := f.lane.ref
	if ref.Digest == "" {
		tag = ref.Tag
	} else if pinnedCommit.MatchString(f.lane.ref) {
		return unknown(CheckPodImage, titlePodImage, fmt.Sprintf("the callers pin %s at the commit %s: its release names its pod image by digest inside its actions, under no tag doctor can map the commit to", f.lane.suite, f.lane.ref),
			fmt.Sprintf("check by hand that the package %s is public (%s): RunPod pulls it without credentials", pkg, packageSettings(pkg)))
	}
	image := pkg + ":" + tag
	if err := d.Images.Pullable(ctx, image); err != nil {
		switch classifyPull(err) {
		case pullDenied:
			return fix(CheckPodImage, titlePodImage, fmt.Sprintf("RunPod pulls %s without credentials, and the registry refuses that (denied): every pod would fail to start, billed", pkg),
				fmt.Sprintf("make the package %s public (%s)", pkg, packageSettings(pkg)))
		case pullMissing:
			return fix(CheckPodImage, titlePodImage, fmt.Sprintf("the registry has no %s: the release %s@%s has no pod image", image, f.lane.suite, f.lane.ref),
				fmt.Sprintf("pin a release of %s whose Release workflow pushed one (its step Build and push the default pod image)", f.lane.suite))
		}
		return fix(CheckPodImage, titlePodImage, fmt.Sprintf("the registry did not answer for %s (a server error or a time-out)", pkg), "retry later")
	}
	return ok(CheckPodImage, titlePodImage, "%s (the pod image of %s@%s)", image, f.lane.suite, f.lane.ref)
}

// checkConfiguredImage checks the configuration's own image key as
// provision uses it: resolved by registry host, pulled without credentials.
func checkConfiguredImage(ctx context.Context, d Deps, image, configPath string) Check {
	if _, err := registry.Parse(image); err != nil {
		return fix(CheckPodImage, titlePodImage, fmt.Sprintf("provision cannot resolve the configuration's image: %v", err),
			fmt.Sprintf("write image in %s with its registry host (registry/path:tag or registry/path@sha256:…)", configPath))
	}
	if err := d.Images.Pullable(ctx, image); err != nil {
		switch classifyPull(err) {
		case pullDenied:
			return fix(CheckPodImage, titlePodImage, fmt.Sprintf("RunPod pulls %s, the configuration's image, without credentials, and its registry refuses that (denied): every pod would fail to start, billed", image),
				fmt.Sprintf("make that image public, or set image in %s to one that is", configPath))
		case pullMissing:
			return fix(CheckPodImage, titlePodImage, fmt.Sprintf("the registry has no %s, the configuration's image", image),
				fmt.Sprintf("correct image in %s", configPath))
		}
		return fix(CheckPodImage, titlePodImage, fmt.Sprintf("the registry did not answer for %s, the configuration's image (a server error or a time-out)", image), "retry later")
	}
	return ok(CheckPodImage, titlePodImage, "%s, the configuration's image (%s)", image, configPath)
}

// pinnedCommit is a full commit SHA in a uses: reference.
var pinnedCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// checkRelease reads the release environment of the suite the callers
// follow: its Release workflow moves the major tag (v1) every caller runs,
// so a pushed tag must wait there for a reviewer.
func checkRelease(ctx context.Context, d Deps, f *facts) Check {
	suite, unread := suiteClient(d, f, CheckRelease, titleRelease)
	if unread != nil {
		return *unread
	}
	if pinnedCommit.MatchString(f.lane.ref) {
		return ok(CheckRelease, titleRelease, "the callers pin %s at the commit %s, which no release moves", f.lane.suite, f.lane.ref)
	}
	settings := fmt.Sprintf("Settings → Environments → %s in %s", releaseEnvironment, f.lane.suite)
	env, err := suite.Environment(ctx, releaseEnvironment)
	foreign := !strings.EqualFold(suite.Owner(), f.owner)
	switch {
	case err != nil && foreign:
		// Another owner's suite: its environments may be hidden from this
		// token, and its settings are not the user's to fix.
		return unknown(CheckRelease, titleRelease, fmt.Sprintf("the environment %s of %s, the suite the callers follow at @%s, could not be read with this token", releaseEnvironment, f.lane.suite, f.lane.ref),
			"to run only what you reviewed, pin a release commit (…@<sha>) in the callers instead of a tag")
	case errors.Is(err, ghapi.ErrNotFound):
		return fix(CheckRelease, titleRelease, fmt.Sprintf("%s has no environment %s (or the token cannot see it): any pushed version tag publishes a release every caller's @%s follows", f.lane.suite, releaseEnvironment, f.lane.ref),
			fmt.Sprintf("create it with required reviewers and deployment tags v* only (%s); for a suite you do not keep, pin a release commit (…@<sha>) in the callers", settings))
	case err != nil:
		problem, todo := failure(err, read{what: fmt.Sprintf("the environment %s of %s", releaseEnvironment, f.lane.suite), scope: "repo", permission: "Environments: read",
			missing: "check that " + f.lane.suite + " has the environment " + releaseEnvironment})
		return fix(CheckRelease, titleRelease, problem, todo)
	}
	for _, rule := range env.ProtectionRules {
		if rule.GetType() == "required_reviewers" && len(rule.Reviewers) > 0 {
			return ok(CheckRelease, titleRelease, "a release of %s waits for one of %d reviewer(s) in its environment %s", f.lane.suite, len(rule.Reviewers), releaseEnvironment)
		}
	}
	return fix(CheckRelease, titleRelease, fmt.Sprintf("the environment %s of %s has no required reviewers: any pushed version tag publishes a release every caller's @%s follows", releaseEnvironment, f.lane.suite, f.lane.ref),
		fmt.Sprintf("add required reviewers (%s → Required reviewers); for a suite you do not keep, pin a release commit (…@<sha>) in the callers", settings))
}

func checkRunPod(ctx context.Context, d Deps, f *facts) Check {
	if d.RunPod == nil {
		return unknown(CheckRunPod, titleRunPod, "doctor was given no RunPod key",
			fmt.Sprintf("export RUNPOD_API_KEY (or api_key in ~/.runpod/config.toml) with the key stored as the secret %s of the environment %s", secretRunPodKey, f.environment()))
	}
	// GET /v2/account/ssh-keys: the cheapest REST v2 read that needs a valid key.
	if _, err := d.RunPod.ListSSHKeys(ctx); err != nil {
		problem, todo := runpodFailure(err, f.environment())
		return fix(CheckRunPod, titleRunPod, problem, todo)
	}
	return ok(CheckRunPod, titleRunPod, "RunPod accepts the key doctor used (make sure it is the one stored as the secret %s of the environment %s)", secretRunPodKey, f.environment())
}

// checkBalance is the optional balance line: only RunPod's GraphQL API
// tells the balance (REST v2 has none), so a failure reads "unknown", never
// a fix; a balance read and too low for one run is one.
func checkBalance(ctx context.Context, d Deps, f *facts) Check {
	const console = "see it in the RunPod console → Billing"
	if d.RunPod == nil {
		return unknown(CheckBalance, titleBalance, "doctor was given no RunPod key", "export RUNPOD_API_KEY, or "+console)
	}
	b, err := d.RunPod.GetBalance(ctx)
	if err != nil {
		return unknown(CheckBalance, titleBalance, "RunPod's GraphQL API did not tell the balance", console)
	}
	need, why := minBalanceUSD, "$1"
	if f.config != nil && f.config.MaxRunSpendUSD != nil && *f.config.MaxRunSpendUSD > need {
		need = *f.config.MaxRunSpendUSD
		why = "one run's bound, max_run_spend_usd " + need.Format(money.Exact)
	}
	if b.ClientBalance < need {
		return fix(CheckBalance, titleBalance, fmt.Sprintf("the balance, %s, is below %s; with none left RunPod refuses every pod", b.ClientBalance, why),
			"add credit (RunPod console → Billing)")
	}
	return ok(CheckBalance, titleBalance, "balance %s, spending %s now, spend limit %s", b.ClientBalance,
		b.CurrentSpendPerHr.Format(money.Cents), b.SpendLimit.Format(money.Cents))
}

func checkRunnerGroup(ctx context.Context, d Deps, f *facts) Check {
	scope := f.lane.input("runner-scope", "repo")
	group, err := strconv.ParseInt(f.lane.input("runner-group-id", "1"), 10, 64)
	if err != nil || group < 1 {
		return fix(CheckRunnerGroup, titleRunnerGroup, fmt.Sprintf("runner-group-id %q is no runner group's id", f.lane.input("runner-group-id", "")),
			"write a runner group's numeric id (1 is Default)")
	}
	if scope != "org" {
		if group != 1 {
			return fix(CheckRunnerGroup, titleRunnerGroup, fmt.Sprintf("runner-group-id %d: a repository's runners join its Default group (1) only", group),
				"remove the input, or use runner-scope: org with an organization's group")
		}
		return ok(CheckRunnerGroup, titleRunnerGroup, "repository runners join the Default group (1)")
	}
	org := f.lane.input("runner-org", f.owner)
	g, repos, err := d.GitHub.OrgRunnerGroup(ctx, org, group)
	if err != nil {
		problem, todo := failure(err, read{what: fmt.Sprintf("runner group %d of %s", group, org), scope: "admin:org", permission: "the organization's Self-hosted runners: read",
			missing: fmt.Sprintf("check that %s has the runner group %d (Settings → Actions → Runner groups)", org, group)})
		return fix(CheckRunnerGroup, titleRunnerGroup, problem, todo)
	}
	settings := fmt.Sprintf("%s → Settings → Actions → Runner groups → %s", org, g.GetName())
	switch {
	case g.GetVisibility() == "selected" && !slices.ContainsFunc(repos, func(r string) bool { return strings.EqualFold(r, f.fullName) }):
		return fix(CheckRunnerGroup, titleRunnerGroup, fmt.Sprintf("runner group %q admits selected repositories, not %s", g.GetName(), f.fullName),
			fmt.Sprintf("add %s to the repositories of runner group %q (%s)", f.fullName, g.GetName(), settings))
	case g.GetVisibility() == "private":
		return fix(CheckRunnerGroup, titleRunnerGroup, fmt.Sprintf("runner group %q is private to %s's own repositories", g.GetName(), org),
			fmt.Sprintf("give it access to %s (%s)", f.fullName, settings))
	case !f.private && !g.GetAllowsPublicRepositories():
		return fix(CheckRunnerGroup, titleRunnerGroup, fmt.Sprintf("runner group %q refuses public repositories, and %s is public", g.GetName(), f.fullName),
			fmt.Sprintf("allow public repositories in runner group %q (%s)", g.GetName(), settings))
	}
	return ok(CheckRunnerGroup, titleRunnerGroup, "organization runner group %q (%d) of %s admits %s", g.GetName(), group, org, f.fullName)
}
