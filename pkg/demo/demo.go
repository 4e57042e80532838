// Package demo runs the whole GPU CI pipeline once on the embedded simulated
// cloud, with no accounts and no network: authorize a pull request, plan and
// provision (the first host's driver refuses the tier's PTX, the second
// passes), run a simulated GPU job on the accepted runner under the watchdog,
// publish the gate, clean up with the cost report, answer a duplicate trigger
// by reusing the gate, reap an orphan left by an earlier run, run the PR's
// tests once more as one Serverless job (serverless.go), and collect the
// cost history of it all, both lanes in one total. Each job prints the job summary its action writes,
// rendered by the action's own code; together they are one Markdown page.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cleanup"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/watchdog"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The demo's GPU types: two same-SKU RTX A4000 offers are the cheapest, but
// the first machine's driver refuses the full tier's PTX; the A5000 is next.
const (
	gpuA4000 = "NVIDIA RTX A4000"
	gpuA5000 = "NVIDIA RTX A5000"
	gpuL40S  = "NVIDIA L40S"
	testStep = "Run GPU tests"
)

var (
	headSHA  = strings.Repeat("c0ffee", 6) + "c0ff"
	mergeSHA = strings.Repeat("5eed", 10)
)

const configYAML = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000"]
  - name: ada
    gpu_ids: ["NVIDIA L40S"]
max_price_candidates: 2
max_provision_attempts: 4
`

// world is the demo's simulated cloud and the clients every job uses.
type world struct {
	out    io.Writer
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	policy *reqpolicy.Policy
	rp     *runpod.Client
	gh     *ghapi.Client
	cfg    *config.Config
	pr     int
	day    time.Time
	story  scenario
}

// Run plays the pipeline and writes each job's summary to out, as one
// Markdown page.
func Run(ctx context.Context, out io.Writer, seed uint64) error {
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	story := scenarioFor(seed)
	c, err := cloud.Start(cloud.Options{Seed: seed, Market: story.market(), Start: start})
	if err != nil {
		return err
	}
	defer c.Close()
	w := &world{out: out, cloud: c, clock: c.Clock.(*simclock.Virtual), day: start, story: story}
	w.policy = reqpolicy.New(reqpolicy.WithClock(w.clock), reqpolicy.WithSleeper(w.clock.Sleep))
	w.rp = runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(w.policy))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(w.clock), reqpolicy.WithSleeper(w.clock.Sleep), reqpolicy.WithRedactor(w.policy.Redactor()),
		reqpolicy.WithClassifier(ghapi.RateLimitClassifier(w.clock)))
	if w.gh, err = ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy}); err != nil {
		return err
	}
	if w.cfg, err = config.Parse([]byte(configYAML), ".github/runpod-gpu.yml"); err != nil {
		return err
	}
	fmt.Fprintf(out, "# runpod-gpu demo on the simulated cloud\n\n"+
		"Every section below is the job summary the action writes, rendered by the action's own code, "+
		"against a simulated RunPod and GitHub (repository %s) on a virtual clock.\n", cloud.Repository)

	orphan, err := w.leaveAnOrphan(ctx)
	if err != nil {
		return fmt.Errorf("earlier run: %w", err)
	}
	if w.pr, err = c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{
		Title: "Faster reduction kernel", Author: "alice", HeadRef: "faster-reduce", HeadSHA: headSHA, MergeCommitSHA: mergeSHA,
	}); err != nil {
		return err
	}
	first, err := w.trigger(ctx, 1)
	if err != nil {
		return err
	}
	if first.Decision != provision.DecisionPaid {
		return fmt.Errorf("the first trigger should pay, got %s", first.Decision)
	}
	second, err := w.trigger(ctx, 2)
	if err != nil {
		return err
	}
	if second.Decision != provision.DecisionReused {
		return fmt.Errorf("the duplicate trigger should reuse the gate, got %s", second.Decision)
	}
	if err := w.reap(ctx, orphan); err != nil {
		return err
	}
	if err := w.serverlessLane(ctx); err != nil { // serverless.go
		return err
	}
	total, err := w.costHistory(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n---\n\nSpent on GPU pods and Serverless jobs, as the cost history counts it: **%s**. The simulator's own pod meter says %s: "+
		"estimates run to the confirmed deletion and never undercount.\n", total, money.FromDollars(c.RunPod.Spent()).Format(money.Fine))
	return nil
}

// section prints a part of the page.
func (w *world) section(title string) { fmt.Fprintf(w.out, "\n---\n\n# %s\n", title) }

// job prints one job's summary as the action writes it, whose own heading
// names the job; one without a heading gets one naming the job.
func (w *world) job(name, summary string) {
	summary = strings.TrimRight(summary, "\n")
	if !strings.HasPrefix(summary, "#") {
		summary = "## Job: " + name + "\n\n" + summary
	}
	fmt.Fprintf(w.out, "\n%s\n", summary)
}

// laneJobs are the lane's own jobs (named as in gpu-lane.yml) in a run, shown
// finished: the cost history reads only their logs.
func laneJobs() []githubsim.JobSpec {
	var jobs []githubsim.JobSpec
	for _, name := range history.LaneJobs {
		jobs = append(jobs, githubsim.JobSpec{Name: name, Status: "completed", Conclusion: "success"})
	}
	return jobs
}

// runLogs are a run's log lines by lane job, as the actions print them; they
// become the run's log archive for the cost history.
type runLogs map[string][]string

func (l runLogs) add(clock *simclock.Virtual, job, line string) {
	l[job] = append(l[job], clock.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")+" "+line)
}

// trigger is one delivery of the PR's GPU workflow: authorize, provision, the
// GPU job under the watchdog, gate and cleanup — or, for a ref already paid
// for, a reused gate.
func (w *world) trigger(ctx context.Context, n int) (provision.Result, error) {
	// The GPU job waits for a runner label nobody has yet: provision mints it.
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{
		Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "workflow_run", HeadBranch: "faster-reduce", HeadSHA: headSHA,
		PullRequests: []int{w.pr}, Jobs: append(laneJobs(), githubsim.JobSpec{Name: "gpu-tests", Labels: []string{"runpod-gpu-not-yet-provisioned"}}),
	})
	if err != nil {
		return provision.Result{}, err
	}
	w.section(fmt.Sprintf("Trigger %d of PR #%d (workflow run %d)", n, w.pr, runID))
	logs := runLogs{}

	auth, err := gate.Authorize(ctx, w.gh, gate.AuthorizeRequest{
		Repository: cloud.Repository, PRNumber: w.pr, ExpectedHeadSHA: headSHA, Actor: cloud.MaintainerBob,
		IsGPUPath: w.cfg.IsGPUPath, Reuse: gatecheck.ReuseQuery{AppID: cloud.AppID},
	})
	w.job("authorize", auth.Summary(err))
	if err != nil {
		return provision.Result{}, err
	}

	res, err := provision.Run(ctx, provision.Deps{
		RunPod: w.rp, GitHub: w.gh, Images: &registry.Resolver{APIURL: w.cloud.RegistryURL}, Policy: w.policy,
		Observer: &printer{w: w, logs: logs},
		// The demo is deterministic; a real run draws label nonces from crypto/rand.
		LabelNonce: mathrand.NewChaCha8([32]byte{14}),
	}, provision.Request{
		Config: w.cfg, LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		Owner:    ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1},
		PRNumber: w.pr, ExpectedHeadSHA: headSHA, TestedRef: auth.TestedRef, Reuse: gatecheck.ReuseQuery{AppID: cloud.AppID},
		ProofURL: w.cloud.ProofURL, ProofSHA256: w.cloud.ProofSHA256,
	})
	w.job("provision", res.Summary(err)+w.proofVerdicts(res))
	if err != nil {
		return res, fmt.Errorf("provision: %w", err)
	}

	if res.Decision == provision.DecisionReused {
		err := w.conclude(ctx, logs, gate.ConcludeRequest{PRNumber: w.pr, Decision: auth.Outcome, SkipKind: auth.Kind,
			Evidence: gatecheck.Evidence{HeadSHA: headSHA, TestedRef: auth.TestedRef, ReusedCheckURL: res.ReusedCheckURL, RunID: runID}})
		return res, errors.Join(err, w.finish(runID, logs, nil))
	}
	a := res.Accepted
	snapshot := cost.Snapshot{Price: a.Price, StartedAt: wire.KnownTime(a.StartedAt), GPU: a.GPU, Tier: a.Tier}
	if err := w.gpuJob(ctx, runID, a.PodID, a.RunnerLabel, snapshot, logs); err != nil {
		return res, err
	}
	if err := w.conclude(ctx, logs, gate.ConcludeRequest{PRNumber: w.pr, Decision: auth.Outcome, SkipKind: auth.Kind, GPUJobResult: gate.JobSuccess,
		Evidence: gatecheck.Evidence{HeadSHA: headSHA, TestedRef: auth.TestedRef, RunID: runID,
			Pod: &gatecheck.PodEvidence{ID: a.PodID, GPU: a.GPU, Tier: a.Tier, PricePerHour: a.Price.PerHour, StartupSeconds: int(a.StartupSeconds), Attempts: len(res.Attempts)}}}); err != nil {
		return res, err
	}
	artifact, err := w.cleanup(ctx, runID, auth.TestedRef, res, logs)
	if err != nil {
		return res, err
	}
	return res, w.finish(runID, logs, &artifact)
}

// proofVerdicts shows, under provision's summary, what each rejected pod's
// log says: provision sees only that the pod exited, while the CUDA proof's
// last line in the pod's log (the RunPod console shows it) says why.
func (w *world) proofVerdicts(res provision.Result) string {
	var b strings.Builder
	for _, a := range res.Attempts {
		if a.Outcome != cost.OutcomeRejected || a.PodID == "" {
			continue
		}
		if verdict, ok := w.cloud.Model.Verdict(a.PodID); ok && verdict != "" {
			fmt.Fprintf(&b, "\n> [!NOTE]\n> Pod `%s` (%s) log in the RunPod console: `SMOKE FAIL: %s`\n", a.PodID, a.GPU, verdict)
		}
	}
	return b.String()
}

// gpuJob points the run's GPU job at the accepted runner's label; the
// simulated GitHub hands it to that runner and plays its steps on the clock
// while the watchdog polls beside it and deletes the pod once the job ends.
func (w *world) gpuJob(ctx context.Context, runID int64, podID, label string, snapshot cost.Snapshot, logs runLogs) error {
	jobs, err := w.cloud.GitHub.Jobs(cloud.Repository, runID, 1)
	if err != nil {
		return fmt.Errorf("GPU job of run %d: %v", runID, err)
	}
	i := slices.IndexFunc(jobs, func(j githubsim.Job) bool { return j.Name == "gpu-tests" })
	if i < 0 {
		return fmt.Errorf("run %d has no GPU job", runID)
	}
	if err := w.cloud.GitHub.SetJob(cloud.Repository, jobs[i].ID, githubsim.JobSpec{Name: "gpu-tests", Labels: []string{label}, Steps: w.story.gpuSteps()}); err != nil {
		return err
	}
	watched, err := watchdog.Run(ctx, watchdog.Deps{Pods: w.rp, GitHub: w.gh, Policy: w.policy, Clock: w.clock, Sleep: w.clock.Sleep,
		Logf: func(format string, args ...any) { logs.add(w.clock, history.JobWatchdog, fmt.Sprintf(format, args...)) },
	}, watchdog.Request{
		PodID: podID, RunID: runID, Attempt: 1, RunnerLabel: label, GPUJob: "gpu-tests", TestStep: testStep,
		PRNumber: w.pr, ExpectedHeadSHA: headSHA, SetupBudget: w.cfg.SetupBudget(), Lifetime: w.cfg.Lifetime(), Snapshot: snapshot,
	})
	if watched.Report != nil {
		logs.add(w.clock, history.JobWatchdog, cost.CostLine(*watched.Report).Format())
	}

	read, rerr := w.gh.ListAttemptJobs(ctx, runID, 1)
	if rerr != nil {
		return fmt.Errorf("read GPU job: %w", rerr)
	}
	if j := cost.FindGPUJob(read, label); j != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "## Your GPU job (simulated)\n\nJob `gpu-tests` ran on runner `%s`: %s.\n\n", j.GetRunnerName(), j.GetConclusion())
		steps := mdtable.New("step", "took")
		for _, st := range j.Steps {
			steps.Row(mdtable.Cell(st.GetName()), st.GetCompletedAt().Sub(st.GetStartedAt().Time).String())
		}
		b.WriteString(steps.String())
		w.job("gpu-tests", b.String())
	}
	w.job("watchdog", watched.Summary(err))
	return err
}

// conclude runs the gate job and prints its summary; its log line carries
// the gate marker the cost history reads.
func (w *world) conclude(ctx context.Context, logs runLogs, req gate.ConcludeRequest) error {
	req.Evidence.CompletedAt = w.clock.Now()
	req.Evidence.RunURL = fmt.Sprintf("https://github.com/%s/actions/runs/%d", cloud.Repository, req.Evidence.RunID)
	done, err := gate.Conclude(ctx, w.gh, req)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if done.CheckRun != nil {
		// The gate action's own log line.
		logs.add(w.clock, history.JobGate, fmt.Sprintf("published %s (%s): %s", done.CheckRun.GetExternalID(), done.CheckRun.GetHTMLURL(), done.Reason))
	}
	w.job("gate", done.Summary())
	return nil
}

// cleanup runs the cleanup job: delete the accepted pod (the watchdog already
// did) and any other pod of this run attempt, then report the paid window by
// stage, with provision's rejected candidates in the run total.
func (w *world) cleanup(ctx context.Context, runID int64, testedRef string, res provision.Result, logs runLogs) (cost.Artifact, error) {
	a := res.Accepted
	provisioned, err := cost.ParseProvisionAttempts(res.Outputs().RejectedAttempts)
	if err != nil {
		return cost.Artifact{}, err
	}
	out, err := cleanup.Run(ctx, cleanup.Deps{RunPod: w.rp, Jobs: w.gh, Policy: w.policy}, cleanup.Request{
		PodID: a.PodID, RunnerLabel: a.RunnerLabel, TestStep: testStep, Provision: provisioned,
		Run:      cost.Run{Repository: cloud.Repository, ID: runID, Attempt: 1, TestedRef: testedRef, Trigger: cost.TriggerAutomatic, PRNumber: w.pr},
		Snapshot: cost.Snapshot{Price: a.Price, StartedAt: wire.KnownTime(a.StartedAt), GPU: a.GPU, Tier: a.Tier},
	})
	logs.add(w.clock, history.JobCleanup, cost.CostLine(out.Report).Format())
	w.job("cleanup", out.Summary(err))
	return out.Artifact(), err
}

// finish completes the run and uploads what the lane leaves behind: its
// jobs' logs and the cost artifact.
func (w *world) finish(runID int64, logs runLogs, artifact *cost.Artifact) error {
	if artifact != nil {
		seal, err := w.uploadCostArtifact(runID, history.JobCleanup, *artifact)
		if err != nil {
			return err
		}
		logs.add(w.clock, history.JobCleanup, seal)
	}
	files := map[string]string{}
	for i, name := range history.LaneJobs {
		if lines := logs[name]; len(lines) > 0 {
			files[fmt.Sprintf("%d_%s.txt", i, name)] = strings.Join(lines, "\n") + "\n"
		}
	}
	if err := w.cloud.GitHub.SetRunLogs(cloud.Repository, runID, 1, files); err != nil {
		return err
	}
	return w.cloud.GitHub.SetRunStatus(cloud.Repository, runID, "completed", "success")
}

// uploadCostArtifact uploads the artifact as the lane's job named uploader
// does (cleanup, or the Serverless lane's job): named for that job (the cost
// history counts only a lane job's upload), while it runs, and returns the
// seal line that job logs (the history counts only a sealed artifact).
func (w *world) uploadCostArtifact(runID int64, uploader string, artifact cost.Artifact) (string, error) {
	data, err := json.Marshal(artifact)
	if err != nil {
		return "", err
	}
	jobs, err := w.cloud.GitHub.Jobs(cloud.Repository, runID, 1)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(jobs, func(j githubsim.Job) bool { return j.Name == uploader || strings.HasSuffix(j.Name, " / "+uploader) })
	if i < 0 {
		return "", fmt.Errorf("run %d has no %q job", runID, uploader)
	}
	now := w.clock.Now()
	if err := w.cloud.GitHub.SetJob(cloud.Repository, jobs[i].ID, githubsim.JobSpec{Name: jobs[i].Name,
		Status: "completed", Conclusion: "success", StartedAt: now, CompletedAt: now}); err != nil {
		return "", err
	}
	_, err = w.cloud.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{CreatedAt: now,
		Name: cost.JobArtifactName(runID, 1, jobs[i].ID), Files: map[string]string{cost.ArtifactFileName: string(data)}})
	return cost.SealLine(data).Format(), err
}

// printer collects provision's log lines: the structured attempt lines the
// cost history reads (the demo prints summaries only).
type printer struct {
	w    *world
	logs runLogs
}

func (p *printer) Logf(format string, args ...any) {
	p.logs.add(p.w.clock, history.JobProvision, fmt.Sprintf(format, args...))
}
func (p *printer) PodCreated(string) {}
func (p *printer) AttemptDone(a cost.Attempt) {
	p.logs.add(p.w.clock, history.JobProvision, cost.AttemptLine(a).Format())
}

// leaveAnOrphan models an earlier run whose cleanup never ran: its pod is
// still billing and its run completed long ago.
func (w *world) leaveAnOrphan(ctx context.Context) (string, error) {
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "workflow_run", Status: "completed", Conclusion: "cancelled", CreatedAt: w.clock.Now(), Jobs: laneJobs()})
	if err != nil {
		return "", err
	}
	tags := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1, Candidate: 1}
	label := fmt.Sprintf("runpod-gpu-%d-1-c1", runID)
	jit, err := w.gh.GenerateJITConfig(ctx, ghapi.JITRequest{Name: label, Labels: []string{label}, RunnerGroupID: 1})
	if err != nil {
		return "", err
	}
	env := tags.Env()
	env["RUNNER_JIT_CONFIG"] = jit.EncodedConfig // its runner came online; then the run was cancelled
	pod, err := w.rp.CreatePod(ctx, runpod.CreatePodRequest{Name: tags.PodName(), Image: cloud.RunnerImage + "@" + cloud.RunnerImageDigest,
		GPU: &runpod.CreateGPU{ID: gpuL40S, Count: 1}, Env: env})
	if err != nil {
		return "", err
	}
	// Its provision logged the pod it created; the run was cancelled before cleanup.
	logs := runLogs{}
	logs.add(w.clock, history.JobProvision, cost.AttemptLine(cost.Attempt{Number: 1, Candidate: "live-1", GPU: gpuL40S, PodID: pod.ID,
		Price: cost.KnownPrice(money.PerHour(0.86), "v2 cost while running"), Outcome: cost.OutcomeAccepted, Seconds: cost.KnownSeconds(25)}).Format())
	w.clock.Advance(w.story.orphanAge) // the run was cancelled; nobody deleted the pod
	logs.add(w.clock, history.JobProvision, "the run was cancelled")
	if err := w.cloud.GitHub.SetRunLogs(cloud.Repository, runID, 1, map[string]string{"1_" + history.JobProvision + ".txt": strings.Join(logs[history.JobProvision], "\n") + "\n"}); err != nil {
		return "", err
	}
	return pod.ID, nil
}

// reap runs the scheduled reaper: it lists every pod, keeps the accepted and
// foreign ones, and reclaims the orphan whose run completed long ago.
func (w *world) reap(ctx context.Context, orphan string) error {
	w.section("Scheduled reaper")
	sweeper := &reap.Sweeper{Pods: w.rp, GitHub: w.gh, Deleter: &lifecycle.Deleter{Pods: w.rp, Policy: w.policy}, Clock: w.clock}
	rec, err := sweeper.Sweep(ctx, reap.Request{Scope: reap.Scope{Repository: cloud.Repository, Workflows: []string{cloud.Workflow}},
		Execute: reap.ShouldExecute("schedule", false), Event: "schedule"})
	if err != nil {
		return fmt.Errorf("reaper: %w", err)
	}
	w.job("reap", rec.Markdown())
	if err := w.keepReaperRecord(rec); err != nil {
		return err
	}
	for _, id := range rec.PodIDs(reap.DecisionReclaim) {
		if id == orphan {
			return nil
		}
	}
	return fmt.Errorf("reaper: the orphan %s was not reclaimed", orphan)
}

// keepReaperRecord is reap.yml's last step: the sweep's run, on the default
// branch, keeps its decision record as an artifact, which the cost history
// reads to price what the reaper deleted.
func (w *world) keepReaperRecord(rec *reap.Record) error {
	data, err := rec.JSON()
	if err != nil {
		return err
	}
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/runpod-gpu-reap.yml",
		Event: "schedule", Status: "completed", Conclusion: "success"})
	if err != nil {
		return err
	}
	_, err = w.cloud.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{
		Name: fmt.Sprintf("%s%d-1", ownership.ReapRecordPrefix, runID), Files: map[string]string{reap.DefaultRecordPath: string(data)}})
	return err
}

// costHistory runs the cost-history job over the day: it collects every run's
// logs and cost artifacts from the simulated GitHub into a temporary evidence
// directory and reports on them, charts included.
func (w *world) costHistory(ctx context.Context) (history.Amount, error) {
	w.section("Weekly cost history")
	dir, err := os.MkdirTemp("", "runpod-gpu-demo-history-")
	if err != nil {
		return history.Amount{}, err
	}
	defer os.RemoveAll(dir)
	day := w.day.Format(time.DateOnly)
	rng, err := history.ParseRange(day, day)
	if err != nil {
		return history.Amount{}, err
	}
	res, err := history.Run(ctx, history.Options{Dir: dir, Range: &rng, GitHub: w.gh, Workflow: cloud.Workflow + "," + serverlessWorkflow})
	if err != nil {
		return history.Amount{}, fmt.Errorf("cost history: %w", err)
	}
	w.job("cost-history", res.Report.Markdown())
	return res.Report.Totals.Spend, nil
}
