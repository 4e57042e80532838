package devcli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// initFlags are runpod-gpu init's flags; an empty one is asked for.
type initFlags struct {
	dir, suite, testCommand string
	workflows, gpus         []string
	minVRAM                 int
	maxRunSpend             float64
	runnerApp, force, quiet bool
}

func (a *app) initCmd() *cobra.Command {
	f := initFlags{}
	cmd := &cobra.Command{
		Use:   "init [--dir DIR] [--workflows NAME,…] [--gpus NAME,…] [--max-run-spend USD] [--test-command CMD]",
		Short: "Write the GPU lane's callers and .github/runpod-gpu.yml into a repository checkout",
		Long: `init writes, into the repository checkout --dir, the four caller workflows
(.github/workflows/runpod-gpu.yml, runpod-gpu-reap.yml, runpod-gpu-costs.yml,
local-gpu-gate.yml) and the configuration .github/runpod-gpu.yml.

It reads the ` + "`name:`" + `s of the checkout's CI workflows (those run for pull
requests) for the lane's workflow_run trigger, turns GPU names into the
reviewed allowlist as 'runpod-gpu allowlist' does (this reads RunPod's
catalog, so it needs the API key), and sets the per-run budget. What a flag
does not give is asked on the terminal; --no-input asks nothing.

What it writes lints clean (actionlint) and grants exactly the permissions
the suite's workflows need. It never overwrites a file without --force.
Merge the files to the default branch, then run 'runpod-gpu doctor'.`,
		Example: `  runpod-gpu init
  runpod-gpu init --workflows CI --gpus RTX4090,L40S --max-run-spend 5 --test-command "make test-gpu"
  runpod-gpu init --suite my-org/runpod-gpu@v1 --runner-app --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runInit(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", ".", "the repository checkout to write into")
	fl.StringVar(&f.suite, "suite", defaultSuite(), "the published copy and ref the callers pin: OWNER/runpod-gpu@REF")
	fl.StringSliceVar(&f.workflows, "workflows", nil, "the names (name: keys) of the CI workflows the lane starts on")
	fl.StringSliceVar(&f.gpus, "gpus", nil, "GPU names for the reviewed allowlist: RTX4090,L40S")
	fl.IntVar(&f.minVRAM, "min-vram", 0, "drop GPU types with less VRAM (GB)")
	fl.Float64Var(&f.maxRunSpend, "max-run-spend", 0, "the most one run may spend on pods, in USD")
	fl.StringVar(&f.testCommand, "test-command", "", "the command that runs the GPU tests on the pod")
	fl.BoolVar(&f.runnerApp, "runner-app", false, "a second App mints runners (the two-App split)")
	fl.BoolVar(&f.force, "force", false, "overwrite files that exist")
	fl.BoolVar(&f.quiet, "no-input", false, "ask nothing: a missing flag is an error")
	return cmd
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
	if _, _, err := callers.SplitSuite(f.suite); err != nil {
		return withCode(ExitUsage, err)
	}
	if st, err := os.Stat(f.dir); err != nil || !st.IsDir() {
		return fail(ExitUsage, "--dir %s: not a directory", f.dir)
	}
	if err := refuseOverwrite(f.dir, f.force); err != nil {
		return err
	}
	o := callers.Options{Suite: f.suite, RunnerApp: f.runnerApp, MinVRAMGB: f.minVRAM}
	var err error
	if o.Workflows, err = chooseWorkflows(f.dir, f.workflows, q); err != nil {
		return err
	}
	if o.Tiers, err = a.initTiers(cmd, f, q); err != nil {
		return err
	}
	if o.MaxRunSpendUSD, err = initBudget(f.maxRunSpend, q); err != nil {
		return err
	}
	if o.TestCommand = f.testCommand; o.TestCommand == "" {
		if o.TestCommand, err = q.ask("--test-command", "Command that runs the GPU tests on the pod", "make test-gpu"); err != nil {
			return err
		}
	}
	files, err := callers.Render(o)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if findings, err := callers.Lint(files); err != nil || len(findings) > 0 {
		return fail(ExitFailure, "the callers do not lint (a bug in runpod-gpu init): %v %s", err, strings.Join(findings, "; "))
	}
	return writeInitFiles(a.env.Stdout, f.dir, files)
}

// initFiles are the paths init writes.
var initFiles = []string{callers.LanePath, callers.ReapPath, callers.CostsPath, callers.RelayPath, callers.ConfigPath}

// refuseOverwrite fails, before anything is asked or written, when a file
// init writes exists and --force is not given.
func refuseOverwrite(dir string, force bool) error {
	var existing []string
	for _, p := range initFiles {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			existing = append(existing, p)
		}
	}
	if len(existing) > 0 && !force {
		return fail(ExitUsage, "%s already exist(s) in %s: nothing written; pass --force to overwrite", strings.Join(existing, ", "), dir)
	}
	return nil
}

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

// initTiers turns GPU names into the reviewed tiers with RunPod's catalog,
// as runpod-gpu allowlist does.
func (a *app) initTiers(cmd *cobra.Command, f initFlags, q *asker) ([]config.GPUTier, error) {
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
	if err := a.connect(); err != nil {
		return nil, err
	}
	cctx, cancel := a.bound(cmd.Context(), callTimeout)
	gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{})
	cancel()
	if err != nil {
		return nil, apiError("read the GPU catalog", err)
	}
	doc, dropped, err := buildAllowlist(names, gpus, f.minVRAM)
	for _, d := range dropped {
		fmt.Fprintln(a.env.Stderr, d)
	}
	return doc.GPUTiers, err
}

// initBudget returns the per-run spend bound, asked for when not given.
func initBudget(given float64, q *asker) (float64, error) {
	if given < 0 {
		return 0, fail(ExitUsage, "--max-run-spend %v: want a positive amount of USD", given)
	}
	if given > 0 {
		return given, nil
	}
	answer, err := q.ask("--max-run-spend", "The most one run may spend on pods, in USD", "5")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(answer, "$"), 64)
	if err != nil || v <= 0 {
		return 0, fail(ExitUsage, "--max-run-spend %q: want a positive amount of USD", answer)
	}
	return v, nil
}

// writeInitFiles writes each file (through a temporary file, so none is
// left half-written) and says what comes next.
func writeInitFiles(out io.Writer, dir string, files []callers.File) error {
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fail(ExitFailure, "%v", err)
		}
		tmp := path + ".runpod-gpu-init"
		if err := os.WriteFile(tmp, []byte(f.Text), 0o644); err != nil {
			return fail(ExitFailure, "%v", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fail(ExitFailure, "%v", err)
		}
		fmt.Fprintf(out, "wrote %s\n", f.Path)
	}
	fmt.Fprint(out, `
Next:
  1. Create the GitHub App ('runpod-gpu app'), install it on the repository, and set the repository
     variables RUNPOD_GPU_APP_ID and RUNPOD_GPU_APP_INSTALLATION_ID.
  2. Create the environment runpod-gpu, deployment branches: the default branch only, with the
     secrets RUNPOD_API_KEY and RUNPOD_GPU_APP_PRIVATE_KEY.
  3. Merge these files to the default branch: the lane runs only from there.
  4. Run 'runpod-gpu doctor' before the first pull request.
`)
	return nil
}
