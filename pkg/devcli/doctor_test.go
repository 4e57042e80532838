package devcli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/doctor"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	ghAdminToken   = "ghp_ADMIN_SECRET_TOKEN"
	doctorRepo     = "my-org/gpu-project"
	doctorAppID    = int64(901)
	doctorInstall  = int64(77)
	doctorImageRef = "my-org/runpod-gpu"
)

var doctorDigest = "sha256:" + strings.Repeat("5e", 32)

// appKey is one RSA key for every doctor test (generating one is slow).
var appKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// setup is a repository's set-up, every knob as a careful user leaves it;
// a test turns one knob to show one check's failure.
type setup struct {
	permissions     map[string]string
	branches        []string // the environment's deployment branches
	envSecrets      []string
	repoSecrets     []string
	protected       bool
	requiredAppID   int64
	skipCallers     []string // init's files left off the default branch
	ciName          string   // the CI workflow's name on the default branch
	privateImage    bool
	balance         float64
	editLane        func(string) string
	runnerGroup     *githubsim.RunnerGroup
	variablesAbsent []string
}

func goodSetup() setup {
	return setup{
		permissions: map[string]string{"actions": "write", "administration": "write", "checks": "write", "contents": "read", "pull_requests": "read", "metadata": "read"},
		branches:    []string{"main"}, envSecrets: []string{"RUNPOD_API_KEY", "RUNPOD_GPU_APP_PRIVATE_KEY"},
		protected: true, requiredAppID: doctorAppID, ciName: "CI", balance: 50,
	}
}

// doctorWorld runs init into a checkout, applies s to a fresh simulated
// repository (GitHub, RunPod, the registry), merges init's files to its
// default branch, and returns the world and the App's key file.
func doctorWorld(t *testing.T, s setup) (*world, string) {
	t.Helper()
	w := newWorld(t, runpodsim.WithBalance(s.balance))
	key, err := appKey()
	assert.NilError(t, err)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	assert.NilError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))

	// App JWTs carry real time, so the simulated GitHub keeps it.
	gh := githubsim.New(githubsim.WithClock(simclock.NewVirtual(time.Now())),
		githubsim.WithToken(ghAdminToken, githubsim.Identity{Login: "my-org"}),
		githubsim.WithApp(githubsim.App{ID: doctorAppID, Slug: "runpod-gpu-ci", PublicKey: &key.PublicKey}),
		githubsim.WithInstallation(githubsim.Installation{ID: doctorInstall, AppID: doctorAppID, Account: "my-org", Permissions: s.permissions}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "my-org", Name: "gpu-project"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "my-org", Name: "runpod-gpu"}))
	assert.NilError(t, gh.SetFile("my-org/runpod-gpu", "v1", "actions/provision/action.yml",
		"name: RunPod GPU provision\nruns:\n  using: docker\n  image: docker://ghcr.io/"+doctorImageRef+"@"+doctorDigest+"\n"))
	ghServer := httptest.NewServer(gh)
	t.Cleanup(ghServer.Close)
	reg := registrysim.Registry{Digests: map[string]string{doctorImageRef + ":v1.0.0": doctorDigest}}
	if s.privateImage {
		reg.Private = []string{doctorImageRef}
	}
	regServer := httptest.NewServer(reg.Handler())
	t.Cleanup(regServer.Close)
	w.env["GH_TOKEN"], w.env["GITHUB_API_URL"], w.env["RUNPOD_GPU_REGISTRY_URL"] = ghAdminToken, ghServer.URL, regServer.URL

	assert.NilError(t, gh.SetEnvironment(doctorRepo, githubsim.Environment{Name: "runpod-gpu", Branches: s.branches, Secrets: s.envSecrets}))
	assert.NilError(t, gh.SetRepoSecrets(doctorRepo, s.repoSecrets...))
	vars := map[string]string{"RUNPOD_GPU_APP_ID": "901", "RUNPOD_GPU_APP_INSTALLATION_ID": "77"}
	for _, v := range s.variablesAbsent {
		delete(vars, v)
	}
	for k, v := range vars {
		assert.NilError(t, gh.SetVariable(doctorRepo, k, v))
	}
	if s.protected {
		assert.NilError(t, gh.ProtectBranch(doctorRepo, "main", githubsim.RequiredCheck{Context: "CI GPU gate", AppID: s.requiredAppID}))
	}
	if s.runnerGroup != nil {
		gh.SetRunnerGroup("my-org", *s.runnerGroup)
	}

	// runpod-gpu init, then the merge of what it wrote (and the CI) to main.
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	r := w.run("init", "--dir", dir, "--suite", "my-org/runpod-gpu@v1", "--gpus", "RTX4090", "--max-run-spend", "5",
		"--test-command", "make test-gpu", "--no-input")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	ci := strings.Replace(ciWorkflow, "name: CI", "name: "+s.ciName, 1)
	assert.NilError(t, gh.SetFile(doctorRepo, "", ".github/workflows/ci.yml", ci))
	for _, p := range initFiles {
		text := readFile(t, dir, p)
		if p == callers.LanePath && s.editLane != nil {
			text = s.editLane(text)
		}
		if !contains(s.skipCallers, p) {
			assert.NilError(t, gh.SetFile(doctorRepo, "", p, text))
		}
	}
	return w, keyFile
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// doctorReport runs doctor --json and decodes its report.
func doctorReport(t *testing.T, w *world, keyFile string) (int, doctor.Report, string) {
	t.Helper()
	r := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile, "--json")
	var rep doctor.Report
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &rep), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Check(t, !strings.Contains(r.stdout+r.stderr, ghAdminToken), "the GitHub token leaked")
	return r.code, rep, r.stderr
}

// init, then doctor, on a fresh simulated repository set up as the README
// says: every check passes, as text and as JSON.
func TestDoctorAfterInitPassesEveryCheck(t *testing.T) {
	w, keyFile := doctorWorld(t, goodSetup())
	code, rep, stderr := doctorReport(t, w, keyFile)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, rep.OK)
	var ids []string
	for _, c := range rep.Checks {
		ids = append(ids, c.ID)
		assert.Check(t, c.OK, "%s: %s", c.ID, c.Fix)
	}
	assert.Check(t, is.DeepEqual(ids, []string{doctor.CheckApp, doctor.CheckEnvironment, doctor.CheckSecrets, doctor.CheckBranchProtection,
		doctor.CheckCallers, doctor.CheckWorkflowNames, doctor.CheckImage, doctor.CheckRunPod, doctor.CheckRunnerGroup}))

	r := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "ok    app "))
	assert.Check(t, is.Contains(r.stdout, "Every check passed"))
}

// Each check, failing alone: its row says fix: and exactly what to do,
// every other row stays ok, and doctor exits 1.
func TestDoctorSaysWhatToFix(t *testing.T) {
	tests := []struct {
		check   string
		change  func(*setup)
		wantFix []string
	}{
		{check: doctor.CheckApp, change: func(s *setup) { delete(s.permissions, "administration") },
			wantFix: []string{"grant the App 901 {administration: write}", "accept the new permissions"}},
		{check: doctor.CheckEnvironment, change: func(s *setup) { s.branches = []string{"main", "feature/*"} },
			wantFix: []string{`remove branch "feature/*" from the deployment branches of runpod-gpu`}},
		{check: doctor.CheckSecrets, change: func(s *setup) {
			s.envSecrets, s.repoSecrets = []string{"RUNPOD_API_KEY"}, []string{"RUNPOD_API_KEY"}
		}, wantFix: []string{"add the secret RUNPOD_GPU_APP_PRIVATE_KEY to the environment runpod-gpu", "delete the repository secret RUNPOD_API_KEY"}},
		{check: doctor.CheckBranchProtection, change: func(s *setup) { s.protected = false },
			wantFix: []string{"protect main", `require the status check "CI GPU gate" with expected source your App (app_id 901)`}},
		{check: doctor.CheckCallers, change: func(s *setup) { s.skipCallers = []string{callers.ReapPath} },
			wantFix: []string{"merge the reaper's caller (reap.yml) to main"}},
		{check: doctor.CheckWorkflowNames, change: func(s *setup) { s.ciName = "Tests" },
			wantFix: []string{`.github/workflows/runpod-gpu.yml starts on workflow_run of "CI", which is no workflow's name:`, `"Tests"`}},
		{check: doctor.CheckImage, change: func(s *setup) { s.privateImage = true },
			wantFix: []string{"make the package ghcr.io/my-org/runpod-gpu public", "denied"}},
		{check: doctor.CheckRunPod, change: func(s *setup) { s.balance = 2 },
			wantFix: []string{"add credit", "the balance, $2.00, is below one run's bound, max_run_spend_usd $5"}},
		{check: doctor.CheckRunnerGroup, change: func(s *setup) {
			s.permissions["organization_self_hosted_runners"] = "write"
			s.runnerGroup = &githubsim.RunnerGroup{ID: 7, Name: "gpu", Visibility: "selected", Repositories: []string{"other"}, AllowsPublicRepositories: true}
			s.editLane = func(text string) string {
				return strings.Replace(text, "      test-command:", "      runner-scope: org\n      runner-org: my-org\n      runner-group-id: 7\n      test-command:", 1)
			}
		}, wantFix: []string{`add my-org/gpu-project to the repositories of runner group "gpu"`}},
	}
	for _, tc := range tests {
		t.Run(tc.check, func(t *testing.T) {
			s := goodSetup()
			tc.change(&s)
			w, keyFile := doctorWorld(t, s)
			code, rep, stderr := doctorReport(t, w, keyFile)
			assert.Equal(t, code, ExitFailure)
			assert.Check(t, is.Contains(stderr, "1 of 9 checks need a fix"))
			assert.Check(t, !rep.OK)
			for _, c := range rep.Checks {
				if c.ID != tc.check {
					assert.Check(t, c.OK, "only %s fails, but %s says: %s", tc.check, c.ID, c.Fix)
					continue
				}
				assert.Check(t, !c.OK, "%s passed: %s", c.ID, c.Detail)
				for _, want := range tc.wantFix {
					assert.Check(t, is.Contains(c.Fix, want))
				}
			}
			text := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile)
			assert.Check(t, is.Contains(text.stdout, "FIX   "+tc.check))
			assert.Check(t, is.Contains(text.stdout, "fix: "+tc.wantFix[0]))
		})
	}
}

// Without the App's key, or a token, doctor says how to give them.
func TestDoctorSaysWhatItNeeds(t *testing.T) {
	w, _ := doctorWorld(t, goodSetup())
	r := w.run("doctor", "--repo", doctorRepo, "--json")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stdout, "pass --app-key-file with the App's private key"))
	delete(w.env, "GH_TOKEN")
	r = w.run("doctor", "--repo", doctorRepo)
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "no GitHub token: set GH_TOKEN"))
	r = w.run("doctor", "--repo", "nonsense")
	assert.Equal(t, r.code, ExitUsage)
}

func TestOriginRepository(t *testing.T) {
	for url, want := range map[string]string{
		"git@github.com:my-org/gpu-project.git":       "my-org/gpu-project",
		"https://github.com/my-org/gpu-project":       "my-org/gpu-project",
		"https://github.com/my-org/gpu-project.git/":  "my-org/gpu-project",
		"ssh://git@github.com/my-org/gpu.project.git": "my-org/gpu.project",
		"https://gitlab.com/my-org/gpu-project.git":   "",
	} {
		dir := t.TempDir()
		assert.NilError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
		conf := "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://github.com/else/where\n[remote \"origin\"]\n\turl = " + url + "\n"
		assert.NilError(t, os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(conf), 0o644))
		assert.Check(t, is.Equal(originRepository(dir), want), url)
	}
	assert.Check(t, is.Equal(originRepository(t.TempDir()), ""))
}
