package lanes

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

const junitCommand = `bash tests/run.sh && printf '<testsuite tests="1" failures="0"/>' > "$RUNPOD_GPU_JUNIT"`

func TestServerlessLaneSuccess(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["job-status"], "COMPLETED"))
	assert.Check(t, is.Equal(res.Outputs["cuda-executed"], "true"))
	assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "true"))
	junit, err := os.ReadFile(filepath.Join(s.Workspace, "out", "results", "junit.xml"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(junit), `failures="0"`))
	for _, f := range []string{"test.log", "smoke.log", "metadata.json", "smoke-report.json"} {
		_, err := os.Stat(filepath.Join(s.Workspace, "out", "results", f))
		assert.Check(t, err, f)
	}
	for _, line := range strings.Split(res.Stdout, "\n") {
		// ::add-mask:: is how the runner learns to hide the key; nothing else may carry it.
		assert.Check(t, strings.HasPrefix(line, "::add-mask::") || !strings.Contains(line, cloud.RunPodKey), "the API key reached the log: %s", line)
	}
	s.nothingLeft(t)
	r := s.receipt(t)
	assert.Check(t, r.CleanupConfirmed)
	assert.Check(t, is.Equal(r.Template.State, serverless.StateDeleted))
	l, err := serverless.ReadLedger(filepath.Join(s.Workspace, ".runpod-gpu/serverless/budget.json"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents().Amount().String(), "$2.61"), "setup $1.36 + job $1.25")
	assert.Check(t, is.Len(s.RunPod.Jobs(), 1), "exactly one job")

	// A repeated cleanup (the if: always() step) confirms again without deleting anything else.
	again := harness.RunStep(t, s.cleanupStep(t))
	assert.Equal(t, again.ExitCode, 0, again.Stdout)
	assert.Check(t, is.Equal(again.Outputs["cleanup-confirmed"], "true"))
}

func TestServerlessLaneProofFailure(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{ReadBack: "wrong"}, nil)
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "CUDA proof failed"))
	assert.Check(t, is.Equal(res.Outputs["cuda-executed"], "false"))
	_, err := os.Stat(filepath.Join(s.Workspace, "out", "results", "smoke.log"))
	assert.Check(t, err, "the proof's log comes back")
	_, err = os.Stat(filepath.Join(s.Workspace, "out", "results", "test.log"))
	assert.Check(t, os.IsNotExist(err), "no test runs on an unproven GPU")
	s.nothingLeft(t)
}

func TestServerlessLaneTestFailureKeepsArtifacts(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	res := harness.RunStep(t, s.step(t, `printf '<testsuite tests="1" failures="1"/>' > "$RUNPOD_GPU_JUNIT"; echo boom; exit 3`))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["job-status"], "FAILED"))
	assert.Check(t, is.Contains(res.Stdout, "tests failed with exit code 3"))
	junit, err := os.ReadFile(filepath.Join(s.Workspace, "out", "results", "junit.xml"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(junit), `failures="1"`))
	log, err := os.ReadFile(filepath.Join(s.Workspace, "out", "results", "test.log"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(log), "boom"))
	s.nothingLeft(t)
}

func TestServerlessLanePayloadTooLarge(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
	noise := make([]byte, 8<<20)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(noise)
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, "weights.bin"), noise, 0o644))
	st := s.step(t, junitCommand)
	st.Inputs["approved-payload-sha256"] = slsWorkerSHA

	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "compressed size"))
	assert.Check(t, is.Len(s.RunPod.ServerlessResources(), 0), "nothing is created for a payload that cannot be sent")
}

// tarGz builds a result archive with the given members (a crafted worker's answer).
func tarGz(t *testing.T, members ...tar.Header) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range members {
		body := bytes.Repeat([]byte("x"), int(h.Size))
		assert.NilError(t, tw.WriteHeader(&h))
		_, err := tw.Write(body)
		assert.NilError(t, err)
	}
	assert.NilError(t, tw.Close())
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}

func TestServerlessLaneRejectsBadResultArchives(t *testing.T) {
	t.Parallel()
	reg := func(name string, size int64) tar.Header {
		return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}
	}
	cases := []struct {
		name    string
		archive func(t *testing.T) []byte
		want    string
	}{
		{"traversal", func(t *testing.T) []byte { return tarGz(t, reg("ok.txt", 1), reg("../../escape", 1)) }, "path traversal"},
		{"link", func(t *testing.T) []byte {
			return tarGz(t, reg("ok.txt", 1), tar.Header{Name: "junit.xml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"})
		}, "link"},
		{"duplicate", func(t *testing.T) []byte { return tarGz(t, reg("junit.xml", 1), reg("junit.xml", 2)) }, "duplicate"},
		{"oversize", func(t *testing.T) []byte {
			noise := make([]byte, 13<<19) // 6.5 MiB: over the 6 MiB cap, under the answer bound
			_, _ = rand.NewChaCha8([32]byte{9}).Read(noise)
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			assert.NilError(t, tw.WriteHeader(&tar.Header{Name: "big.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(noise))}))
			_, _ = tw.Write(noise)
			assert.NilError(t, tw.Close())
			assert.NilError(t, zw.Close())
			return buf.Bytes()
		}, "compressed size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			archive := tc.archive(t)
			crafted := runpodsim.JobWorkerFunc(func(ctx context.Context, j runpodsim.WorkerJob) runpodsim.WorkerResult {
				out, _ := json.Marshal(jobwire.JobOutput{ResultB64: base64.StdEncoding.EncodeToString(archive),
					ResultSHA256: jobwire.SHA256Hex(archive), CUDAExecuted: true, TestsExitCode: new(int)})
				return runpodsim.WorkerResult{Output: out}
			})
			s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, crafted)
			res := harness.RunStep(t, s.step(t, junitCommand))

			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, tc.want))
			_, err := os.Stat(filepath.Join(s.Workspace, "out", "results"))
			assert.Check(t, os.IsNotExist(err), "nothing of a rejected archive is written")
			_, err = os.Stat(filepath.Join(s.Workspace, "out", "provider-response.json"))
			assert.Check(t, err, "the provider's answer is kept")
			_, err = os.Stat(filepath.Join(filepath.Dir(s.Workspace), "escape"))
			assert.Check(t, os.IsNotExist(err))
			s.nothingLeft(t)
		})
	}
}

func TestServerlessLaneSettingsMismatch(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{WorkersMax: 3}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "workers.max 3, want 1"))
	assert.Check(t, is.Len(s.RunPod.Jobs(), 0), "no job on an endpoint whose settings differ")
	s.nothingLeft(t)
	assert.Check(t, s.receipt(t).CleanupConfirmed)
}

func TestServerlessLaneReconcilesALostCreateByName(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{LostCreates: []runpodsim.ServerlessLostCreate{
		{Route: "POST /v2/serverless", When: runpodsim.Trigger{First: 1}}}}, smoketest.DriverConfig{}, nil)
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "reconciling by name"))
	endpoints := 0
	for _, r := range s.RunPod.ServerlessResources() {
		if r.Kind == "endpoint" {
			endpoints++
		}
	}
	assert.Check(t, is.Equal(endpoints, 1), "the create was never sent twice")
	assert.Check(t, is.Equal(s.receipt(t).Endpoint.Detail, "reconciled by name after a lost create answer"))
	s.nothingLeft(t)
}

func TestServerlessLaneSIGTERMLeavesNothing(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, nil)
	st := s.step(t, "sleep 60")
	st.Started = func(p *os.Process) {
		go func() {
			<-s.worker.started // the job is running on the worker
			_ = p.Signal(syscall.SIGTERM)
		}()
	}
	res := harness.RunStep(t, st)

	assert.Check(t, res.ExitCode != 0, res.Stdout)
	for id, state := range s.RunPod.Jobs() {
		assert.Check(t, is.Equal(state, "CANCELLED"), "job %s", id)
	}
	assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "true"))
	s.nothingLeft(t)
}

func TestServerlessLaneLedgerCapsRefuseAStage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		inputs  map[string]string
		want    string
		created bool
	}{
		{"setup above the stage cap", map[string]string{"max-stage-cents": "120", "total-cents": "1000"}, "above the per-stage cap", false},
		// The job stage is checked before setup: nothing is created for a job the ledger cannot cover.
		{"job above the total cap", map[string]string{"max-stage-cents": "200", "total-cents": "250"}, "total cap", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
			st := s.step(t, junitCommand)
			for k, v := range tc.inputs {
				st.Inputs[k] = v
			}
			res := harness.RunStep(t, st)

			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, tc.want))
			assert.Check(t, is.Len(s.RunPod.Jobs(), 0))
			assert.Check(t, is.Equal(len(s.RunPod.ServerlessResources()) > 0, tc.created))
			s.nothingLeft(t)
			assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "true"))
		})
	}
}

// A create whose answer is lost and whose name is not listed stays
// unresolved: cleanup says so (and fails) instead of claiming success.
func TestServerlessLaneCleanupUncertain(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{LostCreates: []runpodsim.ServerlessLostCreate{
		{Route: "POST /v2/templates", When: runpodsim.Trigger{First: 1}}}}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
	s.RunPod.SetServerlessListingHidden(true) // the new template is not listed (yet)
	res := harness.RunStep(t, s.step(t, junitCommand))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "unresolved"))
	assert.Check(t, is.Equal(res.Outputs["cleanup-confirmed"], "false"))
	r := s.receipt(t)
	assert.Check(t, is.Equal(r.Template.State, serverless.StateUnresolved))
	assert.Check(t, !r.CleanupConfirmed)
	assert.Check(t, is.Len(s.RunPod.Jobs(), 0))

	again := harness.RunStep(t, s.cleanupStep(t))
	assert.Equal(t, again.ExitCode, 1, again.Stdout)

	// Once the provider lists it, cleanup resolves and deletes it.
	s.RunPod.SetServerlessListingHidden(false)
	final := harness.RunStep(t, s.cleanupStep(t))
	assert.Equal(t, final.ExitCode, 0, final.Stdout)
	s.nothingLeft(t)
}

// TestServerlessPrepareModeNeedsNoKey runs the action as the prepare job does:
// no RunPod key, no cloud call, and the checksum the run will be approved with.
func TestServerlessPrepareModeNeedsNoKey(t *testing.T) {
	t.Parallel()
	s := startServerless(t, runpodsim.ServerlessFaults{}, smoketest.DriverConfig{}, runpodsim.JobWorkerFunc(nil))
	want, err := serverless.BuildPayload(s.Workspace, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	st := s.step(t, "")
	st.Inputs = map[string]string{"mode": "prepare", "source-dir": ".", "worker-sha256": slsWorkerSHA}
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["payload-sha256"], want.SHA256))
	assert.Check(t, is.Equal(res.Outputs["worker-sha256"], slsWorkerSHA))
	assert.Check(t, is.Len(s.RunPod.ServerlessResources(), 0), "prepare creates nothing")
	_, err = serverless.LoadReceipt(filepath.Join(s.Workspace, ".runpod-gpu/serverless/receipt.json"))
	assert.Check(t, err != nil, "prepare writes no receipt")

	st.Inputs["mode"] = "deploy"
	bad := harness.RunStep(t, st)
	assert.Check(t, bad.ExitCode != 0)
	assert.Check(t, is.Contains(bad.Stdout, `input mode = "deploy": want run, prepare or cleanup`))
}
