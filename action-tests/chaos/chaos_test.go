// Package chaos is the chaos suite: the whole lane — authorize → provision →
// watchdog beside the GPU job → gate → cleanup, then the reaper's sweeps; or,
// for every fourth seed, the Serverless lane: authorize → the serverless
// job's lane and cleanup steps → gate → the reaper's sweeps —
// with the real action binaries on the simulated cloud, under a fault schedule
// drawn from a seed, and the promises checked after each schedule:
//
//  1. no pod alive after cleanup except those cleanup visibly failed to delete
//     (named in its outputs and summary, with a failing exit), and none at all
//     after the reaper's sweeps;
//  2. what the simulator billed never exceeds the worst case provision printed
//     before its first create;
//  3. every failure is visible (a non-zero exit, a ::error, a failing gate, a
//     cancelled run) and no gate is green without a passing GPU job;
//  4. no credential or JIT config in any log, summary, output, file or pod body.
//
// go test ./action-tests/chaos -run TestChaos                 the fixed seeds 1..chaos.n
// go test ./action-tests/chaos -run TestChaos -chaos.n 1000 -timeout 2h
// go test ./action-tests/chaos -run '^TestChaos$/^seed=123$' -chaos.seed 123 -v   one seed (-chaos.show logs it all)
package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

var (
	chaosN        = flag.Int("chaos.n", 48, "chaos suite: run the schedules of seeds 1..n")
	chaosSeed     = flag.Uint64("chaos.seed", 0, "chaos suite: run only this seed's schedule")
	chaosShow     = flag.Bool("chaos.show", false, "chaos suite: log every step's output and the faults injected, pass or fail")
	chaosParallel = flag.Int("chaos.parallel", 12, "chaos suite: schedules run at once (they mostly wait on real time)")
)

// TestMain builds the image's binary once for the package (harness.Main).
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

func TestChaos(t *testing.T) {
	seeds := make([]uint64, 0, *chaosN)
	if *chaosSeed != 0 {
		seeds = append(seeds, *chaosSeed)
	} else {
		for s := 1; s <= *chaosN; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	// Subtests run from a few goroutines at once (t.Run allows it) rather than
	// with t.Parallel, whose limit is GOMAXPROCS: a lane is mostly waiting.
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range max(1, *chaosParallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runChaos(t, seed) })
			}
		}()
	}
	for _, s := range seeds {
		work <- s
	}
	close(work)
	wg.Wait()
}

// chaosLane is one schedule's world and what its steps left.
type chaosLane struct {
	t      *testing.T
	sc     *chaosSchedule
	c      *cloud.Cloud
	s      *harness.Simulated // the steps' view: URLs through the fault proxies
	rp, gh *chaosProxy
	clock  *chaosGitHubClock
	pr     int
	jobID  int64

	mu        sync.Mutex
	steps     []chaosStep
	running   map[string]*os.Process
	cancelled bool // GitHub cancelled the run (a SIGTERMed action)
	killed    bool
}

type chaosStep struct {
	name   string
	res    harness.StepResult
	killed bool // SIGTERMed while it ran
}

func runChaos(t *testing.T, seed uint64) {
	if serverlessSeed(seed) {
		runServerlessChaos(t, seed) // serverless_test.go
		return
	}
	sc := drawSchedule(seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("schedule %s", sc)
			t.Logf("replay: go test ./action-tests/chaos -run '^TestChaos$/^seed=%d$' -count=1 -v -chaos.seed %d", seed, seed)
		}
	})
	l := startChaosLane(t, sc)
	l.run()
	l.check()
}

func startChaosLane(t *testing.T, sc *chaosSchedule) *chaosLane {
	t.Helper()
	hosts := newChaosHosts(sc.NeverRegister, sc.DieAfter)
	clock := &chaosGitHubClock{}
	market := &runpodsim.Market{
		GPUTypes: chaosGPUs,
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US",
			NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: sc.Hosts,
	}
	c, err := cloud.Start(cloud.Options{
		Seed: sc.Seed, Clock: simclock.Real{}, Market: market, Faults: sc.Faults, Hosts: hosts, Balance: 1e6,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)},
		// GitHub gives up on a runner lost with its pod after ten minutes, long after the
		// watchdog confirmed the loss; on the real clock, 6s (the watchdog polls every second).
		GitHubOptions: []githubsim.Option{githubsim.WithClock(clock), githubsim.WithRunnerLostTimeout(6 * time.Second)},
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	hosts.attach(c, 700*time.Millisecond)
	for _, f := range sc.GitHubFaults {
		c.GitHub.AddFault(f)
	}
	for _, rw := range sc.GitHubRewrites {
		c.GitHub.AddRewrite(rw)
	}

	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(chaosConfig), 0o644))

	l := &chaosLane{t: t, sc: sc, c: c, clock: clock, running: map[string]*os.Process{}}
	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature", MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	l.pr = pr
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request",
		HeadSHA: harness.HeadSHA, PullRequests: []int{pr}, Jobs: []githubsim.JobSpec{{Name: "GPU tests", Status: "waiting"}}})
	assert.NilError(t, err)
	jobs, err := c.GitHub.Jobs(cloud.Repository, runID, 1)
	assert.NilError(t, err)
	l.jobID = jobs[0].ID

	// The proxies start last: the outage window counts from the lane's start.
	l.rp = startChaosProxy("runpod", c.RunPodURL, sc.Seed, sc.RunPod)
	l.gh = startChaosProxy("github", c.GitHubURL, sc.Seed, sc.GitHub)
	t.Cleanup(l.rp.Close)
	t.Cleanup(l.gh.Close)
	view := *c
	view.RunPodURL, view.GitHubURL = l.rp.URL(), l.gh.URL()
	l.s = &harness.Simulated{Cloud: &view, Workspace: ws, RunID: runID}
	return l
}

// step runs one action as the lane's job would, SIGTERMing it at the
// scheduled moment; a SIGTERM is GitHub cancelling the run.
func (l *chaosLane) step(name string, st harness.Step) chaosStep {
	var timer *time.Timer
	fired := make(chan struct{}) // closed once the SIGTERM is on its way
	st.Started = func(p *os.Process) {
		l.mu.Lock()
		l.running[name] = p
		l.mu.Unlock()
		if l.sc.Kill == name {
			timer = time.AfterFunc(l.sc.KillAfter, func() {
				defer close(fired)
				if name == "reap" { // another workflow: only the sweep is cancelled
					_ = p.Signal(syscall.SIGTERM)
					return
				}
				l.cancelRun()
			})
		}
	}
	res := harness.RunStep(l.t, st)
	killed := false
	if timer != nil && !timer.Stop() {
		<-fired // it fired while the step ran: GitHub cancelled the run
		killed = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.running, name)
	cs := chaosStep{name: name, res: res, killed: killed}
	l.steps = append(l.steps, cs)
	return cs
}

// cancelRun is GitHub cancelling the workflow run: every running action gets
// SIGTERM and the GPU job ends cancelled.
func (l *chaosLane) cancelRun() {
	l.mu.Lock()
	if l.cancelled {
		l.mu.Unlock()
		return
	}
	l.cancelled = true
	procs := make([]*os.Process, 0, len(l.running))
	for _, p := range l.running {
		procs = append(procs, p)
	}
	l.mu.Unlock()
	for _, p := range procs {
		_ = p.Signal(syscall.SIGTERM)
	}
	l.endJob("cancelled")
}

func (l *chaosLane) isCancelled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancelled
}

// job is the GPU job as the simulated GitHub has it now.
func (l *chaosLane) job() githubsim.Job {
	jobs, err := l.c.GitHub.Jobs(cloud.Repository, l.s.RunID, 1)
	if err != nil || len(jobs) == 0 {
		panic(fmt.Sprintf("the lane's GPU job is gone: %v", err))
	}
	return jobs[0]
}

// endJob ends the GPU job with conclusion unless it has ended.
func (l *chaosLane) endJob(conclusion string) {
	j := l.job()
	if j.Status == "completed" {
		return
	}
	now := time.Now()
	started := j.StartedAt
	if started.IsZero() {
		started = now
	}
	spec := githubsim.JobSpec{Name: j.Name, Labels: j.Labels, Status: "completed", Conclusion: conclusion,
		StartedAt: started, CompletedAt: now, RunnerID: j.RunnerID, RunnerName: j.RunnerName}
	for _, s := range j.Steps {
		ss := githubsim.StepSpec{Name: s.Name, Status: "completed", Conclusion: s.Conclusion, StartedAt: s.StartedAt, CompletedAt: s.CompletedAt}
		if s.Status != "completed" {
			ss.Conclusion, ss.CompletedAt = "cancelled", now
			if s.StartedAt.IsZero() {
				ss.Conclusion, ss.StartedAt = "skipped", now
			}
		}
		spec.Steps = append(spec.Steps, ss)
	}
	if err := l.c.GitHub.SetJob(cloud.Repository, j.ID, spec); err != nil {
		panic(err)
	}
}

// run plays the lane as the gpu-lane workflow would, job by job, with each
// job's if: condition (always() for gate and cleanup).
func (l *chaosLane) run() {
	s := l.s
	auth := l.step("authorize", s.AuthorizeStep(l.pr, "bob"))
	authorized := auth.res.ExitCode == 0 && !auth.killed
	decision := auth.res.Outputs["decision"]

	var prov chaosStep
	provisioned, provRan := false, false
	if authorized && decision == "run" && !l.isCancelled() {
		st := s.ProvisionStep(l.pr)
		st.Inputs["tested-ref"], st.Inputs["expected-head-sha"] = auth.res.Outputs["tested-ref"], auth.res.Outputs["head-sha"]
		prov = l.step("provision", st)
		provRan = true
		provisioned = prov.res.ExitCode == 0 && !prov.killed
	}
	label := prov.res.Outputs["runner-label"]

	jobResult := "skipped"
	var watchdog chan chaosStep
	if provisioned && label != "" && !l.isCancelled() {
		watchdog = make(chan chaosStep, 1)
		go func() {
			defer close(watchdog)
			watchdog <- l.step("watchdog", l.watchdogStep(prov.res.Outputs, auth.res.Outputs["head-sha"]))
		}()
		jobResult = l.gpuJob(label)
	}

	if authorized {
		p := prov.res.Outputs
		inputs := map[string]string{
			"decision": decision, "gate-kind": auth.res.Outputs["gate-kind"], "gpu-job-result": jobResult,
			"head-sha": auth.res.Outputs["head-sha"], "tested-ref": auth.res.Outputs["tested-ref"],
			"reused-check-url": cmpOr(p["reused-check-url"], auth.res.Outputs["reused-check-url"]), "reason": auth.res.Outputs["reason"],
			"pod-id": p["pod-id"], "gpu-type": p["gpu-type"], "tier": p["tier"], "price-per-hour": p["price-per-hour"],
			"startup-seconds": p["startup-seconds"], "attempts": p["attempts"],
		}
		l.step("gate", s.GateStep(l.pr, inputs))
	}
	if provRan {
		l.step("cleanup", l.cleanupStep(prov.res.Outputs, auth.res.Outputs["tested-ref"]))
		l.checkAfterCleanup()
	}
	if watchdog != nil {
		<-watchdog
	}
	l.sweep()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gpuJob hands the GPU job to the runner labelled label (unless the queue
// never does) and waits for it to end; it returns needs.gpu-tests.result.
func (l *chaosLane) gpuJob(label string) string {
	if !l.sc.JobNeverStarts {
		time.Sleep(l.sc.JobDelay) // the runner queue's delay, part of the schedule
		if !l.isCancelled() {
			testConclusion := "success"
			if l.sc.TestsFail {
				testConclusion = "failure"
			}
			err := l.c.GitHub.SetJob(cloud.Repository, l.jobID, githubsim.JobSpec{Name: "GPU tests", Labels: []string{label}, Status: "queued",
				Steps: []githubsim.StepSpec{
					{Name: chaosSetupStep, Duration: time.Second},
					{Name: chaosTestStep, Duration: 2 * time.Second, Conclusion: testConclusion},
					{Name: "Complete job", Duration: 300 * time.Millisecond},
				}})
			if err != nil {
				panic(err)
			}
		}
	}
	// A job whose runner never takes it waits until the watchdog (or a
	// cancellation) ends the run; past the lifetime plus a margin it is the
	// job's own timeout-minutes that ends it.
	deadline := time.Now().Add(45 * time.Second)
	for {
		j := l.job()
		if j.Status == "completed" {
			return j.Conclusion
		}
		if time.Now().After(deadline) {
			l.endJob("failure")
			return "failure"
		}
		time.Sleep(100 * time.Millisecond) // GitHub's own progress, observed
	}
}

func (l *chaosLane) watchdogStep(prov map[string]string, head string) harness.Step {
	inputs := map[string]string{
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": l.s.RunPodURL, "github-token": cloud.GitHubToken,
		"pr-number": harness.Itoa(l.pr), "expected-head-sha": head, "poll-seconds": "1", "test-step-name": chaosTestStep,
	}
	for _, k := range []string{"pod-id", "runner-label", "price-per-hour", "gpu-type", "tier"} {
		inputs[k] = prov[k]
	}
	return harness.Step{Action: "watchdog", Workspace: l.s.Workspace, Env: l.s.RunnerEnv(), Inputs: inputs}
}

func (l *chaosLane) cleanupStep(prov map[string]string, testedRef string) harness.Step {
	env := l.s.RunnerEnv()
	env["GITHUB_EVENT_NAME"] = "pull_request"
	inputs := map[string]string{
		"runpod-api-key": cloud.RunPodKey, "runpod-api-url": l.s.RunPodURL, "github-token": cloud.GitHubToken,
		"tested-ref": testedRef, "pr-number": harness.Itoa(l.pr), "test-step-name": chaosTestStep,
	}
	for _, k := range []string{"pod-id", "retained-pod-ids", "price-per-hour", "started-at", "gpu-type", "tier", "runner-label"} {
		inputs[k] = prov[k]
	}
	return harness.Step{Action: "cleanup", Workspace: l.s.Workspace, Env: env, Inputs: inputs}
}

func (l *chaosLane) reapStep() harness.Step {
	in := map[string]string{"runpod-api-key": cloud.RunPodKey, "github-token": cloud.GitHubToken, "runpod-api-url": l.s.RunPodURL}
	return harness.Step{Action: "reap", Workspace: l.s.Workspace, Inputs: in, Event: map[string]any{},
		Env: map[string]string{
			"GITHUB_API_URL": l.s.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
			"GITHUB_RUN_ID": "77000", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule", "GITHUB_WORKSPACE": l.s.Workspace,
			"GITHUB_WORKFLOW_REF": cloud.Repository + "/.github/workflows/runpod-reap.yml@refs/heads/main",
		}}
}

// live returns the pods not deleted, as the simulator knows them.
func (l *chaosLane) live() []string {
	var ids []string
	for _, p := range l.c.RunPod.Pods() {
		if p.Status != runpodsim.StatusTerminated {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

func (l *chaosLane) last(name string) (chaosStep, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.steps) - 1; i >= 0; i-- {
		if l.steps[i].name == name {
			return l.steps[i], true
		}
	}
	return chaosStep{}, false
}

// checkAfterCleanup is invariant 1's first half: every pod alive once cleanup
// ended is one cleanup named as not deleted, failing — or cleanup was cancelled.
func (l *chaosLane) checkAfterCleanup() {
	t := l.t
	cl, _ := l.last("cleanup")
	live := l.live()
	if len(live) == 0 || cl.killed {
		return
	}
	remaining := strings.Split(cl.res.Outputs["remaining-pod-ids"], ",")
	for _, id := range live {
		assert.Check(t, slices.Contains(remaining, id) && strings.Contains(cl.res.Summary, id),
			"LEAK: pod %s is alive after cleanup, which did not name it (remaining-pod-ids %q):\n%s", id, cl.res.Outputs["remaining-pod-ids"], cl.res.Stdout)
	}
	assert.Check(t, cl.res.ExitCode != 0 && strings.Contains(cl.res.Stdout, "::error"),
		"cleanup left pods %v alive without failing visibly (exit %d)", live, cl.res.ExitCode)
}

// sweep is the reaper's next scheduled sweeps, once the run completed past its
// grace: under the same faults while they fail visibly, then calm ones.
func (l *chaosLane) sweep() {
	t := l.t
	// The next sweep comes minutes later: by then RunPod's listing shows every pod.
	time.Sleep(l.sc.Faults.ListingDelay)
	l.endJob("cancelled") // a job still queued when its run ends is cancelled with it
	conclusion := "success"
	if l.isCancelled() {
		conclusion = "cancelled"
	}
	l.clock.shift(-6 * time.Minute)
	assert.NilError(t, l.c.GitHub.SetRunStatus(cloud.Repository, l.s.RunID, "completed", conclusion))
	l.clock.shift(0)

	for i := 1; i <= 6; i++ {
		if i == 4 {
			l.rp.disable()
			l.gh.disable()
			l.c.GitHub.ClearFaults()
		}
		sw := l.step("reap", l.reapStep())
		live := l.live()
		if sw.res.ExitCode == 0 && !sw.killed {
			assert.Check(t, len(live) == 0, "LEAK: the reaper's sweep %d succeeded and left pods %v alive:\n%s", i, live, sw.res.Stdout)
			return
		}
		if len(live) == 0 {
			return
		}
	}
	t.Errorf("LEAK: six sweeps, three of them calm, did not reclaim %v", l.live())
}

var (
	chaosPlanRE  = regexp.MustCompile(`plan \((\d+) candidates, worst-case spend \$([0-9]+\.[0-9]+)( \+ (\d+) unpriced)?`)
	chaosErrorRE = regexp.MustCompile(`(?m)^::error`)
)

// check is invariants 1 (the reaper's half ran in sweep), 2, 3 and 4.
func (l *chaosLane) check() {
	t := l.t
	// 2. Spend within the printed worst case.
	spent := 0.0
	pods := l.c.RunPod.Pods()
	for _, p := range pods {
		b, err := l.c.RunPod.Bill(p.ID)
		assert.NilError(t, err)
		spent += b.Dollars
	}
	prov, provRan := l.last("provision")
	worst := "-"
	if m := chaosPlanRE.FindStringSubmatch(prov.res.Stdout); m != nil {
		worst = "$" + m[2]
	}
	if len(pods) > 0 {
		assert.Assert(t, provRan, "pods exist but provision never ran")
		m := chaosPlanRE.FindStringSubmatch(prov.res.Stdout)
		if assert.Check(t, m != nil, "provision created %d pod(s) without printing its worst case first:\n%s", len(pods), prov.res.Stdout) {
			worst, _ := strconv.ParseFloat(m[2], 64)
			if m[3] != "" {
				// The catalog was unreadable: the printed bound says it leaves these out.
				t.Logf("spend not bounded: %s candidate(s) unpriced; billed $%.4f", m[4], spent)
			}
			// The printed bound is rounded to the cent.
			assert.Check(t, m[3] != "" || spent <= worst+0.005,
				"SPEND: the simulator billed $%.4f for %d pod(s), over the printed worst case $%s", spent, len(pods), m[2])
		}
	}

	// 3. Visibility.
	green, gates := l.gates()
	job := l.job()
	if green != nil {
		assert.Check(t, job.Conclusion == "success" && job.RunnerName != "" && job.RunnerName == prov.res.Outputs["runner-label"],
			"INVISIBLE: a green gate (%s) without a passing GPU job on the accepted runner (job %s/%s on %q)",
			green.GetExternalID(), job.Status, job.Conclusion, job.RunnerName)
	} else {
		visible := l.isCancelled() || slices.ContainsFunc(gates, func(c *github.CheckRun) bool { return c.GetConclusion() != "success" })
		for _, st := range l.steps {
			if st.name != "reap" { // the lane's own failure must show in the lane
				visible = visible || st.res.ExitCode != 0 || chaosErrorRE.MatchString(st.res.Stdout)
			}
		}
		assert.Check(t, visible, "INVISIBLE: the lane is not green, yet every step passed, nothing logged ::error and no failing gate was published")
	}
	if g, ok := l.last("gate"); ok && g.res.ExitCode == 0 && g.res.Outputs["check-run-id"] != "" {
		id := g.res.Outputs["check-run-id"]
		assert.Check(t, slices.ContainsFunc(gates, func(c *github.CheckRun) bool { return strconv.FormatInt(c.GetID(), 10) == id }),
			"INVISIBLE: the gate step reported check run %s, which GitHub does not have", id)
	}

	// 4. Secrets.
	secrets := []string{cloud.RunPodKey, cloud.GitHubToken}
	for _, p := range pods {
		if jit := p.Env["RUNNER_JIT_CONFIG"]; jit != "" {
			secrets = append(secrets, jit)
		}
		for k, v := range p.Env {
			assert.Check(t, !strings.Contains(v, cloud.RunPodKey) && !strings.Contains(v, cloud.GitHubToken), "SECRET: pod %s env %s carries a credential", p.ID, k)
		}
	}
	for _, st := range l.steps {
		stdout := harness.WithoutMasks(st.res.Stdout)
		for _, secret := range secrets {
			assert.Check(t, !strings.Contains(stdout, secret), "SECRET: %s's log leaks a secret", st.name)
			assert.Check(t, !strings.Contains(st.res.Summary, secret), "SECRET: %s's summary leaks a secret", st.name)
			for k, v := range st.res.Outputs {
				assert.Check(t, !strings.Contains(v, secret), "SECRET: %s's output %s leaks a secret", st.name, k)
			}
		}
	}
	_ = filepath.WalkDir(l.s.Workspace, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		assert.NilError(t, err)
		for _, secret := range secrets {
			assert.Check(t, !strings.Contains(string(data), secret), "SECRET: file %s leaks a secret", path)
		}
		return nil
	})
	for _, c := range gates {
		body, _ := json.Marshal(c.Output)
		for _, secret := range secrets {
			assert.Check(t, !strings.Contains(string(body), secret), "SECRET: gate %d's text leaks a secret", c.GetID())
		}
	}
	var summary []string
	for _, st := range l.steps {
		summary = append(summary, fmt.Sprintf("%s=%d%s", st.name, st.res.ExitCode, map[bool]string{true: "(killed)"}[st.killed]))
	}
	gateState := "none"
	if len(gates) > 0 {
		gateState = gates[len(gates)-1].GetConclusion()
	}
	t.Logf("lane: %s; gate %s; job %s; %d pod(s), billed $%.4f of worst case %s", strings.Join(summary, " "), gateState, job.Conclusion, len(pods), spent, worst)
	if t.Failed() || *chaosShow {
		if *chaosShow {
			t.Logf("schedule %s", l.sc)
		}
		for _, st := range l.steps {
			t.Logf("── %s: exit %d killed %t\n%s", st.name, st.res.ExitCode, st.killed, st.res.Stdout)
		}
		t.Logf("faults injected:\n%s\n%s", strings.Join(l.rp.injected(), "\n"), strings.Join(l.gh.injected(), "\n"))
	}
}

// gates reads the published gates on the head, past GitHub's own faults.
func (l *chaosLane) gates() (green *github.CheckRun, all []*github.CheckRun) {
	l.c.GitHub.ClearFaults()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: l.c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName})
	assert.NilError(l.t, err)
	runs, err := gh.ListCheckRunsForRef(ctx, harness.HeadSHA, gatecheck.DefaultCheckName, 0)
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil, nil
	}
	assert.NilError(l.t, err)
	for _, r := range runs {
		if r.GetConclusion() == "success" {
			green = r
		}
	}
	return green, runs
}

// TestChaosCalm is the suite's control: with no fault at all the lane is
// green end to end, so the chaos runs measure the faults, not the harness.
func TestChaosCalm(t *testing.T) {
	l := startChaosLane(t, chaosCalmSchedule())
	l.run()
	l.check()
	for _, st := range l.steps {
		assert.Check(t, st.res.ExitCode == 0, "%s exited %d:\n%s", st.name, st.res.ExitCode, st.res.Stdout)
	}
	green, _ := l.gates()
	assert.Check(t, green != nil, "no green gate")
	assert.Check(t, len(l.c.RunPod.Pods()) == 1, "one pod, accepted")
}
