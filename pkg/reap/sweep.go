package reap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Lookup bounds (defaults of the Sweeper's zero fields).
const (
	DefaultLookupTimeout  = 60 * time.Second
	DefaultLookupAttempts = 2
	// ListPodsTimeout bounds the whole paginated pod listing: a stalled page
	// fails the sweep visibly (nothing decided) instead of holding the job.
	ListPodsTimeout = 3 * time.Minute
)

// listAllPods lists every pod of the account within ListPodsTimeout.
// Decisions come only from complete lists: ListPods fails rather than return
// part of one.
func listAllPods(ctx context.Context, pods PodLister) ([]runpod.Pod, error) {
	lctx, cancel := context.WithTimeout(ctx, ListPodsTimeout)
	defer cancel()
	return pods.ListPods(lctx, runpod.ListPodsQuery{})
}

// PodLister lists every pod of the account (runpod.Client).
type PodLister interface {
	ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error)
}

// RunAPI is the part of the GitHub client a sweep uses (ghapi.Client).
type RunAPI interface {
	GetWorkflowRun(ctx context.Context, runID int64) (*github.WorkflowRun, error)
	// ArtifactsWithPrefix lists the repository's artifacts named prefix…,
	// newest first, down to since (one listing per sweep, not one per run).
	ArtifactsWithPrefix(ctx context.Context, prefix string, since time.Time) ([]*github.Artifact, error)
	CancelWorkflowRun(ctx context.Context, runID int64) error
}

// PodDeleter deletes one pod within bounds and returns the confirmed
// deletion time (lifecycle.Deleter).
type PodDeleter interface {
	Delete(ctx context.Context, podID string) (time.Time, error)
}

// Sweeper runs sweeps. Its zero bounds take the defaults.
type Sweeper struct {
	Pods    PodLister
	GitHub  RunAPI
	Deleter PodDeleter
	// Clock is the decision time; nil means the wall clock.
	Clock clock.Clock
	// LookupTimeout bounds each GitHub lookup and LookupAttempts the requests
	// it sends, so one failing run costs seconds, not the sweep; the next
	// scheduled sweep retries it.
	LookupTimeout  time.Duration
	LookupAttempts int
	// Logf receives one line per decision, deletion and cost report; nil discards them.
	Logf func(format string, args ...any)
}

// Request is one sweep.
type Request struct {
	Scope
	// Execute deletes reclaimed pods; false is a dry run that decides the same
	// and deletes nothing.
	Execute bool
	// Event is the triggering event, recorded for the reader.
	Event string
	// RetentionCap bounds how long a retention record keeps a debug pod;
	// zero means DefaultRetentionCap.
	RetentionCap time.Duration
}

// ShouldExecute is the dry-run rule: a scheduled sweep always executes; any
// other trigger (a manual dispatch above all) executes only when asked.
func ShouldExecute(event string, executeInput bool) bool {
	return event == "schedule" || executeInput
}

// ErrIncomplete matches an *IncompleteError.
var ErrIncomplete = errors.New("reap: sweep incomplete")

// IncompleteError reports the pods a sweep could not settle. Each was left as
// it was (or, for an unconfirmed deletion, may still be billing); the other
// pods were handled.
type IncompleteError struct {
	Undecided   []string // pods whose facts could not be read
	Unconfirmed []string // reclaimed pods whose deletion was not confirmed
	Uncancelled []string // pods whose owning run could not be cancelled
}

// Error lists the unsettled pods by kind.
func (e *IncompleteError) Error() string {
	var parts []string
	for _, p := range []struct {
		what string
		ids  []string
	}{
		{"undecided (facts unreadable, left untouched)", e.Undecided},
		{"deletion unconfirmed (may still be billing)", e.Unconfirmed},
		{"deleted, but the owning run's cancellation failed", e.Uncancelled},
	} {
		if len(p.ids) > 0 {
			parts = append(parts, fmt.Sprintf("%d pod(s) %s: %s", len(p.ids), p.what, strings.Join(p.ids, ", ")))
		}
	}
	return "reap: sweep incomplete: " + strings.Join(parts, "; ") + " — see the decision record; the next sweep retries"
}

// Is makes errors.Is(err, ErrIncomplete) hold.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// Sweep lists every pod, gathers the facts its decisions need (one lookup per
// owning run, cached for the sweep), decides, and — when executing — reclaims.
// It always returns a record; the error is non-nil when the listing failed
// (nothing decided) or some pods could not be settled (*IncompleteError).
func (s *Sweeper) Sweep(ctx context.Context, req Request) (*Record, error) {
	now := clock.Now(s.Clock)
	rec := &Record{Version: RecordVersion, CheckedAt: now, Execute: req.Execute, Event: req.Event, Repository: req.Repository, Pods: []PodRecord{}}
	pods, err := listAllPods(ctx, s.Pods)
	if err != nil {
		rec.Error = err.Error()
		return rec, fmt.Errorf("reap: list pods (nothing was decided): %w", err)
	}
	views := make([]PodView, len(pods))
	for i, p := range pods {
		views[i] = View(p, req.Scope)
	}
	facts := s.gather(ctx, views, now)
	facts.RetentionCap = req.RetentionCap

	cancelled := map[int64]string{} // run id → outcome, so a run is cancelled once
	for _, v := range views {
		verdict := Decide(v, facts)
		pr := newPodRecord(v, verdict, now)
		s.logf("pod %s (%s): %s, %s%s", v.ID, v.Name, verdict.Decision, verdict.Reason, suffix(verdict.Detail))
		if verdict.Decision == DecisionReclaim && req.Execute {
			s.reclaim(ctx, v, &pr, cancelled)
		}
		rec.Pods = append(rec.Pods, pr)
	}
	return rec, incomplete(rec)
}

// gather reads the owning run of every pod in scope that is not past the
// backstop (no run answer changes that decision), then — in one listing of
// the repository's retention artifacts — the records of the runs whose
// keep-failed pods would be reclaimed. Each run is read once per sweep, so
// API calls are the listing pages plus one per run, whatever the pods.
func (s *Sweeper) gather(ctx context.Context, views []PodView, now time.Time) Facts {
	facts := Facts{Now: now, Runs: map[int64]RunInfo{}, Retained: map[int64]RetentionLookup{}}
	for _, v := range views {
		if _, _, over := pastBackstop(v, now); v.Foreign != "" || v.Status == runpod.PodTerminated || over {
			continue
		}
		if _, done := facts.Runs[v.Tags.RunID]; !done {
			facts.Runs[v.Tags.RunID] = s.lookupRun(ctx, v.Tags.RunID)
		}
	}
	need := map[int64]bool{}
	var since time.Time // the oldest such pod's creation: no record of it is older
	known := true
	for _, v := range views {
		// Every such pod counts, not only a run's first: a run's pods can be
		// hours apart (a rerun's), and the listing must reach the oldest.
		if !NeedsRetention(v, facts) {
			continue
		}
		need[v.Tags.RunID] = true
		created, ok := v.CreatedAt.Get()
		switch {
		case !ok:
			known = false
		case since.IsZero() || created.Before(since):
			since = created
		}
	}
	if len(need) == 0 {
		return facts
	}
	if !known {
		since = time.Time{} // a pod of unknown age: read every record
	} else {
		since = since.Add(-retentionClockSkew)
	}
	records := s.lookupRetention(ctx, need, since)
	for runID := range need {
		facts.Retained[runID] = records[runID]
	}
	return facts
}

// retentionClockSkew allows for GitHub's and RunPod's clocks disagreeing when
// the listing stops at the oldest relevant pod's creation.
const retentionClockSkew = time.Hour

func (s *Sweeper) lookupRun(ctx context.Context, runID int64) RunInfo {
	ctx, cancel := s.lookupContext(ctx)
	defer cancel()
	run, err := s.GitHub.GetWorkflowRun(ctx, runID)
	if err != nil {
		return RunInfo{Err: err}
	}
	return RunInfoFrom(run)
}

// lookupRetention reads the retention records of the runs in need from one
// listing of the repository's artifacts named ownership.RetentionPrefix…. A record
// that the run it names did not upload (a wrong answer, or another workflow
// of the repository uploading any name) makes that run's lookup fail: its
// pods under the retention cap are left undecided, never deleted on doubt.
// Expired artifacts no longer record anything, so such a pod is reclaimable.
// When the listing fails, every run's lookup fails.
func (s *Sweeper) lookupRetention(ctx context.Context, need map[int64]bool, since time.Time) map[int64]RetentionLookup {
	ctx, cancel := s.lookupContext(ctx)
	defer cancel()
	out := make(map[int64]RetentionLookup, len(need))
	artifacts, err := s.GitHub.ArtifactsWithPrefix(ctx, ownership.RetentionPrefix, since)
	if err != nil {
		for runID := range need {
			out[runID] = RetentionLookup{Err: err}
		}
		return out
	}
	for _, a := range artifacts {
		r, err := ownership.ParseRetentionName(a.GetName())
		switch {
		case errors.Is(err, ownership.ErrNotRetentionName):
			continue
		case err != nil:
			s.logf("ignoring artifact %d: %v", a.GetID(), err)
			continue
		case !need[r.RunID]:
			continue
		case a.GetWorkflowRun().GetID() != r.RunID:
			// A wrong answer or another workflow's upload: either way what
			// the run recorded is unknown, and unknown is never a deletion.
			out[r.RunID] = RetentionLookup{Err: fmt.Errorf("retention record %q (artifact %d) names run %d but belongs to run %d; the listing is not trusted for this run",
				a.GetName(), a.GetID(), r.RunID, a.GetWorkflowRun().GetID())}
			continue
		case out[r.RunID].Err != nil:
			continue
		case a.GetExpired():
			s.logf("run %d: retention record %q has expired; its pods are reclaimable", r.RunID, a.GetName())
			continue
		}
		lookup := out[r.RunID]
		lookup.Records = append(lookup.Records, r)
		out[r.RunID] = lookup
	}
	return out
}

func (s *Sweeper) lookupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	attempts := s.LookupAttempts
	if attempts <= 0 {
		attempts = DefaultLookupAttempts
	}
	timeout := s.LookupTimeout
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	return context.WithTimeout(reqpolicy.WithAttemptLimit(ctx, attempts), timeout)
}

// reclaim deletes the pod, reports its cost, and after a lifetime reclaim
// cancels the owning run — only once deletion is confirmed, only while that
// very attempt is the run's latest and the run has not completed.
func (s *Sweeper) reclaim(ctx context.Context, v PodView, pr *PodRecord, cancelled map[int64]string) {
	deletedAt, err := s.Deleter.Delete(ctx, v.ID)
	if err != nil {
		pr.DeleteError = err.Error()
		s.logf("pod %s: deletion unconfirmed: %v", v.ID, err)
		return
	}
	pr.DeletedAt = wire.KnownTime(deletedAt)
	report := cost.Report{
		PodID: v.ID, GPU: v.GPU, Price: cost.KnownPrice(money.PerHour(v.PerHour), "v2 cost in the reaper's listing"),
		// Start is the provider's start only: a pod that never started has an unknown cost, not createdAt's.
		Window: cost.Window{Start: v.StartedAt, End: pr.DeletedAt},
		Notes:  []string{fmt.Sprintf("Reclaimed by the reaper (%s).", pr.Reason)},
	}
	pr.Cost = &report
	s.logf("pod %s: deleted at %s; estimated cost %s", v.ID, deletedAt.UTC().Format(time.RFC3339), report.Dollars())
	s.logf("%s", cost.CostLine(report).Format())

	if pr.Reason != ReasonLifetime {
		return
	}
	if outcome, done := cancelled[v.Tags.RunID]; done {
		pr.RunCancellation = outcome
		return
	}
	pr.RunCancellation, err = s.cancelRun(ctx, v)
	if err != nil {
		pr.CancelError = err.Error()
		s.logf("run %d: cancellation failed: %v", v.Tags.RunID, err)
		return
	}
	cancelled[v.Tags.RunID] = pr.RunCancellation
	s.logf("run %d: %s", v.Tags.RunID, pr.RunCancellation)
}

// cancelRun re-reads the run (the sweep's copy may be minutes old, and a pod
// past the backstop was decided without it) and cancels it only while that
// answer is about the pod's run and its attempt is still the latest and running.
func (s *Sweeper) cancelRun(ctx context.Context, v PodView) (string, error) {
	lctx, cancel := s.lookupContext(ctx)
	defer cancel()
	run, err := s.GitHub.GetWorkflowRun(lctx, v.Tags.RunID)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		// Nothing this token can see is left to cancel.
		return fmt.Sprintf("not cancelled: run %d was not found", v.Tags.RunID), nil
	case err != nil:
		return "", err
	}
	info := RunInfoFrom(run)
	if mismatch := info.Mismatch(v.Tags); mismatch != "" {
		// Another run's state cannot show that the pod's attempt is still the latest.
		return "", fmt.Errorf("run %d not cancelled: %s; the answer is not trusted", v.Tags.RunID, mismatch)
	}
	switch {
	case info.LatestAttempt != v.Tags.Attempt:
		return fmt.Sprintf("not cancelled: attempt %d is newer than the pod's attempt %d", info.LatestAttempt, v.Tags.Attempt), nil
	case info.Completed():
		return "not cancelled: the run already completed", nil
	}
	err = s.GitHub.CancelWorkflowRun(lctx, v.Tags.RunID)
	switch {
	case errors.Is(err, ghapi.ErrRunCompleted):
		return "not cancelled: the run completed meanwhile", nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("cancelled run %d attempt %d", v.Tags.RunID, v.Tags.Attempt), nil
}

// incomplete returns an *IncompleteError naming every pod that failed, or nil.
func incomplete(rec *Record) error {
	e := &IncompleteError{}
	for _, p := range rec.Pods {
		switch {
		case p.Decision == DecisionError:
			e.Undecided = append(e.Undecided, p.PodID)
		case p.DeleteError != "":
			e.Unconfirmed = append(e.Unconfirmed, p.PodID)
		case p.CancelError != "":
			e.Uncancelled = append(e.Uncancelled, p.PodID)
		}
	}
	if len(e.Undecided)+len(e.Unconfirmed)+len(e.Uncancelled) == 0 {
		return nil
	}
	return e
}

func (s *Sweeper) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}
