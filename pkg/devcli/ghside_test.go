package devcli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	setupToken = "ghp_DEVCLI_ADMIN_TOKEN"
	setupRepo  = "octo/gpu-lib"
)

// withGitHub starts the simulated GitHub with the repository octo/gpu-lib
// (its CI workflow on the default branch), an administrator's classic token
// with scopes, and points the command line at it.
func (w *world) withGitHub(scopes ...string) *githubsim.Server {
	w.t.Helper()
	if scopes == nil {
		scopes = []string{"repo", "workflow"}
	}
	gh := githubsim.New(githubsim.WithClock(simclock.NewVirtual(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))), githubsim.WithSeed(3),
		githubsim.WithToken(setupToken, githubsim.Identity{Login: "octo"}), githubsim.WithTokenScopes(setupToken, scopes...))
	assert.NilError(w.t, gh.AddRepo(githubsim.Repo{Owner: "octo", Name: "gpu-lib"}))
	assert.NilError(w.t, gh.SetFile(setupRepo, "", ".github/workflows/ci.yml", ciWorkflow))
	ts := httptest.NewServer(gh)
	w.t.Cleanup(ts.Close)
	w.env["GITHUB_API_URL"], w.env["GH_TOKEN"] = ts.URL, setupToken
	return gh
}

// withGitHubApp is withGitHub whose repository has the lane's App (its id
// in RUNPOD_GPU_APP_ID): init creates none.
func (w *world) withGitHubApp(scopes ...string) *githubsim.Server {
	w.t.Helper()
	gh := w.withGitHub(scopes...)
	assert.NilError(w.t, gh.SetVariable(setupRepo, "RUNPOD_GPU_APP_ID", "901"))
	return gh
}

// initArgs skip the rehearsal, which TestInitRehearses* cover.
var initArgs = []string{"--repo", setupRepo, "--gpus", "RTX4090", "--max-run-spend", "5", "--test-command", "make test-gpu", "--no-input", "--no-rehearse"}

// writes counts the simulated GitHub's answered requests other than reads.
func writes(gh *githubsim.Server) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Method != http.MethodGet {
			n++
		}
	}
	return n
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	assert.NilError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	}))
	return out
}

// init does the GitHub side after writing the files: the environment with
// the merge queue's branches, the RunPod key sealed (the simulated GitHub
// opens it), the gate required from the App app set, the files on
// runpod-gpu/setup and a pull request; a second run changes nothing, locally
// or on GitHub, and names the same pull request.
func TestInitDoesTheGitHubSideOnceAndASecondRunChangesNothing(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHubApp()
	assert.NilError(t, gh.SetVariable(setupRepo, "RUNPOD_GPU_APP_ID", "901"))
	_, err := gh.SetRuleset(setupRepo, githubsim.Ruleset{Name: "queue", Include: []string{"~DEFAULT_BRANCH"}, Rules: []githubsim.RulesetRule{githubsim.MergeQueueRule()}})
	assert.NilError(t, err)
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})

	r := w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	for _, want := range []string{
		"wrote .github/runpod-gpu.yml",
		"create the environment runpod-gpu with custom deployment branches: done",
		`let the branches "gh-readonly-queue/main/*" deploy to runpod-gpu: done`,
		"set the secret RUNPOD_API_KEY of the environment runpod-gpu (sealed with its public key): done",
		`create the ruleset "runpod-gpu: require CI GPU gate": require "CI GPU gate" from App 901 on main (administrators may merge a pull request past it, so init's own pull request can be merged): done`,
		"commit .github/workflows/runpod-gpu.yml on runpod-gpu/setup: done",
		"review and merge the pull request https://github.com/octo/gpu-lib/pull/1",
	} {
		assert.Check(t, is.Contains(r.stdout, want))
	}
	key, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_API_KEY")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(key, testKey), "sealed for the environment: the simulated GitHub opened it")

	localBefore, writesBefore := snapshot(t, dir), writes(gh)
	r = w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "unchanged .github/workflows/runpod-gpu.yml"))
	assert.Check(t, is.Contains(r.stdout, "nothing to change"))
	assert.Check(t, is.Contains(r.stdout, "pull/1"), "the open pull request is reused")
	assert.Check(t, is.Equal(writes(gh), writesBefore), "the second run wrote nothing on GitHub")
	assert.Check(t, is.DeepEqual(snapshot(t, dir), localBefore))
}

// --dry-run prints every change, locally and on GitHub, and makes none.
func TestInitDryRunChangesNothing(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHubApp()
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	before := snapshot(t, dir)
	r := w.run(append([]string{"init", "--dir", dir, "--dry-run"}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.DeepEqual(snapshot(t, dir), before), "nothing written locally")
	assert.Check(t, is.Equal(writes(gh), 0), "nothing written on GitHub")
	for _, want := range []string{"would write .github/workflows/runpod-gpu.yml", "would create the environment runpod-gpu",
		"would set the secret RUNPOD_API_KEY", "would create the branch runpod-gpu/setup from main", "would open a pull request",
		"Dry run: nothing was changed"} {
		assert.Check(t, is.Contains(r.stdout, want))
	}
	_, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_API_KEY")
	assert.Check(t, is.ErrorIs(err, githubsim.ErrNotFound))
}

// A file the user changed is kept without --force, with the diff shown, and
// nothing changes on GitHub either; --force overwrites it.
func TestInitKeepsAChangedFileWithoutForce(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHubApp()
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	assert.Equal(t, w.run(append([]string{"init", "--dir", dir}, initArgs...)...).code, ExitOK)
	mine := strings.Replace(readFile(t, dir, callers.ConfigPath), "max_run_spend_usd: 5", "max_run_spend_usd: 2", 1)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, ".github", "runpod-gpu.yml"), []byte(mine), 0o644))
	writesBefore := writes(gh)

	r := w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "-max_run_spend_usd: 2\n+max_run_spend_usd: 5\n"))
	assert.Check(t, is.Contains(r.stderr, ".github/runpod-gpu.yml differ(s) from what init writes"))
	assert.Check(t, is.Equal(readFile(t, dir, callers.ConfigPath), mine), "kept")
	assert.Check(t, is.Equal(writes(gh), writesBefore), "nothing changed on GitHub")

	r = w.run(append([]string{"init", "--dir", dir, "--force"}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(readFile(t, dir, callers.ConfigPath), "max_run_spend_usd: 5"))
}

// A classic token lacking a scope init needs is refused, naming the scope,
// before anything changes on GitHub.
func TestInitNamesAMissingTokenScope(t *testing.T) {
	for _, tc := range []struct {
		scopes  []string
		wantErr string
	}{
		{[]string{"repo"}, "lacks the scope(s) workflow: run 'gh auth refresh -s workflow'"},
		{[]string{"read:org"}, "lacks the scope(s) repo, workflow"},
	} {
		w := newWorld(t)
		gh := w.withGitHubApp(tc.scopes...)
		r := w.run(append([]string{"init", "--dir", checkout(t, map[string]string{"ci.yml": ciWorkflow})}, initArgs...)...)
		assert.Check(t, is.Equal(r.code, ExitFailure))
		assert.Check(t, is.Contains(r.stderr, tc.wantErr))
		assert.Check(t, is.Equal(writes(gh), 0))
	}
}

// Without a RunPod key init still writes the files (the GPU names resolved
// with the catalog it ships), does the rest of the GitHub side, and names the
// step that remains; without a GitHub token it names that step too.
func TestInitWithoutARunPodKeyWritesTheFilesAndNamesTheRemainingStep(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHubApp()
	delete(w.env, "RUNPOD_API_KEY")
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	r := w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(readFile(t, dir, callers.ConfigPath), `"NVIDIA GeForce RTX 4090"`))
	assert.Check(t, is.Contains(r.stdout, "1. the secret RUNPOD_API_KEY of the environment runpod-gpu: run 'RUNPOD_API_KEY=… runpod-gpu init' again"))
	assert.Check(t, is.Equal(w.requests()["GET /v2/catalog/gpus"], 0), "RunPod was not asked")
	_, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_API_KEY")
	assert.Check(t, is.ErrorIs(err, githubsim.ErrNotFound))
	assert.Check(t, is.Contains(r.stdout, "create the environment runpod-gpu"), "the rest of the GitHub side is done")

	delete(w.env, "GH_TOKEN")
	dir = checkout(t, map[string]string{"ci.yml": ciWorkflow})
	r = w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "2. the GitHub side (environment, secrets, required check, pull request): set GH_TOKEN"))
	assert.Check(t, is.Contains(r.stdout, "wrote .github/runpod-gpu.yml"))
}

// The RunPod key comes from the environment or standard input, never argv:
// no flag of init or app takes a secret, a flag that would is unknown, and
// the key read from standard input reaches GitHub sealed.
func TestInitSecretsNeverOnArgv(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHubApp()
	delete(w.env, "RUNPOD_API_KEY")
	const stdinKey = testKey // the key the simulated RunPod accepts
	args := append([]string{"init", "--dir", checkout(t, map[string]string{"ci.yml": ciWorkflow}), "--runpod-key-stdin"}, initArgs...)
	r := w.runWithInput(stdinKey+"\n", args...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, !slices.Contains(args, stdinKey), "the key is not on the command line")
	assert.Check(t, !strings.Contains(r.stdout+r.stderr, stdinKey), "nor printed")
	key, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_API_KEY")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(key, stdinKey))

	r = w.run("init", "--runpod-key", "rpa_x")
	assert.Check(t, is.Equal(r.code, ExitUsage))
	assert.Check(t, is.Contains(r.stderr, "unknown flag: --runpod-key"))

	root := newRoot(t.Context(), &Env{})
	for _, name := range []string{"init", "app"} {
		cmd, _, err := root.Find([]string{name})
		assert.NilError(t, err)
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			secretish := strings.Contains(f.Name, "key") || strings.Contains(f.Name, "token") || strings.Contains(f.Name, "secret") || strings.Contains(f.Name, "pem")
			path := f.Name == "save-key" || strings.HasSuffix(f.Name, "-file")
			assert.Check(t, !secretish || f.Value.Type() == "bool" || path, "%s --%s takes a %s", name, f.Name, f.Value.Type())
		})
	}
}

// Without an App (no RUNPOD_GPU_APP_ID), init creates it as runpod-gpu app
// does (the page, the click on Create, the installation) and binds the
// gate's ruleset to it; with one, it creates none.
func TestInitCreatesTheAppOnlyWhenTheRepositoryHasNone(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		w := newWorld(t)
		gh := w.withGitHub()
		w.env["GITHUB_WEB_URL"] = "https://github.example"
		var appID int64
		args := append([]string{"init", "--dir", checkout(t, map[string]string{"ci.yml": ciWorkflow}), "--org", "octo"}, initArgs...)
		code, stdout, stderr := clickThrough(t, gh, Env{Args: args, Getenv: func(k string) string { return w.env[k] }, Home: w.home, Clock: w.clock, Sleep: w.clock.Sleep}, "octo",
			func(id int64) {
				appID = id
				assert.NilError(t, gh.AddInstallation(githubsim.Installation{ID: 5001, AppID: id, Account: "octo"}))
			})
		assert.Equal(t, code, ExitOK, stderr)
		assert.Check(t, is.Contains(stdout, "The App: octo/gpu-lib has none (no variable RUNPOD_GPU_APP_ID); creating it."))
		assert.Check(t, is.Contains(stdout, "Installed on octo/gpu-lib: installation 5001."))
		assert.Check(t, is.Contains(stdout, fmt.Sprintf("set the repository variable RUNPOD_GPU_APP_ID to %q: done", strconv.FormatInt(appID, 10))))
		rulesets, _ := gh.Rulesets(setupRepo)
		assert.Assert(t, is.Len(rulesets, 1))
		assert.Check(t, is.Contains(string(rulesets[0].Rules[0].Parameters), fmt.Sprintf(`"integration_id":%d`, appID)))
		assert.Check(t, is.Contains(stdout, "/pull/"), "init went on to its pull request")
		assert.Check(t, !strings.Contains(stdout, "runpod-gpu app"), "no step left for the App")
	})
	t.Run("set", func(t *testing.T) {
		w := newWorld(t)
		gh := w.withGitHubApp()
		r := w.run(append([]string{"init", "--dir", checkout(t, map[string]string{"ci.yml": ciWorkflow})}, initArgs...)...)
		assert.Equal(t, r.code, ExitOK, r.stderr)
		assert.Check(t, is.Contains(r.stdout, "The App: octo/gpu-lib has one (RUNPOD_GPU_APP_ID 901)"))
		assert.Check(t, !strings.Contains(r.stdout, "file://"), "no App page")
		rulesets, _ := gh.Rulesets(setupRepo)
		assert.Assert(t, is.Len(rulesets, 1))
		assert.Check(t, is.Contains(string(rulesets[0].Rules[0].Parameters), `"integration_id":901`))
	})
}

// init ends its local part by rehearsing what it wrote: green goes on to
// GitHub; a wiring mistake (here a caller of the user's naming no CI
// workflow) is printed with its fix and exits 1, the files kept and nothing
// changed on GitHub; --no-rehearse skips it.
func TestInitRehearsesWhatItWrote(t *testing.T) {
	broken := strings.Replace(rehearsalLane(t), `workflows: ["CI"]`, `workflows: ["Tests"]`, 1)
	tests := []struct {
		name      string
		extra     map[string]string
		args      []string
		wantCode  int
		wantOut   []string
		wantErr   string
		wantNoOut string
	}{
		{name: "green", wantCode: ExitOK, wantOut: []string{"Rehearsal of", `Gate "CI GPU gate": success`, "Wiring: no mistakes", "/pull/"}},
		{name: "broken wiring", extra: map[string]string{"gpu-nightly.yml": broken}, wantCode: ExitFailure,
			wantOut: []string{`names "Tests"`, "fix: write the `name:` of your CI workflow"},
			wantErr: "wiring mistake(s): fix them and rehearse again ('runpod-gpu rehearse'): the files are kept, and nothing changed on GitHub", wantNoOut: "/pull/"},
		{name: "no-rehearse", extra: map[string]string{"gpu-nightly.yml": broken}, args: []string{"--no-rehearse"}, wantCode: ExitOK,
			wantOut: []string{"/pull/"}, wantNoOut: "Rehearsal of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			gh := w.withGitHubApp()
			files := map[string]string{"ci.yml": ciWorkflow}
			for k, v := range tt.extra {
				files[k] = v
			}
			dir := checkout(t, files)
			args := append([]string{"init", "--dir", dir}, slices.DeleteFunc(slices.Clone(initArgs), func(s string) bool { return s == "--no-rehearse" })...)
			r := w.run(append(args, tt.args...)...)
			assert.Check(t, is.Equal(r.code, tt.wantCode), "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, want := range tt.wantOut {
				assert.Check(t, is.Contains(r.stdout, want))
			}
			assert.Check(t, is.Contains(r.stderr, tt.wantErr))
			if tt.wantNoOut != "" {
				assert.Check(t, !strings.Contains(r.stdout, tt.wantNoOut), "%q in:\n%s", tt.wantNoOut, r.stdout)
			}
			assert.Check(t, is.Contains(readFile(t, dir, callers.LanePath), "uses: "), "the files are written (and kept)")
			if tt.wantCode != ExitOK {
				assert.Check(t, is.Equal(writes(gh), 0), "nothing changed on GitHub")
			}
		})
	}
}

// rehearsalLane is the lane caller as init writes it for the CI workflow "CI".
func rehearsalLane(t *testing.T) string {
	t.Helper()
	return readFile(t, rehearsalRepo(t, func(s string) string { return s }), callers.LanePath)
}

// git refuses to pull over untracked files, even identical ones: init stages
// what it wrote, so that once its pull request is merged a plain git pull
// takes them (here the merge is played in a second clone, the pull from it).
func TestInitStagesItsFilesSoThePullAfterTheMergeWorks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	gh := w.withGitHubApp()
	assert.NilError(t, gh.SetVariable(setupRepo, "RUNPOD_GPU_APP_ID", "901"))
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	git := func(in string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", in, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	git(dir, "init", "-q", "-b", "main")
	git(dir, "add", ".")
	git(dir, "commit", "-q", "-m", "CI")
	remote := filepath.Join(t.TempDir(), "remote")
	git(dir, "clone", "-q", dir, remote)

	r := w.run(append([]string{"init", "--dir", dir}, initArgs...)...)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "Staged the files in the checkout (git add)"))
	assert.Check(t, is.Contains(git(dir, "status", "--porcelain"), "A  .github/runpod-gpu.yml"))

	// The pull request merged on the remote: the same files, committed there.
	for path, text := range snapshot(t, dir) {
		rel, err := filepath.Rel(dir, path)
		assert.NilError(t, err)
		if strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
			continue
		}
		target := filepath.Join(remote, rel)
		assert.NilError(t, os.MkdirAll(filepath.Dir(target), 0o755))
		assert.NilError(t, os.WriteFile(target, []byte(text), 0o644))
	}
	git(remote, "add", ".")
	git(remote, "commit", "-q", "-m", "Set up the runpod-gpu GPU lane")
	git(dir, "pull", "-q", "--ff-only", remote, "main")
	assert.Check(t, is.Equal(git(dir, "status", "--porcelain"), ""), "the pull took init's files as they are")
}
