package serverless

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// RunRequest is the one job of an attempt.
type RunRequest struct {
	Execute bool
	Payload ApprovedPayload // from Approve: the run does not check the approval again
	Input   jobwire.JobInput
	Output  string // results directory; must not exist or be empty
}

// Names of the job's values, as CheckJob's *ValueError gives them.
const (
	TestCommandValue = "test command"
	MinCUDAValue     = "minimum CUDA version"
	OutputValue      = "results directory"
)

// CheckJob refuses a job that cannot pass, before anything is paid for: no
// test command, a min-cuda the CUDA grammar refuses (pkg/cudaver), a results
// directory that already holds something. The action and the CLI call it
// before setup creates anything; Run calls it again before it submits.
func CheckJob(in jobwire.JobInput, output string) error {
	if strings.TrimSpace(in.TestCommand) == "" {
		return &ValueError{Name: TestCommandValue, Value: in.TestCommand, Want: "a bash command that runs the GPU tests (an empty one could never pass)"}
	}
	if in.Smoke.MinCUDA != "" {
		if _, err := cudaver.Parse(in.Smoke.MinCUDA); err != nil {
			return &ValueError{Name: MinCUDAValue, Value: in.Smoke.MinCUDA, Want: "major.minor such as 12.6 (" + err.Error() + ")"}
		}
	}
	if output == "" {
		return &ValueError{Name: OutputValue, Value: output, Want: "a new or empty directory"}
	}
	entries, err := os.ReadDir(output)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &ValueError{Name: OutputValue, Value: output, Want: "a new or empty directory (" + err.Error() + ")"}
	case len(entries) > 0:
		return &ValueError{Name: OutputValue, Value: output, Want: fmt.Sprintf("a new or empty directory; it holds %d entries (%s…), and results are never written over earlier ones", len(entries), entries[0].Name())}
	}
	return nil
}

// RunResult is what a run found.
type RunResult struct {
	JobID         string
	State         runpod.JobState
	CUDAExecuted  bool
	ExitCode      *int
	Files         []string // result files written under Output/results
	ProviderErr   string
	DelayTime     int64 // ms the job waited, cold start included
	ExecutionTime int64 // ms the job ran
}

// ErrNotExecuted is returned when a run is not confirmed to execute (the
// CLI's --execute, the action's execute input).
var ErrNotExecuted = errors.New("the run is not confirmed to execute: it submits one billable job")

// Run submits exactly one job and collects its checked results. It refuses
// without Execute and a payload Approve approved (the approval is not checked
// again), a job CheckJob refuses, a create still unresolved, when the job's
// TTL and the cleanup margin no longer fit before the setup deadline, or when
// the ledger refuses the job's reservation. The submission goes out once and
// is never repeated: an unclear answer leaves the job's existence to find out
// (the attempt's job id, when one was recorded, is followed by its status;
// without one the run fails and cleanup's deletion of the endpoint ends any
// job). Polling is bounded by the TTL; at the bound, on cancellation, or for
// an answer over the size bound the job is cancelled, once. The provider's
// last answer is kept in provider-response.json whatever happened.
func (l *Lane) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	if !req.Execute {
		return nil, ErrNotExecuted
	}
	if req.Payload.Payload() == nil {
		return nil, fmt.Errorf("%w: the request carries no payload that Approve approved", ErrNotApproved)
	}
	if err := CheckJob(req.Input, req.Output); err != nil {
		return nil, fmt.Errorf("run (nothing submitted): %w", err)
	}
	r, err := LoadReceipt(l.Receipt)
	if err != nil {
		return nil, err
	}
	if r.Job != nil && r.Job.Intent {
		return l.resume(ctx, r, req.Output)
	}
	if err := l.health(ctx, r, true); err != nil {
		return nil, err
	}
	st, err := l.submit(ctx, r, req)
	if err != nil {
		return nil, err
	}
	return l.follow(ctx, r, st, req.Output)
}

// resume follows the attempt's one job by its recorded id after the run that
// submitted it was interrupted; it never submits another.
func (l *Lane) resume(ctx context.Context, r *Receipt, output string) (*RunResult, error) {
	switch {
	case r.Job.ID == "":
		return nil, fmt.Errorf("run: attempt %s submitted a job whose answer was unclear (%s): a job is never resubmitted; run cleanup, then setup with a new receipt", r.Attempt, r.Job.Status)
	case runpod.JobState(r.Job.Status).Terminal():
		return nil, fmt.Errorf("run: attempt %s's job %s already ended %s: a job is never resubmitted; run setup with a new receipt", r.Attempt, r.Job.ID, r.Job.Status)
	}
	if err := l.health(ctx, r, false); err != nil {
		return nil, err
	}
	l.logf("run: following job %s of this attempt by its id (a job is never submitted twice)", r.Job.ID)
	return l.follow(ctx, r, &runpod.JobStatus{ID: r.Job.ID, Status: runpod.JobState(r.Job.Status)}, output)
}

// submit reserves the job's budget and sends /run once.
func (l *Lane) submit(ctx context.Context, r *Receipt, req RunRequest) (*runpod.JobStatus, error) {
	now := l.now()
	if err := l.reserveJob(r, now); err != nil {
		return nil, err
	}
	payload := req.Payload.Payload()
	in := req.Input
	in.PayloadB64, in.PayloadSHA256 = base64.StdEncoding.EncodeToString(payload.Archive), req.Payload.SHA256()
	in.ExpectedGPU = l.asked(r).GPUType
	if in.DeadlineSeconds == 0 {
		in.DeadlineSeconds = int(l.Settings.WorkerDeadline / time.Second)
	}
	if in.MaxResultBytes == 0 {
		in.MaxResultBytes = jobwire.DefaultResultLimits.MaxCompressed
	}
	r.Job = &JobRecord{Intent: true, PayloadSHA256: req.Payload.SHA256(), SubmittedAt: now}
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return nil, err
	}
	cctx, cancel := l.bound(reqpolicy.WithAttemptLimit(ctx, 1), CallTimeout)
	st, err := l.Jobs.Run(cctx, r.Endpoint.ID, in, runpod.JobPolicy{ExecutionTimeout: l.Settings.ExecutionTimeout.Milliseconds(), TTL: l.Settings.JobTTL.Milliseconds()})
	cancel()
	if err != nil {
		return nil, l.unclearSubmission(ctx, r, err)
	}
	r.Job.ID, r.Job.Status = st.ID, string(st.Status)
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return nil, err
	}
	l.logf("run: job %s submitted (%s)", st.ID, st.Status)
	return st, nil
}

// unclearSubmission records a /run that did not answer with a job id. A
// definite refusal submitted nothing; otherwise a job may exist, and the job
// host lists no jobs by endpoint to find its id: /health says whether work
// appeared, the submission is never repeated, and cleanup's deletion of the
// endpoint cancels whatever runs.
func (l *Lane) unclearSubmission(ctx context.Context, r *Receipt, err error) error {
	if !uncertain(err) {
		r.Job.Status = "submission refused: " + err.Error()
		_ = SaveReceipt(l.Receipt, r)
		return fmt.Errorf("run: %w (nothing was submitted; a job is never submitted twice)", err)
	}
	found := "the job host's health could not be read"
	cctx, cancel := l.bound(ctx, CallTimeout)
	if h, herr := l.Jobs.Health(cctx, r.Endpoint.ID); herr == nil {
		found = fmt.Sprintf("the endpoint shows %d queued, %d running, %d completed, %d failed jobs", h.Jobs.InQueue, h.Jobs.InProgress, h.Jobs.Completed, h.Jobs.Failed)
	}
	cancel()
	r.Job.Status = fmt.Sprintf("submission answer unclear (%v); %s", err, found)
	_ = SaveReceipt(l.Receipt, r)
	return fmt.Errorf("run: %w; %s; the job is never submitted again: cleanup deletes the endpoint, which ends any job", err, found)
}

// reserveJob reserves the job's budget in the ledger at now, when the job's
// TTL and the cleanup margin still end before the receipt's cleanup deadline.
func (l *Lane) reserveJob(r *Receipt, now time.Time) error {
	if latest := r.Deadline.Add(-l.Settings.JobTTL - l.Settings.CleanupMargin); now.After(latest) {
		return fmt.Errorf("run: too late for this setup: the job TTL (%s) and cleanup margin (%s) end after the cleanup deadline %s; clean up and set up again",
			l.Settings.JobTTL, l.Settings.CleanupMargin, r.Deadline.Format(time.RFC3339))
	}
	if r.Asked != nil && r.Asked.PricePerHour > l.Settings.PriceCeiling {
		l.Settings.PriceCeiling = r.Asked.PricePerHour // the pool's price, as setup reserved at
	}
	res := l.jobReservation(r.Attempt, now)
	if _, err := l.Ledger.Reserve(res); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	l.logf("run: reserved %s for the job", l.Ledger.Caps.Stage(res.Cents.Amount()))
	return nil
}

// follow polls the job to its end and collects what it returned.
func (l *Lane) follow(ctx context.Context, r *Receipt, st *runpod.JobStatus, output string) (*RunResult, error) {
	final, pollErr := l.poll(ctx, r, st)
	res := &RunResult{JobID: st.ID}
	if final != nil {
		res.State, res.DelayTime, res.ExecutionTime = final.Status, final.DelayTime, final.ExecutionTime
		r.Job.Status = string(final.Status)
		_ = SaveReceipt(l.Receipt, r)
	}
	return res, l.collect(final, output, res, pollErr)
}

// poll waits for a terminal state, at most the job TTL from submission.
func (l *Lane) poll(ctx context.Context, r *Receipt, st *runpod.JobStatus) (*runpod.JobStatus, error) {
	every := cmpDuration(l.Poll, DefaultPoll)
	end := r.Job.SubmittedAt.Add(l.Settings.JobTTL)
	last := st
	for {
		if last.Status.Terminal() {
			return last, nil
		}
		// The last read is at the TTL itself; a job still running then is cancelled.
		wait := min(every, end.Sub(l.now()))
		if wait <= 0 || l.Policy.Wait(ctx, wait, "job poll") != nil {
			reason := fmt.Sprintf("no result within the job TTL %s", l.Settings.JobTTL)
			if ctx.Err() != nil {
				reason = "interrupted"
			}
			return last, l.cancelJob(r, reason)
		}
		cctx, cancel := l.bound(ctx, CallTimeout)
		got, err := l.Jobs.Status(cctx, r.Endpoint.ID, st.ID)
		cancel()
		var asked *reqpolicy.WaitError
		switch {
		case errors.Is(err, runpod.ErrAnswerTooLarge) || (err == nil && int64(len(got.Output)+len(got.Error)) > runpod.MaxJobStatusBytes):
			return last, l.cancelJob(r, fmt.Sprintf("its answer is larger than %d bytes, refused at once", runpod.MaxJobStatusBytes))
		case errors.As(err, &asked) && l.now().Add(asked.Wait).After(end):
			// No status can come before the TTL: waiting would only bill.
			return last, l.cancelJob(r, fmt.Sprintf("the job host asks to wait %s for its status, past the job's TTL", asked.Wait.Round(time.Second)))
		case errors.As(err, &asked):
			l.logf("run: status of job %s: the job host asks to wait %s; waiting", st.ID, asked.Wait.Round(time.Second))
			_ = l.Policy.Wait(ctx, asked.Wait, "job host Retry-After")
			continue
		case errors.Is(err, runpod.ErrNotFound):
			return last, fmt.Errorf("run: job %s vanished (expired or removed): %w", st.ID, err)
		case err != nil:
			l.logf("run: status of job %s: %v (polling on)", st.ID, err)
			continue
		}
		if got.Status != last.Status {
			l.logf("run: job %s is %s", st.ID, got.Status)
		}
		last = got
	}
}

func cmpDuration(d, fallback time.Duration) time.Duration {
	if d <= 0 {
		return fallback
	}
	return d
}

// cancelJob cancels the job, once, with a fresh bounded context (the
// caller's may be done), records it, and returns the run's error.
func (l *Lane) cancelJob(r *Receipt, reason string) error {
	// At once, whatever cooldown another answer set: a cancel only saves money.
	ctx, cancel := l.bound(reqpolicy.Urgent(context.Background()), CallTimeout)
	defer cancel()
	outcome := "job cancelled"
	if _, err := l.Jobs.Cancel(ctx, r.Endpoint.ID, r.Job.ID); err != nil {
		l.logf("run: cancel job %s: %v", r.Job.ID, err)
		outcome = "its cancel failed; cleanup's deletion of the endpoint ends it"
	}
	r.Job.CancelledAt = l.now()
	_ = SaveReceipt(l.Receipt, r)
	return fmt.Errorf("run: job %s: %s (%s; never resubmitted)", r.Job.ID, reason, outcome)
}

// collect keeps the provider's answer (always, the lane's own error with it)
// and, for an ended job, writes the checked result archive.
func (l *Lane) collect(st *runpod.JobStatus, outDir string, res *RunResult, laneErr error) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return errors.Join(laneErr, err)
	}
	if st == nil {
		st = &runpod.JobStatus{ID: res.JobID}
	}
	var out jobwire.JobOutput
	decodeErr := error(nil)
	if len(st.Output) > 0 {
		decodeErr = json.Unmarshal(st.Output, &out)
	}
	res.ProviderErr = st.ErrorText()
	res.CUDAExecuted, res.ExitCode = out.CUDAExecuted, out.TestsExitCode
	if err := keepAnswer(outDir, st, out, decodeErr, laneErr); err != nil {
		return errors.Join(laneErr, err)
	}
	if laneErr != nil {
		return laneErr
	}
	var errs []error
	if decodeErr != nil {
		errs = append(errs, fmt.Errorf("the job's output is not the worker's JSON: %v", decodeErr))
	}
	errs = append(errs, extractResults(out, outDir, res)...)
	switch {
	case st.Status != runpod.JobCompleted:
		errs = append(errs, fmt.Errorf("job %s ended %s: %s", st.ID, st.Status, firstNonEmptyText(res.ProviderErr, out.Error, "no output")))
	case out.Error != "":
		errs = append(errs, fmt.Errorf("job %s: %s", st.ID, out.Error))
	case !out.CUDAExecuted:
		errs = append(errs, fmt.Errorf("job %s completed without cuda_executed: the GPU was not proven", st.ID))
	case out.ResultB64 == "":
		errs = append(errs, fmt.Errorf("job %s completed without a result archive", st.ID))
	}
	if len(errs) > 0 {
		return fmt.Errorf("run: %w", errors.Join(errs...))
	}
	l.logf("run: job %s completed; CUDA executed; %d result files in %s", st.ID, len(res.Files), outDir)
	return nil
}

// keepAnswer writes provider-response.json: the provider's answer without
// the archive (written apart once checked), and the lane's error if any.
func keepAnswer(outDir string, st *runpod.JobStatus, out jobwire.JobOutput, decodeErr, laneErr error) error {
	kept := map[string]any{"id": st.ID, "status": st.Status, "error": st.ErrorText(), "delayTime": st.DelayTime, "executionTime": st.ExecutionTime,
		"cuda_executed": out.CUDAExecuted, "tests_exit_code": out.TestsExitCode, "worker_error": out.Error, "summary": out.Summary, "result_sha256": out.ResultSHA256}
	if decodeErr != nil {
		kept["raw_output"] = clipText(string(st.Output), 64<<10)
	}
	if laneErr != nil {
		kept["lane_error"] = laneErr.Error()
	}
	data, _ := json.MarshalIndent(kept, "", "  ")
	return os.WriteFile(filepath.Join(outDir, "provider-response.json"), append([]byte(redact.Published(string(data))), '\n'), 0o644) // uploaded with the results
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// extractResults checks the result archive against its checksum and writes
// it under outDir/results; nothing of a refused archive is written.
func extractResults(out jobwire.JobOutput, outDir string, res *RunResult) []error {
	if out.ResultB64 == "" {
		return nil
	}
	archive, err := base64.StdEncoding.DecodeString(out.ResultB64)
	switch {
	case err != nil:
		return []error{fmt.Errorf("result archive: not base64: %v", err)}
	case !sha256RE.MatchString(out.ResultSHA256):
		return []error{fmt.Errorf("result archive: checksum %q: want the worker's 64-hex SHA-256 (an archive without one is never trusted)", out.ResultSHA256)}
	case jobwire.SHA256Hex(archive) != out.ResultSHA256:
		return []error{fmt.Errorf("result archive: SHA-256 %s differs from the worker's %s", jobwire.SHA256Hex(archive), out.ResultSHA256)}
	}
	entries, err := jobwire.Extract(archive, filepath.Join(outDir, "results"), jobwire.DefaultResultLimits)
	for _, e := range entries {
		if !e.Dir && err == nil {
			res.Files = append(res.Files, e.Name)
		}
	}
	if err != nil {
		return []error{fmt.Errorf("result archive: %w (nothing of it was written)", err)}
	}
	return nil
}

func firstNonEmptyText(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
