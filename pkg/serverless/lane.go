package serverless

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// Management is the part of the RunPod management client the lane uses.
type Management interface {
	CreateTemplate(context.Context, runpod.CreateTemplateRequest) (*runpod.Template, error)
	GetTemplate(context.Context, string) (*runpod.Template, error)
	ListTemplates(context.Context) ([]runpod.Template, error)
	DeleteTemplate(context.Context, string) error
	CreateEndpoint(context.Context, runpod.CreateEndpointRequest) (*runpod.Endpoint, error)
	GetEndpoint(context.Context, string) (*runpod.Endpoint, error)
	ListEndpoints(context.Context) ([]runpod.Endpoint, error)
	ScaleEndpoint(context.Context, string, runpod.EndpointWorkers) (*runpod.Endpoint, error)
	DeleteEndpoint(context.Context, string) error
}

// Jobs is the part of the job-host client the lane uses.
type Jobs interface {
	Health(context.Context, string) (*runpod.Health, error)
	Run(context.Context, string, any, runpod.JobPolicy) (*runpod.JobStatus, error)
	Status(context.Context, string, string) (*runpod.JobStatus, error)
	Cancel(context.Context, string, string) (*runpod.JobStatus, error)
}

// Bounds of single calls and of the cleanup.
const (
	CallTimeout    = 60 * time.Second
	CleanupTimeout = 4 * time.Minute
	DefaultPoll    = 10 * time.Second
	deleteAttempts = 5
	confirmRounds  = 3
)

// Lane runs the stages of one attempt against RunPod. Every outside call has
// its own deadline (reqpolicy.Bound on Policy's clock).
type Lane struct {
	Mgmt     Management
	Jobs     Jobs
	Policy   *reqpolicy.Policy
	Settings Settings
	Receipt  string // receipt file
	Ledger   LedgerFile
	Poll     time.Duration
	Logf     func(format string, args ...any)
}

func (l *Lane) logf(format string, args ...any) {
	if l.Logf != nil {
		l.Logf(format, args...)
	}
}

func (l *Lane) now() time.Time { return l.Policy.Now() }

func (l *Lane) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return reqpolicy.Bound(ctx, l.Policy, d)
}

// SetupRequest names an attempt and carries the template's public settings.
type SetupRequest struct {
	Attempt    string
	Repository string
	RunID      int64
	RunAttempt int
	Args       string            // the template's start command (the bootstrap)
	Env        map[string]string // public values only: never the API key
}

// ErrSettingsMismatch is returned when RunPod answered other settings than asked for.
var ErrSettingsMismatch = errors.New("returned settings differ from the request")

// ErrUnresolved is returned while a create's outcome is unknown.
var ErrUnresolved = errors.New("a create's outcome is unresolved")

// Setup creates the receipt (never over an existing one), reserves the setup
// budget, then creates the private template and the endpoint, recording the
// intent before each create and the id after. A create is never re-sent: a
// lost answer is reconciled by the unique name. Every returned setting is
// verified; a mismatch deletes what was created and fails.
func (l *Lane) Setup(ctx context.Context, req SetupRequest) (*Receipt, error) {
	if err := l.Settings.Validate(); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(req.Attempt, ownership.ServerlessNamePrefix) {
		return nil, fmt.Errorf("attempt name %q: want the %s prefix (ownership.ServerlessAttemptName)", req.Attempt, ownership.ServerlessNamePrefix)
	}
	now := l.now()
	r := &Receipt{Version: ReceiptVersion, Attempt: req.Attempt, Repository: req.Repository, RunID: req.RunID, RunAttempt: req.RunAttempt,
		CreatedAt: now, Deadline: now.Add(l.Settings.CleanupDeadline),
		Template: Resource{Name: req.Attempt + "-tpl"}, Endpoint: Resource{Name: req.Attempt}}
	if err := CreateReceipt(l.Receipt, r); err != nil {
		return nil, err
	}
	cents := l.Settings.SetupReservationCents()
	if _, err := l.Ledger.Reserve(Reservation{Stage: "setup", Attempt: r.Attempt, Cents: cents, At: now,
		Basis: fmt.Sprintf("(%s lifetime + %s reserve) at $%.2f/h + $1", l.Settings.Lifetime, l.Settings.Reserve, l.Settings.PriceCeiling)}); err != nil {
		r.CleanupConfirmed = true // nothing was created
		r.Notes = append(r.Notes, "setup refused before any create: "+err.Error())
		_ = SaveReceipt(l.Receipt, r)
		return r, err
	}
	l.logf("setup: reserved %s in %s; cleanup deadline %s", Dollars(cents), l.Ledger.Path, r.Deadline.Format(time.RFC3339))

	tpl, err := l.createTemplate(ctx, r, req)
	if err != nil {
		return r, l.failSetup(ctx, r, err)
	}
	l.logf("setup: template %s (%s) created", tpl, r.Template.Name)

	// The endpoint, then a fresh read of it: both answers are verified.
	ep, err := l.createEndpoint(ctx, r, tpl)
	if err == nil {
		err = l.verifyLive(ctx, r)
	}
	if err != nil {
		return r, l.failSetup(ctx, r, err)
	}
	l.logf("setup: endpoint %s (%s) created: workers %d–%d, idle %s, timeout %s, pool %s",
		ep, r.Endpoint.Name, WorkersMin, WorkersMax, l.Settings.IdleTimeout, l.Settings.ExecutionTimeout, l.Settings.GPUPool)
	return r, SaveReceipt(l.Receipt, r)
}

// createTemplate creates the attempt's template once (see createOnce) and
// verifies the answer against the settings.
func (l *Lane) createTemplate(ctx context.Context, r *Receipt, req SetupRequest) (string, error) {
	tplReq := l.Settings.TemplateRequest(r.Template.Name, req.Args, req.Env)
	return createOnce(ctx, l, r, &r.Template, func(ctx context.Context) (string, error) {
		t, err := l.Mgmt.CreateTemplate(ctx, tplReq)
		if err != nil {
			return "", err
		}
		if bad := l.Settings.VerifyTemplate(t, r.Template.Name); len(bad) > 0 {
			return t.ID, fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
		}
		return t.ID, nil
	}, l.findTemplate)
}

// createEndpoint creates the attempt's endpoint on template tpl once (see
// createOnce) and verifies the answer against the settings.
func (l *Lane) createEndpoint(ctx context.Context, r *Receipt, tpl string) (string, error) {
	epReq := l.Settings.EndpointRequest(r.Endpoint.Name, tpl)
	return createOnce(ctx, l, r, &r.Endpoint, func(ctx context.Context) (string, error) {
		e, err := l.Mgmt.CreateEndpoint(ctx, epReq)
		if err != nil {
			return "", err
		}
		if bad := l.Settings.VerifyEndpoint(e, r.Endpoint.Name); len(bad) > 0 {
			return e.ID, fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
		}
		return e.ID, nil
	}, l.findEndpoint)
}

// failSetup deletes what setup created and returns the setup error (with the
// cleanup's, if it could not confirm).
func (l *Lane) failSetup(ctx context.Context, r *Receipt, err error) error {
	if saveErr := SaveReceipt(l.Receipt, r); saveErr != nil {
		return errors.Join(err, saveErr)
	}
	l.logf("setup failed (%v); deleting what it created", err)
	if _, cerr := l.Cleanup(ctx); cerr != nil {
		return fmt.Errorf("setup: %w; cleanup: %v", err, cerr)
	}
	return fmt.Errorf("setup: %w (what it created was deleted and the deletion confirmed)", err)
}

// uncertain reports whether a create error leaves the resource's existence unknown.
func uncertain(err error) bool {
	return errors.Is(err, runpod.ErrTransport) || errors.Is(err, runpod.ErrServer) ||
		errors.Is(err, runpod.ErrMalformedResponse) || errors.Is(err, runpod.ErrUnusableRecord) ||
		errors.Is(err, runpod.ErrRateLimited) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, reqpolicy.ErrWaitExceedsDeadline)
}

// createOnce records the intent, sends the create once, and records the id;
// an uncertain answer is reconciled by name, and an unseen name stays unresolved.
func createOnce(ctx context.Context, l *Lane, r *Receipt, res *Resource, create func(context.Context) (string, error), find func(context.Context, string) (string, error)) (string, error) {
	res.State, res.IntentAt = StateIntent, l.now()
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return "", err
	}
	cctx, cancel := l.bound(ctx, CallTimeout)
	id, err := create(cctx)
	cancel()
	switch {
	case id != "":
		res.State, res.ID = StateCreated, id
	case err != nil && uncertain(err):
		l.logf("create of %s: %v; reconciling by name (the create is never sent again)", res.Name, err)
		found, ferr := find(ctx, res.Name)
		switch {
		case ferr != nil:
			res.State, res.Detail = StateUnresolved, fmt.Sprintf("create answer lost (%v) and the listing failed (%v)", err, ferr)
			return "", fmt.Errorf("%w: %s: %s", ErrUnresolved, res.Name, res.Detail)
		case found == "":
			res.State, res.Detail = StateUnresolved, fmt.Sprintf("create answer lost (%v) and the name is not listed (yet)", err)
			return "", fmt.Errorf("%w: %s: %s", ErrUnresolved, res.Name, res.Detail)
		}
		res.State, res.ID, res.Detail = StateCreated, found, "reconciled by name after a lost create answer"
		l.logf("create of %s: found %s by name", res.Name, found)
		if verr := l.verifyOne(ctx, r, res); verr != nil {
			return found, verr
		}
		return found, nil
	case err != nil:
		res.State, res.Detail = "", "create refused: "+err.Error() // a definite refusal created nothing
	}
	if serr := SaveReceipt(l.Receipt, r); serr != nil && err == nil {
		err = serr
	}
	return id, err
}

// verifyOne reads a reconciled resource and checks its settings.
func (l *Lane) verifyOne(ctx context.Context, r *Receipt, res *Resource) error {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	var bad []string
	if res == &r.Template {
		t, err := l.Mgmt.GetTemplate(cctx, res.ID)
		if err != nil {
			return err
		}
		bad = l.Settings.VerifyTemplate(t, res.Name)
	} else {
		e, err := l.Mgmt.GetEndpoint(cctx, res.ID)
		if err != nil {
			return err
		}
		bad = l.Settings.VerifyEndpoint(e, res.Name)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
	}
	return nil
}

// verifyLive re-reads both resources and verifies them.
func (l *Lane) verifyLive(ctx context.Context, r *Receipt) error {
	if err := l.verifyOne(ctx, r, &r.Template); err != nil {
		return err
	}
	return l.verifyOne(ctx, r, &r.Endpoint)
}

func (l *Lane) findTemplate(ctx context.Context, name string) (string, error) {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	list, err := l.Mgmt.ListTemplates(cctx)
	if err != nil {
		return "", err
	}
	for _, t := range list {
		if t.Name == name {
			return t.ID, nil
		}
	}
	return "", nil
}

func (l *Lane) findEndpoint(ctx context.Context, name string) (string, error) {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	list, err := l.Mgmt.ListEndpoints(cctx)
	if err != nil {
		return "", err
	}
	for _, e := range list {
		if e.Name == name {
			return e.ID, nil
		}
	}
	return "", nil
}

// Health is read-only: the receipt is resolved, the settings still hold,
// the key authenticates on the job host, and the endpoint has had no work.
func (l *Lane) Health(ctx context.Context) (*Receipt, error) {
	r, err := LoadReceipt(l.Receipt)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Unresolved():
		return r, fmt.Errorf("health: %w: run cleanup first; no job may be submitted", ErrUnresolved)
	case r.Endpoint.State != StateCreated || r.Template.State != StateCreated:
		return r, fmt.Errorf("health: the receipt has no live endpoint and template (endpoint %q, template %q): run setup with a new receipt", r.Endpoint.State, r.Template.State)
	}
	if err := l.verifyLive(ctx, r); err != nil {
		return r, fmt.Errorf("health: %w", err)
	}
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	h, err := l.Jobs.Health(cctx, r.Endpoint.ID)
	switch {
	case errors.Is(err, runpod.ErrUnauthorized):
		return r, fmt.Errorf("health: the API key does not authenticate on the job host (%w); allow its binding to reach the job host", err)
	case err != nil:
		return r, fmt.Errorf("health: %w", err)
	case !h.Quiet():
		return r, fmt.Errorf("health: endpoint %s already has work (queued %d, running %d, completed %d, failed %d): it is not this attempt's fresh endpoint",
			r.Endpoint.ID, h.Jobs.InQueue, h.Jobs.InProgress, h.Jobs.Completed, h.Jobs.Failed)
	}
	l.logf("health: job host authenticated; endpoint %s has no work; settings verified", r.Endpoint.ID)
	return r, nil
}

// RunRequest is the one job of an attempt.
type RunRequest struct {
	Execute bool
	Payload ApprovedPayload // from Approve: the run does not check the approval again
	Input   jobwire.JobInput
	Output  string // results directory; must not exist or be empty
}

// RunResult is what a run found.
type RunResult struct {
	JobID        string
	State        runpod.JobState
	CUDAExecuted bool
	ExitCode     *int
	Files        []string // result files written under Output/results
	ProviderErr  string
}

// ErrNotExecuted is returned when a run is not confirmed to execute (the
// CLI's --execute, the action's execute input).
var ErrNotExecuted = errors.New("the run is not confirmed to execute: it submits one billable job")

// Run submits exactly one job and collects its checked results. It refuses
// without Execute and a payload Approve approved (the approval is not checked
// again), while a create is unresolved, after a job was already submitted, when the job's
// TTL and the cleanup margin no longer fit before the setup deadline, or
// when the ledger refuses the job's reservation. Polling is bounded by the
// TTL; on cancellation the job is cancelled.
func (l *Lane) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	if !req.Execute {
		return nil, ErrNotExecuted
	}
	payload := req.Payload.Payload()
	if payload == nil {
		return nil, fmt.Errorf("%w: the request carries no payload that Approve approved", ErrNotApproved)
	}
	r, err := l.Health(ctx)
	if err != nil {
		return nil, err
	}
	if r.Job != nil && r.Job.Intent {
		return nil, fmt.Errorf("run: attempt %s already submitted a job (%q): a job is never resubmitted; run setup with a new receipt", r.Attempt, r.Job.ID)
	}
	now := l.now()
	if err := l.reserveJob(r, now); err != nil {
		return nil, err
	}
	in := req.Input
	in.PayloadB64, in.PayloadSHA256 = base64.StdEncoding.EncodeToString(payload.Archive), req.Payload.SHA256()
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
	cctx, cancel := l.bound(ctx, CallTimeout)
	st, err := l.Jobs.Run(cctx, r.Endpoint.ID, in, runpod.JobPolicy{ExecutionTimeout: l.Settings.ExecutionTimeout.Milliseconds(), TTL: l.Settings.JobTTL.Milliseconds()})
	cancel()
	if err != nil {
		r.Job.Status = "submission failed: " + err.Error()
		_ = SaveReceipt(l.Receipt, r)
		return nil, fmt.Errorf("run: %w (not resubmitted)", err)
	}
	r.Job.ID, r.Job.Status = st.ID, string(st.Status)
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return nil, err
	}
	l.logf("run: job %s submitted (%s)", st.ID, st.Status)

	final, err := l.poll(ctx, r, st)
	res := &RunResult{JobID: st.ID}
	if final != nil {
		res.State = final.Status
		r.Job.Status = string(final.Status)
		_ = SaveReceipt(l.Receipt, r)
	}
	if err != nil {
		return res, err
	}
	return res, l.collect(final, req.Output, res)
}

// reserveJob reserves the job's budget in the ledger at now, when the job's
// TTL and the cleanup margin still end before the receipt's cleanup deadline.
func (l *Lane) reserveJob(r *Receipt, now time.Time) error {
	if latest := r.Deadline.Add(-l.Settings.JobTTL - l.Settings.CleanupMargin); now.After(latest) {
		return fmt.Errorf("run: too late for this setup: the job TTL (%s) and cleanup margin (%s) end after the cleanup deadline %s; clean up and set up again",
			l.Settings.JobTTL, l.Settings.CleanupMargin, r.Deadline.Format(time.RFC3339))
	}
	cents := l.Settings.JobReservationCents()
	if _, err := l.Ledger.Reserve(Reservation{Stage: "job", Attempt: r.Attempt, Cents: cents, At: now,
		Basis: fmt.Sprintf("job TTL %s at $%.2f/h + $1", l.Settings.JobTTL, l.Settings.PriceCeiling)}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	l.logf("run: reserved %s for the job", Dollars(cents))
	return nil
}

// poll waits for a terminal state, at most the job TTL from submission.
func (l *Lane) poll(ctx context.Context, r *Receipt, st *runpod.JobStatus) (*runpod.JobStatus, error) {
	every := l.Poll
	if every <= 0 {
		every = DefaultPoll
	}
	end := r.Job.SubmittedAt.Add(l.Settings.JobTTL)
	pctx := reqpolicy.WithDeadline(ctx, end)
	last := st
	for {
		if last.Status.Terminal() {
			return last, nil
		}
		if err := l.Policy.Wait(pctx, every, "job poll"); err != nil || l.now().After(end) {
			reason := fmt.Sprintf("no result within the job TTL %s", l.Settings.JobTTL)
			if ctx.Err() != nil {
				reason = "interrupted"
			}
			l.cancelJob(r)
			return last, fmt.Errorf("run: job %s: %s (job cancelled)", st.ID, reason)
		}
		cctx, cancel := l.bound(ctx, CallTimeout)
		got, err := l.Jobs.Status(cctx, r.Endpoint.ID, st.ID)
		cancel()
		switch {
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

// cancelJob cancels the job with a fresh bounded context (the caller's may be done).
func (l *Lane) cancelJob(r *Receipt) {
	ctx, cancel := l.bound(context.Background(), CallTimeout)
	defer cancel()
	if _, err := l.Jobs.Cancel(ctx, r.Endpoint.ID, r.Job.ID); err != nil {
		l.logf("run: cancel job %s: %v", r.Job.ID, err)
	}
}

// collect keeps the provider's answer and writes the checked result archive.
func (l *Lane) collect(st *runpod.JobStatus, outDir string, res *RunResult) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	var out jobwire.JobOutput
	decodeErr := error(nil)
	if len(st.Output) > 0 {
		decodeErr = json.Unmarshal(st.Output, &out)
	}
	res.ProviderErr = st.ErrorText()
	res.CUDAExecuted, res.ExitCode = out.CUDAExecuted, out.TestsExitCode
	// The provider's answer without the archive (written below once checked).
	kept := map[string]any{"id": st.ID, "status": st.Status, "error": res.ProviderErr, "delayTime": st.DelayTime, "executionTime": st.ExecutionTime,
		"cuda_executed": out.CUDAExecuted, "tests_exit_code": out.TestsExitCode, "worker_error": out.Error, "summary": out.Summary, "result_sha256": out.ResultSHA256}
	if decodeErr != nil {
		kept["raw_output"] = string(st.Output)
	}
	data, _ := json.MarshalIndent(kept, "", "  ")
	if err := os.WriteFile(filepath.Join(outDir, "provider-response.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var errs []error
	if decodeErr != nil {
		errs = append(errs, fmt.Errorf("the job's output is not the worker's JSON: %v", decodeErr))
	}
	if out.ResultB64 != "" {
		archive, err := base64.StdEncoding.DecodeString(out.ResultB64)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("result archive: not base64: %v", err))
		case out.ResultSHA256 != "" && jobwire.SHA256Hex(archive) != out.ResultSHA256:
			errs = append(errs, fmt.Errorf("result archive: SHA-256 %s differs from the worker's %s", jobwire.SHA256Hex(archive), out.ResultSHA256))
		default:
			entries, err := jobwire.Extract(archive, filepath.Join(outDir, "results"), jobwire.DefaultResultLimits)
			if err != nil {
				errs = append(errs, fmt.Errorf("result archive: %w (nothing of it was written)", err))
			}
			for _, e := range entries {
				if !e.Dir {
					res.Files = append(res.Files, e.Name)
				}
			}
		}
	}
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

func firstNonEmptyText(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// CleanupResult says what cleanup confirmed.
type CleanupResult struct {
	Confirmed bool
	Receipt   *Receipt
}

// Cleanup deletes only the receipt's endpoint and template, after checking
// each still carries the recorded name, scales the endpoint down first,
// retries deletes within bounds, and confirms through fresh listings. A
// create whose outcome is unknown is reconciled by name; still unseen, it
// stays unresolved and cleanup is not confirmed.
func (l *Lane) Cleanup(ctx context.Context) (*CleanupResult, error) {
	r, err := LoadReceipt(l.Receipt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := l.bound(ctx, CleanupTimeout)
	defer cancel()
	var problems []string
	for _, res := range []*Resource{&r.Endpoint, &r.Template} {
		if res.ID == "" && (res.State == StateIntent || res.State == StateUnresolved) {
			find := l.findEndpoint
			if res == &r.Template {
				find = l.findTemplate
			}
			id, ferr := find(ctx, res.Name)
			switch {
			case ferr != nil:
				res.State = StateUnresolved
				problems = append(problems, fmt.Sprintf("%s: listing failed: %v", res.Name, ferr))
				continue
			case id == "":
				res.State = StateUnresolved
				problems = append(problems, fmt.Sprintf("%s: its create's outcome is unknown and the name is not listed; repeat cleanup later", res.Name))
				continue
			}
			res.ID, res.State, res.Detail = id, StateCreated, "reconciled by name during cleanup"
		}
	}
	if r.Endpoint.ID != "" && r.Endpoint.State == StateCreated {
		if err := l.deleteEndpoint(ctx, r); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if r.Template.ID != "" && r.Template.State == StateCreated {
		if err := l.deleteTemplate(ctx, r); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := l.confirm(ctx, r); err != nil {
		problems = append(problems, err.Error())
	}
	r.CleanupConfirmed = len(problems) == 0 && !r.Template.Pending() && !r.Endpoint.Pending()
	if r.CleanupConfirmed {
		r.Notes = append(r.Notes, "cleanup confirmed at "+l.now().UTC().Format(time.RFC3339))
	}
	if err := SaveReceipt(l.Receipt, r); err != nil {
		problems = append(problems, err.Error())
	}
	if !r.CleanupConfirmed {
		return &CleanupResult{Receipt: r}, fmt.Errorf("cleanup not confirmed: %s", strings.Join(problems, "; "))
	}
	l.logf("cleanup: endpoint %q and template %q deleted and confirmed absent", r.Endpoint.ID, r.Template.ID)
	return &CleanupResult{Confirmed: true, Receipt: r}, nil
}

func (l *Lane) deleteEndpoint(ctx context.Context, r *Receipt) error {
	id := r.Endpoint.ID
	cctx, cancel := l.bound(ctx, CallTimeout)
	e, err := l.Mgmt.GetEndpoint(cctx, id)
	cancel()
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		return nil // gone: the listing confirms
	case err != nil:
		return fmt.Errorf("endpoint %s: read before delete: %v", id, err)
	case e.Name != r.Endpoint.Name:
		return fmt.Errorf("endpoint %s is named %q, not the recorded %q: not ours, left alone", id, e.Name, r.Endpoint.Name)
	}
	cctx, cancel = l.bound(ctx, CallTimeout)
	if _, err := l.Mgmt.ScaleEndpoint(cctx, id, runpod.EndpointWorkers{Min: 0, Max: 0}); err != nil && !errors.Is(err, runpod.ErrNotFound) {
		l.logf("cleanup: scale endpoint %s to 0: %v (deleting anyway)", id, err)
	}
	cancel()
	return l.deleteBounded(ctx, "endpoint "+id, func(ctx context.Context) error { return l.Mgmt.DeleteEndpoint(ctx, id) })
}

func (l *Lane) deleteTemplate(ctx context.Context, r *Receipt) error {
	id := r.Template.ID
	cctx, cancel := l.bound(ctx, CallTimeout)
	t, err := l.Mgmt.GetTemplate(cctx, id)
	cancel()
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("template %s: read before delete: %v", id, err)
	case t.Name != r.Template.Name || t.Public:
		return fmt.Errorf("template %s is named %q (public %t), not the recorded private %q: not ours, left alone", id, t.Name, t.Public, r.Template.Name)
	}
	return l.deleteBounded(ctx, "template "+id, func(ctx context.Context) error { return l.Mgmt.DeleteTemplate(ctx, id) })
}

// deleteBounded sends an idempotent delete at most deleteAttempts times;
// not found counts as deleted.
func (l *Lane) deleteBounded(ctx context.Context, what string, del func(context.Context) error) error {
	var last error
	for attempt := 1; attempt <= deleteAttempts; attempt++ {
		cctx, cancel := l.bound(reqpolicy.Urgent(reqpolicy.WithAttemptLimit(ctx, 1)), CallTimeout)
		err := del(cctx)
		cancel()
		if err == nil || errors.Is(err, runpod.ErrNotFound) {
			return nil
		}
		last = err
		l.logf("cleanup: delete %s (attempt %d/%d): %v", what, attempt, deleteAttempts, err)
		if attempt < deleteAttempts {
			if werr := l.Policy.Wait(ctx, time.Duration(attempt)*2*time.Second, "delete retry"); werr != nil {
				break
			}
		}
	}
	return fmt.Errorf("delete %s: %v", what, last)
}

// confirm lists endpoints and templates afresh and marks what is absent as deleted.
func (l *Lane) confirm(ctx context.Context, r *Receipt) error {
	var last error
	for round := 1; round <= confirmRounds; round++ {
		cctx, cancel := l.bound(ctx, CallTimeout)
		eps, err1 := l.Mgmt.ListEndpoints(cctx)
		tpls, err2 := l.Mgmt.ListTemplates(cctx)
		cancel()
		if err := errors.Join(err1, err2); err != nil {
			last = err
			continue
		}
		epLeft, tplLeft := false, false
		for _, e := range eps {
			epLeft = epLeft || (r.Endpoint.ID != "" && e.ID == r.Endpoint.ID) || e.Name == r.Endpoint.Name
		}
		for _, t := range tpls {
			tplLeft = tplLeft || (r.Template.ID != "" && t.ID == r.Template.ID) || t.Name == r.Template.Name
		}
		if !epLeft && r.Endpoint.State != StateUnresolved && r.Endpoint.State != "" {
			r.Endpoint.State = StateDeleted
		}
		if !tplLeft && r.Template.State != StateUnresolved && r.Template.State != "" {
			r.Template.State = StateDeleted
		}
		if !epLeft && !tplLeft {
			return nil
		}
		last = fmt.Errorf("still listed after deletion: endpoint %t, template %t", epLeft, tplLeft)
		if err := l.Policy.Wait(ctx, 2*time.Second, "cleanup confirmation"); err != nil {
			break
		}
	}
	return fmt.Errorf("confirmation: %v", last)
}
