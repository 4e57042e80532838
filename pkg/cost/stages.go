package cost

import (
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/wire"
)

// StageKind classifies a part of the paid window.
type StageKind string

// Stage kinds, in the order they occur in a pod's life.
const (
	// StageStartup runs from the provider start to the GPU job's start: boot,
	// smoke proof, runner registration and the job's queue time.
	StageStartup StageKind = "startup"
	// StageSetup is a job step before the first test step.
	StageSetup StageKind = "setup"
	// StageTests is the test step(s), from the first to the last test step.
	StageTests StageKind = "tests"
	// StageCleanup is a step after the last test step, and the time from the
	// last step's end to confirmed deletion (post-job queue and cleanup).
	StageCleanup StageKind = "cleanup"
	// StageOverhead is paid time no step accounts for: the gaps between the
	// job's start and its steps.
	StageOverhead StageKind = "overhead"
)

// Names of the stages that are not job steps.
const (
	StartupStageName  = "runner startup and queue" // the StageStartup row
	CleanupStageName  = "cleanup and queue"        // the StageCleanup row after the last step
	OverheadStageName = "unassigned overhead"      // the StageOverhead row
)

// Valid reports whether k is one of the defined kinds.
func (k StageKind) Valid() bool {
	switch k {
	case StageStartup, StageSetup, StageTests, StageCleanup, StageOverhead:
		return true
	}
	return false
}

// Stage is one row of the paid window's breakdown.
type Stage struct {
	Kind    StageKind `json:"kind"`
	Name    string    `json:"name"` // the step name, or one of the *StageName constants
	Seconds int64     `json:"seconds"`
}

// Step is one step of the GPU job as GitHub reports it. An unknown Started
// means the step never ran (skipped); an unknown Completed means it was still
// running when the job ended or the pod was deleted.
type Step struct {
	Name      string
	Started   wire.Time
	Completed wire.Time
}

// Job is the GPU job that ran on the pod. An unknown Started means the job
// never started (or its first step's start is used when steps ran).
type Job struct {
	Started   wire.Time
	Completed wire.Time
	Steps     []Step
}

// TestStepNamed returns a classifier matching exactly the given step name.
func TestStepNamed(name string) func(string) bool {
	return func(step string) bool { return step == name }
}

// Stages splits a known paid window into stages that sum exactly to
// w.Seconds(): runner startup and queue, one row per job step (setup, tests,
// cleanup), cleanup and queue after the last step, and unassigned overhead.
// isTest names the real test step(s); without one, every step is setup.
//
// Every boundary is rounded up to a whole second from the window's start, so
// each row's sub-second remainder goes to the row that ends at that boundary
// and the rows telescope to the window. Times after deletion are clamped to it
// (a pod deleted mid-step stops paying); a job or step before the window, an
// interval that ends before it starts, and overlapping steps are errors.
func Stages(w Window, job Job, isTest func(stepName string) bool) ([]Stage, error) {
	start, ok := w.Start.Get()
	if !ok {
		return nil, ErrUnknownStart
	}
	end, ok := w.End.Get()
	if !ok {
		return nil, ErrUnknownEnd
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	steps, err := ranSteps(job, end)
	if err != nil {
		return nil, err
	}
	total := wholeSeconds(end.Sub(start))
	offset := func(t time.Time) int64 {
		if t.After(end) {
			return total
		}
		return wholeSeconds(t.Sub(start))
	}

	jobStart, jobStarted := jobStartOf(job, steps)
	if !jobStarted {
		// The job never started: the whole window was startup and queue.
		return []Stage{
			{Kind: StageStartup, Name: StartupStageName, Seconds: total},
			{Kind: StageCleanup, Name: CleanupStageName, Seconds: 0},
			{Kind: StageOverhead, Name: OverheadStageName, Seconds: 0},
		}, nil
	}
	if err := checkJob(job, jobStart, start); err != nil {
		return nil, err
	}
	firstTest, lastTest := testSpan(steps, isTest)

	cursor := offset(jobStart)
	stages := []Stage{{Kind: StageStartup, Name: StartupStageName, Seconds: cursor}}
	var overhead int64
	previousEnd, previousName := jobStart, "job start"
	for i, s := range steps {
		if s.start.Before(previousEnd) {
			return nil, &IntervalError{
				What:  fmt.Sprintf("step %q (previous: %s ends %s)", s.name, previousName, previousEnd.UTC().Format(time.RFC3339Nano)),
				Start: s.start, End: s.end, Err: ErrOverlap,
			}
		}
		from, to := offset(s.start), offset(s.end)
		overhead += from - cursor
		stages = append(stages, Stage{Kind: stepKind(i, firstTest, lastTest), Name: s.name, Seconds: to - from})
		cursor = to
		previousEnd, previousName = s.end, fmt.Sprintf("step %q", s.name)
	}
	return append(stages,
		Stage{Kind: StageCleanup, Name: CleanupStageName, Seconds: total - cursor},
		Stage{Kind: StageOverhead, Name: OverheadStageName, Seconds: overhead},
	), nil
}

// jobStartOf is when the job started: as recorded, else when its first step
// did; false when it never started.
func jobStartOf(job Job, steps []ranStep) (time.Time, bool) {
	jobStart, jobStarted := job.Started.Get()
	if !jobStarted && len(steps) > 0 {
		jobStart, jobStarted = steps[0].start, true
	}
	return jobStart, jobStarted
}

// checkJob refuses a job that started before the window (windowStart) or
// completed before it started.
func checkJob(job Job, jobStart, windowStart time.Time) error {
	if jobStart.Before(windowStart) {
		return &IntervalError{What: "job", Start: jobStart, End: windowStart, Err: ErrBeforeWindow}
	}
	if jobEnd, ok := job.Completed.Get(); ok && jobEnd.Before(jobStart) {
		return &IntervalError{What: "job", Start: jobStart, End: jobEnd, Err: ErrNegativeInterval}
	}
	return nil
}

// testSpan is the index of the first and the last test step, -1 when none is.
func testSpan(steps []ranStep, isTest func(stepName string) bool) (firstTest, lastTest int) {
	firstTest, lastTest = -1, -1
	for i, s := range steps {
		if isTest != nil && isTest(s.name) {
			if firstTest < 0 {
				firstTest = i
			}
			lastTest = i
		}
	}
	return firstTest, lastTest
}

// stepKind classifies step i given the first and last test step indexes.
func stepKind(i, firstTest, lastTest int) StageKind {
	switch {
	case firstTest < 0 || i < firstTest:
		return StageSetup
	case i <= lastTest:
		return StageTests
	default:
		return StageCleanup
	}
}

// ranStep is a step that ran, with both ends resolved.
type ranStep struct {
	name       string
	start, end time.Time
}

// ranSteps drops skipped steps, ends unfinished ones at the job's completion
// (or the window's end) and rejects steps that end before they start.
func ranSteps(job Job, windowEnd time.Time) ([]ranStep, error) {
	fallbackEnd := windowEnd
	if t, ok := job.Completed.Get(); ok && t.Before(windowEnd) {
		fallbackEnd = t
	}
	var steps []ranStep
	for _, s := range job.Steps {
		start, ok := s.Started.Get()
		if !ok {
			continue
		}
		end, ok := s.Completed.Get()
		if !ok {
			end = fallbackEnd
			if end.Before(start) {
				end = start
			}
		}
		if end.Before(start) {
			return nil, &IntervalError{What: fmt.Sprintf("step %q", s.Name), Start: start, End: end, Err: ErrNegativeInterval}
		}
		steps = append(steps, ranStep{name: s.Name, start: start, end: end})
	}
	return steps, nil
}

// sumStages totals the seconds of stages.
func sumStages(stages []Stage) int64 {
	var n int64
	for _, s := range stages {
		n += s.Seconds
	}
	return n
}
