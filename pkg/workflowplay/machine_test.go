package workflowplay

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// stepLog records what a machine reports of its steps.
type stepLog struct {
	mu      sync.Mutex
	started []int
	ended   map[int]string
	startCh chan int
}

func newStepLog() *stepLog { return &stepLog{ended: map[int]string{}, startCh: make(chan int, 64)} }

func (l *stepLog) hook(m *Machine) *Machine {
	m.Started = func(i int) {
		l.mu.Lock()
		l.started = append(l.started, i)
		l.mu.Unlock()
		l.startCh <- i
	}
	m.Ended = func(i int, c string) {
		l.mu.Lock()
		l.ended[i] = c
		l.mu.Unlock()
	}
	return m
}

func newMachine(t *testing.T) *Machine {
	t.Helper()
	dir := t.TempDir()
	return &Machine{Workspace: filepath.Join(dir, "work"), Temp: filepath.Join(dir, "temp")}
}

func parseJob(t *testing.T, text string) (*Workflow, *WorkflowJob) {
	t.Helper()
	wf, err := ParseWorkflow(text)
	assert.NilError(t, err)
	return wf, wf.Jobs["job"]
}

// A job whose needs were skipped or failed is skipped unless its if: calls a status
// function that holds: failure() sees a failure however far up the needs it was,
// always() runs whatever happened, and a plain condition is success() && it.
func TestWorkflowPlayerSkipsJobsWhoseNeedsWereSkippedOrFailed(t *testing.T) {
	wf, err := ParseWorkflow(`on: push
jobs:
  off: {if: "false", runs-on: x, steps: [{run: a}]}
  broken: {runs-on: x, steps: [{run: b}]}
  afterOff: {needs: off, runs-on: x, steps: [{run: c}]}
  afterOffPlain: {needs: off, if: "github.event_name == 'push'", runs-on: x, steps: [{run: c}]}
  afterOffAlways: {needs: off, if: always(), runs-on: x, steps: [{run: c}]}
  afterBroken: {needs: broken, runs-on: x, steps: [{run: d}]}
  onFailure: {needs: broken, if: failure(), runs-on: x, steps: [{run: e}]}
  farFailure: {needs: afterBroken, if: failure(), runs-on: x, steps: [{run: f}]}
  noFailure: {needs: afterOff, if: failure(), runs-on: x, steps: [{run: g}]}
`)
	assert.NilError(t, err)
	p := &Play{Github: map[string]any{"event_name": "push"}, Job: func(id string, _ *WorkflowJob, _ Contexts) (string, map[string]string) {
		if id == "broken" {
			return "failure", nil
		}
		return "success", nil
	}}
	_, runs, err := p.Run(wf, nil, nil)
	assert.NilError(t, err)
	got := map[string]string{}
	for id, r := range runs {
		got[id] = r.Result
	}
	assert.DeepEqual(t, got, map[string]string{
		"off": "skipped", "broken": "failure",
		"afterOff": "skipped", "afterOffPlain": "skipped", "afterOffAlways": "success",
		"afterBroken": "skipped", "onFailure": "success", "farFailure": "success", "noFailure": "skipped",
	})
}

// After a failing step, the steps that run are those whose if: says so (always(),
// failure(), !cancelled()); the others are skipped, and the job fails. Each step is a real
// bash process in the workspace, with the workflow's, job's and step's env, the github
// context's GITHUB_* variables, outputs and env from the file commands.
func TestWorkflowPlayerRunsAlwaysStepsAfterAFailure(t *testing.T) {
	wf, job := parseJob(t, `on: push
env: {LEVEL: workflow, FROM_WORKFLOW: w}
jobs:
  job:
    runs-on: x
    env: {LEVEL: job}
    outputs: {said: "${{ steps.say.outputs.word }}"}
    steps:
      - id: say
        run: |
          echo "word=hello" >> "$GITHUB_OUTPUT"
          echo "CARRIED=yes" >> "$GITHUB_ENV"
          mkdir -p sub
      - name: Where
        working-directory: sub
        env: {LEVEL: step}
        run: echo "$LEVEL $FROM_WORKFLOW $CARRIED $GITHUB_REPOSITORY $GITHUB_RUN_ID $(basename "$PWD") ${{ env.LEVEL }}" > ../where.txt
      - name: Fail
        run: exit 3
      - name: Next
        run: touch next.txt
      - name: Always
        if: always()
        run: touch always.txt
      - name: On failure
        if: failure()
        run: touch failure.txt
      - name: Not cancelled
        if: "!cancelled()"
        run: touch notcancelled.txt
      - name: On success
        if: success()
        run: touch success.txt
`)
	m := newMachine(t)
	log := newStepLog()
	var wfEnv map[string]any
	p := &Play{Github: map[string]any{"repository": "octo/app", "run_id": float64(77)},
		Machine: func(id string, _ *WorkflowJob, ctx Contexts) *Machine {
			wfEnv = ctx.Values["env"].(map[string]any)
			return log.hook(m)
		}}
	_, runs, err := p.Run(wf, nil, nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(runs["job"].Result, "failure"))
	assert.Check(t, is.Equal(runs["job"].Outputs["said"], "hello"))
	assert.Check(t, is.Equal(wfEnv["FROM_WORKFLOW"], "w"))
	where, err := os.ReadFile(filepath.Join(m.Workspace, "where.txt"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(where), "step w yes octo/app 77 sub job\n"), "${{ env.LEVEL }} is the job's env: the step's env is not in its own expressions")
	for file, want := range map[string]bool{"next.txt": false, "always.txt": true, "failure.txt": true, "notcancelled.txt": true, "success.txt": false} {
		_, err := os.Stat(filepath.Join(m.Workspace, file))
		assert.Check(t, is.Equal(err == nil, want), file)
	}
	assert.Check(t, is.DeepEqual(log.ended, map[int]string{0: "success", 1: "success", 2: "failure", 3: "skipped", 4: "success", 5: "success", 6: "success", 7: "skipped"}))
	assert.Check(t, is.DeepEqual(log.started, []int{0, 1, 2, 4, 5, 6}), "a skipped step never starts")
	_ = job
}

// A step that outlives its timeout-minutes, on the machine's clock, is killed (its whole
// process group) and fails with the runner's line; continue-on-error keeps the job going
// with the step's outcome failure, and a job past its own timeout-minutes is cancelled.
func TestMachineKillsAStepAtItsTimeoutMinutes(t *testing.T) {
	_, job := parseJob(t, `on: push
jobs:
  job:
    runs-on: x
    steps:
      - id: slow
        timeout-minutes: 3
        continue-on-error: true
        run: sleep 3600 & echo $! > child.pid; echo up > ready; wait
      - name: After
        run: echo "${{ steps.slow.outcome }}/${{ steps.slow.conclusion }}" > after.txt
`)
	clock := simclock.NewVirtual(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	m := newMachine(t)
	makeReadyFIFO(t, m)
	m.Clock = clock
	var out strings.Builder
	var mu sync.Mutex
	m.Log = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	log := newStepLog()
	log.hook(m)
	done := make(chan JobRun)
	go func() {
		run, err := m.RunJob(context.Background(), job, Contexts{Values: map[string]any{}})
		assert.Check(t, err)
		done <- run
	}()
	assert.Equal(t, <-log.startCh, 0)
	awaitReady(t, m)
	clock.Advance(3*time.Minute - time.Second)
	select {
	case <-done:
		t.Fatal("the step ended before its timeout")
	default:
	}
	clock.Advance(time.Second)
	run := <-done
	assert.Check(t, is.Equal(run.Result, "success"), "continue-on-error")
	assert.Check(t, is.Equal(log.ended[0], "success"))
	after, err := os.ReadFile(filepath.Join(m.Workspace, "after.txt"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(after), "failure/success\n"))
	mu.Lock()
	assert.Check(t, is.Contains(out.String(), TimedOutLine))
	mu.Unlock()
	assertGone(t, filepath.Join(m.Workspace, "child.pid"))

	_, job = parseJob(t, `on: push
jobs:
  job: {runs-on: x, timeout-minutes: 1, steps: [{run: sleep 3600}, {if: always(), run: touch never}]}
`)
	m2 := newMachine(t)
	m2.Clock = clock
	log2 := newStepLog()
	log2.hook(m2)
	go func() {
		run, err := m2.RunJob(context.Background(), job, Contexts{Values: map[string]any{}})
		assert.Check(t, err)
		done <- run
	}()
	<-log2.startCh
	clock.Advance(time.Minute)
	run = <-done
	assert.Check(t, is.Equal(run.Result, "cancelled"), "a job past its timeout-minutes is cancelled")
	assert.Check(t, is.DeepEqual(log2.ended, map[int]string{0: "cancelled", 1: "skipped"}))
}

// assertGone waits (bounded) for the process whose pid is in file to be gone.
func assertGone(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	assert.NilError(t, err)
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s outlived its step", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc for a kill already sent
	}
}

// makeReadyFIFO makes the workspace's "ready" a FIFO: a step that writes to it blocks
// until awaitReady reads, so the test knows the step's processes are all up.
func makeReadyFIFO(t *testing.T, m *Machine) {
	t.Helper()
	assert.NilError(t, os.MkdirAll(m.Workspace, 0o755))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(m.Workspace, "ready"), 0o600))
}

func awaitReady(t *testing.T, m *Machine) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(m.Workspace, "ready"))
	assert.NilError(t, err)
	assert.Equal(t, string(data), "up\n")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Closing Stop (the run cancelled, the machine gone) kills the running step and runs
// nothing after it; the job is cancelled.
func TestMachineStopsWhenItsMachineGoesAway(t *testing.T) {
	_, job := parseJob(t, `on: push
jobs:
  job: {runs-on: x, steps: [{run: "sleep 3600 & echo $! > child.pid; echo up > ready; wait"}, {if: always(), run: touch after}]}
`)
	m := newMachine(t)
	makeReadyFIFO(t, m)
	stop := make(chan struct{})
	m.Stop = stop
	log := newStepLog()
	log.hook(m)
	done := make(chan JobRun)
	go func() {
		run, err := m.RunJob(context.Background(), job, Contexts{Values: map[string]any{}})
		assert.Check(t, err)
		done <- run
	}()
	<-log.startCh
	awaitReady(t, m)
	close(stop)
	run := <-done
	assert.Check(t, is.Equal(run.Result, "cancelled"))
	assert.Check(t, is.DeepEqual(log.ended, map[int]string{0: "cancelled", 1: "skipped"}))
	_, err := os.Stat(filepath.Join(m.Workspace, "after"))
	assert.Check(t, os.IsNotExist(err))
	assertGone(t, filepath.Join(m.Workspace, "child.pid"))
}

// The archive pattern for real: one job uploads an archive through the simulated GitHub's
// results service, another downloads and unpacks it, runs its script and uploads the
// results, which the REST API then serves. A first download that fails (an injected 503)
// fails only that step, and the bounded retry step downloads it.
func TestMachineMovesArtifactsThroughTheResultsService(t *testing.T) {
	gh := githubsim.New(githubsim.WithToken("tok", githubsim.Identity{Login: "bob"}))
	assert.NilError(t, gh.AddRepo(githubsim.Repo{Owner: "octo", Name: "app", DefaultBranchSHA: strings.Repeat("a", 40)}))
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	runID, err := gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: "octo/app", WorkflowPath: ".github/workflows/gpu.yml"})
	assert.NilError(t, err)
	machine := func(jobName string) *Machine {
		rt, err := gh.RuntimeToken("octo/app", runID, jobName)
		assert.NilError(t, err)
		m := newMachine(t)
		m.Artifacts = &Artifacts{URL: srv.URL, Token: rt.Token, RunBackendID: rt.RunBackendID, JobBackendID: rt.JobBackendID}
		return m
	}
	wf, err := ParseWorkflow(`on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: |
          mkdir -p gpu-tests
          printf '#!/bin/sh\necho "ran on $(hostname -s 2>/dev/null || echo pod)" > results.txt\n' > gpu-tests/run.sh
          chmod +x gpu-tests/run.sh
          tar -czf gpu-tests.tar.gz gpu-tests
      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
        with: {name: gpu-tests, path: gpu-tests.tar.gz, retention-days: 1}
  gpu:
    needs: build
    runs-on: pod
    steps:
      - id: download
        continue-on-error: true
        uses: actions/download-artifact@fa0a91b85d4f404e444e00e005971372dc801d16 # v4.1.8
        with: {name: gpu-tests}
      - name: Download again
        if: steps.download.outcome == 'failure'
        uses: actions/download-artifact@fa0a91b85d4f404e444e00e005971372dc801d16 # v4.1.8
        with: {name: gpu-tests}
      - run: tar -xzf gpu-tests.tar.gz
      - run: ./gpu-tests/run.sh
      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
        with: {name: gpu-results, path: results.txt, if-no-files-found: error}
`)
	assert.NilError(t, err)
	gh.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 503, Method: "POST", Path: ResultsServicePath + "GetSignedArtifactURL", Times: 1})
	logs := map[string]*stepLog{"build": newStepLog(), "gpu": newStepLog()}
	p := &Play{Machine: func(id string, _ *WorkflowJob, _ Contexts) *Machine { return logs[id].hook(machine(id)) }}
	_, runs, err := p.Run(wf, nil, nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(runs["build"].Result, "success"))
	assert.Check(t, is.Equal(runs["gpu"].Result, "success"))
	assert.Check(t, is.DeepEqual(logs["gpu"].ended, map[int]string{0: "success", 1: "success", 2: "success", 3: "success", 4: "success"}),
		"the first download failed (continue-on-error) and the retry ran")
	assert.Check(t, is.Equal(gh.CountRequests("POST", ResultsServicePath+"GetSignedArtifactURL"), 2))

	rt, err := gh.RuntimeToken("octo/app", runID, "test")
	assert.NilError(t, err)
	reader := &Artifacts{URL: srv.URL, Token: rt.Token, RunBackendID: rt.RunBackendID, JobBackendID: rt.JobBackendID}
	zipped, err := reader.Download(context.Background(), "gpu-results")
	assert.NilError(t, err)
	dir := t.TempDir()
	assert.NilError(t, unzipInto(zipped, dir))
	results, err := os.ReadFile(filepath.Join(dir, "results.txt"))
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(string(results), "ran on "), string(results))
}

// A step that prints one of the job's secrets shows *** in the job's log, as the runner
// masks it, even when the secret arrives in pieces.
func TestMachineMasksTheJobsSecretsInItsLog(t *testing.T) {
	_, job := parseJob(t, `on: push
jobs:
  job: {runs-on: x, steps: [{run: "printf 'key=%s\n' \"$KEY\"; printf 'tok'; printf 'en-42 end'", env: {KEY: "${{ secrets.KEY }}"}}]}
`)
	m := newMachine(t)
	var out strings.Builder
	m.Log = &out
	run, err := m.RunJob(context.Background(), job, Contexts{Values: map[string]any{"secrets": map[string]any{"KEY": "s3cr3t-value", "TOKEN": "token-42"}}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(run.Result, "success"))
	assert.Check(t, is.Equal(out.String(), "key=***\n*** end"))
}
