package devcli

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/ghsetup"
	"github.com/org/runpod-gpu/pkg/rehearse"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// maxFirstDayActions is what the README promises: at most six user
// actions (each command typed, each click) from nothing to a green gate.
const maxFirstDayActions = 6

// roadStep is one step of the README's road: its number, title and the
// command its shell block gives ("" for a step that is a click).
type roadStep struct {
	number  int
	title   string
	command string
	// orgCommand is the variant the block's comment gives for a repository
	// of an organization ("# in an organization: …").
	orgCommand string
}

func (s roadStep) String() string { return fmt.Sprintf("README step %d (%s)", s.number, s.title) }

var (
	roadHeadingRE = regexp.MustCompile(`^### (\d+)\. (.+)$`)
	orgVariantRE  = regexp.MustCompile(`#\s*in an organization:\s*(.+)$`)
)

// readmeRoad parses the README's "Your repository, step by step": each
// "### N. title" step and the one command of its sh blocks. A step with
// more than one command fails the test.
func readmeRoad(t *testing.T, readme string) []roadStep {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Your repository, step by step\n")
	assert.Assert(t, ok, "README.md has no section \"Your repository, step by step\"")
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var steps []roadStep
	inBlock := false
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
		case strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock && strings.TrimSpace(line) != "":
			assert.Assert(t, len(steps) > 0, "a shell block before the first step: %q", line)
			s := &steps[len(steps)-1]
			command := line
			if i := strings.Index(line, "  #"); i >= 0 {
				command = line[:i]
				if m := orgVariantRE.FindStringSubmatch(line[i:]); m != nil {
					s.orgCommand = strings.TrimSpace(m[1])
				}
			}
			assert.Assert(t, s.command == "", "%s has more than one command: %q and %q", s, s.command, strings.TrimSpace(command))
			s.command = strings.TrimSpace(command)
		default:
			if m := roadHeadingRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				steps = append(steps, roadStep{number: n, title: m[2]})
			}
		}
	}
	return steps
}

// shellWords splits a command line as sh does for the README's commands:
// words separated by spaces, double or single quotes grouping.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	assert.Assert(t, quote == 0, "unbalanced quote in %q", line)
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// signalBuffer is an output both the command and the test hold; each write
// wakes the test's wait for a line.
type signalBuffer struct {
	mu    sync.Mutex
	buf   strings.Builder
	wrote chan struct{}
}

func newSignalBuffer() *signalBuffer { return &signalBuffer{wrote: make(chan struct{}, 1)} }

func (b *signalBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (b *signalBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits (until deadline) for re to match the output and returns its match.
func (b *signalBuffer) waitFor(t *testing.T, step roadStep, re *regexp.Regexp, done <-chan int) []string {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		select {
		case <-b.wrote:
		case code := <-done:
			t.Fatalf("%s: the command ended (%d) before printing %s:\n%s", step, code, re, b.String())
		case <-deadline.C:
			t.Fatalf("%s: nothing matching %s within 60s:\n%s", step, re, b.String())
		}
	}
}

// firstDay is the user's world: the simulated cloud, the checkout, the
// environment the commands read, and the actions counted.
type firstDay struct {
	t       *testing.T
	root    string // the module's root
	cloud   *cloud.Cloud
	dir     string
	home    string
	env     map[string]string
	user    *github.Client
	actions []string
	appID   int64
	pull    int // init's pull request
}

const (
	firstDayToken      = "ghp_FirstDayAdminToken0123456789abcdef"
	firstDayMaintainer = "ghp_FirstDayMaintainerToken0123456789ab"
)

func (d *firstDay) act(step roadStep, what string) {
	d.actions = append(d.actions, fmt.Sprintf("%s: %s", step, what))
}

// runpodGPU runs a runpod-gpu command line in-process in the checkout.
func (d *firstDay) runpodGPU(step roadStep, env map[string]string, args []string, stdout *signalBuffer, sleep func(context.Context, time.Duration) error) (int, string) {
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return d.env[k]
	}
	var stderr syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	code := Main(ctx, Env{Args: args, Getenv: getenv, Stdout: stdout, Stderr: &stderr, Stdin: strings.NewReader(""), Home: d.home, User: "bob", Sleep: sleep})
	out := stdout.String() + stderr.String()
	assert.Check(d.t, !strings.Contains(out, cloud.RunPodKey), "%s: the RunPod key was printed", step)
	assert.Check(d.t, !strings.Contains(out, "PRIVATE KEY"), "%s: a private key was printed", step)
	return code, out
}

// command runs one step's command as the README writes it.
func (d *firstDay) command(step roadStep) {
	t := d.t
	t.Helper()
	line := step.command
	if owner, _, _ := strings.Cut(cloud.Repository, "/"); step.orgCommand != "" && !strings.EqualFold(owner, "bob") {
		// The repository belongs to an organization: the README's variant for one, with its placeholder.
		line = strings.ReplaceAll(step.orgCommand, "my-org", owner)
	}
	env := map[string]string{}
	words := shellWords(t, line)
	for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
		k, v, _ := strings.Cut(words[0], "=")
		if v == "…" { // the README's placeholder for the user's own value
			v = d.env[k]
		}
		env[k] = v
		words = words[1:]
	}
	switch {
	case len(words) == 3 && words[0] == "go" && words[1] == "install":
		d.act(step, line)
		pkg, version, _ := strings.Cut(words[2], "@")
		assert.Check(t, is.Equal(pkg, "github.com/org/runpod-gpu/pkg/cmd/runpod-gpu"), "%s installs another program", step)
		assert.Check(t, is.Equal(version, cloud.SuiteRef), "%s installs another release", step)
		_, err := os.Stat(filepath.Join(d.root, "pkg", "cmd", "runpod-gpu", "main.go"))
		assert.NilError(t, err, "%s: the program it installs is this module's", step)
	case len(words) >= 2 && words[0] == "runpod-gpu" && (words[1] == "app" || words[1] == "init"):
		// init, in a repository without the App, creates it as app does: the browser's clicks.
		text := d.app(step, line, env, words[1:])
		if words[1] == "init" {
			m := regexp.MustCompile(`/pull/(\d+)`).FindStringSubmatch(text)
			assert.Assert(t, m != nil, "%s: init named no pull request:\n%s", step, text)
			d.pull, _ = strconv.Atoi(m[1])
		}
	case len(words) >= 2 && words[0] == "runpod-gpu" && (words[1] == "rehearse" || words[1] == "doctor"):
		d.act(step, line)
		code, text := d.runpodGPU(step, env, words[1:], newSignalBuffer(), nil)
		assert.Assert(t, code == ExitOK, "%s: %q exited %d:\n%s", step, line, code, text)
		d.t.Logf("%s: %s\n%s", step, line, text)
	default:
		t.Fatalf("%s: the command %q is not one this test knows how to run", step, line)
	}
}

// app runs a command that creates the App (runpod-gpu app, or init in a
// repository without one) and plays the browser: the click on "Create
// GitHub App" (GitHub converts the manifest, then sends the browser to the
// command's local callback) and the click on "Install". It returns the output.
func (d *firstDay) app(step roadStep, line string, env map[string]string, args []string) string {
	t := d.t
	d.act(step, line)
	installed := make(chan struct{})
	var once sync.Once
	sleep := func(ctx context.Context, _ time.Duration) error {
		// The command polls for the installation; the user's click on Install is what it waits for.
		select {
		case <-installed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	out := newSignalBuffer()
	done := make(chan int, 1)
	var text string
	go func() {
		code, all := d.runpodGPU(step, env, args, out, sleep)
		text = all
		done <- code
	}()
	page := out.waitFor(t, step, regexp.MustCompile(`file://(\S+)`), done)[1]
	data, err := os.ReadFile(page)
	assert.NilError(t, err, "%s: the page", step)
	forms := formRE.FindAllStringSubmatch(string(data), -1)
	assert.Assert(t, is.Len(forms, 1), "%s: one App, one button", step)
	action, err := url.Parse(html.UnescapeString(forms[0][1]))
	assert.NilError(t, err)
	owner := regexp.MustCompile(`/organizations/([^/]+)/settings/apps/new$`).FindStringSubmatch(action.Path)
	assert.Assert(t, owner != nil, "%s: the form posts to %s", step, action)
	d.act(step, `click "Create GitHub App"`)
	appCode, redirect, err := d.cloud.GitHub.CreateAppFromManifest(owner[1], []byte(html.UnescapeString(forms[0][2])))
	assert.NilError(t, err, "%s: GitHub converts the manifest", step)
	resp, err := http.Get(redirect + "?code=" + url.QueryEscape(appCode) + "&state=" + url.QueryEscape(action.Query().Get("state")))
	assert.NilError(t, err, "%s: the browser's redirect to the callback", step)
	body := new(strings.Builder)
	_, _ = bufio.NewReader(resp.Body).WriteTo(body)
	resp.Body.Close()
	assert.Assert(t, is.Equal(resp.StatusCode, http.StatusOK), "%s: %s", step, body)
	m := regexp.MustCompile(`\(id (\d+)\)`).FindStringSubmatch(body.String())
	assert.Assert(t, m != nil, "%s: the callback page names no App: %s", step, body)
	d.appID, _ = strconv.ParseInt(m[1], 10, 64)
	d.act(step, `click "Install" on `+cloud.Repository)
	assert.NilError(t, d.cloud.GitHub.AddInstallation(githubsim.Installation{ID: 7001, AppID: d.appID, Account: owner[1],
		Repositories: []string{cloud.RepoName}, Permissions: map[string]string(callers.OneApp)}))
	once.Do(func() { close(installed) })
	select {
	case code := <-done:
		assert.Assert(t, code == ExitOK, "%s: %q exited %d:\n%s", step, line, code, text)
		d.t.Logf("%s: %s\n%s", step, line, text)
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: %q did not return:\n%s", step, line, out.String())
	}
	return text
}

// merge is the click on "Merge pull request" for init's pull request, as
// the administrator: through GitHub's merge endpoint, which enforces the
// default branch's rules.
func (d *firstDay) merge(step roadStep) {
	t := d.t
	d.act(step, fmt.Sprintf(`click "Merge pull request" on #%d`, d.pull))
	assert.Assert(t, d.pull > 0, "%s: init opened no pull request", step)
	ctx := context.Background()
	pr, _, err := d.user.PullRequests.Get(ctx, cloud.Owner, cloud.RepoName, d.pull)
	assert.NilError(t, err)
	_, _, err = d.user.PullRequests.Merge(ctx, cloud.Owner, cloud.RepoName, d.pull, "", &github.PullRequestOptions{SHA: pr.GetHead().GetSHA()})
	assert.NilError(t, err, "%s: GitHub refused to merge init's pull request", step)
}

// repoRoot is the module's root (this package is pkg/devcli).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	assert.NilError(t, err)
	return filepath.Join(wd, "..", "..")
}

// From an empty repository on the simulated cloud (an administrator with a
// token, a RunPod account with credit, the published suite), the README's
// road runs as written, each command in-process against the simulated
// cloud and each click played on the simulated GitHub, and the first pull
// request ends with a green "CI GPU gate" from the App, which the default
// branch's ruleset requires; at most six user actions.
func TestFirstDayOfflineFollowsTheReadmeToARequiredGreenGate(t *testing.T) {
	if suite, _, _ := strings.Cut(defaultSuite(), "@"); suite != cloud.SuiteRepository {
		t.Skipf("this copy's README calls %s; the simulated cloud publishes %s only", suite, cloud.SuiteRepository)
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	assert.NilError(t, err)
	steps := readmeRoad(t, string(readme))
	assert.Assert(t, len(steps) > 0)

	c, err := cloud.Start(cloud.Options{Clock: simclock.Real{}, Balance: 50, Market: healthyMarket(),
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)},
		GitHubOptions: []githubsim.Option{
			githubsim.WithToken(firstDayToken, githubsim.Identity{Login: cloud.MaintainerBob}),
			githubsim.WithTokenScopes(firstDayToken, "repo", "workflow", "read:org"),
			githubsim.WithToken(firstDayMaintainer, githubsim.Identity{Login: "alice"}),
			githubsim.WithTokenScopes(firstDayMaintainer, "repo")}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	assert.NilError(t, c.PublishSuite())
	// The repository: its CI, nothing of the lane.
	assert.NilError(t, c.GitHub.SetFile(cloud.Repository, "", ".github/workflows/ci.yml", ciWorkflow))

	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, ".git", "config"),
		[]byte("[remote \"origin\"]\n\turl = https://github.com/"+cloud.Repository+".git\n"), 0o644))
	t.Chdir(dir)
	d := &firstDay{t: t, root: root, cloud: c, dir: dir, home: t.TempDir(), env: map[string]string{
		"GITHUB_API_URL": c.GitHubURL, "GITHUB_WEB_URL": "https://github.example", "RUNPOD_API_URL": c.RunPodURL,
		"GH_TOKEN": firstDayToken, "RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_GPU_REGISTRY_URL": c.RegistryURL,
	}}
	d.user = github.NewClient(nil).WithAuthToken(firstDayToken)
	d.user.BaseURL, _ = url.Parse(c.GitHubURL + "/")

	for _, step := range steps {
		switch {
		case step.command != "":
			d.command(step)
		case strings.HasPrefix(step.title, "Merge init's pull request"):
			d.merge(step)
		default:
			t.Fatalf("%s: a step without a command that is not one this test knows how to play", step)
		}
	}

	d.firstPullRequest()

	t.Logf("the user's actions (%d):\n%s", len(d.actions), strings.Join(d.actions, "\n"))
	assert.Check(t, len(d.actions) <= maxFirstDayActions, "the road took %d user actions, more than %d:\n%s",
		len(d.actions), maxFirstDayActions, strings.Join(d.actions, "\n"))
}

// healthyMarket is the default market's GPU types, each on one healthy host
// that boots in a second: the first day's pod works.
func healthyMarket() *runpodsim.Market {
	m := runpodsim.DefaultMarket()
	m.Hosts = nil
	for i, g := range m.GPUTypes {
		m.Hosts = append(m.Hosts, runpodsim.HostProfile{ID: fmt.Sprintf("host-%d", i+1), DataCenterID: "US-TX-3", GPUTypeID: g.ID,
			DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: true, VRAMGB: g.MemoryGB})
	}
	return &m
}

// firstPullRequest is the user's first pull request after the road: a
// branch with a change, the pull request, its CI in progress; the lane, as
// GitHub starts it from the default branch, plays on the simulated cloud and
// publishes the gate, which a maintainer's merge then needs and finds.
func (d *firstDay) firstPullRequest() {
	t := d.t
	ctx := context.Background()
	gh := d.cloud.GitHub
	main, _, err := d.user.Git.GetRef(ctx, cloud.Owner, cloud.RepoName, "heads/main")
	assert.NilError(t, err)
	_, _, err = d.user.Git.CreateRef(ctx, cloud.Owner, cloud.RepoName, &github.Reference{Ref: github.String("refs/heads/feature"), Object: &github.GitObject{SHA: main.Object.SHA}})
	assert.NilError(t, err)
	commit, _, err := d.user.Repositories.CreateFile(ctx, cloud.Owner, cloud.RepoName, "kernel.cu", &github.RepositoryContentFileOptions{
		Message: github.String("a kernel"), Content: []byte("__global__ void k() {}\n"), Branch: github.String("feature")})
	assert.NilError(t, err)
	head := commit.GetSHA()
	pr, _, err := d.user.PullRequests.Create(ctx, cloud.Owner, cloud.RepoName, &github.NewPullRequest{Title: github.String("A kernel"), Head: github.String("feature"), Base: github.String("main")})
	assert.NilError(t, err)
	// GitHub computes the test merge commit, and the CI starts.
	assert.NilError(t, gh.UpdatePullRequest(cloud.Repository, pr.GetNumber(), func(p *githubsim.PullRequestSpec) { p.MergeCommitSHA = strings.Repeat("c3", 20) }))
	_, err = gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/ci.yml", Event: "pull_request",
		HeadSHA: head, HeadBranch: "feature", PullRequests: []int{pr.GetNumber()}, Status: "in_progress", Jobs: []githubsim.JobSpec{{Name: "test", Status: "in_progress"}}})
	assert.NilError(t, err)

	maintainer := github.NewClient(nil).WithAuthToken(firstDayMaintainer)
	maintainer.BaseURL = d.user.BaseURL
	_, _, err = maintainer.PullRequests.Merge(ctx, cloud.Owner, cloud.RepoName, pr.GetNumber(), "", nil)
	assert.Check(t, is.ErrorContains(err, `Required status check "CI GPU gate" is expected`), "before the gate, the ruleset holds the pull request")

	vars, _, err := d.user.Actions.ListRepoVariables(ctx, cloud.Owner, cloud.RepoName, nil)
	assert.NilError(t, err)
	varMap := map[string]string{}
	for _, v := range vars.Variables {
		varMap[v.Name] = v.Value
	}
	secrets := map[string]string{}
	for _, name := range []string{"RUNPOD_API_KEY", "RUNPOD_GPU_APP_PRIVATE_KEY"} {
		secrets[name], err = gh.EnvironmentSecret(cloud.Repository, ghsetup.Environment, name)
		assert.NilError(t, err, "the environment's secret %s", name)
	}
	played, err := rehearse.PlayPullRequest(ctx, rehearse.PullRequest{Cloud: d.cloud, Dir: d.dir, Number: pr.GetNumber(), HeadSHA: head, HeadRef: "feature",
		Vars: varMap, Secrets: secrets, AppID: d.appID})
	assert.NilError(t, err, "the lane's play")
	t.Logf("the lane's jobs: %+v", played.Jobs)

	var gate *githubsim.CheckRun
	for _, cr := range gh.CheckRuns(cloud.Repository, head) {
		if cr.Name == ghsetup.GateCheck && (gate == nil || cr.ID > gate.ID) {
			gate = &cr
		}
	}
	assert.Assert(t, gate != nil, "no gate on the first pull request's head; jobs: %+v", played.Jobs)
	assert.Check(t, is.Equal(gate.Status, "completed"))
	assert.Check(t, is.Equal(gate.Conclusion, "success"), "%s", gate.Output.Title)
	assert.Check(t, is.Equal(gate.AppID, d.appID), "the gate comes from the user's App")
	_, _, err = maintainer.PullRequests.Merge(ctx, cloud.Owner, cloud.RepoName, pr.GetNumber(), "", nil)
	assert.NilError(t, err, "the required gate is green: a maintainer merges the first pull request")
}
