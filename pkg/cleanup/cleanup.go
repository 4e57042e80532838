// Package cleanup ends a run attempt's GPU spend: it captures the accepted
// pod's record for cost within a fixed bound, deletes that pod and every other
// pod tagged with the same run attempt, and only then reports what the pod
// cost. Reporting can never prevent or delay deletion, and deletion is
// idempotent: a pod that is already gone is success.
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Bounds of the best-effort reads around deletion.
const (
	// CaptureBound bounds the pre-delete read of the pod record, so that a slow
	// answer never delays the deletion.
	CaptureBound = 5 * time.Second
	// JobsBound bounds the read of the GPU job's steps for the stage breakdown.
	JobsBound = 30 * time.Second
	// ListBound bounds the listing that finds this run's untracked pods.
	ListBound = 60 * time.Second
)

// RunPod is the part of the RunPod client cleanup uses.
type RunPod interface {
	GetPod(ctx context.Context, id string) (*runpod.Pod, error)
	ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error)
	DeletePod(ctx context.Context, id string) error
}

// Jobs reads the jobs of one workflow run attempt (ghapi.Client does).
type Jobs interface {
	ListAttemptJobs(ctx context.Context, runID int64, attempt int) ([]*github.WorkflowJob, error)
}

// Runners removes a runner's registration (ghapi.Client does). When Deps.Jobs
// also implements it, cleanup removes the GPU job's runner after the pod's
// deletion, so its credentials are worth nothing afterwards.
type Runners interface {
	RunnerByName(ctx context.Context, name string, scope ghapi.Scope) (*github.Runner, bool, error)
	DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error
}

// RunnerBound bounds the removal of the runner's registration.
const RunnerBound = 30 * time.Second

// Deps are the services cleanup uses. RunPod is required. Policy supplies the
// clock and the cooldown shared with the RunPod client (nil: a fresh default
// policy); Jobs may be nil, which only costs the stage breakdown.
type Deps struct {
	RunPod RunPod
	Jobs   Jobs
	Policy *reqpolicy.Policy
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
	// Warnf receives what a reader must not miss, such as a pod record the
	// cost report could not use (the action prints a ::warning::); nil sends
	// it to Logf.
	Warnf func(format string, args ...any)
}

// Request describes one cleanup.
type Request struct {
	// PodID is provision's pod-id output; empty when provision never published one.
	PodID string
	// RetainedPodIDs are rejected pods provision kept for inspection (keep-failed-pods);
	// they are left alone. An accepted pod is deleted even in debug mode,
	// unless its tests failed on a pod provision made enterable (keptForSSH).
	RetainedPodIDs []string
	// Run identifies the run attempt whose pods are deleted and whose cost artifact this is.
	Run cost.Run
	// Snapshot is provision's startup snapshot, the fallback for the cost report.
	Snapshot cost.Snapshot
	// RunnerLabel is the GPU job's runner (provision's runner-label output).
	RunnerLabel string
	// TestStep names the GPU job's real test step; empty means cost.DefaultTestStep.
	TestStep string
	// RunnerScope is where the runner is registered; empty means ghapi.ScopeRepo.
	RunnerScope ghapi.Scope
	// Provision is provision's rejected candidates, for a run total of the whole run.
	Provision cost.ProvisionAttempts
	// Lane is provision's record of a lane of pods (lane.go); set, it names
	// the pods instead of PodID, RunnerLabel, Snapshot and Provision.
	Lane *lanetiers.Record
	// HostFaults are the pods the watchdog lost to their hosts.
	HostFaults []lanetiers.HostFault
}

// Deletion is what happened to one pod.
type Deletion struct {
	PodID string
	// Tracked is true for the request's pod, false for one found by its tags.
	Tracked bool
	// AlreadyGone means the pod was deleted before cleanup ran.
	AlreadyGone bool
	// DeletedAt is the confirmation time; zero when deletion is unconfirmed.
	DeletedAt time.Time
	// Err is why deletion is unconfirmed; nil when confirmed.
	Err error
}

// Confirmed reports whether the pod is known to be gone.
func (d Deletion) Confirmed() bool { return d.Err == nil }

// Result is what a cleanup did; it is complete even when Run returns an error.
type Result struct {
	Run       cost.Run
	Deletions []Deletion
	// Kept are retained debug pods of this attempt that were left alone.
	Kept []string
	// KeptForSSH are the pods among Kept whose GPU tests failed, kept for
	// the maintainer to enter (keptForSSH).
	KeptForSSH []KeptPod
	// Report is the accepted pod's cost, built after every deletion; More
	// are the lane's other pods' (a matrix's tiers, a lost pod's re-run).
	Report cost.Report
	More   []cost.Report
	// Rows are the gate's rows: each pod and what its GPU job did, and each
	// tier of the lane without one.
	Rows []lanetiers.Result
}

// Reports are every report, Report first.
func (r Result) Reports() []cost.Report { return append([]cost.Report{r.Report}, r.More...) }

// Remaining lists the pods whose deletion is unconfirmed: they may still bill.
func (r Result) Remaining() []string {
	var ids []string
	for _, d := range r.Deletions {
		if !d.Confirmed() {
			ids = append(ids, d.PodID)
		}
	}
	return ids
}

// Deleted lists the pods whose deletion is confirmed, including those already gone.
func (r Result) Deleted() []string {
	var ids []string
	for _, d := range r.Deletions {
		if d.Confirmed() {
			ids = append(ids, d.PodID)
		}
	}
	return ids
}

// Artifact is the cost artifact cleanup writes for the run attempt.
func (r Result) Artifact() cost.Artifact {
	return cost.Artifact{Run: r.Run, Action: "cleanup", Report: r.Report, More: r.More}
}

// Sentinel errors; test for them with errors.Is.
var (
	// ErrPodsRemain matches a *RemainingError: some pod's deletion is unconfirmed.
	ErrPodsRemain = errors.New("pods of this run attempt may still be billing")
	// ErrUntrackedUnchecked means the pod listing failed, so pods of this run
	// attempt that provision never published may remain.
	ErrUntrackedUnchecked = errors.New("untracked pods of this run attempt could not be checked")
	// ErrCaptureTimeout means the pre-delete read did not answer within CaptureBound.
	ErrCaptureTimeout = errors.New("pod record not read within the capture bound")
)

// RemainingError names every pod whose deletion could not be confirmed.
type RemainingError struct {
	PodIDs []string
	Errs   []error // one per pod, each matching lifecycle.ErrUnconfirmed
}

// Error names the pods that may still bill.
func (e *RemainingError) Error() string {
	return fmt.Sprintf("%v: %s (delete them by hand; the reaper also retries)", ErrPodsRemain, strings.Join(e.PodIDs, ", "))
}

// Is makes errors.Is(err, ErrPodsRemain) hold.
func (e *RemainingError) Is(target error) bool { return target == ErrPodsRemain }

// Unwrap exposes each pod's deletion error.
func (e *RemainingError) Unwrap() []error { return e.Errs }

// Run captures the pod record, deletes the request's pod and every other pod
// of the run attempt, then builds the cost report. It returns a
// *RemainingError when a deletion is unconfirmed and an ErrUntrackedUnchecked
// error when the pod listing failed; the Result is complete either way.
func Run(ctx context.Context, deps Deps, req Request) (Result, error) {
	if deps.RunPod == nil {
		return Result{Run: req.Run}, errors.New("cleanup: Deps.RunPod is required")
	}
	if deps.Policy == nil {
		deps.Policy = reqpolicy.New()
	}
	c := &cleaner{deps: deps, req: req}
	res := Result{Run: req.Run}
	kept := req.retained()
	retained := func(id string) bool { return slices.Contains(kept, id) }

	pods := req.tracked()
	c.ids = map[string]bool{}
	evidence := make([]cost.Evidence, len(pods))
	for i, p := range pods {
		c.ids[p.ID] = p.ID != ""
		evidence[i] = c.deleteTracked(ctx, &res, p, retained)
	}

	var errs []error
	if err := c.deleteUntracked(ctx, &res, &evidence[0], retained); err != nil {
		errs = append(errs, err)
	}

	// Every pod is gone: the runners' registrations go too.
	for _, p := range pods {
		c.removeRunner(ctx, p.RunnerLabel)
	}

	// Reporting comes last: nothing it does can hold up a deletion.
	reports := make([]cost.Report, len(pods))
	for i, p := range pods {
		if evidence[i].PodID != "" && evidence[i].Job == nil {
			evidence[i].Job, evidence[i].JobErr = c.gpuJob(ctx, p.RunnerLabel)
		}
		reports[i] = cost.BuildReport(evidence[i])
		p.mark(&reports[i])
	}
	res.Report, res.More = reports[0], reports[1:]
	res.Rows = req.rows(pods, reports)

	if rerr := res.remainingError(); rerr != nil {
		errs = append([]error{rerr}, errs...)
	}
	return res, errors.Join(errs...)
}

// deleteTracked captures a pod cleanup was told about and deletes it,
// unless it was kept for inspection: the evidence its report is built from.
func (c *cleaner) deleteTracked(ctx context.Context, res *Result, p trackedPod, retained func(string) bool) cost.Evidence {
	evidence := cost.Evidence{PodID: p.ID, Snapshot: p.Snapshot, TestStep: c.req.TestStep, Provision: p.Provision}
	switch {
	case p.ID == "":
		c.logf("no pod id was published: looking for pods of run %d attempt %d by their tags", c.req.Run.ID, c.req.Run.Attempt)
	case retained(p.ID):
		c.logf("pod %s was retained for inspection (keep-failed-pods): leaving it", p.ID)
		res.Kept = append(res.Kept, p.ID)
		evidence.PodID = ""
	default:
		evidence.Record, evidence.RecordErr = c.capture(ctx, p.ID)
		if k, ok := c.keptForSSH(ctx, p, &evidence); ok {
			res.Kept, res.KeptForSSH = append(res.Kept, p.ID), append(res.KeptForSSH, k)
			return evidence
		}
		d := c.delete(ctx, p.ID, true)
		d.AlreadyGone = gone(evidence.Record, evidence.RecordErr)
		evidence.AlreadyGone = d.AlreadyGone
		if d.Confirmed() {
			evidence.DeletedAt = wire.KnownTime(d.DeletedAt)
		}
		res.Deletions = append(res.Deletions, d)
	}
	return evidence
}

// deleteUntracked deletes the pods tagged with this run attempt that were
// never published, except those retained, recording each in res and
// evidence. The error, already logged, says the pods could not be listed.
func (c *cleaner) deleteUntracked(ctx context.Context, res *Result, evidence *cost.Evidence, retained func(string) bool) error {
	untracked, err := c.untracked(ctx)
	if err != nil {
		c.logf("%v", err)
	}
	for _, p := range untracked {
		if retained(p.pod.ID) {
			res.Kept = append(res.Kept, p.pod.ID)
			continue
		}
		c.logf("pod %s (%s) is tagged with this run attempt but was never published: deleting it", p.pod.ID, p.pod.Name)
		d := c.delete(ctx, p.pod.ID, false)
		res.Deletions = append(res.Deletions, d)
		evidence.Untracked = append(evidence.Untracked, cost.UntrackedPod{Pod: p.pod, Candidate: p.tags.Candidate, DeletedAt: d.DeletedAt})
	}
	return err
}

// remainingError names the pods whose deletion is unconfirmed, with why;
// nil when there are none.
func (r Result) remainingError() error {
	remaining := r.Remaining()
	if len(remaining) == 0 {
		return nil
	}
	rerr := &RemainingError{PodIDs: remaining}
	for _, d := range r.Deletions {
		if !d.Confirmed() {
			rerr.Errs = append(rerr.Errs, d.Err)
		}
	}
	return rerr
}

type cleaner struct {
	deps Deps
	req  Request
	ids  map[string]bool // the pods cleanup was told about: not untracked
}

// capture reads the pod record once, within CaptureBound on the policy's
// clock. An answer that arrives after the bound is discarded, so the bound
// holds on any clock; so is a record that does not describe this pod of this
// run attempt, which would otherwise be priced and timed as ours. Deletion
// follows either way; an unreadable or unusable record is a warning that
// names the pod, since the report then rests on the startup snapshot.
func (c *cleaner) capture(ctx context.Context, id string) (*runpod.Pod, error) {
	deadline := c.deps.Policy.Now().Add(CaptureBound)
	cctx, cancel := reqpolicy.Bound(ctx, c.deps.Policy, CaptureBound)
	defer cancel()
	pod, err := c.deps.RunPod.GetPod(reqpolicy.WithAttemptLimit(cctx, 1), id)
	switch {
	case err == nil && c.deps.Policy.Now().After(deadline):
		err = fmt.Errorf("%w: answered after %s", ErrCaptureTimeout, CaptureBound)
	case err == nil:
		err = CheckRecord(pod, id, c.req.Run)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		err = fmt.Errorf("%w (%s): %w", ErrCaptureTimeout, CaptureBound, err)
	}
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		// Already gone is the idempotent case, not an unreadable record.
		c.logf("pod %s: already gone before deletion: %v", id, err)
		return nil, err
	case err != nil:
		c.warnf("pod %s: record before deletion unreadable or unusable, so the cost report falls back to the %s: %v", id, cost.SnapshotSource, err)
		return nil, err
	}
	return pod, nil
}

// CheckRecord reports, as an error matching runpod.ErrUnusableRecord, a pod
// record that does not describe pod id of this run attempt: another id, or a
// name (and, when the record shows them, ownership tags) of another run or
// attempt. Such an answer — a stale cache, a mixed-up edge — would be priced
// and timed as this pod. A run without an id (a caller that does not know
// it) checks the id only.
func CheckRecord(pod *runpod.Pod, id string, run cost.Run) error {
	if pod == nil {
		return fmt.Errorf("%w: pod %s: no record", runpod.ErrUnusableRecord, id)
	}
	if pod.ID != id {
		return fmt.Errorf("%w: pod %s: the record describes pod %q", runpod.ErrUnusableRecord, id, pod.ID)
	}
	if run.ID == 0 {
		return nil
	}
	if runID, attempt, _, ok := ownership.ParsePodName(pod.Name); !ok || runID != run.ID || attempt != run.Attempt {
		return fmt.Errorf("%w: pod %s: the record is named %q, not %s of run %d attempt %d",
			runpod.ErrUnusableRecord, id, pod.Name, ownership.PodNamePattern(run.ID, run.Attempt), run.ID, run.Attempt)
	}
	if _, tagged := pod.Env[ownership.EnvOwner]; !tagged {
		return nil // the name alone identifies it; the API may leave the env out
	}
	tags, err := ownership.FromPod(pod.Name, pod.Env)
	if err == nil && !tags.SameAttempt(run.Repository, run.ID, run.Attempt) {
		err = fmt.Errorf("its tags name %s run %d attempt %d", tags.Repository, tags.RunID, tags.Attempt)
	}
	if err != nil {
		return fmt.Errorf("%w: pod %s: the record's ownership tags do not name %s run %d attempt %d: %v",
			runpod.ErrUnusableRecord, id, run.Repository, run.ID, run.Attempt, err)
	}
	return nil
}

// gone reports whether the pre-delete read showed the pod already deleted.
func gone(pod *runpod.Pod, err error) bool {
	return errors.Is(err, runpod.ErrNotFound) || (err == nil && pod.Status == runpod.PodTerminated)
}

func (c *cleaner) delete(ctx context.Context, id string, tracked bool) Deletion {
	deleter := &lifecycle.Deleter{Pods: c.deps.RunPod, Policy: c.deps.Policy, Logf: c.deps.Logf}
	at, err := deleter.Delete(ctx, id)
	return Deletion{PodID: id, Tracked: tracked, DeletedAt: at, Err: err}
}

type taggedPod struct {
	pod  runpod.Pod
	tags ownership.Tags
}

// untracked lists every live pod whose ownership tags name this run attempt,
// other than the request's pod (a provision step killed before it published
// its id leaves such a pod), each once. Untagged and foreign pods are never
// touched. A tagged entry without an id is returned as an
// ErrUntrackedUnchecked error next to the pods that can be deleted.
func (c *cleaner) untracked(ctx context.Context) ([]taggedPod, error) {
	lctx, cancel := reqpolicy.Bound(ctx, c.deps.Policy, ListBound)
	defer cancel()
	// Urgent: this listing is the only way to find a pod whose create answer
	// was lost, and such a pod bills until it is found; a cooldown longer than
	// the bound must not keep it unsent.
	pods, err := c.deps.RunPod.ListPods(reqpolicy.Urgent(lctx), runpod.ListPodsQuery{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUntrackedUnchecked, err)
	}
	var out []taggedPod
	var noID []string
	seen := map[string]bool{}
	for _, p := range pods {
		if c.ids[p.ID] || p.Status == runpod.PodTerminated {
			continue
		}
		tags, err := ownership.FromPod(p.Name, p.Env)
		if err != nil || !tags.SameAttempt(c.req.Run.Repository, c.req.Run.ID, c.req.Run.Attempt) {
			continue
		}
		// An entry without an id cannot be deleted (DELETE /v2/pods/ names no
		// pod), and one listed twice is one pod: deleting and pricing it twice
		// would double its cost in the report.
		if strings.TrimSpace(p.ID) == "" {
			noID = append(noID, p.Name)
			continue
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		out = append(out, taggedPod{pod: p, tags: tags})
	}
	if len(noID) > 0 {
		return out, fmt.Errorf("%w: the pod listing shows %s, tagged with this run attempt, without an id (delete it in the RunPod console)",
			ErrUntrackedUnchecked, strings.Join(noID, ", "))
	}
	return out, nil
}

// gpuJob finds the GPU job of the run attempt by its runner label, within JobsBound.
func (c *cleaner) gpuJob(ctx context.Context, label string) (*github.WorkflowJob, error) {
	switch {
	case c.deps.Jobs == nil:
		return nil, errors.New("no GitHub credentials to read the GPU job's steps")
	case label == "":
		return nil, errors.New("no runner label to find the GPU job by")
	}
	jctx, cancel := reqpolicy.Bound(ctx, c.deps.Policy, JobsBound)
	defer cancel()
	jobs, err := c.deps.Jobs.ListAttemptJobs(jctx, c.req.Run.ID, c.req.Run.Attempt)
	if err != nil {
		return nil, err
	}
	// Only jobs of this run attempt: another run's job on a runner of the same
	// label would lend its steps and conclusion to this pod's report.
	jobs = slices.DeleteFunc(slices.Clone(jobs), func(j *github.WorkflowJob) bool {
		return j == nil || j.GetRunID() != c.req.Run.ID || (j.RunAttempt != nil && j.GetRunAttempt() != int64(c.req.Run.Attempt))
	})
	job := cost.FindGPUJob(jobs, label)
	if job == nil {
		return nil, fmt.Errorf("no job of run %d attempt %d ran on runner %s", c.req.Run.ID, c.req.Run.Attempt, label)
	}
	return job, nil
}

// removeRunner deletes the registration of the runner named by the runner
// label, best effort and bounded: once the pod is gone nothing legitimate can
// use it, and credentials the job's code could read become worthless.
func (c *cleaner) removeRunner(ctx context.Context, label string) {
	runners, ok := c.deps.Jobs.(Runners)
	if !ok || label == "" {
		return
	}
	rctx, cancel := reqpolicy.Bound(ctx, c.deps.Policy, RunnerBound)
	defer cancel()
	r, found, err := runners.RunnerByName(rctx, label, c.req.RunnerScope)
	switch {
	case err != nil:
		c.warnf("runner %s: could not look up its registration to remove it (%v); GitHub drops it within a day", label, err)
		return
	case !found:
		c.logf("runner %s: no registration remains", label)
		return
	}
	if err := runners.DeleteRunner(rctx, r.GetID(), c.req.RunnerScope); err != nil {
		c.warnf("runner %s: could not remove its registration (%v); GitHub drops it within a day", label, err)
		return
	}
	c.logf("runner %s: registration removed", label)
}

func (c *cleaner) logf(format string, args ...any) {
	if c.deps.Logf != nil {
		c.deps.Logf(format, args...)
	}
}

func (c *cleaner) warnf(format string, args ...any) {
	if c.deps.Warnf != nil {
		c.deps.Warnf(format, args...)
		return
	}
	c.logf(format, args...)
}

// ParseIDs splits a comma-separated list of pod ids (provision's
// created-pod-ids and retained-pod-ids outputs), dropping blanks and repeats.
func ParseIDs(list string) []string {
	var ids []string
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
