package cost

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Snapshot is what provision captured while the accepted pod ran (its
// price-per-hour, started-at, gpu-type and tier outputs): the fallback when
// the pod record cannot be read before deletion.
type Snapshot struct {
	Price     Price
	StartedAt wire.Time
	GPU       string
	Tier      string
}

// DefaultTestStep names the GPU job's real test step when none is given.
const DefaultTestStep = "Run GPU tests"

// SnapshotSource names where snapshot figures come from in reports.
const SnapshotSource = "provision snapshot"

// ErrBadSnapshot means a snapshot value is not what provision writes.
var ErrBadSnapshot = errors.New("unusable startup snapshot value")

// ParseSnapshot reads provision's outputs as given to cleanup or the watchdog.
// Empty values are unknown, and so is a price of 0 (ParsePricePerHour). A malformed value is unknown too and reported in
// the error (wrapping ErrBadSnapshot, naming the input), so a caller can warn
// and carry on: a bad report input must never stop a deletion.
func ParseSnapshot(pricePerHour, startedAt, gpu, tier string) (Snapshot, error) {
	s := Snapshot{GPU: gpu, Tier: tier, Price: Price{Source: SnapshotSource + " has no price"}}
	var errs []error
	if p, err := ParsePricePerHour(pricePerHour); err != nil {
		errs = append(errs, fmt.Errorf("%w: input price-per-hour = %q: want %s", ErrBadSnapshot, pricePerHour, PriceForm))
	} else if p.Known {
		s.Price = KnownPrice(p.PerHour, SnapshotSource)
	}
	if startedAt != "" {
		t, err := wire.ParseTime(startedAt)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: input started-at = %q: want an RFC 3339 time", ErrBadSnapshot, startedAt))
		} else {
			s.StartedAt = wire.KnownTime(t)
		}
	}
	return s, errors.Join(errs...)
}

// UntrackedPod is a pod of the run attempt that provision never published,
// found by its ownership tags and deleted.
type UntrackedPod struct {
	Pod       runpod.Pod // as the listing showed it, before deletion
	Candidate int        // its candidate number from the tags
	DeletedAt time.Time  // zero when deletion is unconfirmed
}

// Evidence is everything a cost report is built from; every part is optional.
type Evidence struct {
	// PodID is the accepted pod; empty when there is none to report.
	PodID string
	// Record is the pod as read before deletion; nil with RecordErr when unavailable.
	Record    *runpod.Pod
	RecordErr error
	Snapshot  Snapshot
	// DeletedAt is the confirmed deletion; unknown when unconfirmed.
	DeletedAt wire.Time
	// AlreadyGone means the pod was deleted before this deletion confirmed it.
	AlreadyGone bool
	// Job is the GPU job that ran on the pod; nil with JobErr when unknown.
	Job      *github.WorkflowJob
	JobErr   error
	TestStep string
	// Untracked pods are reported with the rejected candidates: paid, never tested.
	Untracked []UntrackedPod
	// Provision is provision's rejected candidates, so the run total covers
	// the whole run; its zero value says they were not passed.
	Provision ProvisionAttempts
}

// ProvisionAttempts are provision's rejected candidates as cleanup was given
// them (provision's rejected-attempts output).
type ProvisionAttempts struct {
	// Reported is false when the input was empty or unreadable: the report
	// then says provision's candidates are missing rather than that there were none.
	Reported bool
	Rejected []Attempt
}

// ParseProvisionAttempts reads the rejected-attempts input. Empty means not
// passed (an older caller). A malformed value reads as not passed and is
// returned as an error naming the input, for the caller to warn about: a bad
// report input must never stop a deletion.
func ParseProvisionAttempts(value string) (ProvisionAttempts, error) {
	if strings.TrimSpace(value) == "" {
		return ProvisionAttempts{}, nil
	}
	rejected, err := ParseAttempts(value)
	if err != nil {
		return ProvisionAttempts{}, fmt.Errorf("input rejected-attempts: %w", err)
	}
	return ProvisionAttempts{Reported: true, Rejected: rejected}, nil
}

// BuildReport turns the evidence into a cost report. The start and price come
// from the pod record read before deletion (only when it describes PodID),
// else from the startup snapshot, else stay unknown; the stage breakdown is
// added when the GPU job is known and consistent with the window, and
// otherwise a note says why it is missing. The GPU job's conclusion comes
// from Job: unknown when the job is unknown or has not completed.
//
// Provision's rejected candidates come first among the rejected, each pod
// once: one cleanup found still running and deleted is reported as cleanup's
// untracked pod, whose window runs to its confirmed deletion. A pod-id that
// is one of provision's rejected pods (provision publishes each pod as it
// creates it, so with none accepted the last rejected one stays in pod-id)
// is reported as that rejected candidate, not as an accepted pod.
func BuildReport(e Evidence) Report {
	r := Report{PodID: e.PodID, GPU: e.Snapshot.GPU, Tier: e.Snapshot.Tier, Window: Window{End: e.DeletedAt},
		ProvisionRejected: e.Provision.Reported}
	untracked := map[string]bool{}
	for _, u := range e.Untracked {
		untracked[u.Pod.ID] = true
	}
	for _, a := range e.Provision.Rejected {
		switch {
		case a.PodID != "" && untracked[a.PodID]:
			r.Notes = append(r.Notes, fmt.Sprintf("Provision rejected pod %s, yet cleanup found it still running: it is counted once, "+
				"as the untracked pod cleanup deleted, up to that deletion.", a.PodID))
			continue
		case a.PodID != "" && a.PodID == e.PodID:
			r.PodID, r.Window, e.PodID = "", Window{}, ""
			note := fmt.Sprintf("Pod %s is a candidate provision rejected, not an accepted pod: no pod was accepted.", a.PodID)
			switch {
			case e.AlreadyGone:
			case e.DeletedAt.Known():
				note += fmt.Sprintf(" Cleanup still had to delete it (confirmed at %s), so it billed longer than the %s seconds provision reported.",
					e.DeletedAt, a.Seconds)
			default:
				note += " Its deletion is unconfirmed: it may still be billing, beyond the seconds provision reported."
			}
			r.Notes = append(r.Notes, note)
		}
		r.Rejected = append(r.Rejected, a)
	}
	for _, u := range e.Untracked {
		r.Rejected = append(r.Rejected, untrackedAttempt(u))
	}
	if e.PodID == "" {
		return r
	}
	r.JobConclusion = jobConclusion(e.Job)
	if e.Record != nil && e.Record.ID != e.PodID {
		// Another pod's record would be priced and timed as this one.
		e.Record, e.RecordErr = nil, fmt.Errorf("%w: pod %s: the record describes pod %q", runpod.ErrUnusableRecord, e.PodID, e.Record.ID)
	}

	recordPrice := r.readRecord(e)
	if !r.Window.Start.Known() && e.Snapshot.StartedAt.Known() {
		r.Window.Start = e.Snapshot.StartedAt
		if e.Record != nil {
			r.Notes = append(r.Notes, "The pod record had no provider start time: the start comes from the "+SnapshotSource+".")
		}
	}
	r.Price = FirstKnown(recordPrice, e.Snapshot.Price,
		Price{Source: "neither the pod record nor the " + SnapshotSource + " had a price"})
	if e.AlreadyGone {
		r.Notes = append(r.Notes, "The pod was already gone when it was checked: the window ends at that confirmation, so its length is an upper bound.")
	}
	r.Stages, r.Notes = stages(r.Window, e, r.Notes)
	return r
}

// readRecord takes the pod's start, GPU and placement from its record before
// deletion and returns the price the record states; without a record it
// notes the fall back to the snapshot.
func (r *Report) readRecord(e Evidence) Price {
	recordPrice := Price{Source: "pod record unavailable"}
	if rec := e.Record; rec != nil {
		r.Window.Start = rec.StartedAt
		recordPrice = KnownPrice(money.PerHour(float64(rec.Cost)), "v2 cost before deletion")
		if rec.GPU != nil && rec.GPU.ID != "" {
			r.GPU = rec.GPU.ID
		}
		r.Cloud, r.DataCenter, r.Driver = rec.Cloud, rec.DataCenterID, rec.CudaVersion
	} else if e.AlreadyGone && errors.Is(e.RecordErr, runpod.ErrNotFound) {
		// The usual case, not a failure: the watchdog deletes the pod as soon as
		// the GPU job ends, before cleanup reads it.
		r.Notes = append(r.Notes, fmt.Sprintf("The pod was deleted before its record was read (the watchdog deletes it when the GPU job ends): start and price come from the %s.", SnapshotSource))
	} else {
		r.Notes = append(r.Notes, fmt.Sprintf("Pod record before deletion unavailable (%v): start and price fall back to the %s.", e.RecordErr, SnapshotSource))
	}
	return recordPrice
}

// stages computes the breakdown, or explains in a note why there is none.
func stages(w Window, e Evidence, notes []string) ([]Stage, []string) {
	if e.Job == nil {
		why := "the GPU job is unknown"
		if e.JobErr != nil {
			why = e.JobErr.Error()
		}
		return nil, append(notes, "Stage breakdown unknown: "+why+".")
	}
	testStep := e.TestStep
	if testStep == "" {
		testStep = DefaultTestStep
	}
	job := JobTimeline(e.Job)
	if start, ok := w.Start.Get(); ok {
		job = withinSecondOf(job, start)
	}
	got, err := Stages(w, job, TestStepNamed(testStep))
	if err != nil {
		return nil, append(notes, fmt.Sprintf("Stage breakdown unknown: %v.", err))
	}
	if !slices.ContainsFunc(got, func(s Stage) bool { return s.Kind == StageTests }) {
		notes = append(notes, fmt.Sprintf("The GPU job never ran its test step %q.", testStep))
	}
	return got, notes
}

// withinSecondOf moves job and step times that lie less than a second before
// the pod's start up to it: GitHub reports whole seconds, RunPod fractions, so
// a job that starts in the pod's first second can read as starting before it.
func withinSecondOf(job Job, start time.Time) Job {
	lift := func(w wire.Time) wire.Time {
		if t, ok := w.Get(); ok && t.Before(start) && start.Sub(t) < time.Second {
			return wire.KnownTime(start)
		}
		return w
	}
	job.Started, job.Completed = lift(job.Started), lift(job.Completed)
	steps := make([]Step, len(job.Steps))
	for i, s := range job.Steps {
		steps[i] = Step{Name: s.Name, Started: lift(s.Started), Completed: lift(s.Completed)}
	}
	job.Steps = steps
	return job
}

// untrackedAttempt reports an untracked pod the way rejected candidates are
// reported: paid seconds from its start to its deletion, at its listed price.
func untrackedAttempt(u UntrackedPod) Attempt {
	a := Attempt{
		Number: max(u.Candidate, 1), Candidate: fmt.Sprintf("c%d", u.Candidate), PodID: u.Pod.ID,
		Price:   KnownPrice(money.PerHour(float64(u.Pod.Cost)), "v2 cost in the pod listing"),
		Outcome: OutcomeFailed,
		Reason:  "untracked: provision never published this pod; deleted by cleanup",
		// Where it ran, for the record; no host verdict: why it was left is unknown.
		Cloud: u.Pod.Cloud, DataCenter: u.Pod.DataCenterID, Driver: u.Pod.CudaVersion,
	}
	if u.Pod.GPU != nil {
		a.GPU = u.Pod.GPU.ID
	}
	if u.DeletedAt.IsZero() {
		a.Reason = "untracked: provision never published this pod; deletion unconfirmed"
	}
	a.Seconds = Window{Start: u.Pod.StartedAt, End: knownIf(u.DeletedAt)}.Seconds()
	return a
}

func knownIf(t time.Time) wire.Time {
	if t.IsZero() {
		return wire.Time{}
	}
	return wire.KnownTime(t)
}

// jobConclusion is how the GPU job ended, as far as job shows it.
func jobConclusion(job *github.WorkflowJob) Conclusion {
	if job == nil {
		return ConclusionUnknown
	}
	return JobConclusion(job.GetStatus(), job.GetConclusion())
}

// FindGPUJob returns the job that ran (or waits to run) on the runner with
// this label: by runner name once a runner took it, else by its runs-on
// labels. It returns nil when there is none or the label is empty.
func FindGPUJob(jobs []*github.WorkflowJob, runnerLabel string) *github.WorkflowJob {
	if runnerLabel == "" {
		return nil
	}
	for _, j := range jobs {
		if j != nil && j.GetRunnerName() == runnerLabel {
			return j
		}
	}
	for _, j := range jobs {
		if j != nil && j.GetRunnerName() == "" && slices.ContainsFunc(j.Labels, func(l string) bool { return strings.EqualFold(l, runnerLabel) }) {
			return j
		}
	}
	return nil
}

// JobTimeline converts a GitHub job into the times Stages reads. A
// queued job has not started (GitHub shows its creation as started_at); a
// skipped step never ran; a step still running has no end yet.
func JobTimeline(j *github.WorkflowJob) Job {
	var out Job
	if j == nil {
		return out
	}
	if j.GetStatus() != "queued" && j.GetStatus() != "waiting" {
		out.Started = stamp(j.StartedAt)
	}
	if j.GetStatus() == "completed" {
		out.Completed = stamp(j.CompletedAt)
	}
	for _, s := range j.Steps {
		if s == nil {
			continue
		}
		step := Step{Name: s.GetName()}
		if s.GetConclusion() != "skipped" && s.GetStatus() != "queued" && s.GetStatus() != "pending" {
			step.Started = stamp(s.StartedAt)
			if s.GetStatus() == "completed" {
				step.Completed = stamp(s.CompletedAt)
			}
		}
		out.Steps = append(out.Steps, step)
	}
	return out
}

// stamp turns an optional GitHub timestamp into a wire.Time; absent and zero are unknown.
func stamp(t *github.Timestamp) wire.Time {
	if t == nil || t.IsZero() {
		return wire.Time{}
	}
	return wire.KnownTime(t.Time)
}
