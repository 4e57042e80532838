package callers

import (
	"fmt"
	"regexp"
	"strings"
)

// The own-job caller's test archive: the build command must write
// TestArchive at the checkout's root; the build job uploads it as the
// artifact TestArchiveArtifact, which the GPU job downloads and unpacks
// before it runs the test command.
const (
	TestArchive         = "gpu-tests.tar.gz"
	TestArchiveArtifact = "gpu-tests"
)

// The actions the own-job caller's hosted and GPU jobs use, pinned by commit
// as every workflow of the suite pins them.
const (
	checkoutAction         = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2"
	uploadArtifactAction   = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"
	downloadArtifactAction = "actions/download-artifact@fa0a91b85d4f404e444e00e005971372dc801d16 # v4.1.8"
)

// imageRefRE is a container image reference with a tag or a digest:
// registry/path:tag, registry/path@sha256:…, or both.
var imageRefRE = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@sha256:[0-9a-f]{64})?$`)

// CheckBuildImage refuses an image the build job could not pin: it must be
// a reference with a tag other than latest, or a digest, so that the
// compiler that builds the tests changes only in a reviewed commit.
func CheckBuildImage(image string) error {
	m := imageRefRE.FindStringSubmatch(image)
	if m == nil {
		return fmt.Errorf("build image %q: want a container image reference such as nvidia/cuda:12.6.3-devel-ubuntu22.04", image)
	}
	if !strings.Contains(image, "@sha256:") && (m[1] == "" || m[1] == "latest") {
		return fmt.Errorf("build image %q: want an exact tag (nvidia/cuda:12.6.3-devel-ubuntu22.04) or a digest, not latest or none: the compiler must change only in a reviewed commit", image)
	}
	return nil
}

// renderOwnJobLane writes the lane as four parts around the repository's
// own GPU job, the shape .github/docs/workflows.md shows: a hosted build job
// (in o.BuildImage when set) runs o.BuildCommand at the tested ref while
// the pod starts and uploads the archive; the GPU job downloads it with
// one bounded retry, unpacks it and runs o.TestCommand as its last step.
func renderOwnJobLane(o Options, uses func(string) string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# .github/workflows/runpod-gpu.yml: the GPU lane in four parts around your own GPU job, started while\n")
	w("# your CI runs for a pull request: a hosted job builds the test archive while the pod starts, the GPU job\n")
	w("# only downloads, unpacks and runs it.\n" + generated)
	w("name: RunPod GPU\non:\n  workflow_run:\n")
	w("    workflows: %s   # the `name:` of your CI workflows (not their file names)\n", quoteAll(o.Workflows))
	w("    types: [in_progress]\n  workflow_dispatch:\n    inputs:\n" +
		"      pr-number: {description: \"PR to validate, or 0 for a commit\", default: \"0\"}\n" +
		"      sha: {description: \"commit to validate when pr-number is 0\", default: \"\"}\n")
	w("permissions: {}\n")
	w("concurrency:   # one lane per PR head, held here over all four parts (a part must not hold it too)\n" +
		"  group: runpod-gpu-prepare-${{ github.event.workflow_run.head_sha || github.run_id }}\n  cancel-in-progress: false\n")
	w("jobs:\n  authorize:   # the lane's settings, once: they travel to the other parts in `lane`\n")
	w("    # Fork PRs never appear in workflow_run's pull_requests, so they never reach the paid lane.\n")
	w("    if: github.event_name == 'workflow_dispatch' || github.event.workflow_run.pull_requests[0] != null\n")
	w("    uses: %s\n    permissions: %s\n    with:\n", uses("gpu-lane-authorize.yml"), SuiteNeeds["gpu-lane-authorize.yml"])
	w("      pr-number: ${{ github.event.workflow_run.pull_requests[0].number || inputs.pr-number }}\n" +
		"      head-sha: ${{ github.event.workflow_run.head_sha }}\n      dispatch-sha: ${{ inputs.sha }}\n")
	w("      gpu-job-name: GPU tests            # the job below, the only one that may run on the pod\n")
	w("      test-step-name: Run GPU tests      # its step whose start disarms the setup deadline\n")
	w("      test-command: %s   # what that step runs, for the lane digest (tree reuse)\n", quote(o.TestCommand))
	w("      test-archive-artifact: %s   # build's artifact, named in the lane record for runpod-gpu repro\n", TestArchiveArtifact)
	w("      app-id: ${{ vars.RUNPOD_GPU_APP_ID }}\n      app-installation-id: ${{ vars.RUNPOD_GPU_APP_INSTALLATION_ID }}\n")
	if o.RunnerApp {
		w("      runner-app-id: ${{ vars.RUNPOD_GPU_RUNNER_APP_ID }}\n" +
			"      runner-app-installation-id: ${{ vars.RUNPOD_GPU_RUNNER_APP_INSTALLATION_ID }}\n")
	}
	w("    # Each secret by name, never `secrets: inherit`; they live in the runpod-gpu environment.\n")
	w("    secrets: {RUNPOD_GPU_APP_PRIVATE_KEY: \"${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\"}\n")
	renderBuildJob(&b, o)
	podSecrets := `RUNPOD_API_KEY: "${{ secrets.RUNPOD_API_KEY }}", RUNPOD_GPU_APP_PRIVATE_KEY: "${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}"`
	if o.RunnerApp {
		podSecrets += `, RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY: "${{ secrets.RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY }}"`
	}
	w("  provision:\n    needs: authorize\n    if: needs.authorize.outputs.decision == 'run'\n")
	w("    uses: %s\n    permissions: %s\n", uses("gpu-lane-provision.yml"), SuiteNeeds["gpu-lane-provision.yml"])
	w("    with: {lane: \"${{ needs.authorize.outputs.lane }}\"}\n    secrets: {%s}\n", podSecrets)
	w("  watchdog:   # beside the GPU job, on a hosted runner\n    needs: provision\n    if: needs.provision.outputs.runner-label != ''\n")
	w("    uses: %s\n    permissions: %s\n", uses("gpu-lane-watchdog.yml"), SuiteNeeds["gpu-lane-watchdog.yml"])
	w("    with: {lane: \"${{ needs.provision.outputs.lane }}\"}\n    secrets: {%s}\n", podSecrets)
	renderGPUJob(&b, o)
	w("  finish:   # cleanup, then the gate, whatever happened before\n    needs: [authorize, provision, watchdog, gpu]\n")
	w("    if: always() && needs.authorize.result == 'success'\n")
	w("    uses: %s\n    permissions: %s\n    with:\n", uses("gpu-lane-finish.yml"), SuiteNeeds["gpu-lane-finish.yml"])
	w("      lane: ${{ needs.watchdog.outputs.lane || needs.provision.outputs.lane || needs.authorize.outputs.lane }}\n")
	w("      provision-result: ${{ needs.provision.result }}\n      gpu-job-result: ${{ needs.gpu.result }}\n")
	w("    secrets: {%s}\n", podSecrets)
	return b.String()
}

// renderBuildJob writes the hosted job that builds the test archive at the
// tested ref, beside provision, so nothing is built in the paid window.
func renderBuildJob(b *strings.Builder, o Options) {
	fmt.Fprint(b, "  build:   # hosted, at the tested ref, while the pod starts: nothing is built in the paid window\n"+
		"    needs: authorize\n    if: needs.authorize.outputs.decision == 'run'\n    runs-on: ubuntu-latest\n")
	if o.BuildImage != "" {
		fmt.Fprintf(b, "    container: %s   # the compiler, pinned: it changes only in a reviewed commit\n", o.BuildImage)
	}
	fmt.Fprintf(b, "    timeout-minutes: 30\n    permissions: {contents: read}\n    steps:\n"+
		"      - uses: %s\n"+
		"        with: {ref: \"${{ needs.authorize.outputs.tested-ref }}\", persist-credentials: false}\n"+
		"      - name: Build the test archive\n"+
		"        run: %s   # writes %s: the test binaries, their data, the script the GPU job runs\n"+
		"      - uses: %s\n"+
		"        with: {name: %s, path: %s, if-no-files-found: error, retention-days: 1}\n",
		checkoutAction, quote(o.BuildCommand), TestArchive, uploadArtifactAction, TestArchiveArtifact, TestArchive)
}

// renderGPUJob writes the job on the pod: set-up steps each bounded (they
// sum to the default setup budget, 15 minutes, so the watchdog is the
// stricter bound), the tests last, no token scope and no secret.
func renderGPUJob(b *strings.Builder, o Options) {
	fmt.Fprintf(b, "  gpu:\n    name: GPU tests\n    needs: [build, provision]\n    if: needs.provision.outputs.runner-label != ''\n"+
		"    runs-on: ${{ needs.provision.outputs.runner-label }}\n    timeout-minutes: 45\n"+
		"    permissions: {}   # the PR's code runs here: no token scope, no secret\n    steps:\n"+
		"      - name: Download the test archive\n        id: download\n"+
		"        continue-on-error: true   # one bounded retry, below\n        timeout-minutes: 5\n"+
		"        uses: %s\n        with: {name: %s}\n"+
		"      - name: Download the test archive again\n        if: steps.download.outcome == 'failure'\n        timeout-minutes: 5\n"+
		"        uses: %s\n        with: {name: %s}\n"+
		"      - name: Unpack the test archive\n        timeout-minutes: 5\n        run: tar -xzf %s\n"+
		"      - name: Run GPU tests\n"+
		"        timeout-minutes: 30   # the job's last step: nothing runs on the pod after the PR's code\n"+
		"        run: %s   # results go to the job's log and step summary\n",
		downloadArtifactAction, TestArchiveArtifact, downloadArtifactAction, TestArchiveArtifact, TestArchive, quote(o.TestCommand))
}
