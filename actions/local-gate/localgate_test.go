package localgateaction

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/localgate"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	repoFull = "octo/gpu-lib"
	token    = "ghs_relay_token"
)

var headSHA = strings.Repeat("a", 40)

// runner is the Actions runner's side of one step: environment and files.
type runner struct {
	srv    *githubsim.Server
	env    map[string]string
	stdout bytes.Buffer
}

// newRunner sets up a labelled PR with a maintainer's evidence comment and
// the environment of a relay run dispatched by that maintainer.
// opts are passed to the simulated GitHub last.
func newRunner(t *testing.T, opts ...githubsim.Option) *runner {
	t.Helper()
	srv := githubsim.New(append([]githubsim.Option{
		githubsim.WithClock(simclock.NewVirtual(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))),
		githubsim.WithToken(token, githubsim.ActionsIdentity()),
	}, opts...)...)
	assert.NilError(t, srv.AddRepo(githubsim.Repo{Owner: "octo", Name: "gpu-lib"}))
	assert.NilError(t, srv.SetRole(repoFull, "maint", "maintain"))
	assert.NilError(t, srv.SetRole(repoFull, "writer", "write"))
	pr, err := srv.AddPullRequest(repoFull, githubsim.PullRequestSpec{
		Author: "maint", HeadRef: "feature", HeadSHA: headSHA, Labels: []string{gatecheck.LocalLabel},
	})
	assert.NilError(t, err)
	body, err := localgate.Evidence{
		SHA: headSHA, GPUName: "NVIDIA GeForce RTX 4090", Driver: "550.54.14", CUDAVersion: "12.4",
		Duration: 5 * time.Minute, LogSHA256: strings.Repeat("d", 64), Command: "make gpu-test",
	}.Comment()
	assert.NilError(t, err)
	comment, err := srv.AddIssueComment(repoFull, pr, "maint", body)
	assert.NilError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	dir := t.TempDir()
	return &runner{srv: srv, env: map[string]string{
		"INPUT_GITHUB-TOKEN":  token,
		"INPUT_PR-NUMBER":     strconv.Itoa(pr),
		"INPUT_SHA":           headSHA,
		"INPUT_COMMENT-ID":    strconv.FormatInt(comment, 10),
		"INPUT_CHECK-NAME":    "CI GPU gate",
		"GITHUB_REPOSITORY":   repoFull,
		"GITHUB_API_URL":      ts.URL,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_RUN_ID":       "77",
		"GITHUB_RUN_ATTEMPT":  "2",
		"GITHUB_WORKFLOW_REF": repoFull + "/.github/workflows/local-gpu-gate.yml@refs/heads/main",
		"GITHUB_ACTOR":        "maint",
		"GITHUB_EVENT_NAME":   "workflow_dispatch",
		"GITHUB_REF":          "refs/heads/main",
		"GITHUB_OUTPUT":       filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
	}}
}

func (r *runner) run(t *testing.T) error {
	t.Helper()
	return Action.Run(context.Background(), actionio.New(&r.stdout, func(k string) string { return r.env[k] }, nil))
}

func (r *runner) file(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(r.env[key])
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	assert.NilError(t, err)
	return string(b)
}

func TestRelayPublishes(t *testing.T) {
	r := newRunner(t)
	assert.NilError(t, r.run(t))

	runs := r.srv.CheckRuns(repoFull, headSHA)
	assert.Assert(t, is.Len(runs, 1))
	assert.Equal(t, runs[0].ExternalID, "local-gpu-gate:v1:"+headSHA)
	// The run URL names the attempt that relayed the evidence, as every action's does.
	assert.Check(t, is.Contains(runs[0].Output.Summary, "https://github.com/octo/gpu-lib/actions/runs/77/attempts/2"))

	outputs := r.file(t, "GITHUB_OUTPUT")
	for _, want := range []string{"check-run-id", "check-run-url", "external-id", "local-gpu-gate:v1:" + headSHA, "evidence-url"} {
		assert.Check(t, is.Contains(outputs, want))
	}
	assert.Check(t, is.Contains(r.file(t, "GITHUB_STEP_SUMMARY"), "### Local GPU gate published for `"+headSHA+"`"))
	// Only the mask command may name the token: it is how the runner learns to hide it.
	log := strings.ReplaceAll(r.stdout.String(), "::add-mask::"+token, "")
	assert.Check(t, !strings.Contains(log+outputs, token), "the token leaked")
}

func TestRelayRefusalFailsTheStep(t *testing.T) {
	r := newRunner(t)
	r.env["GITHUB_ACTOR"] = "writer"

	err := r.run(t)
	assert.Assert(t, errors.Is(err, localgate.ErrRefused), "got %v", err)
	assert.ErrorContains(t, err, `local GPU gate refused (dispatcher-role): dispatcher writer has role "write"`)
	assert.Check(t, is.Contains(r.file(t, "GITHUB_STEP_SUMMARY"), "### Local GPU gate not published"))
	assert.Check(t, is.Equal(r.file(t, "GITHUB_OUTPUT"), ""))
	assert.Check(t, is.Len(r.srv.CheckRuns(repoFull, headSHA), 0))
}

func TestRelayBadInputs(t *testing.T) {
	tests := []struct {
		name, key, value, wantErr string
	}{
		{"no token", "INPUT_GITHUB-TOKEN", "", "input github-token: a token, or app-id with app-installation-id and app-private-key"},
		{"App without its key", "INPUT_APP-ID", "901", "input app-installation-id: the App's installation id"},
		{"App id not a number", "INPUT_APP-ID", "my-app", `input app-id = "my-app": want an integer from 0 to`},
		{"PR number not a number", "INPUT_PR-NUMBER", "12a", `input pr-number = "12a": want an integer from 1 to`},
		{"negative comment id", "INPUT_COMMENT-ID", "-4", `input comment-id = "-4": want an integer from 1 to`},
		// Required inputs are refused as they are read, before any call
		// (pkg/localgate's own request check refuses them too).
		{"missing sha", "INPUT_SHA", "", "input sha: a value (the input is required)"},
		{"missing PR number", "INPUT_PR-NUMBER", "", "input pr-number: a value (the input is required)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			r.env[tc.key] = tc.value
			assert.ErrorContains(t, r.run(t), tc.wantErr)
			assert.Check(t, is.Len(r.srv.CheckRuns(repoFull, headSHA), 0))
		})
	}
}

// The relay publishes as the App when app-id is given, so a gate check that
// branch protection binds to the App can come from a local validation; without
// it the workflow token publishes as GitHub Actions.
func TestRelayPublishesAsTheConfiguredApp(t *testing.T) {
	const (
		appID          = 901
		installationID = 4242
	)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	app := githubsim.WithApp(githubsim.App{ID: appID, Slug: "gpu-gate", PublicKey: &key.PublicKey, InstallationID: installationID})
	tests := []struct {
		name    string
		inputs  map[string]string
		wantApp int64
	}{
		{name: "workflow token publishes as GitHub Actions", wantApp: githubsim.ActionsAppID},
		{name: "App inputs publish as the App", wantApp: appID, inputs: map[string]string{
			"INPUT_APP-ID": strconv.Itoa(appID), "INPUT_APP-INSTALLATION-ID": strconv.Itoa(installationID), "INPUT_APP-PRIVATE-KEY": keyPEM,
		}},
		{name: "App without the workflow token", wantApp: appID, inputs: map[string]string{
			"INPUT_GITHUB-TOKEN": "", "INPUT_APP-ID": strconv.Itoa(appID), "INPUT_APP-INSTALLATION-ID": strconv.Itoa(installationID),
			"INPUT_APP-PRIVATE-KEY": keyPEM,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, app)
			for k, v := range tc.inputs {
				r.env[k] = v
			}
			assert.NilError(t, r.run(t))
			runs := r.srv.CheckRuns(repoFull, headSHA)
			assert.Assert(t, is.Len(runs, 1))
			assert.Check(t, is.Equal(runs[0].AppID, tc.wantApp))
			assert.Check(t, is.Equal(runs[0].ExternalID, "local-gpu-gate:v1:"+headSHA))
			log := withoutMaskCommands(r.stdout.String()) + r.file(t, "GITHUB_OUTPUT") + r.file(t, "GITHUB_STEP_SUMMARY")
			assert.Check(t, !strings.Contains(log, "PRIVATE KEY"), "the App's key leaked")
			assert.Check(t, !strings.Contains(log, token), "the token leaked")
		})
	}
}

// withoutMaskCommands drops ::add-mask:: lines, which the runner consumes and never logs.
func withoutMaskCommands(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
