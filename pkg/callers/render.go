package callers

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
)

// Paths of what Render writes, relative to the repository's root.
const (
	LanePath   = ".github/workflows/runpod-gpu.yml"
	ReapPath   = ".github/workflows/runpod-gpu-reap.yml"
	CostsPath  = ".github/workflows/runpod-gpu-costs.yml"
	RelayPath  = ".github/workflows/local-gpu-gate.yml"
	ConfigPath = ".github/runpod-gpu.yml"
)

// Options are what a repository's callers and configuration depend on.
type Options struct {
	// Suite is the copy and ref the callers pin: "owner/runpod-gpu@v1".
	Suite string
	// Workflows are the `name:`s of the CI workflows the lane starts on.
	Workflows []string
	// TestCommand runs the GPU tests on the pod.
	TestCommand string
	// BuildCommand, when set, builds the test archive (TestArchive) on a
	// hosted runner: the lane is then written in four parts around the
	// repository's own GPU job, which unpacks the archive and runs
	// TestCommand in it.
	BuildCommand string
	// BuildImage is the container the build job runs in (a CUDA devel
	// image, say); "" runs it on the hosted runner itself. Only with BuildCommand.
	BuildImage string
	// RunnerApp: a second App mints runners (the two-App split).
	RunnerApp bool
	// Tiers is the reviewed GPU allowlist.
	Tiers []config.GPUTier
	// MinVRAMGB drops smaller GPU types (0: the default).
	MinVRAMGB int
	// MaxRunSpendUSD bounds one run's spend (0: no bound beyond the defaults').
	MaxRunSpendUSD money.Amount
}

// File is one file Render writes.
type File struct {
	Path string
	Text string
}

var suiteRE = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/runpod-gpu@([A-Za-z0-9._/-]+)$`)

// SplitSuite returns a suite reference's owner and ref.
func SplitSuite(suite string) (owner, ref string, err error) {
	m := suiteRE.FindStringSubmatch(suite)
	if m == nil {
		return "", "", fmt.Errorf("suite %q: want OWNER/runpod-gpu@REF, e.g. org/runpod-gpu@v1 (the published suite)", suite)
	}
	return m[1], m[2], nil
}

// Render returns the four callers (the lane, the reaper, the cost history,
// the local relay) and the configuration, each checked: the configuration
// loads with the lane's own code, and every caller grants exactly what the
// suite's workflows need (PermissionProblems with SuiteNeeds).
func Render(o Options) ([]File, error) {
	owner, ref, err := SplitSuite(o.Suite)
	if err != nil {
		return nil, err
	}
	if len(o.Workflows) == 0 {
		return nil, errors.New("no CI workflow name: the lane starts while one of them runs for a pull request")
	}
	if strings.TrimSpace(o.TestCommand) == "" {
		return nil, errors.New("no test command: the GPU job runs it on the pod")
	}
	if err := checkBuild(o); err != nil {
		return nil, err
	}
	uses := func(workflow string) string { return owner + "/runpod-gpu/.github/workflows/" + workflow + "@" + ref }
	cfg, err := renderConfig(o, owner, ref)
	if err != nil {
		return nil, err
	}
	lane := renderLane(o, uses("gpu-lane.yml"))
	if o.BuildCommand != "" {
		lane = renderOwnJobLane(o, uses)
	}
	files := []File{
		{Path: LanePath, Text: lane},
		{Path: ReapPath, Text: renderReap(uses("reap.yml"))},
		{Path: CostsPath, Text: renderCosts(uses("cost-history.yml"))},
		{Path: RelayPath, Text: renderRelay(uses("local-gate.yml"))},
		{Path: ConfigPath, Text: cfg},
	}
	for _, f := range files[:4] {
		if problems := PermissionProblems(f.Text, SuiteNeedsOf); len(problems) > 0 {
			return nil, fmt.Errorf("%s: %s", f.Path, strings.Join(problems, "; "))
		}
	}
	return files, nil
}

// checkBuild checks the own-job options: an image only with a build
// command, and an image pinned.
func checkBuild(o Options) error {
	if o.BuildCommand != "" && strings.TrimSpace(o.BuildCommand) == "" {
		return errors.New("build command is blank: want the command that writes " + TestArchive)
	}
	if o.BuildCommand == "" {
		if o.BuildImage != "" {
			return fmt.Errorf("build image %q without a build command: the image is where the build command runs", o.BuildImage)
		}
		return nil
	}
	if o.BuildImage != "" {
		return CheckBuildImage(o.BuildImage)
	}
	return nil
}

// quote writes s as a YAML double-quoted scalar (JSON's quoting is YAML's).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// grant writes what a caller's token must grant the workflow, as a block.
func grant(workflow, indent string) string {
	var b strings.Builder
	needs := SuiteNeeds[workflow]
	for _, scope := range slices.Sorted(maps.Keys(needs)) {
		fmt.Fprintf(&b, "%s%s: %s\n", indent, scope, needs[scope])
	}
	return b.String()
}

const generated = "# Written by `runpod-gpu init`; `runpod-gpu doctor` checks the repository's set-up.\n"

func renderLane(o Options, uses string) string {
	var b strings.Builder
	b.WriteString("# .github/workflows/runpod-gpu.yml: the GPU lane, started while your CI runs for a pull request.\n" + generated)
	b.WriteString("name: RunPod GPU\non:\n  workflow_run:\n")
	fmt.Fprintf(&b, "    workflows: %s   # the `name:` of your CI workflows (not their file names)\n", quoteAll(o.Workflows))
	b.WriteString("    types: [in_progress]\n" +
		"  merge_group:        # with a merge queue: the gate on each group's head (never fires without one)\n    types: [checks_requested]\n" +
		"  workflow_dispatch:\n    inputs:\n" +
		"      pr-number: {description: \"PR to validate, or 0 for a commit\", default: \"0\"}\n" +
		"      sha: {description: \"commit to validate when pr-number is 0\", default: \"\"}\n")
	b.WriteString("permissions:\n" + grant("gpu-lane.yml", "  "))
	b.WriteString("jobs:\n  gpu:\n" +
		"    # Fork PRs never appear in workflow_run's pull_requests, so they never reach the paid lane.\n" +
		"    if: github.event_name != 'workflow_run' || github.event.workflow_run.pull_requests[0] != null\n")
	fmt.Fprintf(&b, "    uses: %s\n    with:\n", uses)
	b.WriteString("      pr-number: ${{ github.event.workflow_run.pull_requests[0].number || inputs.pr-number }}\n" +
		"      head-sha: ${{ github.event.workflow_run.head_sha || github.event.merge_group.head_sha }}\n      dispatch-sha: ${{ inputs.sha }}\n")
	fmt.Fprintf(&b, "      test-command: %s\n", quote(o.TestCommand))
	b.WriteString("      app-id: ${{ vars.RUNPOD_GPU_APP_ID }}\n      app-installation-id: ${{ vars.RUNPOD_GPU_APP_INSTALLATION_ID }}\n")
	if o.RunnerApp {
		b.WriteString("      runner-app-id: ${{ vars.RUNPOD_GPU_RUNNER_APP_ID }}\n" +
			"      runner-app-installation-id: ${{ vars.RUNPOD_GPU_RUNNER_APP_INSTALLATION_ID }}\n")
	}
	b.WriteString("    # Each secret by name, never `secrets: inherit`; they live in the runpod-gpu environment.\n    secrets:\n" +
		"      RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}\n      RUNPOD_GPU_APP_PRIVATE_KEY: ${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\n")
	if o.RunnerApp {
		b.WriteString("      RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY: ${{ secrets.RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY }}\n")
	}
	return b.String()
}

func renderReap(uses string) string {
	return "# .github/workflows/runpod-gpu-reap.yml: the independent safety net that reclaims orphaned pods.\n" + generated +
		"name: RunPod GPU reaper\non:\n  schedule: [{cron: \"*/15 * * * *\"}]\n" +
		"  workflow_dispatch: {inputs: {execute: {type: boolean, default: false}}}   # manual runs are dry runs\n" +
		"permissions:\n" + grant("reap.yml", "  ") +
		"jobs:\n  reap:\n    uses: " + uses + "\n" +
		"    with: {execute: \"${{ inputs.execute == true }}\"}\n" +
		"    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\"}\n"
}

func renderCosts(uses string) string {
	return "# .github/workflows/runpod-gpu-costs.yml: daily, what GPU CI cost, and the hosts' reputation.\n" + generated +
		"name: RunPod GPU costs\non: {schedule: [{cron: \"17 6 * * *\"}], workflow_dispatch: {}}\n" +
		"permissions:\n" + grant("cost-history.yml", "  ") +
		"jobs:\n  costs:\n    uses: " + uses + "\n" +
		"    with: {workflow: runpod-gpu.yml}\n" +
		"    # With the key, each day's estimates are reconciled with RunPod's billing (untracked spend named).\n" +
		"    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\"}\n"
}

func renderRelay(uses string) string {
	return "# .github/workflows/local-gpu-gate.yml: the relay a maintainer's local GPU run dispatches.\n" + generated +
		"name: RunPod GPU local gate\non:\n  workflow_dispatch:\n" +
		"    inputs: {pr-number: {required: true}, sha: {required: true}, comment-id: {required: true}}\n" +
		"permissions:\n" + grant("local-gate.yml", "  ") +
		"jobs:\n  relay:\n    uses: " + uses + "\n    with:\n" +
		"      pr-number: \"${{ inputs.pr-number }}\"\n      sha: \"${{ inputs.sha }}\"\n      comment-id: \"${{ inputs.comment-id }}\"\n" +
		"      app-id: \"${{ vars.RUNPOD_GPU_APP_ID }}\"   # publish through the lane's App, so an App-bound required check is met\n" +
		"      app-installation-id: \"${{ vars.RUNPOD_GPU_APP_INSTALLATION_ID }}\"\n" +
		"    secrets: {RUNPOD_GPU_APP_PRIVATE_KEY: \"${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\"}\n"
}

// renderConfig writes .github/runpod-gpu.yml and proves it loads with the
// lane's own configuration code.
func renderConfig(o Options, owner, ref string) (string, error) {
	if len(o.Tiers) == 0 {
		return "", errors.New("no GPU tier: the reviewed allowlist needs at least one")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# yaml-language-server: $schema=https://raw.githubusercontent.com/%s/runpod-gpu/%s/pkg/config/runpod-gpu.schema.json\n", owner, ref)
	b.WriteString("# The reviewed GPU allowlist and budget, read from the default branch.\n" + generated)
	b.WriteString("gpu_tiers:\n")
	for _, tier := range o.Tiers {
		fmt.Fprintf(&b, "  - name: %s\n    gpu_ids: %s\n", quote(tier.Name), quoteAll(tier.GPUIDs))
	}
	if o.MinVRAMGB > 0 {
		fmt.Fprintf(&b, "min_vram_gb: %d\n", o.MinVRAMGB)
	}
	if o.MaxRunSpendUSD > 0 {
		fmt.Fprintf(&b, "max_run_spend_usd: %s\n", strings.TrimPrefix(o.MaxRunSpendUSD.Format(money.Exact), "$"))
	}
	if _, err := config.Parse([]byte(b.String()), ConfigPath); err != nil {
		return "", err
	}
	return b.String(), nil
}
