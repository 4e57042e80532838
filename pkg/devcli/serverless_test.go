package devcli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

const testWorkerSHA = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"

// slsWorld is the developer's world with the simulated Serverless API, its
// job host, and a fake worker answering like the Go worker after a passing run.
type slsWorld struct {
	*world
	dir     string
	spawned [][]string // argv of every detached process the command line started
	// onSleep, when set, runs before each of the command line's waits.
	onSleep func()
}

func newSlsWorld(t *testing.T, faults runpodsim.ServerlessFaults) *slsWorld {
	t.Helper()
	worker := runpodsim.JobWorkerFunc(func(context.Context, runpodsim.WorkerJob) runpodsim.WorkerResult {
		archive := resultArchive(t, map[string]string{"junit.xml": `<testsuite tests="1" failures="0"/>`, "test.log": "ok\n"})
		code := 0
		out, err := json.Marshal(jobwire.JobOutput{ResultB64: base64.StdEncoding.EncodeToString(archive), ResultSHA256: jobwire.SHA256Hex(archive),
			CUDAExecuted: true, TestsExitCode: &code})
		assert.NilError(t, err)
		return runpodsim.WorkerResult{Output: out}
	})
	w := newWorld(t, runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: worker, ColdStart: time.Second, Faults: faults}))
	jobs := httptest.NewServer(w.sim.JobHost())
	t.Cleanup(jobs.Close)
	w.env["RUNPOD_JOB_URL"] = jobs.URL
	s := &slsWorld{world: w, dir: t.TempDir()}
	src := filepath.Join(s.dir, "src")
	for name, body := range map[string]string{"src/kernel.cu": "__global__ void k() {}\n", "tests/run.sh": "echo ok\n", ".env": "SECRET=x\n"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return s
}

func resultArchive(t *testing.T, files map[string]string) []byte {
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

// run runs the command line with the detached spawn captured.
func (s *slsWorld) run(args ...string) result {
	s.t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Main(ctx, Env{Args: args, Getenv: func(k string) string { return s.env[k] }, Stdout: &stdout, Stderr: &stderr,
		Home: s.home, User: "alice", Clock: s.clock, Sleep: func(ctx context.Context, d time.Duration) error {
			if s.onSleep != nil {
				s.onSleep()
			}
			// A job's worker runs in real time: let it finish before the
			// virtual clock moves on, or a loaded machine sees the job
			// pass its execution timeout while its worker still runs.
			s.sim.WaitServerlessWorkers()
			return s.clock.Sleep(ctx, d)
		},
		Spawn: func(argv []string) error { s.spawned = append(s.spawned, argv); return nil }})
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	assert.Check(s.t, !strings.Contains(r.stdout+r.stderr, testKey), "the API key leaked:\n%s\n%s", r.stdout, r.stderr)
	return r
}

func (s *slsWorld) path(name string) string { return filepath.Join(s.dir, name) }

func (s *slsWorld) live() []string {
	var out []string
	for _, r := range s.sim.ServerlessResources() {
		if !r.Deleted {
			out = append(out, r.Kind+" "+r.Name)
		}
	}
	return out
}

func (s *slsWorld) setup(t *testing.T) {
	t.Helper()
	r := s.run("serverless", "setup", "--state", s.path("attempt-01.json"), "--ledger", s.path("budget.json"),
		"--worker-url", "https://example.com/serverless-worker", "--worker-sha256", testWorkerSHA)
	assert.Assert(t, r.code == ExitOK, r.stderr)
}

func TestServerlessCommandWholeLane(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	state, ledger, payload, out := s.path("attempt-01.json"), s.path("budget.json"), s.path("payload.json"), s.path("results")

	prep := s.run("serverless", "prepare", "--payload", payload, "--source", s.path("src"), "--worker-sha256", testWorkerSHA)
	assert.Assert(t, prep.code == ExitOK, prep.stderr)
	p, err := serverless.ReadPayload(payload, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(prep.stdout, "payload_sha256 "+p.SHA256))
	assert.Check(t, is.Contains(prep.stdout, "worker_sha256 "+testWorkerSHA))
	assert.Check(t, is.DeepEqual(p.Files, []string{"src/kernel.cu", "tests/run.sh"}), ".env is never sent")
	assert.Check(t, is.Len(s.sim.Requests(), 0), "prepare calls no API")

	s.setup(t)
	assert.Check(t, is.Len(s.live(), 2))
	abs, _ := filepath.Abs(state)
	assert.DeepEqual(t, s.spawned, [][]string{{"serverless", "watchdog", "--state", abs}})
	l, err := serverless.ReadLedger(ledger)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents().Amount().String(), "$1.36"))

	h := s.run("serverless", "health", "--state", state)
	assert.Check(t, h.code == ExitOK, h.stderr)

	runArgs := []string{"serverless", "run", "--state", state, "--payload", payload, "--ledger", ledger, "--output", out}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"without --execute":  {args: []string{"--approved-payload-sha256", p.SHA256}, want: "run needs --execute"},
		"without approval":   {args: []string{"--execute"}, want: "--approved-payload-sha256 is required"},
		"with another sum":   {args: []string{"--execute", "--approved-payload-sha256", strings.Repeat("0", 64)}, want: "differs from the payload's " + p.SHA256},
		"with a short sum":   {args: []string{"--execute", "--approved-payload-sha256", "abc"}, want: `approved checksum "abc": want 64 hex digits`},
		"with a blank sum":   {args: []string{"--execute", "--approved-payload-sha256", " "}, want: "--approved-payload-sha256: payload not approved: the approved checksum is empty"},
		"without the output": {args: []string{"--execute", "--approved-payload-sha256", p.SHA256, "--output", ""}, want: "--output is required"},
	} {
		r := s.run(append(append([]string{}, runArgs...), tc.args...)...)
		assert.Check(t, is.Equal(r.code, ExitUsage), name)
		assert.Check(t, is.Contains(r.stderr, tc.want), name)
	}
	assert.Check(t, is.Len(s.sim.Jobs(), 0), "no refused run submitted a job")

	r := s.run(append(runArgs, "--execute", "--approved-payload-sha256", p.SHA256, "--test-command", "bash tests/run.sh")...)
	assert.Assert(t, r.code == ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "ended COMPLETED; cuda_executed true; 2 result files"))
	junit, err := os.ReadFile(filepath.Join(out, "results", "junit.xml"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(junit), `failures="0"`))
	assert.Check(t, is.Len(s.sim.Jobs(), 1))
	assert.Check(t, is.Len(s.spawned, 2), "run arms a second watchdog")
	assert.DeepEqual(t, s.spawned[1], s.spawned[0])
	// The run removed the endpoint and template when the job ended.
	assert.Check(t, is.Contains(r.stdout, "cleanup confirmed"))
	assert.Check(t, is.Len(s.live(), 0), "run deletes what setup created")
	rec, err := serverless.LoadReceipt(state)
	assert.NilError(t, err)
	assert.Check(t, rec.CleanupConfirmed)

	again := s.run(append(runArgs[:len(runArgs)-1], s.path("results-2"), "--execute", "--approved-payload-sha256", p.SHA256, "--test-command", "true")...)
	assert.Check(t, is.Equal(again.code, ExitFailure))
	assert.Check(t, is.Contains(again.stderr, "already ended COMPLETED: a job is never resubmitted"))
	assert.Check(t, is.Len(s.sim.Jobs(), 1), "exactly one job")

	c := s.run("serverless", "cleanup", "--state", state)
	assert.Assert(t, c.code == ExitOK, c.stderr)
	assert.Check(t, is.Len(s.live(), 0))
	l, err = serverless.ReadLedger(ledger)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents().Amount().String(), "$2.61"), "setup $1.36 + job $1.25, never refunded")
	assert.Check(t, is.Len(l.OpenAttempts(), 0), "the confirmed cleanup closed the attempt")

	// A second attempt with the old receipt is refused; a new receipt shares the ledger.
	old := s.run("serverless", "setup", "--state", state, "--ledger", ledger, "--worker-url", "https://example.com/w", "--worker-sha256", testWorkerSHA)
	assert.Check(t, is.Equal(old.code, ExitUsage))
	assert.Check(t, is.Contains(old.stderr, "already exists: it belongs to an earlier attempt"))
}

// TestServerlessWatchdog: the watchdog wakes at setup's absolute deadline
// (a job in between does not move it) and deletes what is left; a receipt
// already confirmed clean costs no deletion.
func TestServerlessWatchdog(t *testing.T) {
	tests := []struct {
		name       string
		faults     runpodsim.ServerlessFaults
		cleanFirst bool
		wantCode   int
		wantLive   int
		wantStderr string
	}{
		{name: "cleans up at the deadline", wantCode: ExitOK, wantStderr: "the deadline passed; endpoint and template deleted and confirmed"},
		{name: "nothing to do after a confirmed cleanup", cleanFirst: true, wantCode: ExitOK, wantStderr: "cleanup was confirmed; nothing left to watch"},
		{name: "a deletion that keeps failing is reported unconfirmed", faults: runpodsim.ServerlessFaults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 1000}},
			wantCode: ExitUnconfirmed, wantLive: 2, wantStderr: "cleanup attempt 5/5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlsWorld(t, tc.faults)
			state := s.path("attempt-01.json")
			s.setup(t)
			rec, err := serverless.LoadReceipt(state)
			assert.NilError(t, err)
			assert.Check(t, is.Equal(rec.Deadline.Sub(rec.CreatedAt), 30*time.Minute))
			if tc.cleanFirst {
				assert.Assert(t, s.run("serverless", "cleanup", "--state", state).code == ExitOK)
			}
			s.clock.Advance(10 * time.Minute) // preparation and a job meanwhile change nothing
			deletes := 0
			count := func() int {
				n := 0
				for _, r := range s.sim.Requests() {
					if r.Method == "DELETE" {
						n++
					}
				}
				return n
			}
			deletes = count()
			r := s.run("serverless", "watchdog", "--state", state)
			assert.Check(t, is.Equal(r.code, tc.wantCode), r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.wantStderr))
			assert.Check(t, is.Len(s.live(), tc.wantLive))
			if tc.cleanFirst {
				assert.Check(t, is.Equal(count(), deletes), "no deletion for a confirmed receipt")
				assert.Check(t, s.clock.Now().Before(rec.Deadline), "the watchdog exits once cleanup is confirmed, without waiting for the deadline")
				return
			}
			assert.Check(t, !s.clock.Now().Before(rec.Deadline), "the watchdog acted before the deadline %s (now %s)", rec.Deadline, s.clock.Now())
		})
	}
}

func TestServerlessCommandUsage(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"serverless", "setup", "--ledger", s.path("b.json")}, want: "--state is required"},
		{args: []string{"serverless", "setup", "--state", s.path("r.json")}, want: "--ledger is required"},
		{args: []string{"serverless", "setup", "--state", s.path("r.json"), "--ledger", s.path("b.json"), "--worker-url", "http://x/w", "--worker-sha256", testWorkerSHA},
			want: `worker-url "http://x/w": want an https URL`},
		{args: []string{"serverless", "setup", "--state", s.path("r.json"), "--ledger", s.path("b.json"), "--worker-url", "https://x/w", "--worker-sha256", "xyz"},
			want: `--worker-sha256 "xyz": want 64 lowercase hex digits`},
		{args: []string{"serverless", "setup", "--state", s.path("r.json"), "--ledger", s.path("b.json"), "--image", "runpod/pytorch:latest"},
			want: `serverless setting image = "runpod/pytorch:latest": want an image pinned by digest`},
		{args: []string{"serverless", "prepare"}, want: "--payload is required"},
		{args: []string{"serverless", "cleanup"}, want: "--state is required"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := s.run(tc.args...)
			assert.Check(t, is.Equal(r.code, ExitUsage), r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.want))
		})
	}
	assert.Check(t, is.Len(s.live(), 0), "nothing was created")
	assert.Check(t, is.Len(s.spawned, 0), "no watchdog without a receipt")
	_, err := os.Stat(s.path("r.json"))
	assert.Check(t, os.IsNotExist(err), "no receipt for a refused setup")
}

// TestServerlessWatchdogExitsOnceCleanupIsConfirmed: a watchdog waiting for
// the deadline notices a cleanup confirmed meanwhile (by run or by hand) at
// its next check and exits, deleting nothing.
func TestServerlessWatchdogExitsOnceCleanupIsConfirmed(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	state := s.path("attempt-01.json")
	s.setup(t)
	rec, err := serverless.LoadReceipt(state)
	assert.NilError(t, err)
	sleeps := 0
	s.onSleep = func() {
		sleeps++
		if sleeps == 3 { // the developer cleans up ten-odd minutes in
			s.onSleep = nil
			assert.Check(t, s.run("serverless", "cleanup", "--state", state).code == ExitOK)
		}
	}
	r := s.run("serverless", "watchdog", "--state", state)
	assert.Check(t, is.Equal(r.code, ExitOK), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "cleanup was confirmed; nothing left to watch"))
	assert.Check(t, s.clock.Now().Before(rec.Deadline.Add(-25*time.Minute)), "it exits at the check after the cleanup, not at the deadline (now %s)", s.clock.Now())
	assert.Check(t, is.Len(s.live(), 0))
}

// TestServerlessRunFailsWhenItsCleanupIsUnconfirmed: run deletes the
// endpoint and template when the job ends, and an unconfirmed deletion is
// the command's failure (exit 5), not a line printed before exit 0.
func TestServerlessRunFailsWhenItsCleanupIsUnconfirmed(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 1000}})
	payload := s.path("payload.json")
	prep := s.run("serverless", "prepare", "--payload", payload, "--source", s.path("src"))
	assert.Assert(t, prep.code == ExitOK, prep.stderr)
	p, err := serverless.ReadPayload(payload, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	s.setup(t)
	r := s.run("serverless", "run", "--execute", "--state", s.path("attempt-01.json"), "--payload", payload, "--ledger", s.path("budget.json"),
		"--output", s.path("results"), "--approved-payload-sha256", p.SHA256, "--test-command", "bash tests/run.sh")
	assert.Check(t, is.Equal(r.code, ExitUnconfirmed), r.stderr)
	assert.Check(t, is.Contains(r.stdout, "ended COMPLETED"), "the job itself passed")
	assert.Check(t, is.Contains(r.stderr, "cleanup not confirmed"))
	assert.Check(t, is.Len(s.live(), 2))

	// Until its cleanup is confirmed, the attempt blocks the next one, by name.
	next := s.run("serverless", "setup", "--state", s.path("attempt-02.json"), "--ledger", s.path("budget.json"),
		"--worker-url", "https://example.com/serverless-worker", "--worker-sha256", testWorkerSHA)
	assert.Check(t, is.Equal(next.code, ExitAttemptOpen), next.stderr)
	assert.Check(t, is.Contains(next.stderr, "still has a template or endpoint"))
	assert.Check(t, is.Len(s.live(), 2), "nothing more was created")
}
