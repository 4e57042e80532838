package reap

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The reclaim rules' thresholds.
const (
	// CompletedGrace is how long after its run completed a pod is left to the
	// run's own cleanup before the reaper reclaims it.
	CompletedGrace = 5 * time.Minute
	// MaxLifetime is the backstop: a pod active longer than this is reclaimed
	// whatever its run says, and whether or not the run could be read.
	MaxLifetime = 2 * time.Hour
	// DefaultRetentionCap is how long a debug-retained pod (keep-failed) is
	// kept at most: past it the pod is reclaimed although a record retains it.
	DefaultRetentionCap = ownership.DefaultRetentionCap
	// MinRetentionCap and MaxRetentionCap bound a configured retention cap:
	// at least an hour to inspect, at most 30 days of paying for an idle pod.
	MinRetentionCap = time.Hour
	MaxRetentionCap = 30 * 24 * time.Hour
)

// Decision is what a sweep does with one pod.
type Decision string

// Decisions.
const (
	DecisionReclaim     Decision = "reclaim"      // delete the pod (when executing)
	DecisionKeep        Decision = "keep"         // ours, but not to be reclaimed now
	DecisionSkipForeign Decision = "skip-foreign" // not provably ours: never touched
	DecisionError       Decision = "error"        // facts unreadable: untouched, and the sweep fails
)

// Reason says why a decision was taken. Reasons never quote a pod's
// environment, so records and logs can show them as they are.
type Reason string

// Reasons for skip-foreign.
const (
	ReasonUntagged         Reason = "untagged"             // no owner marker
	ReasonForeignOwner     Reason = "foreign-owner-marker" // another tool's marker
	ReasonMalformedRunID   Reason = "malformed-run-id"
	ReasonMalformedAttempt Reason = "malformed-attempt"
	ReasonMalformedTags    Reason = "malformed-tags"      // repository, workflow or candidate
	ReasonNameDisagrees    Reason = "name-disagrees"      // the name is not the tags' pod name
	ReasonOtherRepository  Reason = "other-repository"    // tagged for another repository
	ReasonOtherWorkflow    Reason = "workflow-not-reaped" // a workflow outside Scope.Workflows
)

// Reasons for reclaim.
const (
	ReasonAttemptSuperseded Reason = "attempt-superseded"
	ReasonRunCompleted      Reason = "run-completed"
	ReasonLifetime          Reason = "lifetime-exceeded"
	// ReasonRetentionCap reclaims a debug-retained pod kept past the retention cap.
	ReasonRetentionCap Reason = "retention-cap-exceeded"
)

// Reasons for keep.
const (
	ReasonRunActive            Reason = "run-active"
	ReasonRunCompletedRecently Reason = "run-completed-recently"
	ReasonRetained             Reason = "retained-for-debug"
	ReasonTerminated           Reason = "already-terminated"
	// ReasonRunMismatch: the run answer names another run, repository or
	// workflow, or fewer attempts than the tags; it is not trusted, and the
	// pod is left to the age backstop.
	ReasonRunMismatch Reason = "run-mismatch"
)

// Reasons for error.
const (
	ReasonRunLookupFailed       Reason = "run-lookup-failed"
	ReasonRunNotFound           Reason = "run-not-found"
	ReasonRetentionLookupFailed Reason = "retention-lookup-failed"
	ReasonFactsMissing          Reason = "facts-missing" // a fact the decision needs was never gathered
)

// Scope says which pods a sweep may reclaim.
type Scope struct {
	// Repository is this repository, owner/name.
	Repository string
	// Workflows are the workflow paths whose pods may be reclaimed and whose
	// runs may be cancelled; empty means LaneWorkflows. A pod of any other
	// workflow is foreign, so a run of another workflow is never cancelled.
	Workflows []string
}

// LaneWorkflows are the lane's own workflow files, as runpod-gpu init writes
// them (callers.LanePath and callers.RelayPath, spelt out so that the image
// does not carry the callers' templates): the GPU lane and the local-gate
// relay, the only callers that create pods.
var LaneWorkflows = []string{".github/workflows/runpod-gpu.yml", ".github/workflows/local-gpu-gate.yml"}

// workflows returns the workflows whose pods the scope may reclaim.
func (s Scope) workflows() []string {
	if len(s.Workflows) == 0 {
		return LaneWorkflows
	}
	return s.Workflows
}

// PodView is what a decision may know about a listed pod. It deliberately
// has no environment: nothing downstream of View can leak one.
type PodView struct {
	ID     string
	Name   string
	Status runpod.PodStatus
	GPU    string
	// PerHour is the hourly cost the listing showed (0 once the pod stopped).
	PerHour   float64
	CreatedAt wire.Time
	StartedAt wire.Time
	// Tags are the pod's ownership tags; meaningful only when Foreign is "".
	Tags ownership.Tags
	// Foreign is why the pod is outside the scope; "" for the scope's pods.
	Foreign Reason
}

// View reduces a listed pod to a PodView, checking its ownership against scope.
func View(p runpod.Pod, scope Scope) PodView {
	v := PodView{ID: p.ID, Name: p.Name, Status: p.Status, PerHour: float64(p.Cost), CreatedAt: p.CreatedAt, StartedAt: p.StartedAt}
	if p.GPU != nil {
		v.GPU = p.GPU.ID
	}
	tags, err := ownership.FromPod(p.Name, p.Env)
	switch {
	case err != nil:
		// FromPod's message quotes env values; only a reason code leaves here.
		v.Foreign = foreignReason(p.Name, p.Env)
	case !strings.EqualFold(tags.Repository, scope.Repository):
		v.Foreign = ReasonOtherRepository
	case !slices.Contains(scope.workflows(), tags.Workflow):
		v.Foreign = ReasonOtherWorkflow
	default:
		v.Tags = tags
	}
	return v
}

// foreignReason names which ownership check a pod failed, in FromPod's order.
func foreignReason(name string, env map[string]string) Reason {
	// The marker of an empty workflow is exactly the suite's marker prefix.
	prefix := ownership.Tags{}.OwnerMarker()
	marker := env[ownership.EnvOwner]
	runID, errRun := strconv.ParseInt(env[ownership.EnvRunID], 10, 64)
	attempt, errAttempt := strconv.Atoi(env[ownership.EnvAttempt])
	candidate, errCandidate := strconv.Atoi(env[ownership.EnvCandidate])
	switch {
	case marker == "":
		return ReasonUntagged
	case !strings.HasPrefix(marker, prefix):
		return ReasonForeignOwner
	case errRun != nil || runID <= 0:
		return ReasonMalformedRunID
	case errAttempt != nil || attempt <= 0:
		return ReasonMalformedAttempt
	case errCandidate != nil:
		return ReasonMalformedTags
	}
	tags := ownership.Tags{Repository: env[ownership.EnvRepository], Workflow: strings.TrimPrefix(marker, prefix),
		RunID: runID, Attempt: attempt, Candidate: candidate}
	if tags.Validate() != nil {
		return ReasonMalformedTags
	}
	return ReasonNameDisagrees
}

// AgeBasis names the timestamp a pod's age was measured from.
type AgeBasis string

// Age bases.
const (
	AgeFromStart   AgeBasis = "startedAt"
	AgeFromCreated AgeBasis = "createdAt" // the pod never started: age only, never cost
	AgeUnknown     AgeBasis = ""
)

// Age returns how long the pod has been active at now: from its provider
// start, or from its creation when it never started (stuck before startup).
// createdAt is used here for age only; cost never reads it.
func (p PodView) Age(now time.Time) (time.Duration, AgeBasis) {
	if t, ok := p.StartedAt.Get(); ok {
		return now.Sub(t), AgeFromStart
	}
	if t, ok := p.CreatedAt.Get(); ok {
		return now.Sub(t), AgeFromCreated
	}
	return 0, AgeUnknown
}

// RunInfo is what the sweep read about an owning workflow run.
type RunInfo struct {
	ID            int64  // the run the answer describes, which need not be the one asked for
	Repository    string // owner/name the run belongs to
	Workflow      string // the run's workflow path
	LatestAttempt int
	Status        string    // queued, in_progress, completed, …
	UpdatedAt     wire.Time // for a completed run, when it completed
	// Err is the lookup's failure; when set nothing else is known.
	Err error
}

// Completed reports whether the run's latest attempt has completed.
func (r RunInfo) Completed() bool { return r.Status == "completed" }

// RunInfoFrom reads a GitHub workflow run (as GET …/actions/runs/{id} shows
// its latest attempt).
func RunInfoFrom(run *github.WorkflowRun) RunInfo {
	info := RunInfo{
		ID: run.GetID(), Repository: run.GetRepository().GetFullName(), LatestAttempt: run.GetRunAttempt(), Status: run.GetStatus(),
		// A run's path may carry a ref ("….yml@refs/heads/main"); the tags hold the path alone.
		Workflow: strings.SplitN(run.GetPath(), "@", 2)[0],
	}
	if t := run.GetUpdatedAt(); !t.IsZero() {
		info.UpdatedAt = wire.KnownTime(t.Time)
	}
	return info
}

// Mismatch says how the run answer disagrees with the pod's tags: another
// run id, repository or workflow, or fewer attempts than the tags name; ""
// when it describes the tags' run. A mismatching answer (GitHub or a proxy
// answering for another run) says nothing about the pod's run.
func (r RunInfo) Mismatch(t ownership.Tags) string {
	switch {
	case r.ID != t.RunID || !strings.EqualFold(r.Repository, t.Repository) || r.Workflow != t.Workflow:
		return fmt.Sprintf("asked for run %d of %s %s, GitHub answered with run %d of %s %s",
			t.RunID, t.Repository, t.Workflow, r.ID, orUnknown(r.Repository), orUnknown(r.Workflow))
	case t.Attempt > r.LatestAttempt:
		return fmt.Sprintf("run %d has %d attempt(s); the tags name attempt %d", t.RunID, r.LatestAttempt, t.Attempt)
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// RetentionLookup is what the sweep read about a run's retention records.
type RetentionLookup struct {
	Records []ownership.Retention
	Err     error
}

// Facts are everything a sweep's decisions depend on besides the pods.
type Facts struct {
	Now time.Time
	// RetentionCap bounds how long a retention record keeps a pod; zero means
	// DefaultRetentionCap.
	RetentionCap time.Duration
	// Runs holds the lookups of owning runs, by run id.
	Runs map[int64]RunInfo
	// Retained holds the retention records of runs, by run id; it is needed
	// only for runs with reclaim-eligible keep-failed pods (NeedsRetention).
	Retained map[int64]RetentionLookup
}

// Verdict is the decision about one pod and why.
type Verdict struct {
	Decision Decision
	Reason   Reason
	// Detail explains the reason in words; it never quotes pod environment.
	Detail string
}

// NeedsRetention reports whether deciding about p needs its run's retention
// records: p would be reclaimed and its tags say failed pods were kept.
func NeedsRetention(p PodView, f Facts) bool {
	v := decideByRun(p, f)
	return v.Decision == DecisionReclaim && p.Tags.KeepFailed
}

// Decide is the reaper's rule book: a pure function of a pod and the facts.
// Pods outside the scope are skipped. An owned pod active longer than
// MaxLifetime is reclaimed before its run is consulted; otherwise unreadable
// run facts are errors, an answer about another run is not trusted (the pod
// waits for the backstop), and the pod is reclaimed when its attempt was
// superseded or its run completed at least CompletedGrace ago. A reclaimable
// keep-failed pod that a retention record names is kept — until it has been
// active longer than the retention cap.
func Decide(p PodView, f Facts) Verdict {
	v := decideByRun(p, f)
	if v.Decision != DecisionReclaim || !p.Tags.KeepFailed {
		return v
	}
	limit := f.retentionCap()
	age, basis := p.Age(f.Now)
	pastCap := basis != AgeUnknown && age > limit
	capDetail := fmt.Sprintf("active %s (since %s), past the %s retention cap", round(age), basis, limit)
	// Only a pod its run chose to keep can be retained: accepted pods are never recorded.
	lookup, ok := f.Retained[p.Tags.RunID]
	switch {
	case pastCap && (!ok || lookup.Err != nil):
		// Retained or not, the pod is reclaimable: records that cannot be read change nothing.
		return Verdict{DecisionReclaim, ReasonRetentionCap, capDetail + "; retention records unread, reclaimable either way"}
	case !ok:
		return Verdict{DecisionError, ReasonFactsMissing, fmt.Sprintf("retention records of run %d were not read", p.Tags.RunID)}
	case lookup.Err != nil:
		return Verdict{DecisionError, ReasonRetentionLookupFailed, lookup.Err.Error()}
	}
	for _, r := range lookup.Records {
		if !r.Retains(p.Tags.RunID, p.Tags.Attempt, p.ID) {
			continue
		}
		by := fmt.Sprintf("kept for inspection by run %d attempt %d", r.RunID, r.Attempt)
		switch {
		case pastCap:
			return Verdict{DecisionReclaim, ReasonRetentionCap, fmt.Sprintf("%s, %s", by, capDetail)}
		case basis == AgeUnknown:
			return Verdict{DecisionKeep, ReasonRetained, fmt.Sprintf("%s; age unknown, so the %s retention cap cannot apply (would be %s)", by, limit, v.Reason)}
		}
		return Verdict{DecisionKeep, ReasonRetained, fmt.Sprintf("%s until the %s retention cap, %s left (would be %s)", by, limit, round(limit-age), v.Reason)}
	}
	return v
}

// retentionCap is the configured cap, or the default.
func (f Facts) retentionCap() time.Duration {
	if f.RetentionCap <= 0 {
		return DefaultRetentionCap
	}
	return f.RetentionCap
}

// pastBackstop reports whether p has been active longer than MaxLifetime.
func pastBackstop(p PodView, now time.Time) (time.Duration, AgeBasis, bool) {
	age, basis := p.Age(now)
	return age, basis, basis != AgeUnknown && age > MaxLifetime
}

// decideByRun applies every rule but retention.
func decideByRun(p PodView, f Facts) Verdict {
	if p.Foreign != "" {
		return Verdict{DecisionSkipForeign, p.Foreign, ""}
	}
	if p.Status == runpod.PodTerminated {
		return Verdict{DecisionKeep, ReasonTerminated, "already deleted"}
	}
	// The backstop comes first: no run answer — missing, failed, 404 or
	// about another run — can keep a pod alive past it.
	if age, basis, over := pastBackstop(p, f.Now); over {
		return Verdict{DecisionReclaim, ReasonLifetime, fmt.Sprintf("active %s (since %s), over the %s backstop", round(age), basis, MaxLifetime)}
	}
	t := p.Tags
	run, ok := f.Runs[t.RunID]
	switch {
	case !ok:
		return Verdict{DecisionError, ReasonFactsMissing, fmt.Sprintf("run %d was not read", t.RunID)}
	case errors.Is(run.Err, ghapi.ErrNotFound):
		return Verdict{DecisionError, ReasonRunNotFound,
			fmt.Sprintf("run %d is not in this repository, was deleted, or the token cannot read Actions; the pod is reclaimed once active over the %s backstop", t.RunID, MaxLifetime)}
	case run.Err != nil:
		return Verdict{DecisionError, ReasonRunLookupFailed, run.Err.Error()}
	}
	if mismatch := run.Mismatch(t); mismatch != "" {
		return Verdict{DecisionKeep, ReasonRunMismatch,
			fmt.Sprintf("%s: the answer is not trusted; the pod is left to the %s backstop", mismatch, MaxLifetime)}
	}
	if t.Attempt < run.LatestAttempt {
		return Verdict{DecisionReclaim, ReasonAttemptSuperseded, fmt.Sprintf("run %d is at attempt %d", t.RunID, run.LatestAttempt)}
	}
	completedAt, completionKnown := run.UpdatedAt.Get()
	if run.Completed() && completionKnown && f.Now.Sub(completedAt) >= CompletedGrace {
		return Verdict{DecisionReclaim, ReasonRunCompleted, "run completed " + ago(f.Now.Sub(completedAt))}
	}
	if run.Completed() {
		when := "at an unknown time"
		if completionKnown {
			when = ago(f.Now.Sub(completedAt))
		}
		return Verdict{DecisionKeep, ReasonRunCompletedRecently, "run completed " + when + "; its cleanup may still run"}
	}
	return Verdict{DecisionKeep, ReasonRunActive, "run is " + run.Status}
}

func ago(d time.Duration) string { return round(d).String() + " ago" }

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
