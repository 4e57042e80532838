package rules

// The Dockerfile cannot be built here (no Docker daemon), so its structure is
// checked instead, and the binaries are checked the way the image needs them:
// every action a static executable (the image is FROM scratch: no loader, no
// libc), the CUDA proof cgo-free and linked against nothing but glibc (it runs
// on the pod and loads libcuda.so.1 itself, at run time).

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// metaInstruction is one Dockerfile instruction, continuation lines joined.
type metaInstruction struct {
	keyword string // upper case
	args    string
}

// metaStage is one FROM and the instructions under it.
type metaStage struct {
	from, name   string // the image (global ARGs expanded) and the AS name
	instructions []metaInstruction
}

// metaParseDockerfile splits a Dockerfile into stages. ARGs before the first
// FROM are expanded in FROM lines, as Docker does.
func metaParseDockerfile(text string) []metaStage {
	var stages []metaStage
	global := map[string]string{}
	joined := strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		keyword, args, _ := strings.Cut(line, " ")
		in := metaInstruction{keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args)}
		switch {
		case in.keyword == "ARG" && len(stages) == 0:
			name, value, _ := strings.Cut(in.args, "=")
			global[name] = value
		case in.keyword == "FROM":
			fields := strings.Fields(os.Expand(in.args, func(k string) string {
				if v, ok := global[k]; ok {
					return v
				}
				return "$" + k // BuildKit's own (BUILDPLATFORM) stay as written
			}))
			fields = slices.DeleteFunc(fields, func(f string) bool { return strings.HasPrefix(f, "--platform=") })
			st := metaStage{}
			if len(fields) > 0 {
				st.from = fields[0]
			}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.name = fields[2]
			}
			stages = append(stages, st)
		case len(stages) > 0:
			stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, in)
		}
	}
	return stages
}

var (
	metaDigestRE   = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	metaGoBuildRE  = regexp.MustCompile(`go build .*?\s-o\s+"?(\S+?)"?\s`)
	metaCopyFromRE = regexp.MustCompile(`^--from=(\S+)\s+(\S+)\s+(\S+)$`)
)

// metaQualifiedImage reports whether an image reference names its registry:
// a first component with a dot or a port, or localhost.
func metaQualifiedImage(ref string) bool {
	host, _, ok := strings.Cut(ref, "/")
	return ok && (strings.ContainsAny(host, ".:") || host == "localhost")
}

// metaCheckDockerfile lists what keeps the Dockerfile from producing the
// action image: pinned bases, a static build of the one multi-call action
// binary and of the proof, and a final stage that holds them and runs as root
// in the workspace. That every action has a role in the binary is
// actions' TestEveryRoomIsARole.
func metaCheckDockerfile(text string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	stages := metaParseDockerfile(text)
	if len(stages) < 2 {
		return []string{fmt.Sprintf("%d stages: want a build stage and a small final stage", len(stages))}
	}
	names := map[string]bool{}
	for _, st := range stages {
		if st.from != "scratch" && !names[st.from] && !metaDigestRE.MatchString(st.from) {
			add("FROM %s: pin the base image by digest (@sha256:…)", st.from)
		}
		if st.from != "scratch" && !names[st.from] && !metaQualifiedImage(st.from) {
			add("FROM %s: name the registry (docker.io/library/…): buildah and podman refuse a short name", st.from)
		}
		names[st.name] = true
	}

	outDirs := map[string]bool{} // where go build writes, to be copied into the final stage
	built := map[string]bool{}
	for _, st := range stages[:len(stages)-1] {
		for _, in := range st.instructions {
			if in.keyword != "RUN" || !strings.Contains(in.args, "go build") {
				continue
			}
			for _, flag := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w`} {
				if !strings.Contains(in.args, flag) {
					add("RUN %.60s…: every go build needs %s", in.args, flag)
				}
			}
			for _, m := range metaGoBuildRE.FindAllStringSubmatch(in.args, -1) {
				outDirs[path.Dir(m[1])] = true
				if strings.Contains(in.args, metaActionsCmd) && path.Base(m[1]) == metaActionsBinary {
					built[metaActionsBinary] = true
				}
			}
			if strings.Contains(in.args, "./actions/") {
				add("RUN %.60s…: builds a program per action; the image holds one, %s /%s", in.args, metaActionsCmd, metaActionsBinary)
			}
			if strings.Contains(in.args, "./pkg/cmd/cuda-smoke") && strings.Contains(in.args, "sha256sum cuda-smoke > cuda-smoke.sha256") {
				built["cuda-smoke"] = true
			}
			if strings.Contains(in.args, "./pkg/cmd/serverless-worker") && strings.Contains(in.args, "sha256sum serverless-worker > serverless-worker.sha256") {
				built["serverless-worker"] = true
			}
			if strings.Contains(in.args, metaActionsCmd) {
				// The release's assets reach the actions only through these defaults.
				for _, x := range metaInjectedDefaults {
					if !strings.Contains(in.args, x) {
						add("the actions' go build does not inject %s (the release asset's URL or SHA-256)", strings.TrimSuffix(x, "="))
					}
				}
			}
		}
	}
	if !built[metaActionsBinary] {
		add("the actions' multi-call binary is not built: go build -o /out/%s %s", metaActionsBinary, metaActionsCmd)
	}
	if !built["cuda-smoke"] {
		add("the proof is not built: go build ./pkg/cmd/cuda-smoke, then sha256sum cuda-smoke > cuda-smoke.sha256")
	}
	if !built["serverless-worker"] {
		add("the Serverless worker is not built: go build ./pkg/cmd/serverless-worker, then sha256sum serverless-worker > serverless-worker.sha256")
	}

	final := stages[len(stages)-1]
	if final.from != "scratch" && !strings.Contains(final.from, "distroless/static") {
		add("final stage FROM %s: want scratch or distroless static (a small image of static binaries)", final.from)
	}
	copied := map[string]bool{}
	for _, in := range final.instructions {
		switch in.keyword {
		case "USER":
			add("final stage: USER %s: GitHub runs Docker actions as root (the workspace is root's)", in.args)
		case "WORKDIR":
			add("final stage: WORKDIR %s: GitHub sets the working directory to the workspace", in.args)
		case "COPY":
			if m := metaCopyFromRE.FindStringSubmatch(in.args); m != nil {
				copied[strings.TrimSuffix(m[2], "/")+" → "+m[3]] = true
			}
		}
	}
	if !copied["/etc/ssl/certs/ca-certificates.crt → /etc/ssl/certs/ca-certificates.crt"] {
		add("final stage: copy the CA bundle to /etc/ssl/certs/ca-certificates.crt (the actions call HTTPS APIs)")
	}
	for _, dir := range metaSortedKeys(outDirs) {
		if !copied[dir+" → /"] {
			add("final stage: the binaries built into %s are not copied to /", dir)
		}
	}
	return problems
}

// metaInjectedDefaults are the -X flags that give provision its proof and
// serverless its worker (the URL and SHA-256 of the release assets),
// runner-image: cuda the digest of the CUDA runner image the release pushed,
// and the configuration's default image the digest of the default pod image.
var metaInjectedDefaults = []string{
	"-X " + metaModule + "/actions/provision.defaultProofURL=", "-X " + metaModule + "/actions/provision.defaultProofSHA256=",
	"-X " + metaModule + "/actions/serverless.defaultWorkerURL=", "-X " + metaModule + "/actions/serverless.defaultWorkerSHA256=",
	"-X " + metaModule + "/pkg/actionkit.defaultCUDARunnerImage=", "-X " + metaModule + "/pkg/actionkit.defaultPodImage=",
}

const (
	// metaActionsBinary is the image's one program for every action, the
	// entrypoint of every action.yml; its role is runs.args.
	metaActionsBinary = "runpod-gpu-actions"
	// metaActionsCmd is the package it is built from.
	metaActionsCmd = "./pkg/cmd/" + metaActionsBinary
)

func TestMetaDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	problems := metaCheckDockerfile(string(data))
	assert.Check(t, len(problems) == 0, "Dockerfile:\n  %s", strings.Join(problems, "\n  "))
}

// TestMetaDockerfileDetectsProblems plants each mistake in the real Dockerfile
// and checks that exactly it is reported.
func TestMetaDockerfileDetectsProblems(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	real := string(data)
	tests := []struct {
		name      string
		old, new  string
		wantProbs []string
	}{
		{name: "as written"},
		{
			name: "runs as another user", old: "\nENV ZONEINFO=/zoneinfo.zip", new: "\nENV ZONEINFO=/zoneinfo.zip\nUSER 65532",
			wantProbs: []string{"final stage: USER 65532: GitHub runs Docker actions as root"},
		},
		{
			name: "sets a working directory", old: "\nENV ZONEINFO=/zoneinfo.zip", new: "\nENV ZONEINFO=/zoneinfo.zip\nWORKDIR /app",
			wantProbs: []string{"final stage: WORKDIR /app"},
		},
		{
			name: "base image by tag only", old: "ARG GO_IMAGE=docker.io/library/golang:1.26.8-bookworm@sha256:", new: "ARG GO_IMAGE=docker.io/library/golang:1.26.8-bookworm\nARG UNUSED=",
			wantProbs: []string{"pin the base image by digest"},
		},
		{
			name: "base image by short name", old: "ARG GO_IMAGE=docker.io/library/golang:", new: "ARG GO_IMAGE=golang:",
			wantProbs: []string{"name the registry (docker.io/library/…)"},
		},
		{
			name: "cgo left on", old: "CGO_ENABLED=0 GOOS=$TARGETOS", new: "GOOS=$TARGETOS",
			wantProbs: []string{"every go build needs CGO_ENABLED=0"},
		},
		{
			name: "a program per action again", old: "-o /out/runpod-gpu-actions ./pkg/cmd/runpod-gpu-actions", new: `-o "/out/$name" "./actions/$name"`,
			wantProbs: []string{"builds a program per action; the image holds one", "the actions' multi-call binary is not built"},
		},
		{
			name: "multi-call binary under another name", old: "-o /out/runpod-gpu-actions ./pkg", new: "-o /out/actions ./pkg",
			wantProbs: []string{"the actions' multi-call binary is not built"},
		},
		{
			name: "binaries left in the build stage", old: "COPY --from=build /out/ /", new: "COPY --from=build /out/cuda-smoke /cuda-smoke",
			wantProbs: []string{"the binaries built into /out are not copied to /"},
		},
		{
			name: "no CA bundle", old: "COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n", new: "",
			wantProbs: []string{"copy the CA bundle"},
		},
		{
			name: "proof checksum not written", old: "sha256sum cuda-smoke > cuda-smoke.sha256", new: "true",
			wantProbs: []string{"the proof is not built"},
		},
		{
			name: "worker checksum not written", old: "sha256sum serverless-worker > serverless-worker.sha256", new: "true",
			wantProbs: []string{"the Serverless worker is not built"},
		},
		{
			name: "worker defaults not injected", old: " -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerURL=${WORKER_URL} -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerSHA256=${worker_sha256}", new: "",
			wantProbs: []string{"does not inject -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerURL", "does not inject -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerSHA256"},
		},
		{
			name: "defaults injected into main, which is not where they live", old: "-X github.com/org/runpod-gpu/actions/provision.defaultProofURL=", new: "-X main.defaultProofURL=",
			wantProbs: []string{"does not inject -X github.com/org/runpod-gpu/actions/provision.defaultProofURL"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(real, tc.old), "the Dockerfile no longer contains %q; update this case", tc.old)
			problems := metaCheckDockerfile(strings.Replace(real, tc.old, tc.new, 1))
			assert.Equal(t, len(problems), len(tc.wantProbs), "problems:\n  %s", strings.Join(problems, "\n  "))
			for i, want := range tc.wantProbs {
				assert.Check(t, is.Contains(problems[i], want))
			}
		})
	}
}

// metaLinking reads how an ELF executable is linked: its program interpreter
// (PT_INTERP) and the libraries it needs at load time (DT_NEEDED).
func metaLinking(t *testing.T, file string) (interp string, needed []string) {
	t.Helper()
	f, err := elf.Open(file)
	assert.NilError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data := make([]byte, p.Filesz)
			_, err := p.ReadAt(data, 0)
			assert.NilError(t, err)
			interp = strings.TrimRight(string(data), "\x00")
		}
	}
	needed, err = f.ImportedLibraries()
	assert.NilError(t, err)
	return interp, needed
}

// TestMetaActionBinariesAreStatic checks the binary TestMain built with
// CGO_ENABLED=0, as the Dockerfile does: the scratch image has no loader and no
// libc, so a dynamically linked action would fail to start ("no such file").
// TestMetaImageBinaryIsSmall checks the image's own build the same way.
func TestMetaActionBinariesAreStatic(t *testing.T) {
	interp, needed := metaLinking(t, filepath.Join(harness.BinDir(), metaActionsBinary))
	assert.Check(t, interp == "", "%s asks for the loader %s: something it imports needs cgo or dynamic linking", metaActionsBinary, interp)
	assert.Check(t, is.Len(needed, 0), "%s needs shared libraries", metaActionsBinary)
}

// TestMetaProofBinaryNeedsOnlyGlibc builds the proof as the Dockerfile does.
// It is dynamically linked by design (purego opens libcuda.so.1 through the
// system loader) but must need nothing beyond glibc at load time: a host whose
// driver is missing has to get "SMOKE FAIL", not a loader error.
func TestMetaProofBinaryNeedsOnlyGlibc(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cuda-smoke")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, "./pkg/cmd/cuda-smoke")
	cmd.Dir = metaRepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	output, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", output)
	interp, needed := metaLinking(t, out)
	assert.Check(t, interp != "", "the proof has no program interpreter: purego cannot load libcuda.so.1 without the dynamic loader")
	for _, lib := range needed {
		assert.Check(t, slices.Contains([]string{"libc.so.6", "libdl.so.2", "libpthread.so.0"}, lib),
			"the proof needs %s at load time; only glibc is on every pod image", lib)
	}
}

// TestMetaReleasePublishesTheWorker: the release takes the Serverless worker
// and its checksum out of the pushed image, checks them, and publishes both,
// as it does the proof: the serverless action's default URL names that asset.
func TestMetaReleasePublishesTheWorker(t *testing.T) {
	take := metaReleaseStep(t, "Take the proof and the Serverless worker out of the pushed image")
	for _, want := range []string{
		`docker cp "$id:/serverless-worker" dist/serverless-worker`,
		`docker cp "$id:/serverless-worker.sha256" dist/serverless-worker.sha256`,
		"sha256sum --check cuda-smoke.sha256 serverless-worker.sha256",
	} {
		assert.Check(t, is.Contains(take, want))
	}
	publish := metaReleaseStep(t, "Publish the release with the proof and the Serverless worker")
	assert.Check(t, is.Contains(publish, "ASSETS=(dist/cuda-smoke dist/cuda-smoke.sha256 dist/serverless-worker dist/serverless-worker.sha256)"))
	assert.Check(t, is.Contains(publish, `gh release create "$VERSION" "${ASSETS[@]}"`))
	dockerfile, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(dockerfile), "ARG WORKER_URL=https://github.com/${REPOSITORY}/releases/download/${VERSION}/serverless-worker"),
		"the worker URL the action embeds must be the asset the release publishes")
}
