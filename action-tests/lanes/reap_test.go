package lanes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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

// reapWorld is a simulated cloud whose virtual clock starts three hours
// before the real now, so that the reaper binary, on the wall clock, sees
// pods and runs of every age; the clock is advanced only while setting up.
type reapWorld struct {
	*cloud.Cloud
	clock     *simclock.Virtual
	rp        *runpod.Client
	workspace string
	planted   []string

	want         map[string]string // pod id → "decision reason"
	lifetimeRuns []int64           // runs the sweep must cancel
	errorRun     int64             // the run a GitHub fault may break
	errorPod     string            // its pod, reclaimable without the fault
}

const reapGPU = "NVIDIA RTX A4000"

func reapStartWorld(t *testing.T) *reapWorld {
	t.Helper()
	clock := simclock.NewVirtual(time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Second))
	market := testMarket(testHost("h1", reapGPU, true))
	market.Hosts[0].GPUCount = 64
	c, err := cloud.Start(cloud.Options{
		Clock: clock, Market: market, PageSize: 4, Balance: 1e6,
		// Pod 2 dies while booting: stuck before startup, with no startedAt.
		Faults: runpodsim.Faults{DieDuringBoot: runpodsim.Trigger{Nth: []int{2}}},
		Hosts:  runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{ProofTime: time.Second}),
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	w := &reapWorld{Cloud: c, clock: clock, rp: runpod.New(c.RunPodURL, cloud.RunPodKey), workspace: t.TempDir(), want: map[string]string{}}
	w.build(t)
	return w
}

// build creates owned pods under every rule, a retained pod and foreign pods
// (14 pods: four pages of four), over the three virtual hours.
func (w *reapWorld) build(t *testing.T) {
	expect := func(id string, d reap.Decision, r reap.Reason) { w.want[id] = string(d) + " " + string(r) }

	long, stuck := w.run(t), w.run(t)
	expect(w.owned(t, w.tags(long, 1, 1)), reap.DecisionReclaim, reap.ReasonLifetime)
	expect(w.owned(t, w.tags(stuck, 1, 1)), reap.DecisionReclaim, reap.ReasonLifetime)
	w.lifetimeRuns = []int64{long, stuck}
	w.clock.Advance(2*time.Hour + 40*time.Minute)

	done := w.run(t)
	retainedTags, unrecordedTags := w.tags(done, 1, 1), w.tags(done, 1, 2)
	retainedTags.KeepFailed, unrecordedTags.KeepFailed = true, true
	retained := w.owned(t, retainedTags)
	expect(retained, reap.DecisionKeep, reap.ReasonRetained)
	expect(w.owned(t, unrecordedTags), reap.DecisionReclaim, reap.ReasonRunCompleted)

	superseded := w.run(t)
	expect(w.owned(t, w.tags(superseded, 1, 1)), reap.DecisionReclaim, reap.ReasonAttemptSuperseded)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, superseded, "completed", "failure"))
	_, err := w.GitHub.RerunWorkflowRun(cloud.Repository, superseded, nil)
	assert.NilError(t, err)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, superseded, "in_progress", ""))
	expect(w.owned(t, w.tags(superseded, 2, 1)), reap.DecisionKeep, reap.ReasonRunActive)

	recent, active, orphan := w.run(t), w.run(t), w.run(t)
	expect(w.owned(t, w.tags(recent, 1, 1)), reap.DecisionKeep, reap.ReasonRunCompletedRecently)
	expect(w.owned(t, w.tags(active, 1, 1)), reap.DecisionKeep, reap.ReasonRunActive)
	w.errorRun, w.errorPod = orphan, w.owned(t, w.tags(orphan, 1, 1))
	expect(w.errorPod, reap.DecisionReclaim, reap.ReasonRunCompleted)

	other := w.tags(long, 1, 2)
	other.Repository = w.plant("someone/PLANTEDrepo")
	expect(w.pod(t, other.PodName(), other.Env()), reap.DecisionSkipForeign, reap.ReasonOtherRepository)
	expect(w.pod(t, "my-notebook", nil), reap.DecisionSkipForeign, reap.ReasonUntagged)
	expect(w.pod(t, "rgpu-1-1-c9", w.tags(long, 1, 3).Env()), reap.DecisionSkipForeign, reap.ReasonNameDisagrees)
	malformed := w.tags(long, 1, 4).Env()
	malformed[ownership.EnvAttempt] = w.plant("attempt-PLANTED")
	expect(w.pod(t, w.tags(long, 1, 4).PodName(), malformed), reap.DecisionSkipForeign, reap.ReasonMalformedAttempt)
	marker := w.tags(long, 1, 5).Env()
	marker[ownership.EnvOwner] = w.plant("other-tool:PLANTEDmarker")
	expect(w.pod(t, w.tags(long, 1, 5).PodName(), marker), reap.DecisionSkipForeign, reap.ReasonForeignOwner)

	w.clock.Advance(10 * time.Minute)
	for _, id := range []int64{done, orphan} {
		assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, id, "completed", "failure"))
	}
	name, err := ownership.FormatRetentionName(done, 1, []string{retained})
	assert.NilError(t, err)
	_, err = w.GitHub.AddArtifact(cloud.Repository, done, githubsim.ArtifactSpec{Name: name, Files: map[string]string{"pods.txt": retained}})
	assert.NilError(t, err)
	w.clock.Advance(9 * time.Minute)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, recent, "completed", "success"))
	w.clock.Advance(time.Minute)
}

func (w *reapWorld) run(t *testing.T) int64 {
	t.Helper()
	id, err := w.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "pull_request", Status: "in_progress"})
	assert.NilError(t, err)
	return id
}

func (w *reapWorld) tags(runID int64, attempt, candidate int) ownership.Tags {
	return ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: attempt, Candidate: candidate}
}

func (w *reapWorld) owned(t *testing.T, tags ownership.Tags) string {
	t.Helper()
	return w.pod(t, tags.PodName(), tags.Env())
}

// pod creates a pod through the RunPod client, with secret-looking env values planted.
func (w *reapWorld) pod(t *testing.T, name string, tags map[string]string) string {
	t.Helper()
	env := map[string]string{
		"HF_TOKEN":          w.plant(fmt.Sprintf("hf_PLANTED%02dtokenvalue", len(w.planted))),
		"RUNNER_JIT_CONFIG": w.plant(fmt.Sprintf("eyJQTEFOVEVE%02d", len(w.planted))),
	}
	for k, v := range tags {
		env[k] = v
	}
	pod, err := w.rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: name, Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: reapGPU, MinCudaVersion: "12.6"}, Env: env})
	assert.NilError(t, err)
	return pod.ID
}

func (w *reapWorld) plant(v string) string {
	w.planted = append(w.planted, v)
	return v
}

// step is the reaper as a workflow triggered by event runs it.
func (w *reapWorld) step(event string, inputs map[string]string) harness.Step {
	in := map[string]string{"runpod-api-key": cloud.RunPodKey, "github-token": cloud.GitHubToken, "runpod-api-url": w.RunPodURL}
	for k, v := range inputs {
		in[k] = v
	}
	return harness.Step{Action: "reap", Workspace: w.workspace, Inputs: in, Event: map[string]any{},
		Env: map[string]string{
			"GITHUB_API_URL": w.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
			"GITHUB_RUN_ID": "77000", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": event, "GITHUB_WORKSPACE": w.workspace,
			"GITHUB_WORKFLOW_REF": cloud.Repository + "/.github/workflows/runpod-reap.yml@refs/heads/main",
		}}
}

// record reads the decision record the step wrote.
func (w *reapWorld) record(t *testing.T, res harness.StepResult) (reap.Record, string) {
	t.Helper()
	path := res.Outputs["decision-record"]
	assert.Assert(t, path != "", res.Stdout)
	raw, err := os.ReadFile(filepath.Join(w.workspace, path))
	assert.NilError(t, err)
	var rec reap.Record
	assert.NilError(t, json.Unmarshal(raw, &rec))
	return rec, string(raw)
}

func (w *reapWorld) deleted() []string {
	var ids []string
	for _, p := range w.RunPod.Pods() {
		if !p.TerminatedAt.IsZero() {
			ids = append(ids, p.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func (w *reapWorld) wanted(d reap.Decision) []string {
	var ids []string
	for id, dr := range w.want {
		if strings.HasPrefix(dr, string(d)+" ") {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func reapDecisions(rec reap.Record) map[string]string {
	out := map[string]string{}
	for _, p := range rec.Pods {
		out[p.PodID] = string(p.Decision) + " " + string(p.Reason)
	}
	return out
}

// reapAssertNoLeaks scans the record, log, summary and outputs for every
// planted env value and for the run's credentials.
func reapAssertNoLeaks(t *testing.T, w *reapWorld, res harness.StepResult, record string) {
	t.Helper()
	stdout := harness.WithoutMasks(res.Stdout)
	for _, secret := range append(slices.Clone(w.planted), cloud.RunPodKey, cloud.GitHubToken) {
		assert.Check(t, !strings.Contains(record, secret), "record leaks %q", secret)
		assert.Check(t, !strings.Contains(stdout, secret), "log leaks %q", secret)
		assert.Check(t, !strings.Contains(res.Summary, secret), "summary leaks %q", secret)
		for k, v := range res.Outputs {
			assert.Check(t, !strings.Contains(v, secret), "output %s leaks %q", k, secret)
		}
	}
	for _, key := range []string{"HF_TOKEN", "RUNNER_JIT_CONFIG"} {
		assert.Check(t, !strings.Contains(record, key), "record names env key %s", key)
	}
}

func TestReapDryRunThenScheduledSweep(t *testing.T) {
	w := reapStartWorld(t)

	dry := harness.RunStep(t, w.step("workflow_dispatch", nil))
	assert.Equal(t, dry.ExitCode, 0, dry.Stdout)
	dryRec, dryRaw := w.record(t, dry)
	assert.Check(t, !dryRec.Execute)
	assert.Equal(t, dry.Outputs["execute"], "false")
	assert.DeepEqual(t, reapDecisions(dryRec), w.want)
	assert.Check(t, is.Len(w.deleted(), 0), "a dry run deletes nothing")
	assert.Check(t, is.Len(w.GitHub.Cancellations(), 0))
	assert.Check(t, is.Contains(dry.Summary, "dry run — nothing deleted"))
	reapAssertNoLeaks(t, w, dry, dryRaw)

	// A schedule always executes, whatever the input says.
	sweep := harness.RunStep(t, w.step("schedule", map[string]string{"execute": "false"}))
	assert.Equal(t, sweep.ExitCode, 0, sweep.Stdout)
	rec, raw := w.record(t, sweep)
	assert.Check(t, rec.Execute)
	assert.DeepEqual(t, reapDecisions(rec), reapDecisions(dryRec))
	assert.DeepEqual(t, w.deleted(), w.wanted(reap.DecisionReclaim))
	reclaimed := strings.Split(sweep.Outputs["reclaim-pod-ids"], ",")
	sort.Strings(reclaimed)
	assert.DeepEqual(t, reclaimed, w.wanted(reap.DecisionReclaim))
	var cancelled []int64
	for _, c := range w.GitHub.Cancellations() {
		cancelled = append(cancelled, c.RunID)
	}
	assert.DeepEqual(t, cancelled, w.lifetimeRuns)
	for _, p := range rec.Pods {
		if p.Decision == reap.DecisionReclaim {
			assert.Check(t, p.DeletedAt.Known() && p.Cost != nil, "pod %s: deletion time and cost recorded", p.PodID)
		}
	}
	assert.Check(t, is.Contains(sweep.Stdout, "runpod-gpu::cost {"), "a cost line per reclaimed pod")
	assert.Check(t, is.Contains(sweep.Summary, "| reclaim | lifetime-exceeded"))
	reapAssertNoLeaks(t, w, sweep, raw)
}

func TestReapGitHubErrorLeavesThatPodAndReapsTheOthers(t *testing.T) {
	w := reapStartWorld(t)
	w.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502,
		Path: fmt.Sprintf("/repos/%s/actions/runs/%d", cloud.Repository, w.errorRun)})

	res := harness.RunStep(t, w.step("schedule", nil))
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "::error::reap: sweep incomplete"))
	assert.Equal(t, res.Outputs["error-pod-ids"], w.errorPod)
	rec, raw := w.record(t, res)
	want := maps.Clone(w.want)
	want[w.errorPod] = string(reap.DecisionError) + " " + string(reap.ReasonRunLookupFailed)
	assert.DeepEqual(t, reapDecisions(rec), want)
	assert.Check(t, !slices.Contains(w.deleted(), w.errorPod), "the pod whose run could not be read is untouched")
	others := slices.DeleteFunc(w.wanted(reap.DecisionReclaim), func(id string) bool { return id == w.errorPod })
	assert.Check(t, len(others) > 0)
	assert.DeepEqual(t, w.deleted(), others)
	reapAssertNoLeaks(t, w, res, raw)
}
