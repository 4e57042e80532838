package lanes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// actionsToken is a workflow's GITHUB_TOKEN: what it publishes is GitHub Actions'.
const actionsToken = "ghs_SimulatedWorkflowToken0123456789ab"

// forgerApp is an app that is neither ours nor GitHub Actions, e.g. one anyone
// with checks: write could install.
const forgerApp = 999

// startTokenModeCloud is startCloud whose simulated GitHub also accepts
// actionsToken, and takes ghOpts.
func startTokenModeCloud(t *testing.T, market *runpodsim.Market, ghOpts ...githubsim.Option) *simulated {
	t.Helper()
	c, err := cloud.Start(cloud.Options{
		Clock: simclock.Real{}, Market: market,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)},
		GitHubOptions: append([]githubsim.Option{githubsim.WithToken(actionsToken, githubsim.ActionsIdentity())}, ghOpts...),
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(fastConfig), 0o644))
	return &simulated{&harness.Simulated{Cloud: c, Workspace: ws, RunID: 9100}}
}

// tokenModeSteps are authorize and provision as a workflow without an App runs
// them: github.token, no app-id and, unless gateApp is set, no gate-app-id.
func (s *simulated) tokenModeSteps(pr int, gateApp string) (authorize, provision harness.Step) {
	authorize, provision = s.AuthorizeStep(pr, "bob"), s.ProvisionStep(pr)
	for _, st := range []harness.Step{authorize, provision} {
		st.Inputs["github-token"] = actionsToken
		delete(st.Inputs, "gate-app-id")
		if gateApp != "" {
			st.Inputs["gate-app-id"] = gateApp
		}
	}
	return authorize, provision
}

// addPassingGate records a successful paid gate for harness.MergeSHA on harness.HeadSHA, published by app.
func (s *simulated) addPassingGate(t *testing.T, app int64) {
	t.Helper()
	ext, err := gatecheck.FormatExternalID(harness.MergeSHA, gatecheck.KindPaid)
	assert.NilError(t, err)
	_, err = s.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{Name: gatecheck.DefaultCheckName, HeadSHA: harness.HeadSHA, ExternalID: ext,
		Status: "completed", Conclusion: "success", AppID: app, CompletedAt: time.Now().Add(-time.Hour)})
	assert.NilError(t, err)
}

// Without an App, a passing gate counts only when GitHub Actions published it
// (or the app gate-app-id names): a gate from any other app is no evidence.
func TestTokenModeReuseTrustsOnlyGitHubActions(t *testing.T) {
	tests := []struct {
		name         string
		gateFrom     int64
		gateAppInput string
		wantDecision string // authorize's decision
		wantPaidPath string // provision's own lookup
		wantErr      string // both refuse the input
	}{
		{name: "another app's gate is not reused", gateFrom: forgerApp, wantDecision: "run", wantPaidPath: "paid"},
		{name: "an App's gate is not trusted without gate-app-id", gateFrom: cloud.AppID, wantDecision: "run", wantPaidPath: "paid"},
		{name: "GitHub Actions' gate is reused", gateFrom: githubsim.ActionsAppID, wantDecision: "reuse", wantPaidPath: "reused"},
		{name: "the app gate-app-id names is trusted", gateFrom: forgerApp, gateAppInput: "999", wantDecision: "reuse", wantPaidPath: "reused"},
		{name: "gate-app-id 0 is refused, not widened", gateFrom: forgerApp, gateAppInput: "0",
			wantErr: `input gate-app-id = "0": want an integer from 1 to`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startTokenModeCloud(t, testMarket(testHost("h1", harness.A4000, true)))
			pr := s.openPR(t)
			s.addPassingGate(t, tc.gateFrom)
			authorize, provision := s.tokenModeSteps(pr, tc.gateAppInput)

			if tc.wantErr != "" {
				for _, st := range []harness.Step{authorize, provision} {
					res := harness.RunStep(t, st)
					assert.Check(t, is.Equal(res.ExitCode, 1), "%s: %s", st.Action, res.Stdout)
					assert.Check(t, is.Contains(res.Stdout, tc.wantErr), st.Action)
				}
				assert.Check(t, is.Len(s.RunPod.Pods(), 0))
				return
			}
			authorized := gateRunOK(t, s, authorize)
			assert.Check(t, is.Equal(authorized.Outputs["decision"], tc.wantDecision), authorized.Stdout)
			provisioned := gateRunOK(t, s, provision)
			assert.Check(t, is.Equal(provisioned.Outputs["paid-path"], tc.wantPaidPath), provisioned.Stdout)
			wantPods := 0
			if tc.wantPaidPath == "paid" {
				wantPods = 1
			}
			assert.Check(t, is.Len(s.RunPod.Pods(), wantPods))
			for _, res := range []harness.StepResult{authorized, provisioned} {
				assert.Check(t, !strings.Contains(harness.WithoutMasks(res.Stdout), actionsToken), "the token leaked")
			}
		})
	}
}

// The whole token-mode lane: a forged gate does not stop the GPU test, the
// gate github.token publishes is GitHub Actions', and that one is reused.
func TestTokenModeGateRoundTrip(t *testing.T) {
	s := startTokenModeCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true)))
	pr := s.openPR(t)
	s.addPassingGate(t, forgerApp)

	authorize, provision := s.tokenModeSteps(pr, "")
	authorized := gateRunOK(t, s, authorize)
	assert.Assert(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	provision.Inputs["tested-ref"] = authorized.Outputs["tested-ref"]
	p := gateRunOK(t, s, provision).Outputs
	assert.Assert(t, is.Equal(p["paid-path"], "paid"))
	publish := s.GateStep(pr, map[string]string{
		"decision": "run", "gpu-job-result": "success", "head-sha": authorized.Outputs["head-sha"],
		"tested-ref": authorized.Outputs["tested-ref"], "pod-id": p["pod-id"], "gpu-type": p["gpu-type"],
	})
	publish.Inputs["github-token"] = actionsToken
	published := gateRunOK(t, s, publish)

	var paid *githubsim.CheckRun
	for _, c := range s.GitHub.CheckRuns(cloud.Repository, harness.HeadSHA) {
		if c.ExternalID == published.Outputs["external-id"] {
			paid = &c
		}
	}
	assert.Assert(t, paid != nil, "no published gate %s", published.Outputs["external-id"])
	assert.Check(t, is.Equal(paid.AppID, githubsim.ActionsAppID), "github.token publishes as GitHub Actions")

	s.RunID++
	again, _ := s.tokenModeSteps(pr, "")
	reused := gateRunOK(t, s, again)
	assert.Check(t, is.Equal(reused.Outputs["decision"], "reuse"), reused.Stdout)
	assert.Check(t, is.Equal(reused.Outputs["reused-check-url"], published.Outputs["check-run-url"]), "the Actions gate, not the forged one")
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "one pod for the one tested ref")
}
