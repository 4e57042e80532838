// Package worker is the Go side of the Serverless lane's worker: it unpacks
// the payload safely, proves CUDA with the pod lane's smoke proof, runs the
// configured test command under the worker deadline, and packs logs, JUnit
// XML, hardware/runtime metadata and the cuda_executed flag into a result
// archive under the size cap. The Python handler only hands it the job.
package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/smoke"
)

// packMargin is kept from the deadline for packing the results.
const packMargin = 20 * time.Second

// maxLogBytes bounds the test log kept in the archive.
const maxLogBytes = 4 << 20

// Prover runs the CUDA smoke proof, writing its lines to out.
type Prover func(ctx context.Context, cfg smoke.Config, out io.Writer) (*smoke.Report, error)

// Deps are the worker's outside world.
type Deps struct {
	WorkDir string // private directory; the payload and results go below it
	Prove   Prover
	Now     func() time.Time
	Getenv  func(string) string
	Environ func() []string // the worker's environment; nil means os.Environ
}

func (d Deps) environ() []string {
	if d.Environ == nil {
		return os.Environ()
	}
	return d.Environ()
}

// checkDevice refuses a device other than the GPU type the endpoint asked
// for: RunPod places a worker on any card of a pool the request does not
// exclude, and a test run on another card proves nothing about this one.
// The names compare as RunPod's GPU type ids and CUDA's device names both
// spell them ("NVIDIA RTX A4000"), case and spacing aside.
func checkDevice(want string, report *smoke.Report) error {
	if want == "" {
		return nil
	}
	got := ""
	if report != nil && report.Device != nil {
		got = report.Device.Name
	}
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	if norm(got) != norm(want) {
		return fmt.Errorf("GPU refused: the worker found %q, not the %q the endpoint asked for; the tests did not run", got, want)
	}
	return nil
}

// Run does one job and always returns an output: failures are in Error,
// with whatever artifacts exist.
// Long: one linear protocol (verify and unpack the payload, prove CUDA, run the tests, pack), each step failing the job through fail.
func Run(ctx context.Context, in jobwire.JobInput, d Deps) jobwire.JobOutput {
	start := d.Now()
	src, results := filepath.Join(d.WorkDir, "src"), filepath.Join(d.WorkDir, "results")
	meta := map[string]any{"started_at": start.UTC().Format(time.RFC3339), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
	if host, err := os.Hostname(); err == nil {
		meta["hostname"] = host
	}
	out := jobwire.JobOutput{}
	fail := func(format string, args ...any) jobwire.JobOutput {
		out.Error = fmt.Sprintf(format, args...)
		return finish(out, results, meta, d, in.MaxResultBytes)
	}
	if err := os.MkdirAll(results, 0o755); err != nil {
		out.Error = "results directory: " + err.Error()
		return out
	}
	if in.DeadlineSeconds <= 0 {
		return fail("deadline_seconds %d: want a positive worker deadline", in.DeadlineSeconds)
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(time.Duration(in.DeadlineSeconds)*time.Second))
	defer cancel()

	archive, err := base64.StdEncoding.DecodeString(in.PayloadB64)
	if err != nil {
		return fail("payload: not base64: %v", err)
	}
	if got := jobwire.SHA256Hex(archive); got != in.PayloadSHA256 {
		return fail("payload: SHA-256 %s differs from the approved %s", got, in.PayloadSHA256)
	}
	if _, err := jobwire.Extract(archive, src, jobwire.DefaultPayloadLimits); err != nil {
		return fail("payload: %v", err)
	}
	meta["payload_sha256"] = in.PayloadSHA256

	cfg, err := smoke.ParseConfig(smokeArgs(in.Smoke, filepath.Join(results, "smoke-report.json"), d.WorkDir), func(string) string { return "" })
	if err != nil {
		return fail("smoke configuration: %v", err)
	}
	var proofLog bytes.Buffer
	report, proofErr := d.Prove(ctx, cfg, &proofLog)
	_ = os.WriteFile(filepath.Join(results, "smoke.log"), proofLog.Bytes(), 0o644)
	if report != nil {
		meta["device"] = report.Device
		meta["driver_version"] = report.DriverVersion.String()
		meta["tier"] = report.Tier
	}
	if proofErr != nil {
		return fail("CUDA proof failed: %v", proofErr)
	}
	// The proof launched a kernel, synchronized and read its result back.
	out.CUDAExecuted = true
	if err := checkDevice(in.ExpectedGPU, report); err != nil {
		meta["gpu_refused"] = true
		return fail("%v", err)
	}

	code, timedOut, err := runTests(ctx, in.TestCommand, src, results, d.WorkDir, start.Add(time.Duration(in.DeadlineSeconds)*time.Second-packMargin), d.environ())
	out.TestsExitCode = &code
	meta["tests_timed_out"] = timedOut
	switch {
	case err != nil:
		return fail("tests: %v", err)
	case timedOut:
		return fail("tests: stopped at the worker deadline (%d s)", in.DeadlineSeconds)
	case code != 0:
		return fail("tests failed with exit code %d", code)
	}
	return finish(out, results, meta, d, in.MaxResultBytes)
}

func smokeArgs(s jobwire.SmokeArgs, report, work string) []string {
	args := []string{"--report", report, "--work-dir", work}
	if s.MinCUDA != "" {
		args = append(args, "--min-cuda", s.MinCUDA)
	}
	if s.MinVRAMGB > 0 {
		args = append(args, "--min-vram-gb", fmt.Sprint(s.MinVRAMGB))
	}
	return args
}

// testEnvPrefixes are the only variables of the worker's environment the
// tests inherit besides PATH and LD_LIBRARY_PATH: the CUDA driver's and the
// container toolkit's settings (and the driver stand-in's in tests).
var testEnvPrefixes = []string{"CUDA_", "NVIDIA_", "SIM_CUDA_"}

// TestEnv is the tests' environment: built from nothing, so that neither the
// worker's own variables (RPG_*: its URL, checksum, handler, bootstrap) nor
// what RunPod injects into a Serverless worker (RUNPOD_*: the AI API key, the
// job-take and job-done webhooks, the pod and endpoint ids) reach the code
// under test. environ is the worker's own environment.
func TestEnv(environ []string, results, home string) []string {
	env := []string{"HOME=" + home, "TMPDIR=" + home, "RUNPOD_GPU_RESULTS=" + results, "RUNPOD_GPU_JUNIT=" + filepath.Join(results, "junit.xml"), "CI=true"}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		keep := name == "PATH" || name == "LD_LIBRARY_PATH"
		for _, p := range testEnvPrefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// runTests runs command with bash in src, its output bounded in test.log; the
// results directory is offered as RUNPOD_GPU_RESULTS (JUnit goes there).
func runTests(ctx context.Context, command, src, results, work string, deadline time.Time, environ []string) (int, bool, error) {
	if strings.TrimSpace(command) == "" {
		return -1, false, errors.New("test_command is empty")
	}
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	logFile, err := os.Create(filepath.Join(results, "test.log"))
	if err != nil {
		return -1, false, err
	}
	defer logFile.Close()
	home := filepath.Join(work, "home")
	_ = os.MkdirAll(home, 0o700)
	cmd := exec.CommandContext(tctx, "bash", "-c", command)
	cmd.Dir = src
	// A clean environment: nothing of the handler's or RunPod's reaches the tests.
	cmd.Env = TestEnv(environ, results, home)
	w := &capped{w: logFile, left: maxLogBytes}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case tctx.Err() != nil:
		return -1, true, nil
	case errors.As(err, &exit):
		return exit.ExitCode(), false, nil
	case err != nil:
		return -1, false, err
	}
	return 0, false, nil
}

type capped struct {
	w    io.Writer
	left int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.left <= 0 {
		return len(p), nil
	}
	n := min(len(p), c.left)
	c.left -= n
	if _, err := c.w.Write(p[:n]); err != nil {
		return 0, err
	}
	if c.left == 0 {
		_, _ = c.w.Write([]byte("\n[log truncated]\n"))
	}
	return len(p), nil
}

// finish writes the metadata, packs the results and enforces the cap: an
// oversized result is dropped and replaced by a summary of what it held.
func finish(out jobwire.JobOutput, results string, meta map[string]any, d Deps, maxBytes int64) jobwire.JobOutput {
	if maxBytes <= 0 {
		maxBytes = jobwire.DefaultResultLimits.MaxCompressed
	}
	meta["cuda_executed"] = out.CUDAExecuted
	meta["tests_exit_code"] = out.TestsExitCode
	meta["error"] = out.Error
	meta["ended_at"] = d.Now().UTC().Format(time.RFC3339)
	data, _ := json.MarshalIndent(meta, "", "  ")
	_ = os.WriteFile(filepath.Join(results, "metadata.json"), data, 0o644)
	archive, files, err := pack(results)
	out.Summary = map[string]any{"files": files, "cuda_executed": out.CUDAExecuted}
	switch {
	case err != nil:
		out.Error = strings.TrimPrefix(out.Error+"; packing results: "+err.Error(), "; ")
	case int64(len(archive)) > maxBytes:
		out.Summary["archive_bytes"] = len(archive)
		out.Error = strings.TrimPrefix(fmt.Sprintf("%s; result archive is %d bytes, above the %d-byte cap: only this summary returns", out.Error, len(archive), maxBytes), "; ")
	default:
		out.ResultB64 = base64.StdEncoding.EncodeToString(archive)
		out.ResultSHA256 = jobwire.SHA256Hex(archive)
	}
	return out
}

// pack archives the regular files under dir (links and others are skipped),
// sorted, and lists them with their sizes.
func pack(dir string) ([]byte, map[string]int64, error) {
	files := map[string]int64{}
	var names []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !e.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, nil, err
		}
		files[name] = int64(len(data))
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), files, nil
}
