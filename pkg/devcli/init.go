package devcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghsetup"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// initFlags are runpod-gpu init's flags; an empty one is asked for.
type initFlags struct {
	dir, suite, testCommand, repo string
	buildCommand, buildImage      string // the own-job shape: the hosted build of the test archive
	workflows, gpus               []string
	minVRAM                       int
	maxRunSpend                   string
	runnerApp, force, quiet       bool
	dryRun, keyFromStdin          bool
	noRehearse                    bool
	org                           string // where init creates the App, when the repository has none
}

func (a *app) initCmd() *cobra.Command {
	f := initFlags{}
	cmd := &cobra.Command{
		Use:   "init [--dir DIR] [--workflows NAME,…] [--gpus NAME,…] [--max-run-spend USD] [--test-command CMD] [--build-command CMD [--build-image IMAGE]] [--org ORG] [--no-rehearse] [--dry-run] [--force] [--repo OWNER/NAME]",
		Short: "Write the GPU lane's files into a checkout and set the repository up on GitHub",
		Long: `init writes, into the repository checkout --dir, the four caller workflows
(.github/workflows/runpod-gpu.yml, runpod-gpu-reap.yml, runpod-gpu-costs.yml,
local-gpu-gate.yml) and the configuration .github/runpod-gpu.yml, then does
the GitHub side with the token in GH_TOKEN (or GITHUB_TOKEN; API at
GITHUB_API_URL) on --repo (default: the checkout's origin):

  - checks the token's scopes first (repo, workflow), naming each missing one;
  - when the repository has no App (no variable RUNPOD_GPU_APP_ID), creates
    it as 'runpod-gpu app' does: a page to open, two clicks in the browser
    (Create GitHub App, then Install; --org for an organization's App,
    --runner-app for two), its key and ids handed straight to GitHub;
  - creates the environment runpod-gpu, deployable from the default branch
    (and gh-readonly-queue/<base>/* when the repository merges through a queue);
  - sets its secret RUNPOD_API_KEY, sealed with the environment's public key;
  - requires "CI GPU gate" from the lane's App (vars.RUNPOD_GPU_APP_ID)
    through a ruleset, or classic branch protection where rulesets are
    unavailable;
  - commits the files on the branch runpod-gpu/setup and opens a pull request.

The RunPod key comes from RUNPOD_API_KEY (or ~/.runpod/config.toml), or from
the first line of standard input with --runpod-key-stdin; never from a flag.
Without a key, init still writes the files (GPU names resolved with the
catalog it ships) and says which step remains.

Before the GitHub side, init rehearses the files it wrote, as 'runpod-gpu
rehearse' does (offline, free): on a wiring mistake it prints it with its fix
and exits 1, keeping the files and changing nothing on GitHub. --no-rehearse
skips it; 'runpod-gpu rehearse' plays workflows you edit later.

With --build-command, the lane is written in four parts around your own GPU
job instead (.github/docs/workflows.md, "Your own GPU job"): a hosted job runs
the build command at the tested ref while the pod starts (in the container
--build-image when given, such as a CUDA devel image with nvcc) and uploads
the gpu-tests.tar.gz it writes; the GPU job downloads it (one bounded retry),
unpacks it and runs --test-command, a script of the archive, as its last step.

It reads the ` + "`name:`" + `s of the checkout's CI workflows (those run for pull
requests) for the lane's workflow_run trigger. What a flag does not give is
asked on the terminal; --no-input asks nothing. A file that differs from what
init writes is never overwritten without --force: init shows the diff and
changes nothing. --dry-run prints every change, locally and on GitHub, and
makes none. Run it again at any time: it changes only what is missing.`,
		Example: `  RUNPOD_API_KEY=… runpod-gpu init --workflows CI --gpus RTX4090,L40S --max-run-spend 5 --test-command "make test-gpu"
  runpod-gpu init --dry-run
  runpod-gpu init --gpus RTX4090 --max-run-spend 5 --build-command "make archive" --build-image nvidia/cuda:12.6.3-devel-ubuntu22.04 --test-command ./gpu-tests/run.sh
  pass show runpod | runpod-gpu init --runpod-key-stdin --no-input --gpus RTX4090 --max-run-spend 5 --test-command "make test-gpu"
  runpod-gpu init --suite my-org/runpod-gpu@v1 --runner-app --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runInit(cmd, f) },
	}
	f.register(cmd.Flags())
	return cmd
}

// register declares init's flags on fl.
func (f *initFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.dir, "dir", ".", "the repository checkout to write into")
	fl.StringVar(&f.suite, "suite", defaultSuite(), "the published copy and ref the callers pin: OWNER/runpod-gpu@REF")
	fl.StringSliceVar(&f.workflows, "workflows", nil, "the names (name: keys) of the CI workflows the lane starts on")
	fl.StringSliceVar(&f.gpus, "gpus", nil, "GPU names for the reviewed allowlist: RTX4090,L40S")
	fl.IntVar(&f.minVRAM, "min-vram", 0, "drop GPU types with less VRAM (GB)")
	fl.StringVar(&f.maxRunSpend, "max-run-spend", "", "the most one run may spend on pods, in USD")
	fl.StringVar(&f.testCommand, "test-command", "", "the command that runs the GPU tests on the pod")
	fl.StringVar(&f.buildCommand, "build-command", "", "the command that writes the test archive gpu-tests.tar.gz on a hosted runner: the lane then runs your own GPU job, which unpacks it and runs --test-command")
	fl.StringVar(&f.buildImage, "build-image", "", "the container the build command runs in, with an exact tag or digest (nvidia/cuda:12.6.3-devel-ubuntu22.04); only with --build-command")
	fl.BoolVar(&f.runnerApp, "runner-app", false, "a second App mints runners (the two-App split)")
	fl.BoolVar(&f.force, "force", false, "overwrite files that differ from what init writes, and replace the environment's secrets")
	fl.BoolVar(&f.quiet, "no-input", false, "ask nothing: a missing flag is an error")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print every change, locally and on GitHub, and make none")
	fl.StringVar(&f.repo, "repo", "", "the GitHub repository, OWNER/NAME (default: the checkout's origin)")
	fl.BoolVar(&f.keyFromStdin, "runpod-key-stdin", false, "read the RunPod API key from the first line of standard input")
	fl.StringVar(&f.org, "org", "", "create the App, when the repository has none, in this organization (default: your user)")
	fl.BoolVar(&f.noRehearse, "no-rehearse", false, "do not rehearse the files written (offline, free) before the GitHub side")
}

// defaultSuite is the copy this program was built from, at its major
// version: github.com/OWNER/runpod-gpu v1.2.3 gives OWNER/runpod-gpu@v1.
func defaultSuite() string {
	owner, ref := "org", "v1"
	if info, ok := debug.ReadBuildInfo(); ok {
		if parts := strings.Split(info.Main.Path, "/"); len(parts) == 3 && parts[2] == "runpod-gpu" {
			owner = parts[1]
		}
		if v := info.Main.Version; strings.HasPrefix(v, "v") && !strings.Contains(v, "-") {
			ref, _, _ = strings.Cut(v, ".")
		}
	}
	return owner + "/runpod-gpu@" + ref
}

// asker asks for what a flag did not give, on stderr, reading answers
// from stdin; with no input (or --no-input) a missing value is a usage error.
type asker struct {
	in    *bufio.Reader
	out   io.Writer
	quiet bool
}

func (q *asker) ask(flag, question, fallback string) (string, error) {
	if q.quiet {
		return "", fail(ExitUsage, "%s is required (--no-input asks nothing)", flag)
	}
	if fallback != "" {
		question += " [" + fallback + "]"
	}
	fmt.Fprintf(q.out, "%s: ", question)
	line, err := q.in.ReadString('\n')
	answer := strings.TrimSpace(line)
	if answer == "" && fallback != "" {
		return fallback, nil
	}
	if answer == "" {
		if errors.Is(err, io.EOF) {
			return "", fail(ExitUsage, "%s is required (no answer on standard input)", flag)
		}
		return "", fail(ExitUsage, "%s: no answer", flag)
	}
	return answer, nil
}

func (a *app) runInit(cmd *cobra.Command, f initFlags) error {
	q := &asker{in: bufio.NewReader(cmd.InOrStdin()), out: a.env.Stderr, quiet: f.quiet}
	if err := checkInitFlags(f); err != nil { // initvalues.go
		return err
	}
	if _, _, err := callers.SplitSuite(f.suite); err != nil {
		return withCode(ExitUsage, err)
	}
	if st, err := os.Stat(f.dir); err != nil || !st.IsDir() {
		return fail(ExitUsage, "--dir %s: not a directory", f.dir)
	}
	repo, githubStep, err := a.githubRepository(f.repo, f.dir)
	if err != nil {
		return err
	}
	key, err := a.initRunPodKey(f, q)
	if err != nil {
		return err
	}
	files, err := a.renderInitFiles(cmd, f, q, key)
	if err != nil {
		return err
	}
	if err := a.writeInitFiles(f, files); err != nil {
		return err
	}
	if !f.dryRun && !f.noRehearse {
		fmt.Fprintf(a.env.Stdout, "\nRehearsal of %s's lane (offline, free; --no-rehearse skips it):\n", f.dir)
		if err := a.rehearseDir(cmd.Context(), f.dir, false, " ('runpod-gpu rehearse'): the files are kept, and nothing changed on GitHub", false); err != nil {
			return err
		}
	}
	var remaining []string
	if key == "" {
		remaining = append(remaining, "the secret RUNPOD_API_KEY of the environment runpod-gpu: run 'RUNPOD_API_KEY=… runpod-gpu init' again (or pipe the key to 'runpod-gpu init --runpod-key-stdin'); the GPU names were resolved with the catalog runpod-gpu ships, and the run checks them against RunPod's")
	}
	pullURL := ""
	if githubStep != "" {
		remaining = append(remaining, githubStep)
	} else {
		more, url, err := a.initGitHub(cmd.Context(), f, repo, key, files)
		if err != nil {
			return err
		}
		remaining, pullURL = append(remaining, more...), url
	}
	printInitNext(a.env.Stdout, remaining, pullURL, f.dryRun)
	return nil
}

// initApp creates the lane's App, as runpod-gpu app does, when the
// repository has none (no variable RUNPOD_GPU_APP_ID) and this is no dry
// run; the App step binds the gate's ruleset to it and sets its key and ids.
func (a *app) initApp(ctx context.Context, f initFlags, repo ghRepository) error {
	if f.dryRun {
		return nil
	}
	vctx, cancel := a.bound(ctx, callTimeout)
	defer cancel()
	p, err := a.planner(vctx, repo)
	if err != nil {
		return err
	}
	vars, err := p.Variables(vctx)
	if err != nil {
		return githubFailure("read the repository's variables", err)
	}
	if id := vars["RUNPOD_GPU_APP_ID"]; id != "" {
		fmt.Fprintf(a.env.Stdout, "\nThe App: %s/%s has one (RUNPOD_GPU_APP_ID %s); 'runpod-gpu app' makes another.\n", repo.owner, repo.name, id)
		return nil
	}
	suite, _, _ := strings.Cut(f.suite, "@")
	fmt.Fprintf(a.env.Stdout, "\nThe App: %s/%s has none (no variable RUNPOD_GPU_APP_ID); creating it.\n", repo.owner, repo.name)
	_, err = a.createApps(ctx, appFlags{org: f.org, suite: suite, split: f.runnerApp, wait: appCreateWait, installWait: appInstallWait,
		repo: f.repo, dir: f.dir, forInit: true}, repo, "")
	return err
}

// initRunPodKey reads the RunPod key: the first line of standard input with
// --runpod-key-stdin, else RUNPOD_API_KEY or the config file; "" when none.
func (a *app) initRunPodKey(f initFlags, q *asker) (string, error) {
	if !f.keyFromStdin {
		cfg, warning, err := loadConfig(a.env.Home)
		if err != nil {
			return "", withCode(ExitFailure, err)
		}
		if warning != "" {
			fmt.Fprintf(a.env.Stderr, "runpod-gpu: warning: %s\n", warning)
		}
		return apiKey(a.env.Getenv, cfg), nil
	}
	line, err := q.in.ReadString('\n')
	key := runpod.Key(line)
	if key == "" || (err != nil && !errors.Is(err, io.EOF)) {
		return "", fail(ExitUsage, "--runpod-key-stdin: no key on the first line of standard input")
	}
	a.key = key
	return key, nil
}

// renderInitFiles asks for what the flags do not give and renders the
// files, which must lint.
func (a *app) renderInitFiles(cmd *cobra.Command, f initFlags, q *asker, key string) ([]callers.File, error) {
	o := callers.Options{Suite: f.suite, RunnerApp: f.runnerApp, MinVRAMGB: f.minVRAM, BuildCommand: f.buildCommand, BuildImage: f.buildImage}
	var err error
	if o.Workflows, err = chooseWorkflows(f.dir, f.workflows, q); err != nil {
		return nil, err
	}
	if o.Tiers, err = a.initTiers(cmd, f, q, key); err != nil {
		return nil, err
	}
	if o.MaxRunSpendUSD, err = initBudget(f.maxRunSpend, q); err != nil {
		return nil, err
	}
	if target := makefileArchiveTarget(f.dir); target != "" && o.BuildCommand == "" {
		fmt.Fprintf(a.env.Stderr, "runpod-gpu: the Makefile has a target %s: with --build-command \"make %s\" (and --build-image for a container), init writes your own GPU job instead, which builds the test archive on a hosted runner and only runs it on the pod\n", target, target)
	}
	if o.TestCommand = f.testCommand; o.TestCommand == "" {
		fallback := "make test-gpu"
		if o.BuildCommand != "" {
			fallback = "./gpu-tests/run.sh" // a script of the archive: the pod has no checkout
		}
		if o.TestCommand, err = q.ask("--test-command", "Command that runs the GPU tests on the pod", fallback); err != nil {
			return nil, err
		}
	}
	if err := checkInitValues(o); err != nil { // the answers and the names read, too
		return nil, err
	}
	files, err := callers.Render(o)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if findings, err := callers.Lint(files); err != nil || len(findings) > 0 {
		return nil, fail(ExitFailure, "the callers do not lint (a bug in runpod-gpu init): %v %s", err, strings.Join(findings, "; "))
	}
	return files, nil
}

// initFiles are the paths init writes.
var initFiles = []string{callers.LanePath, callers.ReapPath, callers.CostsPath, callers.RelayPath, callers.ConfigPath}

// repoWorkflow is a workflow of the checkout, as init reads it.
type repoWorkflow struct {
	file, name  string
	pullRequest bool // it runs for pull requests
	suite       bool // it calls the suite (a caller, not CI)
}

// readWorkflows reads the name and triggers of every workflow in dir.
func readWorkflows(dir string) ([]repoWorkflow, error) {
	var out []repoWorkflow
	wfDir := filepath.Join(dir, ".github", "workflows")
	entries, err := os.ReadDir(wfDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yml" && ext != ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(wfDir, e.Name()))
		if err != nil {
			return nil, err
		}
		var doc struct {
			Name string    `yaml:"name"`
			On   yaml.Node `yaml:"on"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf(".github/workflows/%s: %w", e.Name(), err)
		}
		out = append(out, repoWorkflow{file: e.Name(), name: doc.Name, pullRequest: triggers(&doc.On, "pull_request"),
			suite: strings.Contains(string(data), "/runpod-gpu/.github/workflows/")})
	}
	return out, nil
}

// triggers reports whether an on: value (a name, a list or a map) has event.
func triggers(on *yaml.Node, event string) bool {
	switch on.Kind {
	case yaml.ScalarNode:
		return on.Value == event
	case yaml.SequenceNode:
		return slices.ContainsFunc(on.Content, func(n *yaml.Node) bool { return n.Value == event })
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			if on.Content[i].Value == event {
				return true
			}
		}
	}
	return false
}

// chooseWorkflows returns the CI workflows' names the lane starts on: the
// flag's, each of which must name a workflow of the checkout; else the one
// workflow run for pull requests; else the user's choice.
func chooseWorkflows(dir string, given []string, q *asker) ([]string, error) {
	all, err := readWorkflows(dir)
	if err != nil {
		return nil, fail(ExitFailure, "read the workflows: %v", err)
	}
	var names, ci, unnamed []string
	for _, w := range all {
		switch {
		case w.suite:
		case w.name == "" && w.pullRequest:
			unnamed = append(unnamed, w.file)
		case w.name != "":
			names = append(names, w.name)
			if w.pullRequest {
				ci = append(ci, w.name)
			}
		}
	}
	for _, n := range given {
		if !slices.Contains(names, n) {
			return nil, fail(ExitUsage, "--workflows %q: no workflow in %s has that name: (the lane starts by name, not file name; found %s)",
				n, filepath.Join(dir, ".github", "workflows"), quoted(names))
		}
	}
	if len(given) > 0 {
		return given, nil
	}
	if len(ci) == 1 {
		return ci, nil
	}
	if len(ci) == 0 {
		hint := ""
		if len(unnamed) > 0 {
			hint = fmt.Sprintf(" (%s run(s) for pull requests but have no name: give each a `name:`)", strings.Join(unnamed, ", "))
		}
		return nil, fail(ExitUsage, "no named CI workflow that runs for pull requests in %s%s; name one with --workflows", dir, hint)
	}
	answer, err := q.ask("--workflows", "CI workflows the lane starts on, comma-separated ("+strings.Join(ci, ", ")+")", strings.Join(ci, ","))
	if err != nil {
		return nil, err
	}
	return chooseWorkflows(dir, strings.Split(answer, ","), q)
}

// initTiers turns GPU names into the reviewed tiers as runpod-gpu allowlist
// does: with RunPod's catalog when there is a key, else with the catalog
// runpod-gpu ships.
func (a *app) initTiers(cmd *cobra.Command, f initFlags, q *asker, key string) ([]config.GPUTier, error) {
	names := f.gpus
	if len(names) == 0 {
		answer, err := q.ask("--gpus", "GPU names for the reviewed allowlist, comma-separated (e.g. RTX4090,L40S)", "")
		if err != nil {
			return nil, err
		}
		names = strings.Split(answer, ",")
	}
	if f.minVRAM < 0 || f.minVRAM > 1024 {
		return nil, fail(ExitUsage, "--min-vram %d: want 0 to 1024 GB", f.minVRAM)
	}
	gpus := offlineCatalog
	if key != "" {
		if err := a.connect(); err != nil {
			return nil, err
		}
		cctx, cancel := a.bound(cmd.Context(), callTimeout)
		live, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{})
		cancel()
		if err != nil {
			return nil, apiError("read the GPU catalog", err)
		}
		gpus = live
	}
	doc, dropped, err := buildAllowlist(names, gpus, f.minVRAM)
	for _, d := range dropped {
		fmt.Fprintln(a.env.Stderr, d)
	}
	return doc.GPUTiers, err
}

// initBudget returns the per-run spend bound, asked for when not given.
func initBudget(given string, q *asker) (money.Amount, error) {
	if given == "" {
		answer, err := q.ask("--max-run-spend", "The most one run may spend on pods, in USD", "5")
		if err != nil {
			return 0, err
		}
		given = strings.TrimPrefix(answer, "$")
	}
	v, err := money.Parse("--max-run-spend", given, initSpendLimit)
	if err != nil {
		return 0, fail(ExitUsage, "%v", err)
	}
	return v, nil
}

// writeInitFiles writes the files that are missing, keeps those that are
// the same, and overwrites one that differs only with --force: without it,
// every difference is shown and nothing is written. A dry run writes nothing.
func (a *app) writeInitFiles(f initFlags, files []callers.File) error {
	var differ []string
	state := map[string]string{}
	for _, file := range files {
		disk, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(file.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state[file.Path] = "write"
		case err != nil:
			return fail(ExitFailure, "read %s: %v", file.Path, err)
		case string(disk) == file.Text:
			state[file.Path] = "unchanged"
		default:
			state[file.Path] = "overwrite"
			differ = append(differ, file.Path)
			fmt.Fprint(a.env.Stderr, lineDiff(file.Path, string(disk), file.Text))
		}
	}
	if len(differ) > 0 && !f.force {
		return fail(ExitUsage, "%s differ(s) from what init writes (diff above): nothing written, nothing changed on GitHub; keep yours, or pass --force to overwrite", strings.Join(differ, ", "))
	}
	if f.dryRun {
		fmt.Fprintf(a.env.Stdout, "dry run: nothing is written and nothing changes on GitHub\n")
	}
	for _, file := range files {
		switch {
		case state[file.Path] == "unchanged":
			fmt.Fprintf(a.env.Stdout, "unchanged %s\n", file.Path)
		case f.dryRun:
			fmt.Fprintf(a.env.Stdout, "would %s %s\n", state[file.Path], file.Path)
		default:
			if err := writeFileAtomic(filepath.Join(f.dir, filepath.FromSlash(file.Path)), file.Text); err != nil {
				return fail(ExitFailure, "%v", err)
			}
			fmt.Fprintf(a.env.Stdout, "wrote %s\n", file.Path)
		}
	}
	return nil
}

// writeFileAtomic writes through a temporary file, so none is left half-written.
func writeFileAtomic(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".runpod-gpu-init"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// initGitHub does init's GitHub side: the App when the repository has none,
// the set-up's plan (applied unless dry), and the written files staged once
// the pull request is open. It returns the steps that remain and the pull request.
func (a *app) initGitHub(ctx context.Context, f initFlags, repo ghRepository, key string, files []callers.File) ([]string, string, error) {
	if err := a.initApp(ctx, f, repo); err != nil {
		return nil, "", err
	}
	req := ghsetup.Request{ReplaceSecrets: f.force, PullTitle: "Set up the runpod-gpu GPU lane",
		PullBody: "Written by `runpod-gpu init`: the lane's caller workflows and `.github/runpod-gpu.yml`. Merge it, then run `runpod-gpu doctor`."}
	if key != "" {
		req.Secrets = map[string]string{"RUNPOD_API_KEY": key}
	}
	for _, file := range files {
		req.Files = append(req.Files, ghsetup.File{Path: file.Path, Text: file.Text})
	}
	plan, err := a.setUpGitHub(ctx, repo, req, f.dryRun)
	if err != nil {
		return nil, "", err
	}
	if plan.PullURL != "" && !f.dryRun {
		a.stageInitFiles(ctx, f.dir, files)
	}
	return plan.Remaining, plan.PullURL, nil
}

// stageInitFiles stages the files init wrote in the checkout (git add): the
// same files reach the default branch through init's pull request, and git
// refuses to pull over untracked files, identical or not, while staged ones
// that match what the pull brings are taken as they are. Best effort: a
// checkout git cannot stage is told what to do.
func (a *app) stageInitFiles(ctx context.Context, dir string, files []callers.File) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"-C", dir, "add", "--"}
	for _, file := range files {
		args = append(args, filepath.FromSlash(file.Path))
	}
	if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
		fmt.Fprintf(a.env.Stderr, "runpod-gpu: could not stage the files with git add (%v: %s): before 'git pull' after the merge, delete them from the checkout\n",
			err, strings.TrimSpace(string(out)))
		return
	}
	fmt.Fprintln(a.env.Stdout, "\nStaged the files in the checkout (git add), so 'git pull' takes them once the pull request is merged.")
}

// printInitNext says what remains, in the order it can be done.
func printInitNext(out io.Writer, remaining []string, pullURL string, dry bool) {
	if dry {
		fmt.Fprintln(out, "\nDry run: nothing was changed. Run it again without --dry-run to make these changes.")
		return
	}
	var steps []string
	steps = append(steps, remaining...)
	if pullURL != "" {
		steps = append(steps, "review and merge the pull request "+pullURL+": the lane runs only from the default branch")
	} else if len(remaining) > 0 {
		steps = append(steps, "merge the files to the default branch: the lane runs only from there")
	}
	steps = append(steps, "run 'runpod-gpu doctor' before the first pull request ('runpod-gpu rehearse' replays workflows you edit, free and offline)")
	fmt.Fprintln(out, "\nNext:")
	for i, s := range steps {
		fmt.Fprintf(out, "  %d. %s\n", i+1, s)
	}
}
