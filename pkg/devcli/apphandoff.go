package devcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ghsetup"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// installPoll is how often app asks GitHub whether the App is installed.
const installPoll = 5 * time.Second

// appRole is where one created App's key and ids go.
type appRole struct {
	secret, idVar, installVar string
	checks                    bool // the App that publishes the gate
}

// roleOf says whether c is the checks App or, with --split, the runner App.
func roleOf(c createdApp, split bool) appRole {
	if split && strings.HasSuffix(c.Name, " runners") {
		return appRole{secret: "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY", idVar: "RUNPOD_GPU_RUNNER_APP_ID", installVar: "RUNPOD_GPU_RUNNER_APP_INSTALLATION_ID"}
	}
	return appRole{secret: "RUNPOD_GPU_APP_PRIVATE_KEY", idVar: "RUNPOD_GPU_APP_ID", installVar: "RUNPOD_GPU_APP_INSTALLATION_ID", checks: true}
}

// handOff waits for each App's installation, saves the keys only where
// --save-key asks, hands keys and ids to GitHub (pkg/ghsetup) when there is
// a token, and prints what remains in the order it can be done.
func (a *app) handOff(ctx context.Context, created []createdApp, f appFlags, r ghRepository, githubStep string) error {
	installs := map[int64]int64{}
	for _, c := range created {
		fmt.Fprintf(a.env.Stdout, "\nApp %s (id %d) created; its private key is held in memory.\n", c.Name, c.ID)
		if r.owner == "" {
			continue
		}
		id, err := a.waitInstallation(ctx, c, r, f.installWait)
		if err != nil {
			return err
		}
		installs[c.ID] = id
	}
	saved, err := saveKeys(created, f)
	if err != nil {
		return err
	}
	var remaining []string
	if githubStep == "" {
		req := ghsetup.Request{Secrets: map[string]string{}, Variables: map[string]string{}, ReplaceSecrets: true}
		for _, c := range created {
			role := roleOf(c, f.split)
			req.Secrets[role.secret], req.Variables[role.idVar] = c.PEM, strconv.FormatInt(c.ID, 10)
			if installs[c.ID] > 0 {
				req.Variables[role.installVar] = strconv.FormatInt(installs[c.ID], 10)
			}
			if role.checks {
				req.AppID = c.ID
			}
		}
		plan, err := a.setUpGitHub(ctx, r, req, false)
		if err != nil {
			return err
		}
		remaining = plan.Remaining
	}
	if f.forInit { // init's own plan, next, says what remains
		return nil
	}
	printAppNext(a.env.Stdout, appNext{created: created, installs: installs, saved: saved, split: f.split, repo: r, githubStep: githubStep, remaining: remaining})
	return nil
}

// waitInstallation asks GitHub, as the App (its JWT), for its installation
// on the repository until it appears or wait passes (0: not installed).
func (a *app) waitInstallation(ctx context.Context, c createdApp, r ghRepository, wait time.Duration) (int64, error) {
	policy := reqpolicy.New(reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(a.env.Clock)))
	apiURL, err := a.serviceURL("GITHUB_API_URL") // before the App's key signs anything for it
	if err != nil {
		return 0, err
	}
	client, err := ghapi.NewAppClient(ghapi.Options{BaseURL: apiURL, HTTPClient: a.env.HTTPClient, Policy: policy,
		App: &ghapi.AppAuth{AppID: c.ID, PrivateKeyPEM: []byte(c.PEM)}})
	if err != nil {
		return 0, withCode(ExitFailure, err)
	}
	fmt.Fprintf(a.env.Stdout, "Install it on %s/%s: %s/installations/new\nWaiting up to %s for the installation …\n", r.owner, r.name, c.HTMLURL, wait)
	deadline := a.env.Clock.Now().Add(wait)
	for {
		cctx, cancel := a.bound(ctx, callTimeout)
		id, err := client.RepoInstallation(cctx, r.owner, r.name)
		cancel()
		switch {
		case err == nil:
			fmt.Fprintf(a.env.Stdout, "Installed on %s/%s: installation %d.\n", r.owner, r.name, id)
			return id, nil
		case !errors.Is(err, ghapi.ErrNotFound):
			return 0, fail(ExitFailure, "find the App's installation on %s/%s: %v", r.owner, r.name, err)
		case !a.env.Clock.Now().Before(deadline):
			fmt.Fprintf(a.env.Stdout, "Not installed on %s/%s within %s.\n", r.owner, r.name, wait)
			return 0, nil
		}
		if err := a.env.Sleep(ctx, installPoll); err != nil {
			return 0, fail(ExitInterrupted, "waiting for the App's installation: interrupted (the App exists: install it, and set its key by hand)")
		}
	}
}

// saveKeys writes the keys to --save-key (the runner App's to FILE.runner),
// mode 0600; without --save-key nothing is written. It returns secret → file.
func saveKeys(created []createdApp, f appFlags) (map[string]string, error) {
	saved := map[string]string{}
	if f.saveKey == "" {
		return saved, nil
	}
	for _, c := range created {
		role, path := roleOf(c, f.split), f.saveKey
		if !role.checks {
			path += ".runner"
		}
		file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			err = file.Chmod(0o600) // an existing file keeps its mode otherwise
			_, werr := io.WriteString(file, c.PEM)
			err = errors.Join(err, werr, file.Close())
		}
		if err != nil {
			return nil, fail(ExitFailure, "--save-key %s: %v", path, err)
		}
		saved[role.secret] = path
	}
	return saved, nil
}

// appNext is what printAppNext needs to say what remains.
type appNext struct {
	created    []createdApp
	installs   map[int64]int64
	saved      map[string]string
	split      bool
	repo       ghRepository
	githubStep string
	remaining  []string
}

// printAppNext prints the remaining steps in the order they can be done:
// installing comes before its id, and the environment (which init creates)
// before a secret set in it by hand.
func printAppNext(out io.Writer, n appNext) {
	repo := "your repository"
	if n.repo.owner != "" {
		repo = n.repo.owner + "/" + n.repo.name
	}
	var steps []string
	for _, c := range n.created {
		role := roleOf(c, n.split)
		if n.installs[c.ID] == 0 {
			steps = append(steps, fmt.Sprintf("install %s on %s: %s/installations/new", c.Name, repo, c.HTMLURL))
		}
		if n.githubStep != "" {
			steps = append(steps, fmt.Sprintf("gh variable set %s --body %d", role.idVar, c.ID))
		}
		if id := n.installs[c.ID]; n.githubStep != "" && id > 0 {
			steps = append(steps, fmt.Sprintf("gh variable set %s --body %d", role.installVar, id))
		} else if id == 0 {
			steps = append(steps, fmt.Sprintf("gh variable set %s --body <the installation id, the number at the end of the installation's settings URL>", role.installVar))
		}
	}
	steps = append(steps, "RUNPOD_API_KEY=… runpod-gpu init --workflows CI --gpus RTX4090,L40S --max-run-spend 5 --test-command \"make test-gpu\": the files, the environment runpod-gpu with the RunPod key, the required gate and a pull request")
	if n.githubStep != "" {
		for _, c := range n.created {
			role := roleOf(c, n.split)
			steps = append(steps, fmt.Sprintf("gh secret set %s --env runpod-gpu < %s (the environment exists once init has run)", role.secret, n.saved[role.secret]))
		}
	}
	steps = append(steps, n.remaining...)
	steps = append(steps, "merge init's pull request, then runpod-gpu doctor")
	fmt.Fprintln(out, "\nNext:")
	for i, s := range steps {
		fmt.Fprintf(out, "  %d. %s\n", i+1, s)
	}
}
