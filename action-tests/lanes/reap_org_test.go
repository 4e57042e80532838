package lanes

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// The organization reaper's world: the App is installed on acme's alpha and
// beta (selected repositories) but not on gamma; rival is another
// organization whose pods share the RunPod account.
const (
	orgReaperApp  = int64(5151)
	orgReaperInst = int64(9001)
	orgWorkflow   = cloud.Workflow // the lane's file, which the reaper sweeps by default
)

type orgWorld struct {
	*cloud.Cloud
	clock     *simclock.Virtual
	rp        *runpod.Client
	workspace string
	keyPEM    string
	pods      map[string]string // role → pod id
	runs      map[string]int64  // role → run id
}

func orgStartWorld(t *testing.T, ghOpts ...githubsim.Option) *orgWorld {
	t.Helper()
	return orgStartWorldWith(t, nil, ghOpts...)
}

// orgStartWorldWith is orgStartWorld with early, when not nil, adding pods
// of its own three virtual hours before the sweep (past the backstop).
func orgStartWorldWith(t *testing.T, early func(*orgWorld), ghOpts ...githubsim.Option) *orgWorld {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	assert.NilError(t, err)
	// Three virtual hours before the real now, so that the binary (on the wall
	// clock) sees pods of every age; advanced only while setting up.
	clock := simclock.NewVirtual(time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Second))
	market := testMarket(testHost("h1", reapGPU, true))
	market.Hosts[0].GPUCount = 64
	c, err := cloud.Start(cloud.Options{
		Clock: clock, Market: market, PageSize: 2, Balance: 1e6,
		Hosts: runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{ProofTime: time.Second}),
		// A generous quota: the RateLimit headers are on every answer, and the reserve is never reached.
		RunPodOptions: []runpodsim.Option{runpodsim.WithQuota(10000)},
		GitHubOptions: append([]githubsim.Option{
			githubsim.WithApp(githubsim.App{ID: orgReaperApp, Slug: "runpod-gpu-reaper", PublicKey: &key.PublicKey}),
			githubsim.WithInstallation(githubsim.Installation{ID: orgReaperInst, AppID: orgReaperApp, Account: "acme", Repositories: []string{"alpha", "beta"}}),
		}, ghOpts...),
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	w := &orgWorld{Cloud: c, clock: clock, rp: runpod.New(c.RunPodURL, cloud.RunPodKey), workspace: t.TempDir(),
		keyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		pods:   map[string]string{}, runs: map[string]int64{}}
	for _, r := range []string{"acme/admin", "acme/alpha", "acme/beta", "acme/gamma", "rival/alpha"} {
		owner, name, _ := strings.Cut(r, "/")
		assert.NilError(t, c.GitHub.AddRepo(githubsim.Repo{Owner: owner, Name: name}))
	}

	// Over two and a half hours: gamma's old pod is past the backstop, but the App cannot see gamma.
	w.pod(t, "gamma-old", w.run(t, "gamma-old", "acme/gamma"), "acme/gamma")
	w.pod(t, "rival-old", w.run(t, "rival-old", "rival/alpha"), "rival/alpha")
	if early != nil {
		early(w)
	}
	w.clock.Advance(2*time.Hour + 30*time.Minute)
	w.pod(t, "alpha-done", w.run(t, "alpha-done", "acme/alpha"), "acme/alpha")
	w.pod(t, "beta-active", w.run(t, "beta-active", "acme/beta"), "acme/beta")
	w.pod(t, "gamma-young", w.run(t, "gamma-young", "acme/gamma"), "acme/gamma")
	notebook, err := w.rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "my-notebook", Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: reapGPU, MinCudaVersion: "12.6"}})
	assert.NilError(t, err)
	w.pods["notebook"] = notebook.ID
	w.clock.Advance(10 * time.Minute)
	for _, role := range []string{"alpha-done", "gamma-young", "gamma-old", "rival-old"} {
		owner, name := w.repoOf(role)
		assert.NilError(t, c.GitHub.SetRunStatus(owner+"/"+name, w.runs[role], "completed", "success"))
	}
	w.clock.Advance(20 * time.Minute)
	return w
}

func (w *orgWorld) repoOf(role string) (string, string) {
	switch {
	case strings.HasPrefix(role, "alpha"):
		return "acme", "alpha"
	case strings.HasPrefix(role, "beta"):
		return "acme", "beta"
	case strings.HasPrefix(role, "gamma"):
		return "acme", "gamma"
	}
	return "rival", "alpha"
}

func (w *orgWorld) run(t *testing.T, role, repo string) int64 {
	t.Helper()
	return w.runOf(t, role, repo, orgWorkflow)
}

// runOf adds an in-progress run of workflow to repo.
func (w *orgWorld) runOf(t *testing.T, role, repo, workflow string) int64 {
	t.Helper()
	id, err := w.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: repo, WorkflowPath: workflow, Event: "pull_request", Status: "in_progress"})
	assert.NilError(t, err)
	w.runs[role] = id
	return id
}

func (w *orgWorld) pod(t *testing.T, role string, runID int64, repo string) {
	t.Helper()
	w.podOf(t, role, runID, repo, orgWorkflow)
}

// podOf creates a pod tagged as run runID of workflow in repo.
func (w *orgWorld) podOf(t *testing.T, role string, runID int64, repo, workflow string) {
	t.Helper()
	tags := ownership.Tags{Repository: repo, Workflow: workflow, RunID: runID, Attempt: 1, Candidate: 1}
	env := tags.Env()
	env["HF_TOKEN"] = "hf_PLANTEDorgtokenvalue"
	pod, err := w.rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: tags.PodName(), Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: reapGPU, MinCudaVersion: "12.6"}, Env: env})
	assert.NilError(t, err)
	w.pods[role] = pod.ID
}

func (w *orgWorld) step(inputs map[string]string) harness.Step {
	in := map[string]string{"runpod-api-key": cloud.RunPodKey, "runpod-api-url": w.RunPodURL, "github-token": cloud.GitHubToken,
		"organization": "acme", "app-id": fmt.Sprint(orgReaperApp), "app-private-key": w.keyPEM}
	for k, v := range inputs {
		in[k] = v
	}
	return harness.Step{Action: "reap", Workspace: w.workspace, Inputs: in, Event: map[string]any{},
		Env: map[string]string{
			"GITHUB_API_URL": w.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/admin",
			"GITHUB_RUN_ID": "88000", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule", "GITHUB_WORKSPACE": w.workspace,
			"GITHUB_WORKFLOW_REF": "acme/admin/.github/workflows/reap-org.yml@refs/heads/main",
		}}
}

func (w *orgWorld) record(t *testing.T, res harness.StepResult) (reap.OrgRecord, string) {
	t.Helper()
	path := res.Outputs["decision-record"]
	assert.Assert(t, path != "", res.Stdout)
	raw, err := os.ReadFile(filepath.Join(w.workspace, path))
	assert.NilError(t, err)
	var rec reap.OrgRecord
	assert.NilError(t, json.Unmarshal(raw, &rec))
	return rec, string(raw)
}

// decisions maps each pod's role to "repository status decision reason".
func (w *orgWorld) decisions(rec reap.OrgRecord) map[string]string {
	role := map[string]string{}
	for r, id := range w.pods {
		role[id] = r
	}
	out := map[string]string{}
	for _, rr := range rec.Repositories {
		for _, p := range rr.Pods {
			out[role[p.PodID]] = fmt.Sprintf("%s %s %s %s", rr.Repository, rr.Status, p.Decision, p.Reason)
		}
	}
	for _, p := range rec.Outside {
		out[role[p.PodID]] = fmt.Sprintf("outside %s %s", p.Decision, p.Reason)
	}
	return out
}

func (w *orgWorld) deleted() []string {
	role := map[string]string{}
	for r, id := range w.pods {
		role[id] = r
	}
	var out []string
	for _, p := range w.RunPod.Pods() {
		if !p.TerminatedAt.IsZero() {
			out = append(out, role[p.ID])
		}
	}
	sort.Strings(out)
	return out
}

func (w *orgWorld) assertNoLeaks(t *testing.T, res harness.StepResult, record string) {
	t.Helper()
	for _, secret := range []string{"hf_PLANTEDorgtokenvalue", "PRIVATE KEY", cloud.RunPodKey} {
		assert.Check(t, !strings.Contains(record+harness.WithoutMasks(res.Stdout)+res.Summary, secret), "%q leaked", secret)
		for k, v := range res.Outputs {
			assert.Check(t, !strings.Contains(v, secret), "output %s leaks %q", k, secret)
		}
	}
}

// One scheduled sweep over three repositories of acme: alpha's finished run's
// pod is reclaimed, beta's active run's pod is kept, gamma (which the App
// cannot see) is skipped even past the backstop, and rival's pod and an
// untagged pod are never touched.
func TestReapOrganizationSweepsEachRepositoryThroughItsInstallation(t *testing.T) {
	w := orgStartWorld(t)

	res := harness.RunStep(t, w.step(nil))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	rec, raw := w.record(t, res)
	assert.Check(t, rec.Execute)
	t.Log(res.Summary + "\n" + res.Stdout)
	assert.Check(t, is.Equal(rec.Organization, "acme"))
	assert.Check(t, is.DeepEqual(w.decisions(rec), map[string]string{
		"alpha-done":  "acme/alpha swept reclaim run-completed",
		"beta-active": "acme/beta swept keep run-active",
		"gamma-young": "acme/gamma skipped skip-foreign app-cannot-see-repository",
		"gamma-old":   "acme/gamma skipped skip-foreign app-cannot-see-repository",
		"rival-old":   "outside skip-foreign other-organization",
		"notebook":    "outside skip-foreign untagged",
	}))
	assert.Check(t, is.DeepEqual(w.deleted(), []string{"alpha-done"}))
	assert.Check(t, is.Equal(res.Outputs["reclaim-pod-ids"], w.pods["alpha-done"]))

	for _, row := range []string{
		"| Repository | Status | Pods seen | Reclaimed | Kept | Skipped | Deferred | Errors | Reason |",
		"| acme/alpha | swept | 1 | 1 | 0 | 0 | 0 | 0 | |",
		"| acme/beta | swept | 1 | 0 | 1 | 0 | 0 | 0 | |",
		"| acme/gamma | skipped | 2 | 0 | 0 | 2 | 0 | 0 |",
		"3 repositories — 2 swept, 1 skipped, 0 failed, 0 deferred; 2 pod(s) outside",
	} {
		assert.Check(t, is.Contains(res.Summary, row))
	}
	assert.Check(t, !strings.Contains(res.Summary+raw, "rival/alpha"), "another organization's repository is not named")

	// Pods the App cannot see are named in a warning: they may bill on.
	assert.Check(t, is.Contains(res.Stdout, "::warning::acme/gamma: 2 pod(s) left untouched: "))
	// The App looked up each acme repository once; nothing read gamma's or rival's runs.
	assert.Check(t, is.Equal(w.GitHub.CountRequests("GET", "/repos/acme/*/installation"), 3))
	assert.Check(t, is.Equal(w.GitHub.CountRequests("POST", "/app/installations/*/access_tokens"), 1),
		"alpha and beta share the installation, and its token")
	assert.Check(t, is.Equal(w.GitHub.CountRequests("", "/repos/acme/gamma/actions/*/*"), 0))
	assert.Check(t, is.Equal(w.GitHub.CountRequests("", "/repos/rival/*"), 0))
	assert.Check(t, is.Equal(w.GitHub.CountRequests("", "/repos/rival/*/*/*/*"), 0))
	assert.Check(t, is.Contains(res.Stdout, "\nrunpod-gpu::cost {"), "the reclaimed pod's cost line starts its line")
	w.assertNoLeaks(t, res, raw)
}

// A GitHub 5xx for alpha's runs fails alpha (its pod untouched, a warning,
// the step fails) while beta is still swept.
func TestReapOrganizationOneFailingRepositoryDoesNotStopTheOthers(t *testing.T) {
	w := orgStartWorld(t)
	w.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502,
		Path: fmt.Sprintf("/repos/acme/alpha/actions/runs/%d", w.runs["alpha-done"])})

	res := harness.RunStep(t, w.step(nil))
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	rec, raw := w.record(t, res)
	got := w.decisions(rec)
	assert.Check(t, is.Equal(got["alpha-done"], "acme/alpha failed error run-lookup-failed"))
	assert.Check(t, is.Equal(got["beta-active"], "acme/beta swept keep run-active"))
	assert.Check(t, is.Len(w.deleted(), 0))
	assert.Check(t, is.Contains(res.Stdout, "::warning::acme/alpha: reap: sweep incomplete"))
	assert.Check(t, is.Contains(res.Stdout, "1 of 3 repositories failed (the others were swept)"))
	assert.Check(t, is.Contains(res.Summary, "**1 repository failed:**"))
	assert.Check(t, is.Contains(res.Summary, "| acme/alpha | **failed** | 1 | 0 | 0 | 0 | 0 | 1 |"))
	assert.Check(t, is.Equal(res.Outputs["error-pod-ids"], w.pods["alpha-done"]))
	w.assertNoLeaks(t, res, raw)
}

// With one GitHub request an hour, alpha's run read leaves the window below
// the reserve; the hour's wait does not fit the sweep, so beta and gamma are
// deferred (no request for them) and the step succeeds with warnings.
func TestReapOrganizationKeepsTheGitHubReserve(t *testing.T) {
	w := orgStartWorld(t, githubsim.WithRateLimit(1))

	res := harness.RunStep(t, w.step(map[string]string{"rate-limit-reserve": "10"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	rec, raw := w.record(t, res)
	got := w.decisions(rec)
	assert.Check(t, is.Equal(got["alpha-done"], "acme/alpha swept reclaim run-completed"))
	assert.Check(t, is.Equal(got["beta-active"], "acme/beta deferred deferred rate-limit-reserve"))
	assert.Check(t, is.Equal(got["gamma-old"], "acme/gamma deferred deferred rate-limit-reserve"))
	assert.Check(t, is.DeepEqual(w.deleted(), []string{"alpha-done"}))
	assert.Check(t, is.Equal(w.GitHub.CountRequests("GET", "/repos/acme/*/installation"), 1), "nothing asked for deferred repositories")
	assert.Check(t, is.Contains(res.Stdout, "::warning::acme/beta: deferred to the next sweep: the GitHub core rate-limit window has 0 of 1 requests left"))
	assert.Check(t, is.Contains(res.Summary, "**2 repositories deferred**"))
	w.assertNoLeaks(t, res, raw)
}

func TestReapOrganizationInputErrors(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]string
		want   string
	}{
		{name: "bad login", inputs: map[string]string{"organization": "acme/alpha"}, want: `input organization = "acme/alpha": want an organization login`},
		{name: "no app", inputs: map[string]string{"app-id": ""}, want: "input app-id: the GitHub App's id"},
		{name: "no key", inputs: map[string]string{"app-private-key": ""}, want: "input app-private-key: the App's PEM private key (required with organization)"},
		{name: "repository of another org", inputs: map[string]string{"repositories": "alpha\nrival/alpha"}, want: `input repositories = "rival/alpha": want repository names of acme`},
		{name: "reserve out of range", inputs: map[string]string{"rate-limit-reserve": "95"}, want: "rate-limit-reserve"},
	}
	w := orgStartWorld(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := harness.RunStep(t, w.step(tc.inputs))
			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, tc.want))
			assert.Check(t, is.Len(w.deleted(), 0))
		})
	}
}

// TestOrgReaperCancelsOnlyLaneRuns: past the backstop, a pod of the lane's
// workflow is reclaimed and its run cancelled, while a pod carrying another
// workflow's run (beta's release.yml, made with the shared key) is left alone
// and that run is never cancelled — by default and with workflows named.
func TestOrgReaperCancelsOnlyLaneRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workflows string
	}{
		{name: "default: the lane's files", workflows: ""},
		{name: "workflows named", workflows: cloud.Workflow + "\n.github/workflows/nightly.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := orgStartWorldWith(t, func(w *orgWorld) {
				release := ".github/workflows/release.yml"
				w.podOf(t, "beta-release", w.runOf(t, "beta-release", "acme/beta", release), "acme/beta", release)
				w.pod(t, "beta-stuck", w.run(t, "beta-stuck", "acme/beta"), "acme/beta")
			})

			var inputs map[string]string
			if tc.workflows != "" {
				inputs = map[string]string{"workflows": tc.workflows}
			}
			res := harness.RunStep(t, w.step(inputs))
			assert.Equal(t, res.ExitCode, 0, res.Stdout)
			rec, raw := w.record(t, res)
			got := w.decisions(rec)
			assert.Check(t, is.Equal(got["beta-release"], "acme/beta swept skip-foreign workflow-not-reaped"))
			assert.Check(t, is.Equal(got["beta-stuck"], "acme/beta swept reclaim lifetime-exceeded"))
			assert.Check(t, !slices.Contains(w.deleted(), "beta-release"), "the release run's pod is not the lane's")
			assert.Check(t, slices.Contains(w.deleted(), "beta-stuck"))
			var cancelled []int64
			for _, c := range w.GitHub.Cancellations() {
				cancelled = append(cancelled, c.RunID)
			}
			assert.Check(t, is.DeepEqual(cancelled, []int64{w.runs["beta-stuck"]}), "only the lane's run past the backstop is cancelled, never the release run")
			w.assertNoLeaks(t, res, raw)
		})
	}
}
