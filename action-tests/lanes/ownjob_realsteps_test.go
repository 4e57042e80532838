package lanes

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// realSteps runs the own-job caller's jobs for real: the hosted build in a checkout of
// the pull request's code (a Makefile target that tars gpu-tests/), and the GPU job on
// the pod's runner in a directory of its own standing for the pod, through
// cloud.RunPodJob: the archive goes up and down through the simulated GitHub's results
// service, each run step is a bash process, and every step is reported to the simulated
// GitHub as it really starts and ends.
type realSteps struct {
	checkout string // the build job's workspace: the pull request's files
	pod      string // the pod's directory: its workspace and temp
	// clock measures the GPU job's timeout-minutes (nil: the wall clock).
	clock simclock.Clock
	// started hears of each GPU job step's real start, by name.
	started func(name string)

	mu      sync.Mutex
	log     bytes.Buffer // the GPU job's output
	err     error
	gpuDone githubsim.Job
}

// newRealSteps writes the pull request's files: a Makefile whose gpu-test-archive target
// tars gpu-tests/, whose run.sh is runScript.
func newRealSteps(t *testing.T, runScript string) *realSteps {
	t.Helper()
	dir := t.TempDir()
	r := &realSteps{checkout: filepath.Join(dir, "checkout"), pod: filepath.Join(dir, "pod")}
	assert.NilError(t, os.MkdirAll(filepath.Join(r.checkout, "gpu-tests"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(r.checkout, "Makefile"), []byte("gpu-test-archive:\n\ttar -czf gpu-tests.tar.gz gpu-tests\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(r.checkout, "gpu-tests", "run.sh"), []byte(runScript), 0o755))
	return r
}

// hostedMachine gives the build job its machine: the checkout, with the run's results service.
func (r *realSteps) hostedMachine(t *testing.T, l *ownJobLane) func(string, *workflowplay.WorkflowJob, workflowplay.Contexts) *workflowplay.Machine {
	return func(id string, _ *workflowplay.WorkflowJob, _ workflowplay.Contexts) *workflowplay.Machine {
		if id != "build" {
			return nil
		}
		rt, err := l.GitHub.RuntimeToken(cloud.Repository, l.runID, id)
		assert.Check(t, err)
		return &workflowplay.Machine{Workspace: r.checkout, Temp: filepath.Join(filepath.Dir(r.checkout), "build-temp"),
			Artifacts: &workflowplay.Artifacts{URL: l.GitHubURL, Token: rt.Token, RunBackendID: rt.RunBackendID, JobBackendID: rt.JobBackendID}}
	}
}

// gpuJob runs the GPU job on the pod's runner and returns its conclusion as GitHub gives it.
func (r *realSteps) gpuJob(l *ownJobLane, job *workflowplay.WorkflowJob, ctx workflowplay.Contexts, label string) string {
	jobs, err := l.GitHub.Jobs(cloud.Repository, l.runID, 1)
	if err != nil || len(jobs) != 1 {
		r.fail(err)
		return "failure"
	}
	m := &workflowplay.Machine{Workspace: filepath.Join(r.pod, "work"), Temp: filepath.Join(r.pod, "temp"), Clock: r.clock,
		Log: writerFunc(func(p []byte) (int, error) { r.mu.Lock(); defer r.mu.Unlock(); return r.log.Write(p) })}
	m.Started = func(i int) {
		if r.started != nil {
			r.started(workflowplay.StepName(job.Steps[i]))
		}
	}
	conclusion, err := l.Cloud.RunPodJob(context.Background(), cloud.PodJob{RunID: l.runID, JobID: jobs[0].ID, Name: jobs[0].Name,
		Label: label, Job: job, Contexts: ctx, Machine: m})
	r.fail(err)
	if jobs, err := l.GitHub.Jobs(cloud.Repository, l.runID, 1); err == nil {
		l.mu.Lock()
		l.gpuJob = jobs[0]
		l.mu.Unlock()
	}
	return conclusion
}

func (r *realSteps) fail(err error) {
	if err != nil {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}
}

func (r *realSteps) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// uploadResults is the caller's GPU job with a last step that uploads the tests' results
// whatever happened, as a CUDA project's GPU job does.
func uploadResults(caller string) string {
	return strings.Replace(caller, "  finish:   # cleanup", `      - name: Upload the results
        if: always()
        uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
        with: {name: gpu-results, path: results.xml, if-no-files-found: error}
  finish:   # cleanup`, 1)
}

// junitRun is the pull request's test script: the JUnit file it is asked for.
const junitRun = "#!/bin/sh\nset -e\n[ \"$1\" = --junit ]\nprintf '<testsuite name=\"gpu\" tests=\"1\" failures=\"0\"/>\\n' > \"$2\"\n"

// stepsOf is the GPU job's steps as GitHub lists them: name → conclusion.
func stepsOf(j githubsim.Job) map[string]githubsim.Step {
	out := map[string]githubsim.Step{}
	for _, st := range j.Steps {
		out[st.Name] = st
	}
	return out
}

// downloadArtifact fetches a run's artifact through the REST API, as a test or a person
// after the run does, and returns its files.
func downloadArtifact(t *testing.T, l *ownJobLane, name string) map[string]string {
	t.Helper()
	gh := github.NewClient(nil).WithAuthToken(cloud.GitHubToken)
	base, err := url.Parse(l.GitHubURL + "/")
	assert.NilError(t, err)
	gh.BaseURL = base
	ctx := context.Background()
	list, _, err := gh.Actions.ListWorkflowRunArtifacts(ctx, cloud.Owner, cloud.RepoName, l.runID, nil)
	assert.NilError(t, err)
	for _, a := range list.Artifacts {
		if a.GetName() != name {
			continue
		}
		u, _, err := gh.Actions.DownloadArtifact(ctx, cloud.Owner, cloud.RepoName, a.GetID(), 0)
		assert.NilError(t, err)
		resp, err := http.Get(u.String())
		assert.NilError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		assert.NilError(t, err)
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		assert.NilError(t, err)
		files := map[string]string{}
		for _, f := range zr.File {
			rc, err := f.Open()
			assert.NilError(t, err)
			b, err := io.ReadAll(rc)
			rc.Close()
			assert.NilError(t, err)
			files[f.Name] = string(b)
		}
		return files
	}
	t.Fatalf("run %d has no artifact %s", l.runID, name)
	return nil
}

// The README's own-job caller with its steps run for real: the hosted build tars the
// tests and uploads them; on the pod the first download fails (the results service
// answers 503 once), the bounded retry downloads the archive, it is unpacked, the tests'
// script runs, and the results go up and can be downloaded after the run. The watchdog
// disarms the setup deadline when the test step's process really started, after the
// unpack step ended, and the gate is green.
func TestOwnJobRealStepsRetryTheDownloadThatFailed(t *testing.T) {
	l := newOwnJobLane(t, fastConfig, uploadResults(readmeOwnJobCaller(t)))
	l.real = newRealSteps(t, junitRun)
	l.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: http.StatusServiceUnavailable, Method: "POST",
		Path: workflowplay.ResultsServicePath + "GetSignedArtifactURL", Times: 1})
	runs := l.play(t)

	assert.NilError(t, l.real.err)
	for _, id := range []string{"authorize", "build", "provision", "watchdog", "gpu", "finish"} {
		assert.Check(t, is.Equal(runs[id].Result, "success"), "job %s", id)
	}
	steps := stepsOf(l.gpuJob)
	for name, want := range map[string]string{"Download the test archive": "success", "Download the test archive again": "success",
		"Unpack the test archive": "success", "Run GPU tests": "success", "Upload the results": "success"} {
		assert.Check(t, is.Equal(steps[name].Conclusion, want), "step %q", name)
	}
	out := l.real.output()
	assert.Check(t, is.Contains(out, "GetSignedArtifactURL: 503"), "the first download failed for real")
	assert.Check(t, is.Contains(out, `<testsuite name="gpu" tests="1" failures="0"/>`), "the tests ran and their results are in the job's log")
	assert.Check(t, is.Equal(l.GitHub.CountRequests("POST", workflowplay.ResultsServicePath+"GetSignedArtifactURL"), 2))
	assert.Check(t, is.DeepEqual(downloadArtifact(t, l, "gpu-results"), map[string]string{"results.xml": `<testsuite name="gpu" tests="1" failures="0"/>` + "\n"}))
	archive := downloadArtifact(t, l, "gpu-tests")
	assert.Check(t, archive["gpu-tests.tar.gz"] != "", "the build's archive")

	watch := l.result(t, "watchdog")
	assert.Check(t, is.Equal(watch.Outputs["tests-started"], "true"), watch.Stdout)
	assert.Check(t, is.Contains(watch.Stdout, `test step "Run GPU tests" started: setup deadline disarmed`))
	unpacked, tests := steps["Unpack the test archive"], steps["Run GPU tests"]
	assert.Check(t, !tests.StartedAt.Before(unpacked.CompletedAt), "the test step started when the unpack step had ended: %s < %s", tests.StartedAt, unpacked.CompletedAt)
	gate := l.result(t, "gate")
	assert.Check(t, is.Equal(gate.Outputs["kind"], "paid"), gate.Stdout)
	assert.Check(t, is.Len(l.RunPod.Pods(), 1))
	for _, p := range l.RunPod.Pods() {
		assert.Check(t, is.Equal(p.Status, runpodsim.StatusTerminated), "the pod is deleted")
	}
}

// A test step that outlives its timeout-minutes (30, on the GPU job's clock, advanced
// when the step's process really started) is killed and fails as GitHub fails it; the
// results upload (if: always()) still runs, the job fails and so does the gate.
func TestOwnJobRealStepsKillAStepAtItsTimeoutMinutes(t *testing.T) {
	l := newOwnJobLane(t, fastConfig, uploadResults(readmeOwnJobCaller(t)))
	// The script says it is up through a FIFO, which the test reads before it moves the clock.
	hang := "#!/bin/sh\necho '<testsuite name=\"gpu\" tests=\"1\"/>' > \"$2\"\necho $$ > \"$RUNNER_TEMP/tests.pid\"\necho up > \"$RUNNER_TEMP/up\"\nexec sleep 3600\n"
	l.real = newRealSteps(t, hang)
	assert.NilError(t, os.MkdirAll(filepath.Join(l.real.pod, "temp"), 0o755))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(l.real.pod, "temp", "up"), 0o600))
	clock := simclock.NewVirtual(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	l.real.clock = clock
	l.real.started = func(name string) {
		if name == "Run GPU tests" {
			up, err := os.ReadFile(filepath.Join(l.real.pod, "temp", "up"))
			assert.Check(t, err)
			assert.Check(t, is.Equal(string(up), "up\n"))
			clock.Advance(30 * time.Minute) // the step's timeout-minutes pass while it runs
		}
	}
	runs := l.play(t)

	assert.NilError(t, l.real.err)
	steps := stepsOf(l.gpuJob)
	assert.Check(t, is.Equal(steps["Run GPU tests"].Conclusion, "failure"))
	assert.Check(t, is.Equal(steps["Upload the results"].Conclusion, "success"), "if: always() runs after the failure")
	assert.Check(t, is.Equal(l.gpuJob.Conclusion, "failure"))
	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))
	assert.Check(t, is.Contains(l.real.output(), workflowplay.TimedOutLine))
	assert.Check(t, killed(t, filepath.Join(l.real.pod, "temp", "tests.pid")), "the test step's process was killed")
	gate := l.result(t, "gate")
	assert.Check(t, is.Equal(gate.Outputs["kind"], "failed"), gate.Stdout)
}

// The setup deadline stays armed until the test step's process really starts: an unpack
// step that runs past the setup budget (its process still running) keeps the test step
// from starting, so the watchdog deletes the pod at the deadline, the run is cancelled,
// the unpack step's process is killed and the test step never starts.
func TestOwnJobRealStepsDisarmTheSetupDeadlineOnlyWhenTheTestStepReallyStarts(t *testing.T) {
	caller := strings.Replace(readmeOwnJobCaller(t), "run: tar -xzf gpu-tests.tar.gz\n",
		"run: tar -xzf gpu-tests.tar.gz && echo $$ > \"$RUNNER_TEMP/unpack.pid\" && sleep 60\n", 1)
	l := newOwnJobLane(t, watchdogConfig, caller)
	l.real = newRealSteps(t, junitRun)
	started := map[string]bool{}
	var mu sync.Mutex
	l.real.started = func(name string) { mu.Lock(); started[name] = true; mu.Unlock() }
	runs := l.play(t)

	assert.NilError(t, l.real.err)
	watch := l.result(t, "watchdog")
	assert.Check(t, is.Equal(watch.Outputs["outcome"], "setup-expired"), watch.Stdout)
	assert.Check(t, is.Equal(watch.Outputs["tests-started"], "false"))
	mu.Lock()
	assert.Check(t, started["Unpack the test archive"] && !started["Run GPU tests"], "%v", started)
	mu.Unlock()
	steps := stepsOf(l.gpuJob)
	assert.Check(t, is.Equal(steps["Unpack the test archive"].Conclusion, "cancelled"))
	assert.Check(t, is.Equal(steps["Run GPU tests"].Conclusion, "skipped"))
	assert.Check(t, is.Equal(runs["gpu"].Result, "cancelled"))
	pod := l.RunPod.Pods()[0]
	lived := pod.TerminatedAt.Sub(pod.StartedAt)
	assert.Check(t, lived >= watchdogSetupBudget && lived < watchdogSetupBudget+3*time.Second, "deleted at the setup deadline, lived %s", lived)
	assert.Check(t, killed(t, filepath.Join(l.real.pod, "temp", "unpack.pid")), "the unpack step's process was killed with the job")
}

// killed reports whether the process whose pid is in pidFile has ended (gone, or a zombie
// nobody reaped), giving the SIGKILL already sent a bounded moment to land.
func killed(t *testing.T, pidFile string) bool {
	t.Helper()
	pid, err := os.ReadFile(pidFile)
	assert.NilError(t, err)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		if err != nil || zombie(stat) {
			return true
		}
		select {
		case <-deadline:
			return false
		case <-tick.C:
		}
	}
}
