// Package demo runs the whole GPU CI pipeline once on the embedded simulated
// cloud, with no accounts and no network: authorize a pull request, plan and
// provision (the first host fails the CUDA proof, the second passes), run a
// simulated GPU job on the accepted runner, publish the gate, clean up with the
// cost report, answer a duplicate trigger by reusing the gate, and reap an
// orphan left by an earlier run. Each job prints the summary it would write.
package demo

import (
	"context"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cleanup"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gate"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
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

func market() *runpodsim.Market {
	host := func(id, gpu, dc, ptx string) runpodsim.HostProfile {
		return runpodsim.HostProfile{ID: id, DataCenterID: dc, GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: ptx, BootSeconds: 40, Healthy: true}
	}
	return &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: gpuA4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: gpuA5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: gpuL40S, Name: "L40S", MemoryGB: 48, SecurePrice: 0.86, CommunityPrice: 0.79},
		},
		DataCenters: []runpodsim.DataCenter{
			{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}},
			{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"GDPR"}},
		},
		Hosts: []runpodsim.HostProfile{
			host("tx3-a4000-old-driver", gpuA4000, "US-TX-3", "8.5"),
			host("ro1-a5000", gpuA5000, "EU-RO-1", "8.7"),
			host("tx3-l40s", gpuL40S, "US-TX-3", "8.7"),
		},
	}
}

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
}

// Run plays the pipeline and writes each job's summary to out.
func Run(ctx context.Context, out io.Writer, seed uint64) error {
	c, err := cloud.Start(cloud.Options{Seed: seed, Market: market(), Start: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	defer c.Close()
	w := &world{out: out, cloud: c, clock: c.Clock.(*simclock.Virtual)}
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
	fmt.Fprintf(out, "# runpod-gpu demo on the simulated cloud\n\nRunPod %s · GitHub %s · repository %s\n\n", c.RunPodURL, c.GitHubURL, cloud.Repository)

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
	fmt.Fprintf(out, "\n---\nSimulated spend on every pod: $%.4f (an estimate from the simulator's per-second billing).\n", c.RunPod.Spent())
	return nil
}

// section prints a job header.
func (w *world) section(title string) { fmt.Fprintf(w.out, "\n---\n\n# %s\n\n", title) }

// trigger is one delivery of the PR's GPU workflow: authorize, provision, the
// GPU job, gate and cleanup — or, for a ref already paid for, a reused gate.
func (w *world) trigger(ctx context.Context, n int) (provision.Result, error) {
	// The GPU job waits for a runner label nobody has yet: provision mints it.
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{
		Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "workflow_run", HeadBranch: "faster-reduce", HeadSHA: headSHA,
		PullRequests: []int{w.pr}, Jobs: []githubsim.JobSpec{{Name: "gpu-tests", Labels: []string{"runpod-gpu-not-yet-provisioned"}}},
	})
	if err != nil {
		return provision.Result{}, err
	}
	w.section(fmt.Sprintf("Trigger %d of PR #%d (workflow run %d)", n, w.pr, runID))

	auth, err := gate.Authorize(ctx, w.gh, gate.AuthorizeRequest{
		Repository: cloud.Repository, PRNumber: w.pr, ExpectedHeadSHA: headSHA, Actor: cloud.MaintainerBob,
		IsGPUPath: w.cfg.IsGPUPath, Reuse: gate.ReuseQuery{AppID: cloud.AppID},
	})
	if err != nil {
		return provision.Result{}, err
	}
	fmt.Fprintf(w.out, "## authorize\n\nDecision: **%s**. %s\n\n", auth.Outcome, auth.Reason)

	var log strings.Builder
	res, err := provision.Run(ctx, provision.Deps{
		RunPod: w.rp, GitHub: w.gh, Images: &registry.Resolver{APIURL: w.cloud.RegistryURL}, Policy: w.policy,
		Observer: &printer{w: &log},
		// The demo is deterministic; a real run draws label nonces from crypto/rand.
		LabelNonce: mathrand.NewChaCha8([32]byte{14}),
	}, provision.Request{
		Config: w.cfg, LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		Owner:    ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1},
		PRNumber: w.pr, ExpectedHeadSHA: headSHA, TestedRef: auth.TestedRef, Reuse: gate.ReuseQuery{AppID: cloud.AppID},
		ProofURL: w.cloud.ProofURL, ProofSHA256: w.cloud.ProofSHA256,
	})
	fmt.Fprint(w.out, res.Summary(err))
	if err != nil {
		return res, fmt.Errorf("provision: %w", err)
	}
	if res.Decision == provision.DecisionReused {
		return res, w.publish(ctx, gate.Evidence{Kind: gate.KindReused, HeadSHA: headSHA, TestedRef: auth.TestedRef,
			ReusedCheckURL: res.ReusedCheckURL, RunID: runID})
	}
	if err := w.gpuJob(ctx, runID, res.Accepted.RunnerLabel); err != nil {
		return res, err
	}
	a := res.Accepted
	if err := w.publish(ctx, gate.Evidence{Kind: gate.KindPaid, HeadSHA: headSHA, TestedRef: auth.TestedRef, RunID: runID,
		Pod: &gate.PodEvidence{ID: a.PodID, GPU: a.GPU, Tier: a.Tier, PricePerHour: a.Price.PerHour, StartupSeconds: int(a.StartupSeconds), Attempts: len(res.Attempts)}}); err != nil {
		return res, err
	}
	return res, w.cleanup(ctx, runID, auth.TestedRef, res)
}

// gpuSteps are the simulated GPU job's steps and how long each takes.
var gpuSteps = []githubsim.StepSpec{
	{Name: "Set up job", Duration: 4 * time.Second}, {Name: "Checkout tested ref", Duration: 11 * time.Second},
	{Name: "Restore test archive", Duration: 38 * time.Second}, {Name: testStep, Duration: 6*time.Minute + 12*time.Second},
	{Name: "Post checkout", Duration: 2 * time.Second},
}

// gpuJob points the run's GPU job at the accepted runner's label; the simulated
// GitHub hands it to that runner and plays its steps on the clock. The job is
// then read back through the API, as the cleanup job reads it.
func (w *world) gpuJob(ctx context.Context, runID int64, label string) error {
	jobs, err := w.cloud.GitHub.Jobs(cloud.Repository, runID, 1)
	if err != nil || len(jobs) != 1 {
		return fmt.Errorf("GPU job of run %d: %v", runID, err)
	}
	if err := w.cloud.GitHub.SetJob(cloud.Repository, jobs[0].ID, githubsim.JobSpec{Name: "gpu-tests", Labels: []string{label}, Steps: gpuSteps}); err != nil {
		return err
	}
	var total time.Duration
	for _, st := range gpuSteps {
		total += st.Duration
	}
	w.clock.Advance(total + 20*time.Second) // the tests run; cleanup is queued behind them
	read, err := w.gh.ListAttemptJobs(ctx, runID, 1)
	if err != nil || len(read) != 1 {
		return fmt.Errorf("read GPU job: %v", err)
	}
	j := read[0]
	fmt.Fprintf(w.out, "\n## gpu-tests\n\nRan on runner `%s`: %s.\n\n| step | took |\n|---|---|\n", j.GetRunnerName(), j.GetConclusion())
	for _, st := range j.Steps {
		fmt.Fprintf(w.out, "| %s | %s |\n", st.GetName(), st.GetCompletedAt().Sub(st.GetStartedAt().Time))
	}
	return nil
}

// publish creates the gate check and prints what it says.
func (w *world) publish(ctx context.Context, e gate.Evidence) error {
	e.CompletedAt = w.clock.Now()
	e.RunURL = fmt.Sprintf("https://github.com/%s/actions/runs/%d", cloud.Repository, e.RunID)
	run, err := gate.Publish(ctx, w.gh, e)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "\n## gate\n\nPublished **%s**: %s (`%s`)\n\n%s\n", run.GetName(), run.GetOutput().GetTitle(), run.GetExternalID(), run.GetOutput().GetSummary())
	return nil
}

// cleanup runs the cleanup job: delete the accepted pod (and any other pod
// of this run attempt), then report the paid window by stage.
func (w *world) cleanup(ctx context.Context, runID int64, testedRef string, res provision.Result) error {
	a := res.Accepted
	out, err := cleanup.Run(ctx, cleanup.Deps{RunPod: w.rp, Jobs: w.gh, Policy: w.policy}, cleanup.Request{
		PodID: a.PodID, RunnerLabel: a.RunnerLabel, TestStep: testStep,
		Run:      cost.Run{Repository: cloud.Repository, ID: runID, Attempt: 1, TestedRef: testedRef, Trigger: cost.TriggerAutomatic, PRNumber: w.pr},
		Snapshot: cleanup.Snapshot{Price: a.Price, StartedAt: wire.KnownTime(a.StartedAt), GPU: a.GPU, Tier: a.Tier},
	})
	fmt.Fprintf(w.out, "\n%s", out.Summary(err))
	return err
}

// printer collects provision's log lines (the demo prints summaries only).
type printer struct{ w io.Writer }

func (p *printer) Logf(format string, args ...any) { fmt.Fprintf(p.w, format+"\n", args...) }
func (p *printer) PodCreated(string)               {}
func (p *printer) AttemptDone(cost.Attempt)        {}

// leaveAnOrphan models an earlier run whose cleanup never ran: its pod is
// still billing and its run completed long ago.
func (w *world) leaveAnOrphan(ctx context.Context) (string, error) {
	runID, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow,
		Event: "workflow_run", Status: "completed", Conclusion: "cancelled", CreatedAt: w.clock.Now()})
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
	w.clock.Advance(20 * time.Minute) // the run was cancelled; nobody deleted the pod
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
	fmt.Fprint(w.out, rec.Markdown())
	for _, id := range rec.PodIDs(reap.DecisionReclaim) {
		if id == orphan {
			return nil
		}
	}
	return fmt.Errorf("reaper: the orphan %s was not reclaimed", orphan)
}
