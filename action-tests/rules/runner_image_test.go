package rules

// The optional CUDA runner image (the Dockerfile's target runner-cuda) is a
// pod image: it must hold what the startup script and the runner need (the
// README's image contract), carry the proof where the script looks for it,
// and be the image the release names in the actions it builds.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionimage"
	"github.com/org/runpod-gpu/pkg/startup"
)

// metaRunnerImageStage is the Dockerfile's CUDA runner image target.
const metaRunnerImageStage = "runner-cuda"

// metaCheckRunnerImage lists what keeps the runner-cuda stage from being a
// pod image the lane can start: not the last stage (a plain build must
// still give the action image), the runner from the official image at the
// startup script's runner directory, the proof where the script looks for
// an image's copy, the tools the script needs, and a non-root user to end on.
func metaCheckRunnerImage(text string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	stages := metaParseDockerfile(text)
	at := -1
	byName := map[string]metaStage{}
	for i, st := range stages {
		byName[st.name] = st
		if st.name == metaRunnerImageStage {
			at = i
		}
	}
	if at < 0 {
		return []string{"no stage " + metaRunnerImageStage}
	}
	if at == len(stages)-1 {
		add("stage %s is the last: a build without --target must give the action image", metaRunnerImageStage)
	}
	var user, runs string
	copied := map[string]string{} // destination → source stage and path
	for _, in := range stages[at].instructions {
		switch in.keyword {
		case "USER":
			user = in.args
		case "RUN":
			runs += in.args + "\n"
		case "COPY":
			fields := strings.Fields(in.args)
			var from string
			var rest []string
			for _, f := range fields {
				switch {
				case strings.HasPrefix(f, "--from="):
					from = strings.TrimPrefix(f, "--from=")
				case !strings.HasPrefix(f, "--"):
					rest = append(rest, f)
				}
			}
			for _, src := range rest[:max(len(rest)-1, 0)] {
				dst := rest[len(rest)-1]
				if strings.HasSuffix(dst, "/") {
					dst = path.Join(dst, path.Base(src))
				}
				copied[dst] = from + ":" + src
			}
		}
	}
	if src := copied[startup.DefaultRunnerDir]; !strings.Contains(byName[strings.Split(src, ":")[0]].from, "ghcr.io/actions/actions-runner") {
		add("stage %s: the runner is not copied from the official runner image to %s (got %q)", metaRunnerImageStage, startup.DefaultRunnerDir, src)
	}
	if src := copied[startup.DefaultImageProof]; !strings.HasSuffix(src, "/out/cuda-smoke") || byName[strings.Split(src, ":")[0]].name == "" {
		add("stage %s: the proof is not copied from a build stage to %s, where the startup script looks for it (got %q)", metaRunnerImageStage, startup.DefaultImageProof, src)
	}
	for _, tool := range []string{"sudo", "curl"} {
		if !regexp.MustCompile(`apt-get install[^&]*\s` + tool + `(\s|$)`).MatchString(runs) {
			add("stage %s: nothing installs %s, which the startup script needs", metaRunnerImageStage, tool)
		}
	}
	for _, tool := range []string{"installdependencies.sh"} {
		if !strings.Contains(runs, tool) {
			add("stage %s: nothing installs %s, which the startup script or the runner needs", metaRunnerImageStage, tool)
		}
	}
	if user != startup.RunnerUser {
		add("stage %s: ends as user %q: want %q, the non-root user the runner runs as", metaRunnerImageStage, user, startup.RunnerUser)
	}
	return problems
}

func TestMetaRunnerImage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	assert.Check(t, is.Len(metaCheckRunnerImage(string(data)), 0))
}

// TestMetaRunnerImageDetectsProblems plants each mistake in the real Dockerfile.
func TestMetaRunnerImageDetectsProblems(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	real := string(data)
	tests := []struct {
		name, old, new, want string
	}{
		{name: "the proof elsewhere", old: "/opt/runpod-gpu/\nUSER runner\nWORKDIR", new: "/usr/local/bin/\nUSER runner\nWORKDIR", want: "the proof is not copied"},
		{name: "no runner", old: "COPY --from=actions-runner --chown=1001:1001 /home/runner /home/runner\n", new: "", want: "the runner is not copied"},
		{name: "ends as root", old: "USER runner\nWORKDIR /home/runner", new: "WORKDIR /home/runner", want: `ends as user ""`},
		{name: "no sudo", old: "jq sudo unzip", new: "jq unzip", want: "nothing installs sudo"},
		{name: "no curl", old: "ca-certificates curl git", new: "ca-certificates git", want: "nothing installs curl"},
		{name: "the last stage", old: real[strings.Index(real, "# The action image."):], new: "", want: "is the last"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(real, tc.old), "the Dockerfile no longer contains %q; update this case", tc.old)
			problems := metaCheckRunnerImage(strings.Replace(real, tc.old, tc.new, 1))
			if tc.want == "" {
				assert.Check(t, is.Len(problems, 0))
				return
			}
			assert.Check(t, is.Len(problems, 1), "%v", problems)
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want))
		})
	}
}

// TestMetaReleaseBuildsTheRunnerImageFirst: the release pushes the
// runner-cuda target before the action image and builds the pushed digest
// into the actions, so runner-image: cuda names exactly that image.
func TestMetaReleaseBuildsTheRunnerImageFirst(t *testing.T) {
	wf := metaParseWorkflow(t, "release.yml", metaWorkflowFiles(t)["release.yml"])
	steps := wf.Jobs["release"].Steps
	runner, action := -1, -1
	for i, st := range steps {
		switch st.ID {
		case "runner":
			runner = i
			assert.Check(t, is.Equal(st.With["target"], metaRunnerImageStage))
			assert.Check(t, is.Equal(st.With["platforms"], "linux/amd64"), "pods are x86-64")
			assert.Check(t, is.Equal(st.With["push"], "true"))
		case "build":
			action = i
			assert.Check(t, is.Contains(st.With["build-args"], "CUDA_RUNNER_IMAGE=${{ steps.runner-size.outputs.reference }}"))
			assert.Check(t, st.With["target"] == "", "the action image is the Dockerfile's last stage")
		case "runner-size":
			assert.Check(t, is.Contains(st.Run, "${RUNNER_IMAGE}@${DIGEST}"))
			assert.Check(t, is.Equal(st.Env["DIGEST"], "${{ steps.runner.outputs.digest }}"))
		}
	}
	assert.Assert(t, runner >= 0 && action >= 0, "release.yml builds no CUDA runner image (step id runner) or no action image (id build)")
	assert.Check(t, runner < action, "the runner image is pushed before the action image that names it")
	publish := metaReleaseStep(t, "Publish the release with the proof and the Serverless worker")
	assert.Check(t, is.Contains(publish, "${RUNNER_REFERENCE}"), "the release notes name the CUDA runner image")
	assert.Check(t, is.Contains(publish, "${RUNNER_SIZE}"), "the release notes state its size")
}

// metaPodImageStage is the Dockerfile's default pod image target.
const metaPodImageStage = "runner"

// metaCheckPodImage lists what keeps the runner stage from being the default
// pod image: the official runner image unchanged (FROM it, or FROM the stage
// that is it) plus the proof where the startup script looks for it, ending
// as the runner's non-root user, and not the last stage.
func metaCheckPodImage(text string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	stages := metaParseDockerfile(text)
	byName := map[string]metaStage{}
	at := -1
	for i, st := range stages {
		byName[st.name] = st
		if st.name == metaPodImageStage {
			at = i
		}
	}
	if at < 0 {
		return []string{"no stage " + metaPodImageStage}
	}
	if at == len(stages)-1 {
		add("stage %s is the last: a build without --target must give the action image", metaPodImageStage)
	}
	st := stages[at]
	base := st.from
	if b, ok := byName[base]; ok {
		base = b.from
	}
	if !strings.HasPrefix(base, "ghcr.io/actions/actions-runner:") {
		add("stage %s is FROM %s: want the official runner image (ghcr.io/actions/actions-runner), unchanged", metaPodImageStage, base)
	}
	var user string
	proof := false
	for _, in := range st.instructions {
		switch in.keyword {
		case "USER":
			user = in.args
		case "COPY":
			fields := strings.Fields(in.args)
			from := strings.TrimPrefix(fields[0], "--from=")
			dst := fields[len(fields)-1]
			for _, src := range fields[1 : len(fields)-1] {
				if src == "/out/cuda-smoke" && byName[from].name != "" && path.Join(dst, path.Base(src)) == startup.DefaultImageProof {
					proof = true
				}
			}
		default:
			add("stage %s: %s %.40s: the default pod image is the official runner image plus the proof, nothing else", metaPodImageStage, in.keyword, in.args)
		}
	}
	if !proof {
		add("stage %s: the proof is not copied from a build stage to %s, where the startup script looks for it", metaPodImageStage, startup.DefaultImageProof)
	}
	if user != startup.RunnerUser {
		add("stage %s: ends as user %q: want %q, the non-root user the runner runs as", metaPodImageStage, user, startup.RunnerUser)
	}
	return problems
}

// TestMetaPodImageCarriesTheProof checks the default pod image's stage and
// plants each mistake in the real Dockerfile.
func TestMetaPodImageCarriesTheProof(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	real := string(data)
	const stage = "FROM actions-runner AS runner\nCOPY --from=proof /out/cuda-smoke /out/cuda-smoke.sha256 /opt/runpod-gpu/\n"
	tests := []struct{ name, old, new, want string }{
		{name: "as written"},
		{name: "the proof elsewhere", old: stage, new: strings.Replace(stage, "/opt/runpod-gpu/", "/usr/local/bin/", 1), want: "the proof is not copied"},
		{name: "no proof", old: stage, new: "FROM actions-runner AS runner\n", want: "the proof is not copied"},
		{name: "more than the proof", old: stage, new: stage + "RUN apt-get update\n", want: "RUN apt-get update: the default pod image is the official runner image plus the proof"},
		{name: "another base", old: stage, new: strings.Replace(stage, "FROM actions-runner", "FROM docker.io/library/ubuntu:24.04", 1), want: "want the official runner image"},
		{name: "ends as root", old: stage + "# As the official image ends: the runner's non-root user (the startup script re-enters as root for the proof).\nUSER runner\n", new: stage, want: `ends as user ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(real, tc.old), "the Dockerfile no longer contains %q; update this case", tc.old)
			problems := metaCheckPodImage(strings.Replace(real, tc.old, tc.new, 1))
			if tc.want == "" {
				assert.Check(t, is.Len(problems, 0), "%v", problems)
				return
			}
			assert.Check(t, is.Len(problems, 1), "%v", problems)
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want))
		})
	}
}

// TestMetaReleaseMeasuresThePodImages: the release pushes the default pod
// image before the action image, builds its digest in (POD_IMAGE), verifies
// the pushed action image against the Dockerfile with action-image and
// writes every image's measured size into the sizes page its release commit
// carries; the page in the tree says "not yet measured" for every image
// until a release has written it, and the docs state no estimate.
func TestMetaReleaseMeasuresThePodImages(t *testing.T) {
	wf := metaParseWorkflow(t, "release.yml", metaWorkflowFiles(t)["release.yml"])
	steps := wf.Jobs["release"].Steps
	at := map[string]int{}
	for i, st := range steps {
		at[st.ID] = i
		switch st.ID {
		case "pod":
			assert.Check(t, is.Equal(st.With["target"], metaPodImageStage))
			assert.Check(t, is.Equal(st.With["platforms"], "linux/amd64"), "pods are x86-64")
			assert.Check(t, is.Equal(st.With["provenance"], "false"), "the digest must be the image's own manifest")
			assert.Check(t, is.Equal(st.With["push"], "true"))
		case "pod-size":
			assert.Check(t, is.Contains(st.Run, `echo "reference=${POD_IMAGE}@${DIGEST}" >> "$GITHUB_OUTPUT"`))
			assert.Check(t, is.Contains(st.Run, `go run ./pkg/cmd/action-image measure --image "${POD_IMAGE}@${DIGEST}"`))
			assert.Check(t, is.Contains(st.Run, `--doc .github/docs/image-sizes.md --row "default pod image" --last-layer`))
		case "runner-size":
			assert.Check(t, is.Contains(st.Run, `--doc .github/docs/image-sizes.md --row "CUDA runner image"`))
		case "build":
			assert.Check(t, is.Contains(st.With["build-args"], "POD_IMAGE=${{ steps.pod-size.outputs.reference }}"))
		}
	}
	for _, id := range []string{"pod", "pod-size", "build"} {
		_, ok := at[id]
		assert.Assert(t, ok, "release.yml has no step %s", id)
	}
	assert.Check(t, at["pod"] < at["pod-size"] && at["pod-size"] < at["build"], "the pod image is pushed and measured before the action image that names it")
	verify := metaReleaseStep(t, "Verify and measure the action image")
	assert.Check(t, is.Contains(verify, `go run ./pkg/cmd/action-image verify --dockerfile Dockerfile --image "${IMAGE}@${DIGEST}"`))
	assert.Check(t, is.Contains(verify, `--doc .github/docs/image-sizes.md --row "action image"`))
	commit := metaReleaseStep(t, "Commit the pinned actions")
	assert.Check(t, is.Contains(commit, ".github/docs/image-sizes.md"), "the release commit carries the measured sizes")

	page, err := os.ReadFile(filepath.Join(metaRepoRoot, actionimage.SizesPage))
	assert.NilError(t, err)
	for _, row := range actionimage.Rows {
		want := "| " + row + " | " + strings.Repeat(actionimage.NotYetMeasured+" | ", 3)
		assert.Check(t, is.Contains(string(page), strings.TrimSpace(want)), "the sizes page before a release")
	}
	for _, doc := range []string{"README.md", ".github/docs/configuration.md", ".github/docs/cost-model.md", ".github/docs/workflows.md"} {
		text, err := os.ReadFile(filepath.Join(metaRepoRoot, doc))
		assert.NilError(t, err)
		for _, estimate := range []string{"size, estimated", "about 2 GB", "roughly 0.3 GB"} {
			assert.Check(t, !strings.Contains(string(text), estimate), "%s states an image size as an estimate (%q): point at the sizes page", doc, estimate)
		}
	}
}
