package lanes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

const ledgerFile = ".runpod-gpu/serverless/budget.json"

// nextRun is a later run of the caller's workflow on the default branch, in a
// fresh workspace with the same sources: the ledger can only come from the
// artifact an earlier run uploaded.
func (s *slsCloud) nextRun(t *testing.T, event, branch string) {
	t.Helper()
	id, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: event, HeadBranch: branch})
	assert.NilError(t, err)
	ws := t.TempDir()
	for _, name := range []string{"src/kernel.cu", "tests/run.sh", "pyproject.toml", "README.md", "tests/helper.py"} {
		data, err := os.ReadFile(filepath.Join(s.Workspace, name))
		assert.NilError(t, err)
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(ws, name), data, 0o644))
	}
	s.Workspace, s.RunID = ws, id
}

// uploadLedger is the workflow's "Keep the ledger for the next run" step.
func (s *slsCloud) uploadLedger(t *testing.T, body string) {
	t.Helper()
	_, err := s.GitHub.AddArtifact(cloud.Repository, s.RunID, githubsim.ArtifactSpec{Name: serverless.LedgerArtifact, Files: map[string]string{"budget.json": body}})
	assert.NilError(t, err)
}

func (s *slsCloud) ledger(t *testing.T) *serverless.Ledger {
	t.Helper()
	l, err := serverless.ReadLedger(filepath.Join(s.Workspace, ledgerFile))
	assert.NilError(t, err)
	return l
}

// TestServerlessLaneCarriesTheRepositoryLedger: each run starts from the
// ledger the last trusted run of the workflow left, so the $10 total holds
// across runs; a pull request's or a tampered artifact never becomes the ledger.
func TestServerlessLaneCarriesTheRepositoryLedger(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	s.nextRun(t, "workflow_dispatch", "main")
	first := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, first.ExitCode, 0, first.Stdout)
	assert.Check(t, is.Contains(first.Stdout, "this run begins the repository's Serverless ledger at $0.00"))
	body, err := os.ReadFile(filepath.Join(s.Workspace, ledgerFile))
	assert.NilError(t, err)
	s.uploadLedger(t, string(body))

	// A pull request's run on a branch named like the default one uploads a
	// fresh ledger: it is not the repository's.
	s.nextRun(t, "pull_request", "main")
	s.uploadLedger(t, `{"version":2,"reservations":[],"attempts":[],"checksum":"x"}`)

	s.nextRun(t, "workflow_dispatch", "main")
	second := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, second.ExitCode, 0, second.Stdout)
	assert.Check(t, is.Contains(second.Stdout, "$2.61 reserved in 1 attempts"))
	l := s.ledger(t)
	assert.Check(t, is.Equal(l.TotalCents().Amount().String(), "$5.22"), "the second run added to the first's ledger")
	assert.Check(t, is.Len(l.Attempts, 2))
	assert.Check(t, is.Len(l.OpenAttempts(), 0))
	body, err = os.ReadFile(filepath.Join(s.Workspace, ledgerFile))
	assert.NilError(t, err)
	s.uploadLedger(t, string(body))

	// A cap the carried total leaves no room under refuses the next run before it creates anything.
	s.nextRun(t, "workflow_dispatch", "main")
	st := s.step(t, junitCommand)
	st.Inputs["total-cents"] = "700"
	third := harness.RunStep(t, st)
	assert.Equal(t, third.ExitCode, 1, third.Stdout)
	assert.Check(t, is.Contains(third.Stdout, "already holds $5.22 (and $1.36 for the attempt's earlier stage) of the $7.00 total cap"))
	assert.Check(t, is.Len(s.RunPod.Jobs(), 2))

	// An edited ledger is refused, never reset.
	s.nextRun(t, "workflow_dispatch", "main")
	s.uploadLedger(t, strings.Replace(string(body), `"cents": 136`, `"cents": 1`, 1))
	s.nextRun(t, "workflow_dispatch", "main")
	fourth := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, fourth.ExitCode, 1, fourth.Stdout)
	assert.Check(t, is.Contains(fourth.Stdout, "does not match its checksum"))
	assert.Check(t, is.Contains(fourth.Stdout, "nothing was created"))
	assert.Check(t, is.Len(s.RunPod.Jobs(), 2))
	s.nothingLeft(t)
}

// TestServerlessLaneOneAttemptAtATime: an earlier attempt of the repository
// whose endpoint is still alive (its runner was lost) blocks a new one, by
// name, before anything is created or reserved.
func TestServerlessLaneOneAttemptAtATime(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
	earlier, err := ownership.ServerlessAttemptName(cloud.Repository, 9299, 1)
	assert.NilError(t, err)
	env, err := serverless.TemplateEnv("https://example.com/serverless-worker", slsWorkerSHA, cloud.Repository, earlier)
	assert.NilError(t, err)
	rp := runpod.New(s.RunPodURL, cloud.RunPodKey)
	tpl, err := rp.CreateTemplate(context.Background(), serverless.DefaultSettings().TemplateRequest(earlier+"-tpl", serverless.BootstrapArgs, env))
	assert.NilError(t, err)
	_, err = rp.CreateEndpoint(context.Background(), serverless.DefaultSettings().EndpointRequest(earlier, tpl.ID, nil))
	assert.NilError(t, err)

	res := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "attempt "+earlier+" of org/gpu-project still has a template or endpoint"))
	assert.Check(t, is.Len(s.RunPod.ServerlessResources(), 2), "only the earlier attempt's resources")
	_, err = os.Stat(filepath.Join(s.Workspace, ledgerFile))
	assert.Check(t, os.IsNotExist(err), "nothing reserved")
}

// TestServerlessLaneFailsWhenItsCleanupIsUnconfirmed: a job that passed does
// not make the step pass when the endpoint and template are not confirmed
// deleted: the run step itself fails (it used to exit 0 and leave the
// failure to the separate cleanup step).
func TestServerlessLaneFailsWhenItsCleanupIsUnconfirmed(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 1000}}, smoketest.DriverConfig{}, nil)
	res := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["job-status"], "COMPLETED"), "the job itself passed")
	assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "false"))
	assert.Check(t, is.Contains(res.Stdout, "::error::cleanup: cleanup not confirmed"))
	assert.Check(t, !s.receipt(t).CleanupConfirmed)
}

// TestServerlessLaneWritesItsCost: the attempt's cost artifact file carries
// the Serverless spend the cost history counts.
func TestServerlessLaneWritesItsCost(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	res := harness.RunStep(t, s.step(t, junitCommand))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	data, err := os.ReadFile(filepath.Join(s.Workspace, ".runpod-gpu/serverless/runpod-gpu-cost.json"))
	assert.NilError(t, err)
	art, err := cost.ParseArtifact(data)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(art.Action, "serverless"))
	assert.Assert(t, art.Serverless != nil)
	sp := *art.Serverless
	assert.Check(t, is.Equal(sp.JobStatus, "COMPLETED"))
	assert.Check(t, is.Equal(sp.GPU, "NVIDIA RTX A4000"))
	assert.Check(t, sp.Dollars.Known && sp.WorkerSeconds > 5, "%+v", sp)
	assert.Check(t, is.Equal(sp.ReservedCents, money.WholeCents(261)))
	var raw map[string]any
	assert.NilError(t, json.Unmarshal(data, &raw))
	assert.Check(t, is.Equal(raw["schema"], cost.ArtifactSchema))
}
