package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/smoke"
)

// module is the import path every package of the repository starts with.
const module = "github.com/org/runpod-gpu"

// goList runs `go list` with args in this package's module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	assert.NilError(t, err, "go list %s", strings.Join(args, " "))
	return slices.DeleteFunc(strings.Split(string(out), "\n"), func(s string) bool { return s == "" })
}

// TestWorkerProgramLinksNoRunPodClient keeps the pod-side worker small: the
// program that runs this package (found wherever its main lives) speaks the
// job's wire format through jobwire and links neither the lane, the RunPod
// client, the request policy, the retry library nor the GitHub client.
func TestWorkerProgramLinksNoRunPodClient(t *testing.T) {
	forbidden := []string{module + "/pkg/serverless", module + "/pkg/runpod", module + "/pkg/reqpolicy",
		"github.com/hashicorp/go-retryablehttp", module + "/pkg/ghapi"}
	var programs []string
	for _, line := range goList(t, "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Imports " "}}{{end}}`, module+"/...") {
		fields := strings.Fields(line)
		if slices.Contains(fields[1:], module+"/pkg/serverless/worker") {
			programs = append(programs, fields[0])
		}
	}
	assert.Assert(t, len(programs) > 0, "no main package imports the worker")
	for _, prog := range programs {
		deps := goList(t, "-deps", "-test=false", "-f", "{{.ImportPath}}", prog)
		assert.Check(t, slices.Contains(deps, module+"/pkg/serverless/jobwire"), "%s does not link jobwire: is this still the worker?", prog)
		for _, f := range forbidden {
			assert.Check(t, !slices.Contains(deps, f), "%s links %s", prog, f)
		}
	}
}

// TestTestEnvHoldsNoWorkerOrRunPodVariables: the tests' environment is built
// from nothing: the worker's own RPG_* values and what RunPod injects into a
// Serverless worker (RUNPOD_*) never reach the code under test.
func TestTestEnvHoldsNoWorkerOrRunPodVariables(t *testing.T) {
	worker := []string{
		"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/lib/cuda", "CUDA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute",
		"RUNPOD_AI_API_KEY=rpa_secret", "RUNPOD_API_KEY=rpa_other", "RUNPOD_WEBHOOK_GET_JOB=https://api.runpod.ai/v2/x/job-take/$RUNPOD_POD_ID",
		"RUNPOD_WEBHOOK_POST_OUTPUT=https://api.runpod.ai/v2/x/job-done", "RUNPOD_POD_ID=abc", "RUNPOD_ENDPOINT_ID=ep", "RUNPOD_GPU_TYPE_ID=A4000",
		"RPG_WORKER_URL=https://x/w", "RPG_WORKER_SHA256=5e5e", "RPG_HANDLER_B64=aGk=", "RPG_BOOTSTRAP_B64=aGk=", "RPG_OWNER=o/r", "RPG_WORKER_BIN=/w",
		"AWS_SECRET_ACCESS_KEY=x", "HOME=/root",
	}
	env := TestEnv(worker, "/work/results", "/work/home")
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		assert.Check(t, !strings.HasPrefix(name, "RPG_"), "the tests see the worker's %s", name)
		assert.Check(t, name == "RUNPOD_GPU_RESULTS" || name == "RUNPOD_GPU_JUNIT" || !strings.HasPrefix(name, "RUNPOD_"), "the tests see RunPod's %s", name)
		assert.Check(t, name != "AWS_SECRET_ACCESS_KEY")
	}
	for _, want := range []string{"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/lib/cuda", "CUDA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute",
		"HOME=/work/home", "RUNPOD_GPU_JUNIT=/work/results/junit.xml", "CI=true"} {
		assert.Check(t, slices.Contains(env, want), "missing %s in %v", want, env)
	}
}

// TestWorkerRefusesAnotherGPUBeforeTheTests: a worker placed on another card
// than the one asked for fails the job with the device it found, and the
// tests never run.
func TestWorkerRefusesAnotherGPUBeforeTheTests(t *testing.T) {
	for _, tc := range []struct{ device, want string }{
		{"NVIDIA RTX A4500", `GPU refused: the worker found "NVIDIA RTX A4500", not the "NVIDIA RTX A4000"`},
		{"nvidia  rtx a4000", ""},
	} {
		t.Run(tc.device, func(t *testing.T) {
			work := t.TempDir()
			archive := payloadArchive(t, map[string]string{"run.sh": "echo ran > \"$RUNPOD_GPU_RESULTS/ran\""})
			in := jobwire.JobInput{PayloadB64: base64.StdEncoding.EncodeToString(archive), PayloadSHA256: jobwire.SHA256Hex(archive),
				TestCommand: "bash run.sh", DeadlineSeconds: 60, ExpectedGPU: "NVIDIA RTX A4000"}
			prove := func(context.Context, smoke.Config, io.Writer) (*smoke.Report, error) {
				return &smoke.Report{Result: "pass", Device: &smoke.DeviceReport{Name: tc.device}}, nil
			}
			out := Run(context.Background(), in, Deps{WorkDir: work, Prove: prove, Now: time.Now, Getenv: func(string) string { return "" }})
			_, err := os.Stat(filepath.Join(work, "results", "ran"))
			if tc.want == "" {
				assert.Check(t, is.Equal(out.Error, ""))
				assert.Check(t, err, "the tests ran")
				return
			}
			assert.Check(t, is.Contains(out.Error, tc.want))
			assert.Check(t, os.IsNotExist(err), "the tests must not run on another card")
			assert.Check(t, out.TestsExitCode == nil)
			assert.Check(t, out.ResultB64 != "", "the metadata and proof log still come back")
		})
	}
}

func payloadArchive(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		assert.NilError(t, tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}))
		_, err := tw.Write([]byte(body))
		assert.NilError(t, err)
	}
	assert.NilError(t, tw.Close())
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}
