package lanes

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// pathsSecret is what a file outside the workspace holds: it must never
// reach a check run or a log.
const pathsSecret = "root:x:0:0:TOP-SECRET-OUTSIDE-THE-WORKSPACE"

// pathsOutside writes a secret file outside the workspace and links to it,
// and to its directory, from inside.
func pathsOutside(t *testing.T, workspace string) (file string) {
	t.Helper()
	dir := t.TempDir()
	file = filepath.Join(dir, "passwd")
	assert.NilError(t, os.WriteFile(file, []byte(pathsSecret+"\n"), 0o644))
	assert.NilError(t, os.Symlink(file, filepath.Join(workspace, "cost-link.md")))
	assert.NilError(t, os.Symlink(dir, filepath.Join(workspace, "outside-dir")))
	return file
}

// TestGateCostReportPathOnlyInsideTheWorkspace: the gate publishes the cost
// report into a check run anyone with read access sees, so a path outside
// the workspace (or the runner temp dir) — absolute, through "..", or through
// a symbolic link — is refused and nothing is published.
func TestGateCostReportPathOnlyInsideTheWorkspace(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	file := pathsOutside(t, s.Workspace)
	rel, err := filepath.Rel(s.Workspace, file)
	assert.NilError(t, err)
	for _, path := range []string{"/etc/passwd", file, rel, "cost-link.md", "outside-dir/passwd"} {
		t.Run(path, func(t *testing.T) {
			res := harness.RunStep(t, s.GateStep(pr, map[string]string{"kind": string(gatecheck.KindPaid), "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA,
				"pod-id": "pod7h9k2m4n6p", "gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0.25", "cost-report-path": path}))
			assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, "::error::input cost-report-path = "+quote(path)+": want a path inside GITHUB_WORKSPACE ("+s.Workspace+")"))
			assert.Check(t, !strings.Contains(res.Stdout+res.Summary, pathsSecret), "the file outside leaked")
			assert.Check(t, !strings.Contains(res.Stdout, "root:x:0:0"), "/etc/passwd leaked")
			assert.Check(t, is.Len(res.Outputs, 0))
		})
	}
	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 0), "nothing published")
}

// TestGateRedactsTheCostReport: a report inside the workspace is published
// without any secret the action holds: its token, its App key however the
// file holds it (whole, a line of it, its body on one line), and the
// runner's own tokens in its environment.
func TestGateRedactsTheCostReport(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	body := strings.Split(keyPEM, "\n")[1 : len(strings.Split(keyPEM, "\n"))-2]
	const runtimeToken, oidcToken = "eyRuntimeToken0123456789.abcdefghij", "eyOIDCRequestToken0123456789.klmnop"
	secrets := map[string]string{"the token": cloud.GitHubToken, "the key": keyPEM, "a line of the key": body[3],
		"the key's body on one line": strings.Join(body, ""), "the runtime token": runtimeToken, "the OIDC request token": oidcToken}
	var report strings.Builder
	report.WriteString("## Cost\n\n")
	for what, secret := range secrets {
		report.WriteString(what + ": " + secret + "\n")
	}
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, "cost.md"), []byte(report.String()), 0o644))
	st := s.GateStep(pr, map[string]string{"kind": string(gatecheck.KindPaid), "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA,
		"pod-id": "pod7h9k2m4n6p", "gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0.25", "cost-report-path": "cost.md",
		"app-private-key": keyPEM})
	st.Env["ACTIONS_RUNTIME_TOKEN"], st.Env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = runtimeToken, oidcToken
	res := gateRunOK(t, s, st)
	assert.Check(t, is.Equal(res.Outputs["kind"], string(gatecheck.KindPaid)))
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	text := checks[0].GetOutput().GetText()
	assert.Check(t, is.Contains(text, "## Cost"))
	assert.Check(t, is.Contains(text, "the token: ***"))
	for what, secret := range secrets {
		assert.Check(t, !strings.Contains(text+checks[0].GetOutput().GetSummary()+harness.WithoutMasks(res.Stdout)+res.Summary, secret), "%s is published", what)
	}
	for _, line := range body {
		assert.Check(t, !strings.Contains(text, line), "a line of the key is published")
	}
}

// TestCleanupArtifactDirOnlyInsideTheWorkspace: cleanup still deletes the
// pod, but writes no artifact outside the workspace and fails the step.
func TestCleanupArtifactDirOnlyInsideTheWorkspace(t *testing.T) {
	for _, dir := range []string{"../escaped", "outside-dir", "/tmp"} {
		t.Run(dir, func(t *testing.T) {
			s := startCloud(t, cleanupMarket(), runpodsim.Faults{}, fastConfig)
			file := pathsOutside(t, s.Workspace)
			const runID = 9100
			podID := s.cleanupLaunch(t, runID, 1, 1)
			st := s.cleanupStep(runID, map[string]string{})
			st.Inputs["artifact-dir"] = dir
			res := harness.RunStep(t, st)
			assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, "::error::input artifact-dir = "+quote(dir)+": want a path inside GITHUB_WORKSPACE ("+s.Workspace+")"))
			assert.Check(t, is.Equal(s.cleanupStatus(t, podID), runpodsim.StatusTerminated), "the pod is deleted all the same")
			assert.Check(t, is.Equal(res.Outputs["cost-artifact-path"], ""))
			for _, p := range []string{filepath.Join(filepath.Dir(s.Workspace), "escaped"), filepath.Join(filepath.Dir(file), "cost.json")} {
				_, err := os.Stat(p)
				assert.Check(t, os.IsNotExist(err), "%s was written", p)
			}
		})
	}
}

// TestReapRecordPathOnlyInsideTheWorkspace: the reaper refuses to write its
// record outside the workspace, before it sweeps.
func TestReapRecordPathOnlyInsideTheWorkspace(t *testing.T) {
	w := reapStartWorld(t)
	file := pathsOutside(t, w.workspace)
	outside := filepath.Join(t.TempDir(), "record.json")
	for _, path := range []string{outside, "../record.json", "cost-link.md", "outside-dir/record.json"} {
		t.Run(path, func(t *testing.T) {
			res := harness.RunStep(t, w.step("schedule", map[string]string{"record-path": path}))
			assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, "::error::input record-path = "+quote(path)+": want a path inside GITHUB_WORKSPACE ("+w.workspace+")"))
			assert.Check(t, is.Len(w.deleted(), 0), "nothing swept")
		})
	}
	for _, p := range []string{outside, filepath.Join(filepath.Dir(w.workspace), "record.json"), filepath.Join(filepath.Dir(file), "record.json")} {
		_, err := os.Stat(p)
		assert.Check(t, os.IsNotExist(err), "%s was written", p)
	}
	data, err := os.ReadFile(file)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(data), pathsSecret+"\n"), "the linked file is untouched")
}

// TestConfigAndReputationPathsOnlyInsideTheWorkspace: provision reads its
// configuration and the reputation record only inside the workspace (or the
// runner's temp dir for the record): a path outside, through "..", or through
// a symbolic link fails the step before any API call, and nothing of the file
// outside reaches the log.
func TestConfigAndReputationPathsOnlyInsideTheWorkspace(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	file := pathsOutside(t, s.Workspace)
	rel, err := filepath.Rel(s.Workspace, file)
	assert.NilError(t, err)
	for _, input := range []string{"config-path", "reputation-file"} {
		for _, path := range []string{"/etc/passwd", file, rel, "cost-link.md", "outside-dir/passwd"} {
			t.Run(input+" "+path, func(t *testing.T) {
				st := s.ProvisionStep(s.openPR(t))
				st.Inputs[input] = path
				res := harness.RunStep(t, st)
				assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
				assert.Check(t, is.Contains(res.Stdout, "::error::input "+input+" = "+quote(path)+": want a path inside GITHUB_WORKSPACE ("+s.Workspace+")"))
				assert.Check(t, !strings.Contains(res.Stdout+res.Summary, pathsSecret), "the file outside leaked")
				assert.Check(t, !strings.Contains(res.Stdout, "root:x:0:0"), "/etc/passwd leaked")
			})
		}
	}
	assert.Check(t, is.Len(s.RunPod.Pods(), 0), "nothing created")
}

// TestServiceURLsOnlyHTTPSWithoutUserInfo: the RunPod and registry URLs an
// action sends its credentials to must be https without user info (plain
// http only on loopback, where this simulated cloud serves): anything else
// fails the step before any request, and a credential in the URL is never
// printed.
func TestServiceURLsOnlyHTTPSWithoutUserInfo(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	tests := []struct{ input, value, wantShown, wantWhy string }{
		{input: "runpod-api-url", value: "http://api.runpod.io", wantShown: "http://api.runpod.io", wantWhy: "not scheme http on api.runpod.io"},
		{input: "runpod-api-url", value: "https://me:hunter2@api.runpod.io", wantShown: "https://***@api.runpod.io", wantWhy: "not user info"},
		{input: "registry-api-url", value: "http://registry.example", wantShown: "http://registry.example", wantWhy: "not scheme http on registry.example"},
		{input: "registry-api-url", value: "https://hunter2@ghcr.io", wantShown: "https://***@ghcr.io", wantWhy: "not user info"},
	}
	for _, tc := range tests {
		t.Run(tc.input+" "+tc.value, func(t *testing.T) {
			st := s.ProvisionStep(s.openPR(t))
			st.Inputs[tc.input] = tc.value
			res := harness.RunStep(t, st)
			assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, "::error::input "+tc.input+" = "+quote(tc.wantShown)+": want an https:// URL without user info"))
			assert.Check(t, is.Contains(res.Stdout, tc.wantWhy))
			assert.Check(t, !strings.Contains(res.Stdout+res.Summary, "hunter2"), "the URL's credential is printed")
		})
	}
	assert.Check(t, is.Len(s.RunPod.Requests(), 0), "no request before the inputs are valid")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// mintRecorder serves the simulated GitHub and records each installation
// token it mints.
type mintRecorder struct {
	next   http.Handler
	mu     sync.Mutex
	minted []string
}

func (m *mintRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/access_tokens") {
		m.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	m.next.ServeHTTP(rec, r)
	var body struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &body) == nil && body.Token != "" {
		m.mu.Lock()
		m.minted = append(m.minted, body.Token)
		m.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = io.Copy(w, bytes.NewReader(rec.Body.Bytes()))
}

// TestMintedInstallationTokenIsMaskedFirst: an action running as a GitHub App
// masks each installation token it mints (::add-mask::) before any other
// line could show it. (pkg/ghapi's TestOnSecretComesBeforeAnyUse shows the
// mask comes before the token's first use.)
func TestMintedInstallationTokenIsMaskedFirst(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	gh := githubsim.New(githubsim.WithApp(githubsim.App{ID: 4242, Slug: "runpod-gpu", PublicKey: &key.PublicKey, InstallationID: 77}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "org", Name: "app"}))
	_, err = gh.AddWorkflow(historyRepo, historyWorkflow, "RunPod GPU")
	assert.NilError(t, err)
	rec := &mintRecorder{next: gh}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)

	w := &historyWorld{gh: gh, url: srv.URL, temp: t.TempDir(), workspace: t.TempDir()}
	st := w.step(map[string]string{"since": "2026-10-06", "until": "2026-10-07",
		"app-id": "4242", "app-installation-id": "77", "app-private-key": keyPEM})
	delete(st.Inputs, "github-token")
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)

	rec.mu.Lock()
	minted := append([]string{}, rec.minted...)
	rec.mu.Unlock()
	assert.Assert(t, len(minted) > 0, "the action minted no installation token")
	for _, token := range minted {
		lines := strings.Split(res.Stdout, "\n")
		first := -1
		for i, l := range lines {
			if strings.Contains(l, token) {
				first = i
				break
			}
		}
		assert.Assert(t, first >= 0, "the minted token was never masked:\n%s", res.Stdout)
		assert.Check(t, is.Equal(lines[first], "::add-mask::"+token), "the token's first appearance is its mask")
		assert.Check(t, !strings.Contains(harness.WithoutMasks(res.Stdout)+res.Summary, token), "the token shows outside its mask")
	}
}
