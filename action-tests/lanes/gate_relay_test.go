package lanes

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/localgate"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// The local relay publishes through the App when one is configured, so a gate
// check that branch protection binds to the App (as the README advises) can
// be satisfied by a local validation; without one it publishes as GitHub Actions.
func TestLocalRelayPublishesAsTheConfiguredApp(t *testing.T) {
	const (
		gateApp        = 5150
		installationID = 77
	)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	// The runner always passes the default github.token too; the App wins.
	appInputs := map[string]string{"github-token": actionsToken, "app-id": harness.Itoa(gateApp), "app-installation-id": harness.Itoa(installationID), "app-private-key": keyPEM}
	tests := []struct {
		name    string
		inputs  map[string]string
		wantApp int64
	}{
		{name: "workflow token publishes as GitHub Actions", inputs: map[string]string{"github-token": actionsToken},
			wantApp: githubsim.ActionsAppID},
		{name: "App inputs publish as the App", inputs: appInputs, wantApp: gateApp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startTokenModeCloud(t, testMarket(),
				githubsim.WithApp(githubsim.App{ID: gateApp, Slug: "gpu-gate", PublicKey: &key.PublicKey, InstallationID: installationID}))
			pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
				MergeCommitSHA: harness.MergeSHA, Labels: []string{gatecheck.LocalLabel}})
			assert.NilError(t, err)
			body, err := localgate.Evidence{SHA: harness.HeadSHA, GPUName: "NVIDIA GeForce RTX 4090", Driver: "550.54.14", CUDAVersion: "12.4",
				Duration: 5 * time.Minute, LogSHA256: strings.Repeat("d", 64), Command: "make gpu-test"}.Comment()
			assert.NilError(t, err)
			comment, err := s.GitHub.AddIssueComment(cloud.Repository, pr, cloud.MaintainerBob, body)
			assert.NilError(t, err)

			env := s.RunnerEnv()
			env["GITHUB_ACTOR"], env["GITHUB_REF"] = cloud.MaintainerBob, "refs/heads/main"
			inputs := map[string]string{"pr-number": harness.Itoa(pr), "sha": harness.HeadSHA, "comment-id": harness.Itoa(int(comment)), "check-name": gatecheck.DefaultCheckName}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			res := harness.RunStep(t, harness.Step{Action: "local-gate", Workspace: s.Workspace, Env: env, Inputs: inputs})
			assert.Assert(t, res.ExitCode == 0, res.Stdout)

			runs := s.GitHub.CheckRuns(cloud.Repository, harness.HeadSHA)
			assert.Assert(t, is.Len(runs, 1))
			assert.Check(t, is.Equal(runs[0].AppID, tc.wantApp))
			assert.Check(t, is.Equal(runs[0].ExternalID, gatecheck.LocalIDPrefix+harness.HeadSHA))
			assert.Check(t, is.Equal(res.Outputs["check-run-id"], harness.Itoa(int(runs[0].ID))))
			for _, leaked := range []string{actionsToken, "PRIVATE KEY"} {
				assert.Check(t, !strings.Contains(harness.WithoutMasks(res.Stdout)+res.Summary, leaked), "a credential leaked")
				for k, v := range res.Outputs {
					assert.Check(t, !strings.Contains(v, leaked), "output %s leaks a credential", k)
				}
			}
		})
	}
}
