package chaos

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// serverlessSeed reports whether a seed plays the Serverless lane: every
// fourth one (12 of the 48 fixed seeds; seed 769, a known defect of the pod
// lane, stays a pod schedule).
func serverlessSeed(seed uint64) bool { return seed%4 == 0 }

// slsSchedule is everything a seed decides about one Serverless lane.
type slsSchedule struct {
	Seed   uint64
	RunPod chaosProxyPlan // in front of the management API
	Jobs   chaosProxyPlan // in front of the Serverless job host
	GitHub chaosProxyPlan

	Faults    runpodsim.Faults           // the simulator's own faults by route
	Sls       runpodsim.ServerlessFaults // and its Serverless ones
	Kill      string                     // the step SIGTERMed: serverless, cleanup, gate or reap; "" none
	KillAfter time.Duration
	TestsFail bool
	WorkFor   time.Duration // how long the worker runs the tests

	desc []string
}

func (sc *slsSchedule) note(format string, args ...any) {
	sc.desc = append(sc.desc, fmt.Sprintf(format, args...))
}

func (sc *slsSchedule) String() string {
	return fmt.Sprintf("seed %d (Serverless lane):\n  runpod network: %s\n  job host network: %s\n  github network: %s\n  %s",
		sc.Seed, sc.RunPod, sc.Jobs, sc.GitHub, strings.Join(sc.desc, "\n  "))
}

// drawServerlessSchedule derives a Serverless schedule from seed alone.
func drawServerlessSchedule(seed uint64) *slsSchedule {
	rng := rand.New(rand.NewPCG(seed, 0x515))
	sc := &slsSchedule{Seed: seed}
	chance := func(p float64) bool { return rng.Float64() < p }
	between := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)+1))).Round(10 * time.Millisecond)
	}
	network := func() chaosProxyPlan {
		if chance(0.25) {
			return chaosProxyPlan{}
		}
		all := make([]chaosFault, 0, numChaosFaults)
		for f := faultNone + 1; f < numChaosFaults; f++ {
			all = append(all, f)
		}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		kinds := all[:2+rng.IntN(4)]
		slices.Sort(kinds)
		return chaosProxyPlan{Rate: 0.01 + 0.09*rng.Float64(), Kinds: kinds, Slow: between(300*time.Millisecond, 2*time.Second)}
	}
	sc.RunPod, sc.Jobs, sc.GitHub = network(), network(), network()
	if len(sc.RunPod.Kinds) > 0 && chance(0.2) {
		// The creates are the money path: sometimes they alone are hit, and often.
		sc.RunPod.Only, sc.RunPod.Rate = "POST /v2/", 0.3+0.4*rng.Float64()
	}
	if len(sc.Jobs.Kinds) > 0 && chance(0.2) {
		sc.Jobs.Only, sc.Jobs.Rate = "POST /v2/*/run", 0.5 // the one submission
	}
	if chance(0.2) {
		route := []string{"POST /v2/templates", "POST /v2/serverless"}[rng.IntN(2)]
		lc := runpodsim.ServerlessLostCreate{Route: route, When: runpodsim.Trigger{First: 1}, Status: []int{502, 429}[rng.IntN(2)]}
		sc.Sls.LostCreates = []runpodsim.ServerlessLostCreate{lc}
		sc.note("%s creates and then answers %d", route, lc.Status)
	}
	if chance(0.15) {
		sc.Sls.WorkersMax = 3
		sc.note("endpoints read back with workers.max 3")
	}
	if chance(0.15) {
		sc.Sls.IdleWorkerAtCreate = true
		sc.note("an idle worker starts, and bills, at the endpoint's create")
	}
	if chance(0.25) {
		sc.Sls.DeleteFailures = runpodsim.DeleteFault{FailFirst: 1 + rng.IntN(6), Status: []int{500, 429, 502}[rng.IntN(3)]}
		sc.note("deletes fail %d times per resource with %d", sc.Sls.DeleteFailures.FailFirst, sc.Sls.DeleteFailures.Status)
	}
	if chance(0.15) {
		field := []string{"flashboot", "dataCenterIds", "scaling", "gpu"}[rng.IntN(4)]
		sc.Faults.Rewrites = append(sc.Faults.Rewrites, runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/serverless/{id}"},
			When: runpodsim.Trigger{Rate: 0.3}, Body: withoutField(field)})
		sc.note("endpoint reads drop %q 30%% of the time", field)
	}
	if chance(0.3) {
		sc.Kill = []string{"serverless", "serverless", "serverless", "cleanup", "gate", "reap"}[rng.IntN(6)]
		sc.KillAfter = between(0, 5*time.Second)
		sc.note("SIGTERM to %s %s after it starts (GitHub cancels the run)", sc.Kill, sc.KillAfter)
	}
	sc.WorkFor = between(200*time.Millisecond, 3*time.Second)
	sc.TestsFail = chance(0.2)
	sc.note("the worker runs the tests for %s; they fail: %t", sc.WorkFor, sc.TestsFail)
	return sc
}

// slsLane is one Serverless schedule's world and what its steps left.
type slsLane struct {
	t               *testing.T
	sc              *slsSchedule
	c               *cloud.Cloud
	s               *harness.Simulated
	rp, jobs, gh    *chaosProxy
	pr              int
	mu              sync.Mutex
	steps           []chaosStep
	running         map[string]*os.Process
	cancelled       bool
	payload, worker string
}

func runServerlessChaos(t *testing.T, seed uint64) {
	sc := drawServerlessSchedule(seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("schedule %s", sc)
			t.Logf("replay: go test ./action-tests/chaos -run '^TestChaos$/^seed=%d$' -count=1 -v -chaos.seed %d", seed, seed)
		}
	})
	l := startServerlessLane(t, sc)
	l.run()
	l.check()
}

// chaosWorker answers like the Go worker after WorkFor, passing or failing.
func chaosWorker(sc *slsSchedule) runpodsim.JobWorker {
	return runpodsim.JobWorkerFunc(func(ctx context.Context, _ runpodsim.WorkerJob) runpodsim.WorkerResult {
		select {
		case <-ctx.Done():
			return runpodsim.WorkerResult{Error: "cancelled"}
		case <-time.After(sc.WorkFor):
		}
		code := 0
		out := jobwire.JobOutput{CUDAExecuted: true, TestsExitCode: &code}
		if sc.TestsFail {
			code, out.Error = 1, "tests failed with exit code 1"
		}
		archive := tarGzOf(map[string]string{"junit.xml": "<testsuite/>", "test.log": "ran\n"})
		out.ResultB64, out.ResultSHA256 = base64.StdEncoding.EncodeToString(archive), jobwire.SHA256Hex(archive)
		data, _ := json.Marshal(out)
		return runpodsim.WorkerResult{Output: data, Error: out.Error}
	})
}

func startServerlessLane(t *testing.T, sc *slsSchedule) *slsLane {
	t.Helper()
	c, err := cloud.Start(cloud.Options{Seed: sc.Seed, Clock: simclock.Real{}, Faults: sc.Faults, RunPodOptions: []runpodsim.Option{
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: chaosWorker(sc), ColdStart: 300 * time.Millisecond, Faults: sc.Sls, PricePerHour: 0.70})}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	ws := t.TempDir()
	for name, body := range map[string]string{".github/runpod-gpu.yml": chaosConfig, "src/kernel.cu": "__global__ void k() {}\n", "src/tests/run.sh": "echo ok\n"} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	l := &slsLane{t: t, sc: sc, c: c, running: map[string]*os.Process{}, worker: strings.Repeat("5e", 32)}
	p, err := serverless.BuildPayload(filepath.Join(ws, "src"), jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	l.payload = p.SHA256
	l.pr, err = c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature", MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "workflow_dispatch",
		HeadSHA: harness.HeadSHA, PullRequests: []int{l.pr}})
	assert.NilError(t, err)
	l.rp = startChaosProxy("runpod", c.RunPodURL, sc.Seed, sc.RunPod)
	l.jobs = startChaosProxy("jobs", c.JobURL, sc.Seed, sc.Jobs)
	l.gh = startChaosProxy("github", c.GitHubURL, sc.Seed, sc.GitHub)
	for _, p := range []*chaosProxy{l.rp, l.jobs, l.gh} {
		t.Cleanup(p.Close)
	}
	view := *c
	view.RunPodURL, view.GitHubURL, view.JobURL = l.rp.URL(), l.gh.URL(), l.jobs.URL()
	l.s = &harness.Simulated{Cloud: &view, Workspace: ws, RunID: runID}
	return l
}

// step runs one action, SIGTERMing the run at the scheduled moment.
func (l *slsLane) step(name string, st harness.Step) chaosStep {
	var timer *time.Timer
	fired := make(chan struct{})
	st.Started = func(p *os.Process) {
		l.mu.Lock()
		l.running[name] = p
		l.mu.Unlock()
		if l.sc.Kill == name {
			timer = time.AfterFunc(l.sc.KillAfter, func() {
				defer close(fired)
				if name == "reap" {
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
		<-fired
		killed = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.running, name)
	cs := chaosStep{name: name, res: res, killed: killed}
	l.steps = append(l.steps, cs)
	return cs
}

func (l *slsLane) cancelRun() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancelled {
		return
	}
	l.cancelled = true
	for _, p := range l.running {
		_ = p.Signal(syscall.SIGTERM)
	}
}

func (l *slsLane) isCancelled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancelled
}

// laneStep is the serverless job's lane step (mode run, or cleanup).
func (l *slsLane) laneStep(mode string) harness.Step {
	env := l.s.RunnerEnv()
	env["RUNNER_TEMP"] = l.t.TempDir()
	in := map[string]string{"runpod-api-key": cloud.RunPodKey, "runpod-api-url": l.s.RunPodURL, "runpod-job-url": l.s.JobURL, "mode": mode}
	if mode == "run" {
		for k, v := range map[string]string{"execute": "true", "approved-payload-sha256": l.payload, "test-command": "bash tests/run.sh",
			"source-dir": "src", "worker-url": "https://github.com/org/runpod-gpu/releases/download/v1/serverless-worker", "worker-sha256": l.worker,
			"poll-seconds": "1", "github-token": cloud.GitHubToken, "ledger-branch": "main"} {
			in[k] = v
		}
	}
	return harness.Step{Action: "serverless", Workspace: l.s.Workspace, Env: env, Inputs: in}
}

// run plays serverless-lane.yml: authorize, the serverless job's lane and
// cleanup steps, the gate, then the reaper's sweeps once the run is over.
func (l *slsLane) run() {
	auth := l.step("authorize", l.s.AuthorizeStep(l.pr, "bob"))
	authorized := auth.res.ExitCode == 0 && !auth.killed
	result := "skipped"
	var lane chaosStep
	if authorized && auth.res.Outputs["decision"] == "run" && !l.isCancelled() {
		lane = l.step("serverless", l.laneStep("run"))
		l.step("cleanup", l.laneStep("cleanup"))
		l.checkAfterCleanup()
		result = "success"
		switch {
		case l.isCancelled():
			result = "cancelled"
		case lane.res.ExitCode != 0:
			result = "failure"
		}
	}
	if authorized {
		o := lane.res.Outputs
		l.step("gate", l.s.GateStep(l.pr, map[string]string{
			"decision": auth.res.Outputs["decision"], "gate-kind": auth.res.Outputs["gate-kind"], "gpu-job-result": result, "lane": "serverless",
			"head-sha": auth.res.Outputs["head-sha"], "tested-ref": auth.res.Outputs["tested-ref"], "reason": auth.res.Outputs["reason"],
			"reused-check-url": auth.res.Outputs["reused-check-url"], "payload-sha256": cmpOr(o["payload-sha256"], l.payload),
			"worker-sha256": cmpOr(o["worker-sha256"], l.worker), "job-id": o["job-id"], "job-status": o["job-status"],
			"cuda-executed": cmpOr(o["cuda-executed"], "false"), "gpu-pool": "AMPERE_16",
		}))
	}
	l.sweep()
}

// live lists the templates and endpoints not deleted.
func (l *slsLane) live() []string {
	var out []string
	for _, r := range l.c.RunPod.ServerlessResources() {
		if !r.Deleted {
			out = append(out, r.Kind+" "+r.Name)
		}
	}
	return out
}

func (l *slsLane) last(name string) (chaosStep, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.steps) - 1; i >= 0; i-- {
		if l.steps[i].name == name {
			return l.steps[i], true
		}
	}
	return chaosStep{}, false
}

// checkAfterCleanup is invariant 1's first half: anything alive once the
// cleanup step ended is one the cleanup failed, visibly, to confirm — or
// the cleanup was cancelled.
func (l *slsLane) checkAfterCleanup() {
	cl, _ := l.last("cleanup")
	live := l.live()
	if len(live) == 0 || cl.killed {
		return
	}
	assert.Check(l.t, cl.res.ExitCode != 0 && strings.Contains(cl.res.Stdout, "::error::cleanup: cleanup not confirmed") &&
		cl.res.Outputs["cleanup-confirmed"] == "false",
		"LEAK: %v alive after the cleanup step, which did not fail visibly (exit %d):\n%s", live, cl.res.ExitCode, cl.res.Stdout)
}

// sweep is the reaper's next sweeps once the run completed: under the same
// faults while they fail visibly, then calm ones.
func (l *slsLane) sweep() {
	conclusion := "success"
	if l.isCancelled() {
		conclusion = "cancelled"
	}
	assert.NilError(l.t, l.c.GitHub.SetRunStatus(cloud.Repository, l.s.RunID, "completed", conclusion))
	for i := 1; i <= 6; i++ {
		if i == 4 {
			l.rp.disable()
			l.gh.disable()
		}
		sw := l.step("reap", l.reapStep())
		live := l.live()
		if sw.res.ExitCode == 0 && !sw.killed {
			assert.Check(l.t, len(live) == 0, "LEAK: the reaper's sweep %d succeeded and left %v alive:\n%s", i, live, sw.res.Stdout)
			return
		}
		if len(live) == 0 {
			return
		}
	}
	l.t.Errorf("LEAK: six sweeps, three of them calm, did not reclaim %v", l.live())
}

func (l *slsLane) reapStep() harness.Step {
	in := map[string]string{"runpod-api-key": cloud.RunPodKey, "github-token": cloud.GitHubToken, "runpod-api-url": l.s.RunPodURL}
	return harness.Step{Action: "reap", Workspace: l.s.Workspace, Inputs: in, Event: map[string]any{},
		Env: map[string]string{
			"GITHUB_API_URL": l.s.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
			"GITHUB_RUN_ID": "77000", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "schedule", "GITHUB_WORKSPACE": l.s.Workspace,
			"GITHUB_WORKFLOW_REF": cloud.Repository + "/.github/workflows/runpod-reap.yml@refs/heads/main",
		}}
}

// check is invariants 2 (spend within the ledger's reservations), 3
// (every failure visible, no green gate without a passing job) and 4 (no
// credential anywhere).
func (l *slsLane) check() {
	t := l.t
	bill := l.c.RunPod.ServerlessBill()
	reserved := money.WholeCents(0)
	if ledger, err := serverless.ReadLedger(filepath.Join(l.s.Workspace, ".runpod-gpu/serverless/budget.json")); err == nil {
		reserved = ledger.TotalCents()
	}
	assert.Check(t, bill.Dollars*100 <= float64(reserved)+1e-9,
		"SPEND: Serverless workers billed $%.4f (%d workers, %d s), over the $%.2f the ledger reserved", bill.Dollars, bill.Workers, bill.Seconds, float64(reserved)/100)

	green, gates := l.gates()
	lane, ran := l.last("serverless")
	if green != nil {
		assert.Check(t, ran && lane.res.ExitCode == 0 && !lane.killed && lane.res.Outputs["job-status"] == "COMPLETED" &&
			lane.res.Outputs["cuda-executed"] == "true" && !l.sc.TestsFail,
			"INVISIBLE: a green gate (%s) without a passing Serverless job (exit %d, %v)", green.GetExternalID(), lane.res.ExitCode, lane.res.Outputs)
	} else {
		visible := l.isCancelled() || slices.ContainsFunc(gates, func(c *github.CheckRun) bool { return c.GetConclusion() != "success" })
		for _, st := range l.steps {
			if st.name != "reap" {
				visible = visible || st.res.ExitCode != 0 || chaosErrorRE.MatchString(st.res.Stdout)
			}
		}
		assert.Check(t, visible, "INVISIBLE: the lane is not green, yet every step passed, nothing logged ::error and no failing gate was published")
	}

	secrets := []string{cloud.RunPodKey, cloud.GitHubToken}
	for _, r := range l.c.RunPod.ServerlessResources() {
		for k, v := range r.Env {
			assert.Check(t, !strings.Contains(v, cloud.RunPodKey) && !strings.Contains(v, cloud.GitHubToken), "SECRET: %s %s env %s carries a credential", r.Kind, r.Name, k)
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
	var summary []string
	for _, st := range l.steps {
		summary = append(summary, fmt.Sprintf("%s=%d%s", st.name, st.res.ExitCode, map[bool]string{true: "(killed)"}[st.killed]))
	}
	t.Logf("serverless lane: %s; %d gate(s); %d worker(s) billed $%.4f of $%.2f reserved", strings.Join(summary, " "), len(gates), bill.Workers, bill.Dollars, float64(reserved)/100)
	if t.Failed() || *chaosShow {
		for _, st := range l.steps {
			t.Logf("── %s: exit %d killed %t\n%s", st.name, st.res.ExitCode, st.killed, st.res.Stdout)
		}
		t.Logf("faults injected:\n%s\n%s\n%s", strings.Join(l.rp.injected(), "\n"), strings.Join(l.jobs.injected(), "\n"), strings.Join(l.gh.injected(), "\n"))
	}
}

// gates reads the published gates on the head, past GitHub's own faults.
func (l *slsLane) gates() (green *github.CheckRun, all []*github.CheckRun) {
	w := &chaosLane{t: l.t, c: l.c}
	return w.gates()
}

// TestChaosServerlessCalm is the Serverless schedules' control: with no
// fault the lane is green end to end and leaves nothing.
func TestChaosServerlessCalm(t *testing.T) {
	sc := &slsSchedule{Seed: 4, WorkFor: 300 * time.Millisecond}
	l := startServerlessLane(t, sc)
	l.run()
	l.check()
	for _, st := range l.steps {
		assert.Check(t, st.res.ExitCode == 0, "%s exited %d:\n%s", st.name, st.res.ExitCode, st.res.Stdout)
	}
	green, _ := l.gates()
	assert.Check(t, green != nil, "no green gate")
	assert.Check(t, len(l.live()) == 0)
}

// tarGzOf packs files as a result archive.
func tarGzOf(files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		_ = tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))})
		_, _ = tw.Write([]byte(files[n]))
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}
