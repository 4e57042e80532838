package lanes

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// gpuStep is a step of a GPU job as the runner reads it.
type gpuStep struct {
	Name  string            `yaml:"name"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
}

// gpuJobs are the jobs of a workflow file that run on a pod's runner (runs-on
// the provisioned runner label), by id.
func gpuJobs(t *testing.T, file string) map[string][]gpuStep {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(harness.RepoRoot, ".github", "workflows", file))
	assert.NilError(t, err)
	var wf struct {
		Jobs map[string]struct {
			RunsOn any       `yaml:"runs-on"`
			Steps  []gpuStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	assert.NilError(t, yaml.Unmarshal(data, &wf))
	jobs := map[string][]gpuStep{}
	for id, j := range wf.Jobs {
		if on, _ := j.RunsOn.(string); strings.Contains(on, "runner-label") {
			jobs[id] = j.Steps
		}
	}
	assert.Assert(t, len(jobs) > 0, "%s has no job on a pod's runner", file)
	return jobs
}

// podRunner plays a GPU job's steps as the runner does, with real processes:
// a run step is its shell (bash -eo pipefail, the file the runner writes),
// an action step a process whose environment holds the run's runtime token,
// as every action's process does; it lives while the probe (when the pull
// request's code left one) looks through /proc.
type podRunner struct {
	t         *testing.T
	dir       string // RUNNER_TEMP, the workspace and the fake nvidia-smi
	workspace string
	env       []string
	ctx       workflowplay.Contexts
	probe     *probe
	// found collects what the probe read while each later step ran.
	found []string
}

// runtimeToken is the token every action step's process carries.
const runtimeToken = "ACTIONS_RUNTIME_TOKEN=eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.runtime-token-of-the-run"

func newPodRunner(t *testing.T, testCommand string) *podRunner {
	t.Helper()
	dir := t.TempDir()
	bin, ws, temp := filepath.Join(dir, "bin"), filepath.Join(dir, "work"), filepath.Join(dir, "temp")
	for _, d := range []string{bin, ws, temp} {
		assert.NilError(t, os.MkdirAll(d, 0o755))
	}
	// nvidia-smi as the sampler runs it: a sample a second until it is stopped;
	// its pid goes to a file, so the test can tell whether it outlived its step.
	// Without -l it prints the one table "Check machine" shows.
	fake := "#!/bin/sh\ncase \"$*\" in *-l*) ;; *) echo 'NVIDIA L4'; exit 0 ;; esac\n" +
		"echo $$ >> " + filepath.Join(dir, "sampler.pids") + "\n" +
		"echo '2026/10/06 09:00:01.101, 0, NVIDIA L4, 4096, 23034, 50'\nexec sleep 3600\n"
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(fake), 0o755))
	origin, sha := bareRepo(t, filepath.Join(dir, "server"))
	// Whatever this runner's steps leave running (a failing run's sampler, the
	// probe) is ended with the test.
	mark := "LANE_RUN=" + dir
	t.Cleanup(func() { killMarked(mark) })
	return &podRunner{t: t, dir: dir, workspace: ws,
		env: []string{mark, "PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + dir, "RUNNER_TEMP=" + temp, "GITHUB_WORKSPACE=" + ws,
			"GITHUB_SERVER_URL=file://" + filepath.Dir(filepath.Dir(origin)), "GITHUB_REPOSITORY=org/app", "GITHUB_OUTPUT=" + filepath.Join(temp, "output")},
		ctx: workflowplay.Contexts{Values: map[string]any{
			"inputs":  map[string]any{"test-command": testCommand},
			"matrix":  map[string]any{"pod": map[string]any{"pod-id": "pod1", "gpu-type": "NVIDIA L4", "gpu-tier": "full", "price-per-hour": "0.36", "runner-label": "runpod-gpu-7-1-c1"}},
			"needs":   map[string]any{"authorize": map[string]any{"outputs": map[string]any{"tested-ref": sha}}},
			"github":  map[string]any{"token": "ghs_checkoutTokenOfTheJob0123456789", "run_id": "7", "run_attempt": "1"},
			"runner":  map[string]any{"temp": temp},
			"secrets": map[string]any{},
		}}}
}

// bareRepo makes <dir>/org/app.git with one commit and returns its path and the commit.
func bareRepo(t *testing.T, dir string) (string, string) {
	t.Helper()
	src, bare := filepath.Join(dir, "src"), filepath.Join(dir, "org", "app.git")
	git := func(in string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	assert.NilError(t, os.MkdirAll(src, 0o755))
	git(src, "init", "-q", ".")
	assert.NilError(t, os.WriteFile(filepath.Join(src, "run.sh"), []byte("echo tests\n"), 0o755))
	git(src, "add", "run.sh")
	git(src, "commit", "-q", "-m", "tests")
	git(dir, "clone", "-q", "--bare", src, bare)
	git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")
	return bare, git(src, "rev-parse", "HEAD")
}

// step runs one step to its end and returns its output. An action step's
// process is asked to the probe while it lives.
func (r *podRunner) step(i int, s gpuStep) string {
	r.t.Helper()
	env := slices.Clone(r.env)
	env = append(env, fmt.Sprintf("LANE_STEP=%d", i)) // every process of the step inherits it
	for k, v := range s.Env {
		val, err := workflowplay.Interpolate(v, r.ctx)
		assert.NilError(r.t, err, "step %q env %s", s.Name, k)
		env = append(env, k+"="+val)
	}
	if s.Uses != "" {
		// The action's process: alive, token in its environment, while the probe looks.
		action := exec.Command("cat")
		action.Env = append(env, runtimeToken)
		stdin, err := action.StdinPipe()
		assert.NilError(r.t, err)
		assert.NilError(r.t, action.Start())
		if r.probe != nil {
			r.found = append(r.found, r.probe.look(r.t)...)
		}
		stdin.Close()
		assert.NilError(r.t, action.Wait())
		return ""
	}
	script := filepath.Join(r.dir, fmt.Sprintf("step%d.sh", i))
	assert.NilError(r.t, os.WriteFile(script, []byte(s.Run), 0o644))
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir, cmd.Env = r.workspace, env
	out, err := cmd.CombinedOutput()
	assert.NilError(r.t, err, "step %q: %s", s.Name, out)
	if r.probe != nil {
		r.found = append(r.found, r.probe.look(r.t)...)
	}
	return string(out)
}

// survivors are the live processes a step started (its LANE_STEP mark in
// their initial environment), zombies aside.
func survivors(t *testing.T, step int) []string {
	t.Helper()
	mark := []byte(fmt.Sprintf("LANE_STEP=%d\x00", step))
	entries, err := os.ReadDir("/proc")
	assert.NilError(t, err)
	var live []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(environ, mark) {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || zombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		live = append(live, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return live
}

// killMarked ends every process whose initial environment holds mark.
func killMarked(mark string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && bytes.Contains(environ, []byte(mark+"\x00")) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// zombie reports whether /proc/<pid>/stat says the process has exited.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// TestNoLaneProcessOutlivesItsStep runs every step of the lane's GPU jobs as
// the runner does, with the real shell and a real process tree, and finds no
// process of the lane alive once its step ended: the GPU sampler is the test
// step's child and ends with it, and its samples reach the job's log in the
// lines the cost history reads.
func TestNoLaneProcessOutlivesItsStep(t *testing.T) {
	for id, steps := range gpuJobs(t, "gpu-lane.yml") {
		t.Run(id, func(t *testing.T) {
			// The tests take until the sampler wrote a sample.
			r := newPodRunner(t, `timeout 20 sh -c 'until [ -s "$RUNNER_TEMP/gpu-usage.csv" ]; do :; done' && ./run.sh`)
			var out string
			for i, s := range steps {
				out += r.step(i, s)
				assert.Check(t, is.Len(survivors(t, i), 0), "step %q left processes running", s.Name)
			}
			pids, err := os.ReadFile(filepath.Join(r.dir, "sampler.pids"))
			assert.NilError(t, err, "the sampler ran")
			for _, pid := range strings.Fields(string(pids)) {
				stat, err := os.ReadFile("/proc/" + pid + "/stat")
				assert.Check(t, err != nil || zombie(stat), "the sampler %s is alive after the job's steps", pid)
			}
			assert.Check(t, is.Contains(out, "tests\n"), "the tested ref was checked out and run")
			assert.Check(t, is.Contains(out, history.UsageLinePrefix+"pod1 2026/10/06 09:00:01.101, 0, NVIDIA L4, 4096, 23034, 50"))
		})
	}
}

// probe is what the pull request's code leaves running to steal the run's
// runtime token: a process outside the step's tree (setsid, nohup) that, each
// time it is asked, reads every process's initial environment through /proc.
type probe struct {
	ask    *os.File
	answer *bufio.Reader
}

// probeScript is the pull request's test command: it starts the probe and
// passes. The probe answers on the fifo each look with the tokens it read
// and a line "done".
const probeScript = `setsid nohup sh -c '
exec 3< "$PROBE_DIR/ask" 4> "$PROBE_DIR/answer"
while read -r _ <&3; do
  for f in /proc/[0-9]*/environ; do
    tr "\0" "\n" < "$f" 2> /dev/null | grep "^ACTIONS_RUNTIME_TOKEN=" >&4 || true
  done
  echo done >&4
done' > /dev/null 2>&1 &
./run.sh`

// look asks the probe to read /proc once and returns what it found.
func (p *probe) look(t *testing.T) []string {
	t.Helper()
	_, err := fmt.Fprintln(p.ask)
	assert.NilError(t, err)
	var found []string
	for {
		line, err := p.answer.ReadString('\n')
		assert.NilError(t, err, "the probe answers")
		if line = strings.TrimSpace(line); line == "done" {
			return found
		}
		found = append(found, line)
	}
}

// TestPRCodeFindsNoRuntimeTokenThroughProc: the pull request's code, on the
// pod, leaves a process behind that reads /proc/*/environ while every later
// step of the GPU job runs. It finds no runtime token: the test step is the
// job's last, and no action before it has a post step.
func TestPRCodeFindsNoRuntimeTokenThroughProc(t *testing.T) {
	for id, steps := range gpuJobs(t, "gpu-lane.yml") {
		t.Run(id, func(t *testing.T) {
			r := newPodRunner(t, probeScript)
			probeDir := t.TempDir()
			for _, f := range []string{"ask", "answer"} {
				assert.NilError(t, syscall.Mkfifo(filepath.Join(probeDir, f), 0o600))
			}
			r.env = append(r.env, "PROBE_DIR="+probeDir)
			test := slices.IndexFunc(steps, func(s gpuStep) bool { return s.Name == history.DefaultTestStep })
			assert.Assert(t, test >= 0, "job %s has no %q step", id, history.DefaultTestStep)
			for i, s := range steps[:test+1] {
				r.step(i, s)
			}
			// The fifos open once the probe runs; its process outlives the step, as the code meant.
			ask, answer := openProbe(t, probeDir)
			r.probe = &probe{ask: ask, answer: bufio.NewReader(answer)}
			t.Cleanup(func() { ask.Close(); answer.Close() }) // the probe's read ends: it exits
			// A sanity look: an action process alive now is seen.
			r.step(len(steps), gpuStep{Name: "a process with the token, for the probe's sake", Uses: "probe/check@v1"})
			assert.Assert(t, len(r.found) > 0, "the probe reads a live action's environment")
			r.found = nil

			for i, s := range steps[test+1:] {
				r.step(test+1+i, s)
			}
			// And the job's post steps: an action's post step runs after the tests.
			for i, s := range steps[:test] {
				if s.Uses != "" && hasPostStep(s.Uses) {
					r.step(100+i, gpuStep{Name: "Post " + s.Name, Uses: s.Uses})
				}
			}
			assert.Check(t, is.Len(r.found, 0), "the pull request's code read the runtime token of a later step: %q", r.found)
		})
	}
}

// postActionRE names the actions the lane could use whose action.yml has a
// post step (actions/checkout cleans its credentials up there).
var postActionRE = regexp.MustCompile(`^actions/(checkout|cache|setup-[a-z]+)@`)

func hasPostStep(uses string) bool { return postActionRE.MatchString(uses) }

// openProbe opens the probe's fifos, within a deadline: a probe that never
// started fails the test rather than hanging it.
func openProbe(t *testing.T, dir string) (ask, answer *os.File) {
	t.Helper()
	type opened struct {
		ask, answer *os.File
		err         error
	}
	done := make(chan opened, 1)
	go func() {
		var o opened
		if o.ask, o.err = os.OpenFile(filepath.Join(dir, "ask"), os.O_WRONLY, 0); o.err == nil {
			o.answer, o.err = os.Open(filepath.Join(dir, "answer"))
		}
		done <- o
	}()
	select {
	case o := <-done:
		assert.NilError(t, o.err)
		return o.ask, o.answer
	case <-time.After(30 * time.Second):
		t.Fatal("the pull request's probe never opened its fifos")
		return nil, nil
	}
}
