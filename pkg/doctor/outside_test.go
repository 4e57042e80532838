package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
)

const (
	testToken  = "ghp_DOCTOR_TEST_TOKEN"
	testSuite  = "my-org/runpod-gpu"
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	// actionYAMLPath is the suite's provision action as the contents API reads it.
	actionYAMLPath = "/repos/" + testSuite + "/contents/" + probeAction
)

var (
	testActionDigest = "sha256:" + strings.Repeat("5e", 32)
	testPodDigest    = "sha256:" + strings.Repeat("b8", 32)
)

// suiteWorld is the suite on the simulated GitHub, released at v1 and at
// testCommit (its provision action naming the action image by digest), and
// the simulated registry holding reg.
type suiteWorld struct {
	deps Deps
	// actionReads counts the reads of the suite's provision action.
	actionReads *atomic.Int32
}

func newSuiteWorld(t *testing.T, reg registrysim.Registry) suiteWorld {
	t.Helper()
	gh := githubsim.New(githubsim.WithToken(testToken, githubsim.Identity{Login: "my-org"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "my-org", Name: "gpu-project"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "my-org", Name: "runpod-gpu"}))
	action := "name: RunPod GPU provision\nruns:\n  using: docker\n  image: docker://ghcr.io/" + testSuite + "@" + testActionDigest + "\n"
	for _, ref := range []string{"v1", testCommit} {
		assert.NilError(t, gh.SetFile(testSuite, ref, probeAction, action))
	}
	// A branch's actions name the action image by its major tag, as main's do.
	assert.NilError(t, gh.SetFile(testSuite, "main", probeAction, "name: RunPod GPU provision\nruns:\n  using: docker\n  image: docker://ghcr.io/"+testSuite+":v1\n"))
	reads := &atomic.Int32{}
	ghServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == actionYAMLPath {
			reads.Add(1)
		}
		gh.ServeHTTP(w, r)
	}))
	t.Cleanup(ghServer.Close)
	regServer := httptest.NewServer(reg.Handler())
	t.Cleanup(regServer.Close)
	client, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: ghServer.URL, Token: testToken, Owner: "my-org", Repo: "gpu-project"})
	assert.NilError(t, err)
	return suiteWorld{deps: Deps{GitHub: client, Images: &registry.Resolver{APIURL: regServer.URL}}, actionReads: reads}
}

// laneFacts are a repository whose lane caller pins the suite at ref, with
// the given inputs and configuration image ("" : no configuration read).
func laneFacts(workflow, ref string, with map[string]any, image string) *facts {
	f := &facts{fullName: "my-org/gpu-project", owner: "my-org", repo: "gpu-project", defaultBranch: "main",
		lane: &caller{path: ".github/workflows/runpod-gpu.yml", workflow: workflow, suite: testSuite, ref: ref, with: with}}
	if image != "" {
		f.config = config.Default()
		f.config.Image = image
	}
	return f
}

// The pod image row: the release's default pod image (<action image>-runner
// at the callers' tag) or, with runner-image: cuda, its CUDA runner image,
// pulled without credentials as RunPod pulls it; a configuration's own image
// pulled as it is named; what doctor cannot map (a commit pin, an unread
// release or configuration) unknown with what to check; the Serverless lane,
// which starts no pods, not applicable.
func TestCheckPodImage(t *testing.T) {
	public := map[string]string{
		testSuite + ":v1": testActionDigest, testSuite + "-runner:v1": testPodDigest, testSuite + "-runner-cuda:v1": testPodDigest,
		"team/gpu-image:2": testPodDigest,
	}
	tests := []struct {
		name        string
		workflow    string // default gpu-lane.yml
		ref         string // default v1
		with        map[string]any
		image       string // the configuration's image; default config.DefaultImage, "-" none read
		digests     map[string]string
		private     []string
		wantStatus  Status
		wantMessage string
		wantFix     string
	}{
		{name: "pullable", wantStatus: StatusOK,
			wantMessage: "ghcr.io/my-org/runpod-gpu-runner:v1 (the pod image of my-org/runpod-gpu@v1)"},
		{name: "denied", private: []string{testSuite + "-runner"}, wantStatus: StatusFix,
			wantMessage: "RunPod pulls ghcr.io/my-org/runpod-gpu-runner without credentials, and the registry refuses that (denied)",
			wantFix:     "make the package ghcr.io/my-org/runpod-gpu-runner public (the owner's Packages → runpod-gpu-runner → Package settings → Change visibility → Public)"},
		{name: "missing", digests: map[string]string{testSuite + ":v1": testActionDigest}, wantStatus: StatusFix,
			wantMessage: "the registry has no ghcr.io/my-org/runpod-gpu-runner:v1: the release my-org/runpod-gpu@v1 has no pod image",
			wantFix:     "pin a release of my-org/runpod-gpu whose Release workflow pushed one (its step Build and push the default pod image)"},
		{name: "commit-pinned", ref: testCommit, wantStatus: StatusUnknown,
			wantMessage: "the callers pin my-org/runpod-gpu at the commit " + testCommit,
			wantFix:     "check by hand that the package ghcr.io/my-org/runpod-gpu-runner is public (the owner's Packages → runpod-gpu-runner → Package settings"},
		{name: "branch-pinned: the action image's tag", ref: "main", wantStatus: StatusOK,
			wantMessage: "ghcr.io/my-org/runpod-gpu-runner:v1 (the pod image of my-org/runpod-gpu@main)"},
		{name: "cuda runner image", with: map[string]any{"runner-image": "cuda"}, private: []string{testSuite + "-runner"}, wantStatus: StatusOK,
			wantMessage: "ghcr.io/my-org/runpod-gpu-runner-cuda:v1 (the pod image of my-org/runpod-gpu@v1)"},
		{name: "cuda runner image denied", with: map[string]any{"runner-image": "cuda"}, private: []string{testSuite + "-runner-cuda"}, wantStatus: StatusFix,
			wantFix: "make the package ghcr.io/my-org/runpod-gpu-runner-cuda public"},
		{name: "custom configured image", image: "ghcr.io/team/gpu-image:2", private: []string{testSuite + "-runner"}, wantStatus: StatusOK,
			wantMessage: "ghcr.io/team/gpu-image:2, the configuration's image (.github/runpod-gpu.yml)"},
		{name: "custom configured image denied", image: "ghcr.io/team/gpu-image:2", private: []string{"team/gpu-image"}, wantStatus: StatusFix,
			wantMessage: "RunPod pulls ghcr.io/team/gpu-image:2, the configuration's image, without credentials",
			wantFix:     "make that image public, or set image in .github/runpod-gpu.yml to one that is"},
		{name: "custom configured image missing", image: "ghcr.io/team/gpu-image:3", wantStatus: StatusFix,
			wantMessage: "the registry has no ghcr.io/team/gpu-image:3, the configuration's image", wantFix: "correct image in .github/runpod-gpu.yml"},
		{name: "custom configured image without a registry host", image: "team/gpu-image:2", wantStatus: StatusFix,
			wantMessage: `provision cannot resolve the configuration's image: image "team/gpu-image:2": no registry host`,
			wantFix:     "write image in .github/runpod-gpu.yml with its registry host"},
		{name: "configuration unread", image: "-", wantStatus: StatusUnknown,
			wantMessage: ".github/runpod-gpu.yml could not be read", wantFix: "fix the callers row"},
		{name: "release unread", ref: "v9", wantStatus: StatusUnknown,
			wantMessage: "the action image of my-org/runpod-gpu@v9, which names the pod image, could not be read (see image)", wantFix: "fix the image row"},
		{name: "serverless lane", workflow: "serverless-lane.yml", private: []string{testSuite + "-runner"}, wantStatus: StatusOK,
			wantMessage: "not used: the Serverless lane (.github/workflows/runpod-gpu.yml) starts workers from its template's image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrysim.Registry{Digests: tc.digests, Private: tc.private}
			if reg.Digests == nil {
				reg.Digests = public
			}
			w := newSuiteWorld(t, reg)
			workflow, ref, image := "gpu-lane.yml", "v1", config.DefaultImage
			if tc.workflow != "" {
				workflow = tc.workflow
			}
			if tc.ref != "" {
				ref = tc.ref
			}
			if tc.image == "-" {
				image = ""
			} else if tc.image != "" {
				image = tc.image
			}
			row := checkPodImage(context.Background(), w.deps, laneFacts(workflow, ref, tc.with, image))
			assert.Check(t, is.Equal(row.ID, CheckPodImage))
			assert.Check(t, is.Equal(row.Title, "the default pod image pullable without credentials"))
			assert.Check(t, is.Equal(row.Status, tc.wantStatus), "%+v", row)
			assert.Check(t, is.Contains(row.Message, tc.wantMessage))
			assert.Check(t, is.Contains(row.Fix, tc.wantFix))
			if tc.wantStatus == StatusOK {
				assert.Check(t, is.Equal(row.Fix, ""))
			}
		})
	}
}

// The action image and pod image rows share one read of the release's
// provision action, whichever runs first, and agree on what it said.
func TestActionImageIsReadOncePerRun(t *testing.T) {
	w := newSuiteWorld(t, registrysim.Registry{Digests: map[string]string{testSuite + ":v1": testActionDigest, testSuite + "-runner:v1": testPodDigest}})
	f := laneFacts("gpu-lane.yml", "v1", nil, config.DefaultImage)
	ctx := context.Background()
	image := checkImage(ctx, w.deps, f)
	pod := checkPodImage(ctx, w.deps, f)
	assert.Check(t, is.Equal(image.Status, StatusOK), "%+v", image)
	assert.Check(t, is.Equal(pod.Status, StatusOK), "%+v", pod)
	assert.Check(t, is.Equal(w.actionReads.Load(), int32(1)))

	unreleased := laneFacts("gpu-lane.yml", "v9", nil, config.DefaultImage)
	pod = checkPodImage(ctx, w.deps, unreleased)
	image = checkImage(ctx, w.deps, unreleased)
	assert.Check(t, is.Equal(pod.Status, StatusUnknown), "%+v", pod)
	assert.Check(t, is.Equal(image.Status, StatusFix), "%+v", image)
	assert.Check(t, is.Contains(image.Fix, "check that my-org/runpod-gpu has the release v9"))
	assert.Check(t, is.Equal(w.actionReads.Load(), int32(2)))
}
