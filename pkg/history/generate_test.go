package history

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The saved evidence the golden tests read is made by the real provision
// loop on the simulated cloud (model mode, virtual clock), with the cleanup
// and gate jobs' evidence written the way those actions write it, collected
// from the simulated GitHub by the real Collector. Regenerate it with
//
//	go test ./pkg/history -run TestEvidenceGenerator -evidence
var regenerateEvidence = flag.Bool("evidence", false, "regenerate testdata/evidence on the simulated cloud")

const evidenceDir = "testdata/evidence"

// evidenceRange is the three weeks the generated runs fall in.
var evidenceRange = Range{Since: date(2026, 9, 28), Until: date(2026, 10, 18)}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestEvidenceGenerator(t *testing.T) {
	dir := t.TempDir()
	generateEvidence(t, dir)
	if *regenerateEvidence {
		assert.NilError(t, os.RemoveAll(evidenceDir))
		assert.NilError(t, os.CopyFS(evidenceDir, os.DirFS(dir)))
		t.Logf("wrote %s", evidenceDir)
		return
	}
	// The committed evidence is exactly what the actions produce today.
	got, want := readTree(t, dir), readTree(t, evidenceDir)
	var differ []string
	for name := range got {
		if got[name] != want[name] {
			differ = append(differ, name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			differ = append(differ, name+" (no longer produced)")
		}
	}
	slices.Sort(differ)
	assert.Assert(t, len(differ) == 0, "the actions' evidence changed in %s\n"+
		"regenerate it: go test ./pkg/history -run TestEvidenceGenerator -evidence && go test ./pkg/history -update",
		strings.Join(differ, ", "))
}

// readTree maps every file under dir to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	assert.NilError(t, err)
	return files
}

// GPU types of the simulated market.
const (
	a4000   = "NVIDIA RTX A4000"
	a5000   = "NVIDIA RTX A5000"
	l4      = "NVIDIA L4"
	a6000   = "NVIDIA RTX A6000"
	rtx4090 = "NVIDIA GeForce RTX 4090"
)

// cleanupMode is how a run's cleanup job went.
type cleanupMode int

const (
	cleanupNormal      cleanupMode = iota // cost line and cost artifact
	cleanupDuplicated                     // the cost line printed twice
	cleanupLineOnly                       // the artifact upload failed
	cleanupUnconfirmed                    // deletion never confirmed (the job was cancelled)
	cleanupNone                           // the job died before reporting
)

// simRun is one simulated workflow run of the GPU workflow.
type simRun struct {
	pr, rev     int           // the pull request and its revision (the tested ref)
	manual      bool          // a workflow_dispatch confirmation of that ref
	gpus        []string      // the reviewed tier; nil means the default
	testsFail   bool          // the GPU tests fail
	cleanup     cleanupMode   //
	noLogs      bool          // the logs are gone (expired); the artifact remains
	noGPU       bool          // no GPU path changed: the gate is not required
	rerun       bool          // a second attempt after this one, with passing tests
	gap         time.Duration // time since the previous run
	testMinutes int           // how long the tests run; 0 means 5
	oldCleanup  bool          // a cleanup from before cost reports carried the GPU job's conclusion
}

// evidenceRuns are the generated workflow runs, in order: a few dozen runs
// over three weeks with rejected candidates, repeats, reused gates, manual
// confirmations, a missing deletion and a duplicated log line.
var evidenceRuns = []simRun{
	{pr: 1, rev: 1, gap: 2 * time.Hour, oldCleanup: true},
	{pr: 2, rev: 1, gap: 5 * time.Hour, testMinutes: 7},
	{pr: 1, rev: 2, gap: 9 * time.Hour},
	{pr: 3, rev: 1, gap: 11 * time.Hour, testsFail: true, rerun: true},
	{pr: 3, rev: 1, gap: 6 * time.Hour}, // a re-delivery after the rerun passed: reused
	{pr: 2, rev: 1, manual: true, gap: 4 * time.Hour},
	{pr: 4, rev: 1, gap: 20 * time.Hour, cleanup: cleanupUnconfirmed},
	{pr: 5, rev: 1, gap: 7 * time.Hour, cleanup: cleanupDuplicated, gpus: []string{l4, rtx4090}},
	{pr: 6, rev: 1, gap: 13 * time.Hour, noGPU: true},
	{pr: 5, rev: 2, gap: 15 * time.Hour, cleanup: cleanupLineOnly, gpus: []string{l4, rtx4090}},
	{pr: 7, rev: 1, gap: 22 * time.Hour, gpus: []string{a6000}},
	{pr: 7, rev: 1, gap: 3 * time.Hour, gpus: []string{a6000, rtx4090}}, // the same ref, paid again
	{pr: 8, rev: 1, gap: 10 * time.Hour, cleanup: cleanupNone},
	{pr: 1, rev: 3, gap: 16 * time.Hour, testMinutes: 9},
	{pr: 9, rev: 1, gap: 19 * time.Hour, noLogs: true},
	{pr: 2, rev: 2, gap: 8 * time.Hour},
	{pr: 2, rev: 2, gap: 2 * time.Hour}, // reused
	{pr: 2, rev: 2, manual: true, gap: 3 * time.Hour},
	{pr: 10, rev: 1, gap: 26 * time.Hour, gpus: []string{rtx4090}, testMinutes: 4},
	{pr: 11, rev: 1, gap: 14 * time.Hour, testsFail: true},
	{pr: 11, rev: 1, gap: 5 * time.Hour}, // a repeat after a failure: paid again
	{pr: 12, rev: 1, gap: 21 * time.Hour},
	{pr: 4, rev: 2, gap: 12 * time.Hour, gpus: []string{l4, rtx4090}},
	{pr: 13, rev: 1, gap: 18 * time.Hour, noGPU: true},
	{pr: 12, rev: 2, gap: 17 * time.Hour, testMinutes: 6},
	{pr: 14, rev: 1, gap: 23 * time.Hour},
	{pr: 14, rev: 1, manual: true, gap: 4 * time.Hour},
	{pr: 15, rev: 1, gap: 20 * time.Hour, gpus: []string{a6000, l4}},
	{pr: 16, rev: 1, gap: 25 * time.Hour, testMinutes: 8},
	{pr: 15, rev: 2, gap: 9 * time.Hour},
}

// evidenceWorld is the simulated cloud the runs happen on.
type evidenceWorld struct {
	t      *testing.T
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	rp     *runpod.Client
	gh     *ghapi.Client
	policy *reqpolicy.Policy
	prs    map[int]int // simulated PR number → githubsim number
}

// generateEvidence runs evidenceRuns on a fresh simulated cloud and collects
// the evidence into dir.
func generateEvidence(t *testing.T, dir string) {
	t.Helper()
	healthy := func(id, gpu string) runpodsim.HostProfile {
		return runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 40, Healthy: true}
	}
	oldPTX := healthy("h2", a4000)
	oldPTX.MaxPTXISA = "8.5" // same SKU, a driver that cannot load the full tier's PTX
	broken := healthy("h5", a6000)
	broken.Healthy = false
	market := &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: a4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: a5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: l4, Name: "L4", MemoryGB: 24, SecurePrice: 0.43, CommunityPrice: 0.28},
			{ID: a6000, Name: "RTX A6000", MemoryGB: 48, SecurePrice: 0.49, CommunityPrice: 0.33},
			{ID: rtx4090, Name: "RTX 4090", MemoryGB: 24, SecurePrice: 0.69, CommunityPrice: 0.34},
		},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA",
			CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: []runpodsim.HostProfile{healthy("h1", a4000), oldPTX, healthy("h3", a5000), healthy("h4", l4), broken, healthy("h6", rtx4090)},
	}
	c, err := cloud.Start(cloud.Options{Seed: 7, Start: evidenceRange.Since.Add(6 * time.Hour), Market: market})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep),
		reqpolicy.WithJitter(func() float64 { return 0.5 }), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken,
		Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	w := &evidenceWorld{t: t, cloud: c, clock: clock, policy: policy, gh: gh, prs: map[int]int{},
		rp: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy))}

	for _, r := range evidenceRuns {
		clock.Advance(r.gap)
		w.run(r)
	}
	clock.Advance(48 * time.Hour) // every run long complete
	collector := &Collector{GitHub: gh, Dir: dir, Workflow: filepath.Base(cloud.Workflow)}
	_, err = collector.Collect(context.Background(), evidenceRange)
	assert.NilError(t, err)
}

// sha is a stable commit SHA for a name.
func sha(name string) string {
	sum := sha1.Sum([]byte(name))
	return hex.EncodeToString(sum[:])
}

// pullRequest opens the simulated PR, or moves its head to the revision.
func (w *evidenceWorld) pullRequest(r simRun) (number int, head, merge string) {
	head, merge = sha(fmt.Sprintf("pr-%d-rev-%d-head", r.pr, r.rev)), sha(fmt.Sprintf("pr-%d-rev-%d-merge", r.pr, r.rev))
	number, ok := w.prs[r.pr]
	if !ok {
		n, err := w.cloud.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice",
			HeadRef: fmt.Sprintf("feature-%d", r.pr), HeadSHA: head, MergeCommitSHA: merge})
		assert.NilError(w.t, err)
		w.prs[r.pr], number = n, n
		return number, head, merge
	}
	assert.NilError(w.t, w.cloud.GitHub.UpdatePullRequest(cloud.Repository, number, func(p *githubsim.PullRequestSpec) {
		p.HeadSHA, p.MergeCommitSHA = head, merge
	}))
	return number, head, merge
}

// run simulates one workflow run and its rerun, if any.
func (w *evidenceWorld) run(r simRun) {
	number, head, merge := w.pullRequest(r)
	spec := githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadBranch: fmt.Sprintf("feature-%d", r.pr), HeadSHA: head, PullRequests: []int{number}, Status: "in_progress"}
	if r.manual {
		spec.Event, spec.HeadBranch, spec.HeadSHA, spec.PullRequests = "workflow_dispatch", "", "", nil
		number = 0
	}
	spec.Jobs = w.laneJobSpecs()
	runID, err := w.cloud.GitHub.AddWorkflowRun(spec)
	assert.NilError(w.t, err)
	w.attempt(r, runID, 1, number, head, merge)
	if !r.rerun {
		return
	}
	w.clock.Advance(40 * time.Minute)
	_, err = w.cloud.GitHub.RerunWorkflowRun(cloud.Repository, runID, w.laneJobSpecs())
	assert.NilError(w.t, err)
	again := r
	again.testsFail, again.rerun = false, false
	w.attempt(again, runID, 2, number, head, merge)
}

// attempt simulates the jobs of one attempt: provision, the GPU tests,
// cleanup and the gate, and uploads their logs and the cost artifact.
func (w *evidenceWorld) attempt(r simRun, runID int64, attempt, prNumber int, head, merge string) {
	logs := map[string]*jobLog{}
	job := func(name string) *jobLog {
		if logs[name] == nil {
			// The loopback addresses change every run; the logs show the public ones.
			logs[name] = &jobLog{clock: w.clock, public: strings.NewReplacer(
				w.cloud.RunPodURL, "https://rest.runpod.io", w.cloud.GitHubURL, "https://api.github.com")}
		}
		return logs[name]
	}
	kind, reason, res := gatecheck.KindNotRequired, "no GPU path changed", provision.Result{}
	if !r.noGPU {
		var runErr error
		res, runErr = w.provision(job("provision"), r, runID, attempt, prNumber, head, merge)
		switch {
		case res.Decision == provision.DecisionReused:
			kind, reason = gatecheck.KindReused, "tested ref already passed: "+res.ReusedCheckURL
		case runErr != nil:
			kind, reason = gatecheck.KindFailed, runErr.Error()
		default:
			kind, reason = gatecheck.KindPaid, "GPU tests passed"
			if !w.gpuJob(job("gpu-tests"), r) {
				kind, reason = gatecheck.KindFailed, "GPU tests failed"
			}
		}
		if res.Decision == provision.DecisionPaid {
			w.cleanupJob(job("cleanup"), logs["gpu-tests"], r, res, cost.Run{Repository: cloud.Repository, ID: runID, Attempt: attempt,
				TestedRef: merge, Trigger: trigger(r), PRNumber: prNumber})
		}
	}
	w.gateJob(job("gate"), prNumber, head, merge, kind, reason)

	conclusion := "success"
	if kind == gatecheck.KindFailed {
		conclusion = "failure"
	}
	assert.NilError(w.t, w.cloud.GitHub.SetRunStatus(cloud.Repository, runID, "completed", conclusion))
	if !r.noLogs {
		assert.NilError(w.t, w.cloud.GitHub.SetRunLogs(cloud.Repository, runID, attempt, archive(logs)))
	}
}

func trigger(r simRun) cost.Trigger {
	if r.manual {
		return cost.TriggerManual
	}
	return cost.TriggerAutomatic
}

// provision runs the real provision loop with the action's observer, which
// writes the structured attempt lines into the job log.
func (w *evidenceWorld) provision(log *jobLog, r simRun, runID int64, attempt, prNumber int, head, merge string) (provision.Result, error) {
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000, l4}}}
	if r.gpus != nil {
		cfg.GPUTiers = []config.GPUTier{{Name: "reviewed", GPUIDs: r.gpus}}
	}
	cfg.MaxPriceCandidates = 3
	assert.NilError(w.t, cfg.Validate())
	outputs := filepath.Join(w.t.TempDir(), "output")
	assert.NilError(w.t, os.WriteFile(outputs, nil, 0o644))
	io := actionio.New(log, func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return outputs
		}
		return ""
	}, nil)
	req := provision.Request{
		Config:      cfg,
		Owner:       ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: attempt},
		LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo,
		PRNumber: prNumber, ExpectedHeadSHA: head, TestedRef: merge, Reuse: gatecheck.ReuseQuery{AppID: cloud.AppID},
		ProofURL: w.cloud.ProofURL, ProofSHA256: w.cloud.ProofSHA256,
	}
	if prNumber == 0 {
		req.ExpectedHeadSHA = ""
	}
	res, err := provision.Run(context.Background(), provision.Deps{
		RunPod: w.rp, GitHub: w.gh, Images: &registry.Resolver{APIURL: w.cloud.RegistryURL},
		Policy: w.policy, Observer: provision.LogObserver{Log: io},
	}, req)
	if err != nil {
		io.Errorf("%v", err)
	}
	return res, err
}

// gpuJob runs the GPU job's steps on the clock and reports whether the tests passed.
func (w *evidenceWorld) gpuJob(log *jobLog, r simRun) bool {
	minutes := r.testMinutes
	if minutes == 0 {
		minutes = 5
	}
	w.clock.Advance(20 * time.Second) // the job waits in the runner's queue
	for _, step := range []struct {
		name string
		d    time.Duration
	}{{"Set up job", 2 * time.Second}, {"Checkout", 9 * time.Second}, {"Download archive", 35 * time.Second},
		{"Run GPU tests", time.Duration(minutes) * time.Minute}, {"Post Checkout", time.Second}, {"Complete job", time.Second}} {
		log.printf("##[group]%s", step.name)
		w.clock.Advance(step.d)
		if step.name == "Run GPU tests" && r.testsFail {
			log.printf("##[error]Process completed with exit code 1.")
			continue
		}
		log.printf("##[endgroup]")
	}
	return !r.testsFail
}

// gpuSteps are the GPU job's steps as the cleanup action reads them: the
// job log's group markers and their times.
func gpuSteps(log *jobLog) cost.Job {
	var job cost.Job
	if log == nil {
		return job
	}
	for _, l := range log.lines {
		switch {
		case strings.HasPrefix(l.text, "##[group]"):
			if len(job.Steps) == 0 {
				job.Started = l.at
			}
			job.Steps = append(job.Steps, cost.Step{Name: strings.TrimPrefix(l.text, "##[group]"), Started: l.at})
		case len(job.Steps) > 0:
			job.Steps[len(job.Steps)-1].Completed = l.at
			job.Completed = l.at
		}
	}
	return job
}

// cleanupJob is what the cleanup action does: capture the pod record,
// delete the pod (bounded), then report the paid window by stage as a cost
// log line and the cost artifact.
func (w *evidenceWorld) cleanupJob(log, gpuLog *jobLog, r simRun, res provision.Result, run cost.Run) {
	w.clock.Advance(15 * time.Second)
	// The job runs from now until its artifact is uploaded; the artifact's
	// name claims it.
	job := w.laneJob(run, "cleanup")
	defer w.ranUntilNow(job, w.clock.Now())
	report := cost.Report{}
	for _, a := range res.Attempts {
		if a.Outcome == cost.OutcomeRejected {
			report.Rejected = append(report.Rejected, a)
		}
	}
	if acc := res.Accepted; acc != nil {
		report.PodID, report.GPU, report.Tier = acc.PodID, acc.GPU, acc.Tier
		switch {
		case r.oldCleanup: // states no conclusion, as artifacts written before it was added
		case r.testsFail:
			report.JobConclusion = cost.ConclusionFailure
		default:
			report.JobConclusion = cost.ConclusionSuccess
		}
		pod, err := w.rp.GetPod(context.Background(), acc.PodID)
		assert.NilError(w.t, err)
		report.Price = cost.FirstKnown(cost.KnownPrice(money.PerHour(float64(pod.Cost)), "v2 cost"), acc.Price)
		report.Window.Start = pod.StartedAt
		deleteCtx := context.Background()
		if r.cleanup == cleanupUnconfirmed || r.cleanup == cleanupNone {
			cancelled, cancel := context.WithCancel(deleteCtx)
			cancel() // the job is cancelled before the deletion is confirmed
			deleteCtx = cancelled
		}
		deleter := &lifecycle.Deleter{Pods: w.rp, Policy: w.policy, Logf: log.printf}
		if at, err := deleter.Delete(deleteCtx, acc.PodID); err == nil {
			report.Window.End = wire.KnownTime(at)
		} else {
			log.printf("##[error]%v", err)
		}
		if steps, err := cost.Stages(report.Window, gpuSteps(gpuLog), cost.TestStepNamed("Run GPU tests")); err == nil {
			report.Stages = steps
		} else {
			report.Notes = append(report.Notes, "stage breakdown unavailable: "+err.Error())
		}
		if r.cleanup == cleanupUnconfirmed || r.cleanup == cleanupNone {
			// The reaper deletes it an hour later; its record is not workflow evidence.
			w.clock.Advance(time.Hour)
			_, err := (&lifecycle.Deleter{Pods: w.rp, Policy: w.policy}).Delete(context.Background(), acc.PodID)
			assert.NilError(w.t, err)
		}
	}
	if r.cleanup == cleanupNone {
		return
	}
	line := cost.CostLine(report).Format()
	log.printf("%s", line)
	if r.cleanup == cleanupDuplicated {
		log.printf("%s", line)
	}
	name := cost.JobArtifactName(run.ID, run.Attempt, job.ID)
	if r.cleanup == cleanupLineOnly {
		log.printf("##[error]Failed to upload artifact %s: connection reset", name)
		return
	}
	body, err := json.MarshalIndent(cost.Artifact{Run: run, Action: "cleanup", Report: report}, "", "  ")
	assert.NilError(w.t, err)
	log.printf("%s", cost.SealLine(body).Format()) // as the cleanup action vouches for the file it wrote
	_, err = w.cloud.GitHub.AddArtifact(cloud.Repository, run.ID, githubsim.ArtifactSpec{
		Name: name, Files: map[string]string{cost.ArtifactFileName: string(body)}})
	assert.NilError(w.t, err)
}

// laneJob finds the lane job key (see jobNames) of a run attempt.
func (w *evidenceWorld) laneJob(run cost.Run, key string) githubsim.Job {
	jobs, err := w.cloud.GitHub.Jobs(cloud.Repository, run.ID, run.Attempt)
	assert.NilError(w.t, err)
	for _, j := range jobs {
		if j.Name == jobNames[key] {
			return j
		}
	}
	w.t.Fatalf("run %d attempt %d has no job %s", run.ID, run.Attempt, jobNames[key])
	return githubsim.Job{}
}

// ranUntilNow records that a hosted lane job ran from start until now.
func (w *evidenceWorld) ranUntilNow(j githubsim.Job, start time.Time) {
	assert.NilError(w.t, w.cloud.GitHub.SetJob(cloud.Repository, j.ID, githubsim.JobSpec{Name: j.Name, Labels: j.Labels,
		RunnerName: j.RunnerName, Status: "completed", Conclusion: "success", StartedAt: start, CompletedAt: w.clock.Now()}))
}

// gateJob publishes the gate check, as the gate action does, and logs its marker.
func (w *evidenceWorld) gateJob(log *jobLog, prNumber int, head, merge string, kind gatecheck.Kind, reason string) {
	w.clock.Advance(10 * time.Second)
	externalID, err := gatecheck.FormatExternalID(merge, kind)
	assert.NilError(w.t, err)
	conclusion := "success"
	if kind == gatecheck.KindFailed {
		conclusion = "failure"
	}
	url := "https://github.com/" + cloud.Repository + "/actions"
	if prNumber > 0 {
		id, err := w.cloud.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{Name: gatecheck.DefaultCheckName, HeadSHA: head,
			ExternalID: externalID, Status: "completed", Conclusion: conclusion, AppID: cloud.AppID, CompletedAt: w.clock.Now()})
		assert.NilError(w.t, err)
		url = fmt.Sprintf("https://github.com/%s/runs/%d", cloud.Repository, id)
	}
	log.printf("published %s (%s): %s", externalID, url, reason)
}

// jobLog is one job's log as GitHub serves it: every line stamped with the
// time the runner received it.
type jobLog struct {
	clock   simclock.Clock
	public  *strings.Replacer
	mu      sync.Mutex
	partial []byte
	lines   []stampedLine
}

type stampedLine struct {
	at   wire.Time
	text string
}

// Write receives what the action prints.
func (l *jobLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines = append(l.lines, stampedLine{at: wire.KnownTime(l.clock.Now()), text: l.public.Replace(string(l.partial[:i]))})
		l.partial = l.partial[i+1:]
	}
}

func (l *jobLog) printf(format string, args ...any) { fmt.Fprintf(l, format+"\n", args...) }

// text renders the log with GitHub's timestamps.
func (l *jobLog) text() string {
	var b strings.Builder
	for _, line := range l.lines {
		at, _ := line.at.Get()
		b.WriteString(at.Format("2006-01-02T15:04:05.0000000Z") + " " + line.text + "\n")
	}
	return b.String()
}

// jobNames are the jobs' names in gpu-lane.yml, as GitHub lists them for a
// caller job "gpu" calling the lane.
var jobNames = map[string]string{"provision": "gpu / " + JobProvision, "gpu-tests": "gpu / GPU tests",
	"cleanup": "gpu / " + JobCleanup, "gate": "gpu / " + JobGate}

// laneJobSpecs are an attempt's jobs as GitHub lists them: the GPU job on
// the pod's runner label, the others on hosted runners.
func (w *evidenceWorld) laneJobSpecs() []githubsim.JobSpec {
	now := w.clock.Now()
	var specs []githubsim.JobSpec
	for _, key := range []string{"provision", "gpu-tests", "cleanup", "gate"} {
		labels, runner := []string{"ubuntu-latest"}, "GitHub Actions 2"
		if key == "gpu-tests" {
			labels, runner = []string{"runpod-gpu-label"}, "runpod-gpu-label"
		}
		specs = append(specs, githubsim.JobSpec{Name: jobNames[key], Labels: labels, RunnerName: runner,
			Status: "completed", Conclusion: "success", StartedAt: now, CompletedAt: now})
	}
	return specs
}

// archive lays the job logs out as GitHub's logs archive does: one file per
// job and the same lines again, per step, in a folder named after the job;
// the "/" of a called workflow's job name is not in the file name.
func archive(logs map[string]*jobLog) map[string]string {
	files := map[string]string{}
	for i, key := range []string{"provision", "gpu-tests", "cleanup", "gate"} {
		if l := logs[key]; l != nil {
			name := strings.ReplaceAll(jobNames[key], "/", "")
			files[fmt.Sprintf("%d_%s.txt", i, name)] = l.text()
			files[fmt.Sprintf("%s/1_Run %s.txt", name, key)] = l.text()
		}
	}
	return files
}
