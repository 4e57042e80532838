package devcli

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/doctor"
	"github.com/org/runpod-gpu/pkg/ghsetup"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	ghAdminToken  = "ghp_ADMIN_SECRET_TOKEN"
	doctorRepo    = "my-org/gpu-project"
	doctorAppID   = int64(901)
	doctorInstall = int64(77)
)

var (
	doctorDigest    = "sha256:" + strings.Repeat("5e", 32)
	doctorPodDigest = "sha256:" + strings.Repeat("b8", 32)
)

// appKey is one RSA key for every doctor test (generating one is slow).
var appKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// setup is a repository's set-up, every knob as a careful user leaves it;
// a test turns one knob to show one check's failure.
type setup struct {
	permissions map[string]string
	branches    []string // the environment's deployment branches
	envSecrets  []string
	repoSecrets []string
	// protected adds classic branch protection requiring the gate from
	// requiredAppID; ruleset a ruleset requiring it (the README's road).
	protected, ruleset bool
	rulesetBypass      []githubsim.BypassActor // the ruleset's bypass list
	requiredAppID      int64
	// mergeQueue adds a ruleset with a merge queue on the default branch.
	mergeQueue       bool
	suite            string // the suite the callers pin, OWNER/runpod-gpu@REF
	releaseReviewers []string
	skipCallers      []string // init's files left off the default branch
	ciName           string   // the CI workflow's name on the default branch
	privateImage     bool
	privatePodImage  bool // the default pod image's package (…-runner) private
	balance          float64
	editLane         func(string) string
	runnerGroup      *githubsim.RunnerGroup
	variablesAbsent  []string
	// refuse answers GitHub requests whose path matches a pattern with a
	// status, as GitHub refuses them, before the simulated GitHub sees them.
	refuse map[string]int
}

func goodSetup() setup {
	return setup{
		permissions: map[string]string{"actions": "write", "administration": "write", "checks": "write", "contents": "read", "pull_requests": "read", "metadata": "read"},
		branches:    []string{"main"}, envSecrets: []string{"RUNPOD_API_KEY", "RUNPOD_GPU_APP_PRIVATE_KEY"},
		ruleset: true, requiredAppID: doctorAppID, ciName: "CI", balance: 50,
		suite: "my-org/runpod-gpu@v1", releaseReviewers: []string{"maintainer"},
	}
}

// refusals are GitHub's answers to a refused read, headers and body.
var refusals = map[int]struct {
	header map[string]string
	body   string
}{
	http.StatusUnauthorized: {body: `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`},
	http.StatusForbidden: {header: map[string]string{"X-Accepted-GitHub-Permissions": "environments=read"},
		body: `{"message":"Resource not accessible by personal access token","documentation_url":"https://docs.github.com/rest","status":"403"}`},
	http.StatusNotFound:   {body: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`},
	http.StatusBadGateway: {body: `{"message":"Server Error"}`},
}

// refusing answers the requests s.refuse names, and passes the others on.
func refusing(next http.Handler, refuse map[string]int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for pattern, status := range refuse {
			if match, _ := path.Match(pattern, r.URL.Path); match {
				answer := refusals[status]
				for k, v := range answer.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, answer.body)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
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

	// runpod-gpu init writes the files (before GitHub is reachable: this
	// world seeds the GitHub side itself, as the README's road leaves it).
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	r := w.run("init", "--dir", dir, "--suite", s.suite, "--gpus", "RTX4090", "--max-run-spend", "5",
		"--test-command", "make test-gpu", "--no-input")
	assert.Equal(t, r.code, ExitOK, r.stderr)

	// App JWTs carry real time, so the simulated GitHub keeps it.
	gh := githubsim.New(githubsim.WithClock(simclock.NewVirtual(time.Now())),
		githubsim.WithToken(ghAdminToken, githubsim.Identity{Login: "my-org"}),
		githubsim.WithApp(githubsim.App{ID: doctorAppID, Slug: "runpod-gpu-ci", PublicKey: &key.PublicKey}),
		githubsim.WithInstallation(githubsim.Installation{ID: doctorInstall, AppID: doctorAppID, Account: "my-org", Permissions: s.permissions}))
	suiteRepo, ref, _ := strings.Cut(s.suite, "@")
	suiteOwner, _, _ := strings.Cut(suiteRepo, "/")
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "my-org", Name: "gpu-project"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: suiteOwner, Name: "runpod-gpu"}))
	assert.NilError(t, gh.SetFile(suiteRepo, ref, "actions/provision/action.yml",
		"name: RunPod GPU provision\nruns:\n  using: docker\n  image: docker://ghcr.io/"+suiteRepo+"@"+doctorDigest+"\n"))
	assert.NilError(t, gh.SetEnvironment(suiteRepo, githubsim.Environment{Name: "release", Tags: []string{"v*"}, Reviewers: s.releaseReviewers}))
	ghServer := httptest.NewServer(refusing(gh, s.refuse))
	t.Cleanup(ghServer.Close)
	// The release pushes the default pod image as <action image>-runner
	// under the tag the callers pin.
	reg := registrysim.Registry{Digests: map[string]string{suiteRepo + ":v1.0.0": doctorDigest, suiteRepo + "-runner:" + ref: doctorPodDigest}}
	if s.privateImage {
		reg.Private = append(reg.Private, suiteRepo)
	}
	if s.privatePodImage {
		reg.Private = append(reg.Private, suiteRepo+"-runner")
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
	gate := githubsim.RequiredCheck{Context: "CI GPU gate", AppID: s.requiredAppID}
	if s.protected {
		assert.NilError(t, gh.ProtectBranch(doctorRepo, "main", gate))
	}
	if s.ruleset {
		_, err := gh.SetRuleset(doctorRepo, githubsim.Ruleset{Name: "runpod-gpu", Include: []string{"~DEFAULT_BRANCH"},
			Rules: []githubsim.RulesetRule{githubsim.RequiredChecksRule(gate)}, BypassActors: s.rulesetBypass})
		assert.NilError(t, err)
	}
	if s.mergeQueue {
		_, err := gh.SetRuleset(doctorRepo, githubsim.Ruleset{Name: "merge queue", Include: []string{"refs/heads/main"},
			Rules: []githubsim.RulesetRule{githubsim.MergeQueueRule()}})
		assert.NilError(t, err)
	}
	if s.runnerGroup != nil {
		gh.SetRunnerGroup("my-org", *s.runnerGroup)
	}

	// The merge of what init wrote (and the CI) to main.
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

// doctorReport runs doctor --json (with the App's key file unless it is
// "") and decodes its report.
func doctorReport(t *testing.T, w *world, keyFile string) (int, doctor.Report, string) {
	t.Helper()
	args := []string{"doctor", "--repo", doctorRepo, "--json"}
	if keyFile != "" {
		args = append(args, "--app-key-file", keyFile)
	}
	r := w.run(args...)
	var rep doctor.Report
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &rep), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Check(t, !strings.Contains(r.stdout+r.stderr, ghAdminToken), "the GitHub token leaked")
	assert.Check(t, !strings.Contains(r.stdout+r.stderr, testKey), "the RunPod key leaked")
	return r.code, rep, r.stderr
}

// allChecks are the report's rows, in order.
var allChecks = []string{doctor.CheckApp, doctor.CheckEnvironment, doctor.CheckSecrets, doctor.CheckBranchProtection,
	doctor.CheckCallers, doctor.CheckWorkflowNames, doctor.CheckImage, doctor.CheckPodImage, doctor.CheckRelease, doctor.CheckRunPod,
	doctor.CheckBalance, doctor.CheckRunnerGroup}

// assertStatuses checks every row is ok but those want names.
func assertStatuses(t *testing.T, rep doctor.Report, want map[string]doctor.Status) {
	t.Helper()
	var ids []string
	for _, c := range rep.Checks {
		ids = append(ids, c.ID)
		status, named := want[c.ID]
		if !named {
			status = doctor.StatusOK
		}
		assert.Check(t, is.Equal(c.Status, status), "%s: %s; fix: %s", c.ID, c.Message, c.Fix)
	}
	assert.Check(t, is.DeepEqual(ids, allChecks))
}

// The README's road leaves a repository with the environment, its secrets,
// the variables, a ruleset requiring the gate from the App and the callers
// merged, pinning the published suite: every check passes, as text and as
// JSON (golden), with the App's key; without it (the README's step 6 as
// written: the key went straight to GitHub) the App's row reads "?" and
// doctor still exits 0.
func TestDoctorOnTheReadmeRoadPassesEveryCheck(t *testing.T) {
	s := goodSetup()
	s.suite = "org/runpod-gpu@v1"
	w, keyFile := doctorWorld(t, s)
	code, rep, stderr := doctorReport(t, w, keyFile)
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, rep.OK)
	assertStatuses(t, rep, nil)

	r := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "ok    app "))
	assert.Check(t, is.Contains(r.stdout, `main requires "CI GPU gate" from App 901 through the ruleset`))
	assert.Check(t, is.Contains(r.stdout, "Every check passed"))

	r = w.run("doctor", "--repo", doctorRepo, "--json", "--app-key-file", keyFile)
	golden.Assert(t, r.stdout, "doctor-road.json")

	code, rep, stderr = doctorReport(t, w, "")
	assert.Equal(t, code, ExitOK, stderr)
	assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckApp: doctor.StatusUnknown})
	r = w.run("doctor", "--repo", doctorRepo)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "?     app "))
	assert.Check(t, is.Contains(r.stdout, "to check it: pass --app-key-file with the key"))
	assert.Check(t, is.Contains(r.stdout, "No check needs a fix (1 could not be made"))
}

// The gate may be required by a ruleset, by classic branch protection or
// by both: each passes and says which it found; bound to another App, or to
// none, neither does.
func TestDoctorReadsRulesetsAndBranchProtection(t *testing.T) {
	tests := []struct {
		name               string
		ruleset, protected bool
		requiredAppID      int64
		want               doctor.Status
		wantText           string
	}{
		{name: "ruleset", ruleset: true, requiredAppID: doctorAppID, want: doctor.StatusOK, wantText: "through the ruleset"},
		{name: "branch protection", protected: true, requiredAppID: doctorAppID, want: doctor.StatusOK, wantText: "through branch protection"},
		{name: "both", ruleset: true, protected: true, requiredAppID: doctorAppID, want: doctor.StatusOK, wantText: "through the ruleset"},
		{name: "ruleset, another App", ruleset: true, requiredAppID: 5, want: doctor.StatusFix, wantText: "(App 5)"},
		{name: "protection, any source", protected: true, want: doctor.StatusFix, wantText: "branch protection (any source)"},
		{name: "neither", want: doctor.StatusFix, wantText: "neither a ruleset nor branch protection of main requires"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := goodSetup()
			s.ruleset, s.protected, s.requiredAppID = tc.ruleset, tc.protected, tc.requiredAppID
			w, keyFile := doctorWorld(t, s)
			_, rep, _ := doctorReport(t, w, keyFile)
			assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckBranchProtection: tc.want})
			row := rep.Checks[3]
			assert.Check(t, is.Contains(row.Message, tc.wantText))
			if tc.want == doctor.StatusFix {
				assert.Check(t, is.Contains(row.Fix, "your App (app_id 901)"))
			}
		})
	}
}

// doctor agrees with init's ruleset: administrators bypassing it in pull
// requests (what init sets, so its own pull request can be merged) pass and
// are named; anyone else bypassing it fails; and a ruleset nobody may bypass
// while the lane is not yet on the default branch fails, since no pull
// request, init's included, could get the gate.
func TestDoctorJudgesTheGateRulesetsBypassList(t *testing.T) {
	admins := githubsim.BypassActor{ActorID: ghsetup.AdminRoleID, ActorType: "RepositoryRole", BypassMode: "pull_request"}
	writers := githubsim.BypassActor{ActorID: 4, ActorType: "RepositoryRole", BypassMode: "pull_request"}
	tests := []struct {
		name       string
		bypass     []githubsim.BypassActor
		laneAbsent bool
		want       doctor.Status
		wantText   string
		wantFix    string
	}{
		{name: "init's: admins in pull requests", bypass: []githubsim.BypassActor{admins}, want: doctor.StatusOK,
			wantText: "administrators may merge a pull request past it"},
		{name: "init's, before its pull request is merged", bypass: []githubsim.BypassActor{admins}, laneAbsent: true, want: doctor.StatusOK,
			wantText: "administrators may merge a pull request past it"},
		{name: "nobody, lane merged", want: doctor.StatusOK, wantText: "through the ruleset"},
		{name: "nobody, lane not merged: deadlock", laneAbsent: true, want: doctor.StatusFix,
			wantText: "nobody may bypass it", wantFix: "Repository admin → For pull requests only"},
		{name: "writers bypass", bypass: []githubsim.BypassActor{admins, writers}, want: doctor.StatusFix,
			wantText: "RepositoryRole 4 (pull_request)", wantFix: "remove them from its bypass list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := goodSetup()
			s.ruleset, s.requiredAppID, s.rulesetBypass = true, doctorAppID, tc.bypass
			if tc.laneAbsent {
				s.skipCallers = []string{callers.LanePath}
			}
			w, keyFile := doctorWorld(t, s)
			_, rep, _ := doctorReport(t, w, keyFile)
			for _, row := range rep.Checks {
				if row.ID != doctor.CheckBranchProtection {
					continue
				}
				assert.Check(t, is.Equal(row.Status, tc.want), "%+v", row)
				assert.Check(t, is.Contains(row.Message, tc.wantText))
				assert.Check(t, is.Contains(row.Fix, tc.wantFix))
			}
		})
	}
}

// Where rulesets are unavailable (a private repository on the Free plan),
// classic protection is read alone, and the fix says to use it.
func TestDoctorWithoutRulesetsAsksForBranchProtection(t *testing.T) {
	s := goodSetup()
	s.ruleset, s.refuse = false, map[string]int{"/repos/my-org/gpu-project/rules/branches/*": http.StatusForbidden}
	w, keyFile := doctorWorld(t, s)
	_, rep, _ := doctorReport(t, w, keyFile)
	assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckBranchProtection: doctor.StatusFix})
	assert.Check(t, is.Contains(rep.Checks[3].Message, "rulesets are unavailable"))
	assert.Check(t, is.Contains(rep.Checks[3].Fix, "Settings → Branches → Add branch protection rule"))

	s.protected = true
	w, keyFile = doctorWorld(t, s)
	_, rep, _ = doctorReport(t, w, keyFile)
	assertStatuses(t, rep, nil)
}

// The merge queue's deployment branch, as pull-requests.md tells a
// repository to add it: allowed beside the default branch, required once a
// ruleset has a merge queue; any other extra branch still fails.
func TestDoctorMergeQueuePattern(t *testing.T) {
	tests := []struct {
		name       string
		branches   []string
		mergeQueue bool
		wantFix    string
	}{
		{name: "queue pattern, queue in use", branches: []string{"main", "gh-readonly-queue/main/*"}, mergeQueue: true},
		{name: "queue pattern, no queue yet", branches: []string{"main", "gh-readonly-queue/main/*"}},
		{name: "queue in use, pattern missing", branches: []string{"main"}, mergeQueue: true,
			wantFix: "add gh-readonly-queue/main/* to the deployment branches of runpod-gpu"},
		{name: "another base's queue", branches: []string{"main", "gh-readonly-queue/dev/*"}, mergeQueue: true,
			wantFix: `remove branch "gh-readonly-queue/dev/*" from the deployment branches of runpod-gpu (Settings → Environments → runpod-gpu), keeping main and gh-readonly-queue/main/* (the merge queue)`},
		{name: "another branch", branches: []string{"main", "gh-readonly-queue/main/*", "release/*"},
			wantFix: `remove branch "release/*" from the deployment branches of runpod-gpu (Settings → Environments → runpod-gpu), keeping main and gh-readonly-queue/main/*`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := goodSetup()
			s.branches, s.mergeQueue = tc.branches, tc.mergeQueue
			w, keyFile := doctorWorld(t, s)
			code, rep, _ := doctorReport(t, w, keyFile)
			if tc.wantFix == "" {
				assert.Check(t, is.Equal(code, ExitOK))
				assertStatuses(t, rep, nil)
				return
			}
			assert.Check(t, is.Equal(code, ExitFailure))
			assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckEnvironment: doctor.StatusFix})
			assert.Check(t, is.Contains(rep.Checks[1].Fix, tc.wantFix))
		})
	}
}

// Each check, failing alone: its row says fix: and exactly what to do,
// every other row stays ok, and doctor exits 1.
func TestDoctorSaysWhatToFix(t *testing.T) {
	tests := []struct {
		check   string
		change  func(*setup)
		wantFix []string
		also    string // another check the change fails
	}{
		{check: doctor.CheckApp, change: func(s *setup) { delete(s.permissions, "administration") },
			wantFix: []string{"grant the App 901 {administration: write}", "accept the new permissions"}},
		{check: doctor.CheckEnvironment, change: func(s *setup) { s.branches = []string{"main", "feature/*"} },
			wantFix: []string{`remove branch "feature/*" from the deployment branches of runpod-gpu`}},
		{check: doctor.CheckSecrets, change: func(s *setup) {
			s.envSecrets, s.repoSecrets = []string{"RUNPOD_API_KEY"}, []string{"RUNPOD_API_KEY"}
		}, wantFix: []string{"add the secret RUNPOD_GPU_APP_PRIVATE_KEY to the environment runpod-gpu", "delete the repository secret RUNPOD_API_KEY"}},
		{check: doctor.CheckSecrets, change: func(s *setup) { s.variablesAbsent = []string{"RUNPOD_GPU_APP_INSTALLATION_ID"} },
			wantFix: []string{"set the repository variable RUNPOD_GPU_APP_INSTALLATION_ID", "not one of the environment runpod-gpu"}, also: doctor.CheckApp},
		{check: doctor.CheckBranchProtection, change: func(s *setup) { s.ruleset = false },
			wantFix: []string{"add a ruleset", `Require status checks to pass → "CI GPU gate" from your App (app_id 901)`}},
		{check: doctor.CheckCallers, change: func(s *setup) { s.skipCallers = []string{callers.ReapPath} },
			wantFix: []string{"merge the reaper's caller (reap.yml) to main"}},
		{check: doctor.CheckWorkflowNames, change: func(s *setup) { s.ciName = "Tests" },
			wantFix: []string{`"Tests" under workflow_run's workflows:`}},
		{check: doctor.CheckImage, change: func(s *setup) { s.privateImage = true },
			wantFix: []string{"make the package ghcr.io/my-org/runpod-gpu public"}},
		{check: doctor.CheckPodImage, change: func(s *setup) { s.privatePodImage = true },
			wantFix: []string{"make the package ghcr.io/my-org/runpod-gpu-runner public (the owner's Packages → runpod-gpu-runner → Package settings → Change visibility → Public)"}},
		{check: doctor.CheckRelease, change: func(s *setup) { s.releaseReviewers = nil },
			wantFix: []string{"add required reviewers (Settings → Environments → release in my-org/runpod-gpu → Required reviewers)"}},
		{check: doctor.CheckBalance, change: func(s *setup) { s.balance = 2 },
			wantFix: []string{"add credit"}},
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
			failing := map[string]doctor.Status{tc.check: doctor.StatusFix}
			if tc.also != "" {
				failing[tc.also] = doctor.StatusFix
			}
			assert.Check(t, is.Contains(stderr, fmt.Sprintf("%d of %d checks need a fix", len(failing), len(allChecks))))
			assert.Check(t, !rep.OK)
			assertStatuses(t, rep, failing)
			for _, c := range rep.Checks {
				if c.ID == tc.check {
					assert.Check(t, c.Message != "", "a failed row says what is wrong")
					for _, want := range tc.wantFix {
						assert.Check(t, is.Contains(c.Fix, want))
					}
				}
			}
			text := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile)
			assert.Check(t, is.Contains(text.stdout, "FIX   "+tc.check))
			assert.Check(t, is.Contains(text.stdout, "fix: "))
			assert.Check(t, is.Contains(text.stdout, tc.wantFix[0]))
		})
	}
}

// The balance is an optional line on RunPod's GraphQL API: when it cannot
// be read it says "unknown" and doctor still exits 0; a key RunPod refuses
// fails the REST row, with what to do.
func TestDoctorBalanceIsOptional(t *testing.T) {
	w, keyFile := doctorWorld(t, goodSetup())
	// RunPod without GraphQL, as it will be once GraphQL retires.
	target, err := url.Parse(w.url)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	noGraphQL := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphql" {
			http.NotFound(rw, r)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(noGraphQL.Close)
	w.env["RUNPOD_API_URL"] = noGraphQL.URL
	code, rep, stderr := doctorReport(t, w, keyFile)
	assert.Equal(t, code, ExitOK, stderr)
	assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckBalance: doctor.StatusUnknown})
	assert.Check(t, is.Contains(rep.Checks[10].Fix, "RunPod console → Billing"))

	w.env["RUNPOD_API_URL"] = w.url
	w.env["RUNPOD_API_KEY"] = "rpa_NOT_THE_KEY"
	code, rep, _ = doctorReport(t, w, keyFile)
	assert.Equal(t, code, ExitFailure)
	assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckRunPod: doctor.StatusFix, doctor.CheckBalance: doctor.StatusUnknown})
	assert.Check(t, is.Contains(rep.Checks[9].Message, "RunPod refused the key"))
	assert.Check(t, is.Contains(rep.Checks[9].Fix, "store it as the secret RUNPOD_API_KEY of the environment runpod-gpu"))

	delete(w.env, "RUNPOD_API_KEY")
	code, rep, _ = doctorReport(t, w, keyFile)
	assert.Equal(t, code, ExitOK)
	assertStatuses(t, rep, map[string]doctor.Status{doctor.CheckRunPod: doctor.StatusUnknown, doctor.CheckBalance: doctor.StatusUnknown})
}

// Every refused read becomes what to do, for each check's reads and each
// kind of refusal: an invalid token, a missing permission, a thing not
// found, a server error. No status line or status code leaks.
func TestDoctorTurnsHTTPFailuresIntoWhatToDo(t *testing.T) {
	reads := map[string][]string{ // check → the paths its reads take
		doctor.CheckApp:              {"/repos/my-org/gpu-project/installation"},
		doctor.CheckEnvironment:      {"/repos/my-org/gpu-project/environments/runpod-gpu"},
		doctor.CheckSecrets:          {"/repos/my-org/gpu-project/environments/runpod-gpu/secrets"},
		doctor.CheckBranchProtection: {"/repos/my-org/gpu-project/rules/branches/main", "/repos/my-org/gpu-project/branches/main/protection"},
		doctor.CheckCallers:          {"/repos/my-org/gpu-project/contents/.github/workflows"},
		doctor.CheckWorkflowNames:    {"/repos/my-org/gpu-project/actions/workflows"},
		doctor.CheckImage:            {"/repos/my-org/runpod-gpu/contents/actions/provision/action.yml"},
		doctor.CheckRelease:          {"/repos/my-org/runpod-gpu/environments/release"},
	}
	want := map[int]map[string]string{ // status → check → what the row says ("" : the default)
		http.StatusUnauthorized: {"": "gh auth refresh", doctor.CheckApp: "GitHub refused the key of --app-key-file"},
		http.StatusForbidden: {"": "the token may not read", doctor.CheckApp: "GitHub refused the key of --app-key-file",
			doctor.CheckEnvironment: "a fine-grained token with environments=read on the repository"},
		http.StatusNotFound: {"": "GitHub could not find", doctor.CheckApp: "is not installed on my-org/gpu-project",
			doctor.CheckEnvironment: "has no environment runpod-gpu", doctor.CheckSecrets: "the environment runpod-gpu, which holds the secrets",
			doctor.CheckCallers: "main has no .github/workflows",
			doctor.CheckRelease: "my-org/runpod-gpu has no environment release"},
		http.StatusBadGateway: {"": "retry later"},
	}
	leaks := []string{"401", "403", "404", "502", "HTTP", "Not Found", "Bad credentials", "Server Error", "http://127.0.0.1"}
	for status, byCheck := range want {
		for check, paths := range reads {
			t.Run(fmt.Sprintf("%d/%s", status, check), func(t *testing.T) {
				s := goodSetup()
				s.refuse = map[string]int{}
				for _, p := range paths {
					s.refuse[p] = status
				}
				w, keyFile := doctorWorld(t, s)
				code, rep, stderr := doctorReport(t, w, keyFile)
				assert.Check(t, is.Equal(code, ExitFailure))
				failing := map[string]doctor.Status{check: doctor.StatusFix}
				if check == doctor.CheckCallers { // no caller: nothing names the suite
					for _, c := range []string{doctor.CheckWorkflowNames, doctor.CheckImage, doctor.CheckPodImage, doctor.CheckRelease} {
						failing[c] = doctor.StatusFix
					}
				}
				if check == doctor.CheckImage { // no action image: the pod image named after it is unknown
					failing[doctor.CheckPodImage] = doctor.StatusUnknown
				}
				assertStatuses(t, rep, failing)
				wantText, named := byCheck[check]
				if !named {
					wantText = byCheck[""]
				}
				for _, c := range rep.Checks {
					if c.ID == check {
						assert.Check(t, is.Contains(c.Message+" "+c.Fix, wantText))
						assert.Check(t, c.Fix != "")
					}
				}
				text := w.run("doctor", "--repo", doctorRepo, "--app-key-file", keyFile)
				for _, leak := range leaks {
					assert.Check(t, !strings.Contains(text.stdout+text.stderr+stderr, leak), "%q leaked:\n%s", leak, text.stdout)
				}
			})
		}
	}
}

// A repository doctor cannot read at all fails at once, with what to do.
func TestDoctorUnreadableRepository(t *testing.T) {
	for status, want := range map[int]string{
		http.StatusUnauthorized: "gh auth refresh",
		http.StatusNotFound:     "check the name my-org/gpu-project (--repo, or the origin of the checkout)",
	} {
		s := goodSetup()
		s.refuse = map[string]int{"/repos/my-org/gpu-project": status}
		w, _ := doctorWorld(t, s)
		r := w.run("doctor", "--repo", doctorRepo)
		assert.Check(t, is.Equal(r.code, ExitFailure))
		assert.Check(t, is.Contains(r.stderr, want))
		assert.Check(t, !strings.Contains(r.stderr, "404") && !strings.Contains(r.stderr, "401"), r.stderr)
	}
}

// Without a token doctor says how to give one; a --repo that is no
// OWNER/NAME is a usage error.
func TestDoctorSaysWhatItNeeds(t *testing.T) {
	w, _ := doctorWorld(t, goodSetup())
	delete(w.env, "GH_TOKEN")
	r := w.run("doctor", "--repo", doctorRepo)
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

// The simulated cloud (pkg/sim/cloud) with the published suite, and its
// repository set up as the README's road leaves it, seeded through the
// simulated GitHub's set-up methods: every check passes, with the App's
// key; the README's step 6 as written (no key) leaves only the App's row
// unknown, and doctor exits 0.
func TestDoctorOnTheSimulatedCloud(t *testing.T) {
	key, err := appKey()
	assert.NilError(t, err)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	assert.NilError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))
	c, err := cloud.Start(cloud.Options{Seed: 7, GitHubOptions: []githubsim.Option{
		githubsim.WithToken(ghAdminToken, githubsim.Identity{Login: cloud.Owner}),
		githubsim.WithApp(githubsim.App{ID: cloud.AppID, Slug: cloud.AppSlug, PublicKey: &key.PublicKey}),
		githubsim.WithInstallation(githubsim.Installation{ID: doctorInstall, AppID: cloud.AppID, Account: cloud.Owner, Permissions: goodSetup().permissions}),
	}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	assert.NilError(t, c.PublishSuite())

	// What the road leaves: init's files merged, the environment with its
	// secrets, the variables, a ruleset requiring the gate from the App.
	w := newWorld(t)
	dir := checkout(t, map[string]string{"ci.yml": ciWorkflow})
	r := w.run("init", "--dir", dir, "--suite", cloud.SuiteRepository+"@"+cloud.SuiteRef, "--gpus", "RTX4090", "--max-run-spend", "5",
		"--test-command", "make test-gpu", "--no-input")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	gh := c.GitHub
	assert.NilError(t, gh.SetFile(cloud.Repository, "", ".github/workflows/ci.yml", ciWorkflow))
	for _, p := range initFiles {
		assert.NilError(t, gh.SetFile(cloud.Repository, "", p, readFile(t, dir, p)))
	}
	assert.NilError(t, gh.SetEnvironment(cloud.Repository, githubsim.Environment{Name: "runpod-gpu", Branches: []string{"main"},
		Secrets: []string{"RUNPOD_API_KEY", "RUNPOD_GPU_APP_PRIVATE_KEY"}}))
	assert.NilError(t, gh.SetVariable(cloud.Repository, "RUNPOD_GPU_APP_ID", fmt.Sprint(cloud.AppID)))
	assert.NilError(t, gh.SetVariable(cloud.Repository, "RUNPOD_GPU_APP_INSTALLATION_ID", fmt.Sprint(doctorInstall)))
	_, err = gh.SetRuleset(cloud.Repository, githubsim.Ruleset{Name: "runpod-gpu", Include: []string{"~DEFAULT_BRANCH"},
		Rules: []githubsim.RulesetRule{githubsim.RequiredChecksRule(githubsim.RequiredCheck{Context: "CI GPU gate", AppID: cloud.AppID})}})
	assert.NilError(t, err)

	w.env = map[string]string{"GH_TOKEN": ghAdminToken, "GITHUB_API_URL": c.GitHubURL, "RUNPOD_GPU_REGISTRY_URL": c.RegistryURL,
		"RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_API_URL": c.RunPodURL}
	for _, tc := range []struct {
		keyFile string
		want    map[string]doctor.Status
	}{
		{keyFile: keyFile},
		{want: map[string]doctor.Status{doctor.CheckApp: doctor.StatusUnknown}},
	} {
		args := []string{"doctor", "--repo", cloud.Repository, "--json"}
		if tc.keyFile != "" {
			args = append(args, "--app-key-file", tc.keyFile)
		}
		r := w.run(args...)
		assert.Equal(t, r.code, ExitOK, r.stdout+r.stderr)
		var rep doctor.Report
		assert.NilError(t, json.Unmarshal([]byte(r.stdout), &rep))
		assertStatuses(t, rep, tc.want)
	}
}

// The release row judges only what the user can change: a suite of another
// owner whose release environment this token cannot read is unknown (it
// never fails doctor), and callers pinned to a commit need no reviewer.
func TestDoctorReleaseOfASuiteTheUserDoesNotKeep(t *testing.T) {
	for _, tc := range []struct {
		name       string
		change     func(*setup)
		wantStatus doctor.Status
		wantText   string
	}{
		{name: "another owner's suite, environment hidden", change: func(s *setup) {
			s.suite = "octo/runpod-gpu@v1"
			s.refuse = map[string]int{"/repos/octo/runpod-gpu/environments/release": http.StatusNotFound}
		}, wantStatus: doctor.StatusUnknown, wantText: "pin a release commit"},
		{name: "own suite, environment missing", change: func(s *setup) {
			s.refuse = map[string]int{"/repos/my-org/runpod-gpu/environments/release": http.StatusNotFound}
		}, wantStatus: doctor.StatusFix, wantText: "create it with required reviewers"},
		{name: "pinned to a commit", change: func(s *setup) {
			s.suite = "my-org/runpod-gpu@0123456789abcdef0123456789abcdef01234567"
			s.releaseReviewers = nil
		}, wantStatus: doctor.StatusOK, wantText: "which no release moves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := goodSetup()
			tc.change(&s)
			w, keyFile := doctorWorld(t, s)
			_, rep, _ := doctorReport(t, w, keyFile)
			for _, c := range rep.Checks {
				if c.ID == doctor.CheckRelease {
					assert.Check(t, is.Equal(c.Status, tc.wantStatus), "%+v", c)
					assert.Check(t, is.Contains(c.Message+" "+c.Fix, tc.wantText))
					return
				}
			}
			t.Fatal("no release row")
		})
	}
}
