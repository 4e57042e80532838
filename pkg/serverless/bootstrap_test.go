package serverless

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// sdkStandIn is the pinned worker SDK's surface the handler uses
// (runpod.serverless.start), standing in for runpod==1.12.0 with no network:
// it hands the handler the job in $RPG_TEST_JOB and writes what it returns,
// with the "error" the SDK turns into FAILED, to $RPG_TEST_RESULT.
const sdkStandIn = `import json, os

def start(config):
    with open(os.environ["RPG_TEST_JOB"]) as f:
        job = json.load(f)
    out = config["handler"](job)
    with open(os.environ["RPG_TEST_RESULT"], "w") as f:
        json.dump({"status": "FAILED" if isinstance(out, dict) and "error" in out else "COMPLETED", "output": out}, f)
`

// fakeWorker stands in for serverless-worker: it records its environment
// and writes the output it was told to.
const fakeWorker = `#!/bin/bash
set -eu
env > "$(dirname "$0")/worker-env.txt"
while [ $# -gt 0 ]; do case "$1" in --input) in="$2"; shift 2;; --output) out="$2"; shift 2;; *) shift;; esac; done
[ -e "$(dirname "$0")/no-output" ] && exit 3
test_command=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_command"])' "$in")
printf '{"cuda_executed": true, "tests_exit_code": 0, "summary": {"ran": "%s"}}' "$test_command" > "$out"
`

type pyWorld struct {
	dir, job, result, worker string
	env                      []string
}

// newPyWorld lays out the SDK stand-in, a fake worker and a job, and the
// environment a RunPod worker container would have, RunPod's injected keys included.
func newPyWorld(t *testing.T) *pyWorld {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (.ci/run installs it)")
	}
	dir := t.TempDir()
	w := &pyWorld{dir: dir, job: filepath.Join(dir, "job.json"), result: filepath.Join(dir, "result.json"), worker: filepath.Join(dir, "bin", "serverless-worker")}
	for name, body := range map[string]string{"sdk/runpod/__init__.py": "from . import serverless\n", "sdk/runpod/serverless/__init__.py": sdkStandIn} {
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	job, err := json.Marshal(map[string]any{"id": "job-1", "input": jobwire.JobInput{TestCommand: "pytest -q", DeadlineSeconds: 60}})
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(w.job, job, 0o644))
	w.env = []string{"PATH=" + filepath.Join(dir, "stand-ins") + ":" + filepath.Dir(python) + ":/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir,
		"PYTHONPATH=" + filepath.Join(dir, "sdk"), "RPG_TEST_JOB=" + w.job, "RPG_TEST_RESULT=" + w.result,
		"CUDA_VISIBLE_DEVICES=0", "RUNPOD_AI_API_KEY=rpa_injected_secret", "RUNPOD_WEBHOOK_GET_JOB=https://api.runpod.ai/v2/ep/job-take/$RUNPOD_POD_ID",
		"RUNPOD_POD_ID=pod1", "RPG_OWNER=org/app"}
	return w
}

func (w *pyWorld) install(t *testing.T, name, body string) {
	t.Helper()
	p := filepath.Join(w.dir, name)
	assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	assert.NilError(t, os.WriteFile(p, []byte(body), 0o755))
}

func (w *pyWorld) readResult(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(w.result)
	assert.NilError(t, err, "the handler returned nothing")
	var res map[string]any
	assert.NilError(t, json.Unmarshal(data, &res))
	return res
}

// TestHandlerHandsTheJobToTheWorker runs the pinned handler under the SDK
// stand-in: it passes the job's input to the Go worker and returns its
// output; the worker sees no RunPod key and none of the bootstrap's values;
// a worker that writes nothing fails the job with an "error", as the SDK wants.
func TestHandlerHandsTheJobToTheWorker(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noOutput bool
		status   string
	}{{name: "the worker answers", status: "COMPLETED"}, {name: "the worker writes nothing", noOutput: true, status: "FAILED"}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPyWorld(t)
			w.install(t, "bin/serverless-worker", fakeWorker)
			w.install(t, "handler.py", string(handlerPy))
			env := append(w.env, "RPG_WORKER_BIN="+w.worker)
			if tc.noOutput {
				w.install(t, "bin/no-output", "")
			}
			cmd := exec.Command("python3", "-u", filepath.Join(w.dir, "handler.py"))
			cmd.Env, cmd.Dir = env, w.dir
			out, err := cmd.CombinedOutput()
			assert.NilError(t, err, "%s", out)
			res := w.readResult(t)
			assert.Check(t, is.Equal(res["status"], tc.status))
			output := res["output"].(map[string]any)
			if tc.noOutput {
				assert.Check(t, is.Contains(output["error"], "handler: the worker returned no output"))
				assert.Check(t, is.Equal(output["cuda_executed"], false))
			} else {
				assert.Check(t, is.DeepEqual(output["summary"], map[string]any{"ran": "pytest -q"}))
			}
			seen, err := os.ReadFile(filepath.Join(w.dir, "bin", "worker-env.txt"))
			assert.NilError(t, err)
			for _, line := range strings.Split(string(seen), "\n") {
				name, _, _ := strings.Cut(line, "=")
				assert.Check(t, !strings.HasPrefix(name, "RUNPOD_") && !strings.HasPrefix(name, "RPG_"), "the worker sees %s", name)
			}
			assert.Check(t, is.Contains(string(seen), "CUDA_VISIBLE_DEVICES=0"))
		})
	}
}

// bootstrapStandIns stand in for pip, curl and timeout: each records its
// arguments. pip installs nothing (no network); curl copies the local asset;
// timeout runs its command.
var bootstrapStandIns = map[string]string{
	"stand-ins/python": `#!/bin/bash
if [ "$1 $2" = "-m pip" ]; then echo "pip $*" >> "$HOME/calls.txt"; exit 0; fi
exec python3 "$@"
`,
	"stand-ins/curl": `#!/bin/bash
echo "curl $*" >> "$HOME/calls.txt"
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; *) url="$1"; shift;; esac; done
cp "$HOME/asset" "$out"
`,
	"stand-ins/timeout": `#!/bin/bash
echo "timeout $*" >> "$HOME/calls.txt"
while [ $# -gt 0 ]; do case "$1" in --kill-after=*) shift;; [0-9]*) shift; break;; *) break;; esac; done
exec "$@"
`,
}

// TestBootstrapChecksTheWorkerAndStartsTheHandler runs the template's start
// command as RunPod would: the bootstrap installs the pinned SDK (stood in),
// fetches the worker over https only, refuses it unless its SHA-256 is the
// one setup recorded, and starts the handler — all under the 25-minute wall
// timer.
func TestBootstrapChecksTheWorkerAndStartsTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sha    func(asset []byte) string
		starts bool
	}{
		{name: "the asset the receipt names", sha: func(a []byte) string { return jobwire.SHA256Hex(a) }, starts: true},
		{name: "another asset", sha: func([]byte) string { return strings.Repeat("0", 64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPyWorld(t)
			for name, body := range bootstrapStandIns {
				w.install(t, name, body)
			}
			w.install(t, "asset", fakeWorker)
			asset, err := os.ReadFile(filepath.Join(w.dir, "asset"))
			assert.NilError(t, err)
			env, err := TemplateEnv("https://github.com/org/runpod-gpu/releases/download/v1/serverless-worker", tc.sha(asset), "org/app", "rpg-sls-org-app-1-1-aa")
			assert.NilError(t, err)
			cmdEnv := append(w.env, "RPG_WORKER_BIN="+w.worker)
			for k, v := range env {
				cmdEnv = append(cmdEnv, k+"="+v)
			}
			assert.NilError(t, os.MkdirAll(filepath.Dir(w.worker), 0o755))
			cmd := exec.Command("bash", "-c", strings.TrimSuffix(strings.TrimPrefix(BootstrapArgs, "bash -c '"), "'"))
			cmd.Env, cmd.Dir = cmdEnv, w.dir
			out, err := cmd.CombinedOutput()
			calls, _ := os.ReadFile(filepath.Join(w.dir, "calls.txt"))
			assert.Check(t, is.Contains(string(calls), "timeout --kill-after=30 1500 bash "), "the 25-minute wall timer:\n%s", calls)
			assert.Check(t, is.Contains(string(calls), "timeout 120 python -m pip install --no-cache-dir --disable-pip-version-check runpod==1.12.0"))
			assert.Check(t, is.Contains(string(calls), "curl -fsSL --proto =https --max-time 120 -o "+w.worker+" https://github.com/"))
			if !tc.starts {
				assert.Check(t, err != nil, "a worker of another checksum must stop the bootstrap:\n%s", out)
				_, statErr := os.Stat(w.result)
				assert.Check(t, os.IsNotExist(statErr), "the handler never started")
				return
			}
			assert.NilError(t, err, "%s", out)
			res := w.readResult(t)
			assert.Check(t, is.Equal(res["status"], "COMPLETED"))
		})
	}
}

// TestBootstrapArgsDecodeTheScriptFromTheEnvironment: the start command
// quotes no value into shell text; the script comes from RPG_BOOTSTRAP_B64.
func TestBootstrapArgsDecodeTheScriptFromTheEnvironment(t *testing.T) {
	env, err := TemplateEnv("https://x/w", strings.Repeat("a", 64), "o/r", "rpg-sls-x")
	assert.NilError(t, err)
	script, err := base64.StdEncoding.DecodeString(env["RPG_BOOTSTRAP_B64"])
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(script), string(bootstrapSh)))
	assert.Check(t, is.Contains(BootstrapArgs, `"$RPG_BOOTSTRAP_B64"`))
}
