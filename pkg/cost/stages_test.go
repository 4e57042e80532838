package cost

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/wire"
	"gotest.tools/v3/assert"
)

const testStep = "Run CUDA tests from archive"

// step builds a job step from second offsets; a negative offset is unknown.
func step(name string, from, to float64) Step {
	s := Step{Name: name}
	if from >= 0 {
		s.Started = sec(from)
	}
	if to >= 0 {
		s.Completed = sec(to)
	}
	return s
}

// render prints stages as "kind:name=seconds" for compact table expectations.
func render(stages []Stage) string {
	var parts []string
	for _, s := range stages {
		parts = append(parts, fmt.Sprintf("%s:%s=%d", s.Kind, s.Name, s.Seconds))
	}
	return strings.Join(parts, " | ")
}

// typicalJob is a GPU job whose boundaries fall on and between whole seconds.
func typicalJob() Job {
	return Job{
		Started:   sec(95.3),
		Completed: sec(503),
		Steps: []Step{
			step("Set up job", 95.3, 97),
			step("Checkout", 97, 110),
			step("Download archive", 111, 150.5),
			step(testStep, 151, 500),
			step("Post Checkout", 500, 502),
			step("Complete job", 502, 503),
		},
	}
}

func TestStages(t *testing.T) {
	window := Window{Start: sec(0), End: sec(600)}
	tests := []struct {
		name    string
		window  Window
		job     Job
		isTest  func(string) bool
		wantOut string
		wantErr error
	}{
		{
			name: "typical job: sub-second remainders go to the row ending at the boundary", window: window,
			job: typicalJob(), isTest: TestStepNamed(testStep),
			wantOut: "startup:runner startup and queue=96 | setup:Set up job=1 | setup:Checkout=13 | " +
				"setup:Download archive=40 | tests:Run CUDA tests from archive=349 | cleanup:Post Checkout=2 | " +
				"cleanup:Complete job=1 | cleanup:cleanup and queue=97 | overhead:unassigned overhead=1",
		},
		{
			name: "job never started: the whole window is startup and queue", window: window, job: Job{},
			isTest:  TestStepNamed(testStep),
			wantOut: "startup:runner startup and queue=600 | cleanup:cleanup and queue=0 | overhead:unassigned overhead=0",
		},
		{
			name: "job started without steps", window: window, job: Job{Started: sec(120)},
			wantOut: "startup:runner startup and queue=120 | cleanup:cleanup and queue=480 | overhead:unassigned overhead=0",
		},
		{
			name: "unknown job start falls back to the first step", window: window,
			job:     Job{Steps: []Step{step("Set up job", 100, 102), step(testStep, 110, 200)}},
			isTest:  TestStepNamed(testStep),
			wantOut: "startup:runner startup and queue=100 | setup:Set up job=2 | tests:Run CUDA tests from archive=90 | cleanup:cleanup and queue=400 | overhead:unassigned overhead=8",
		},
		{
			name:   "no test step reached: every step is setup, unfinished step runs to deletion",
			window: Window{Start: sec(0), End: sec(400)},
			job: Job{Started: sec(90), Steps: []Step{
				step("Set up job", 90, 92), step("Download archive", 92, -1), step(testStep, -1, -1),
			}},
			isTest:  TestStepNamed(testStep),
			wantOut: "startup:runner startup and queue=90 | setup:Set up job=2 | setup:Download archive=308 | cleanup:cleanup and queue=0 | overhead:unassigned overhead=0",
		},
		{
			name: "times after deletion are clamped to it", window: Window{Start: sec(0), End: sec(400)},
			job:     Job{Started: sec(90), Completed: sec(900), Steps: []Step{step("Download archive", 92, 700), step("Post", 800, 810)}},
			wantOut: "startup:runner startup and queue=90 | setup:Download archive=308 | setup:Post=0 | cleanup:cleanup and queue=0 | overhead:unassigned overhead=2",
		},
		{
			name: "unfinished step ends at the job's completion", window: window,
			job:     Job{Started: sec(10), Completed: sec(300), Steps: []Step{step(testStep, 20, -1)}},
			isTest:  TestStepNamed(testStep),
			wantOut: "startup:runner startup and queue=10 | tests:Run CUDA tests from archive=280 | cleanup:cleanup and queue=300 | overhead:unassigned overhead=10",
		},
		{
			name: "steps between test steps count as tests, skipped steps are dropped", window: window,
			job: Job{Started: sec(10), Steps: []Step{
				step("Setup", 10, 20), step("Test part 1", 20, 100), step("Upload log", 100, 105),
				step("Skipped", -1, -1), step("Test part 2", 105, 300), step("Post", 300, 310),
			}},
			isTest: func(name string) bool { return strings.HasPrefix(name, "Test part") },
			wantOut: "startup:runner startup and queue=10 | setup:Setup=10 | tests:Test part 1=80 | tests:Upload log=5 | " +
				"tests:Test part 2=195 | cleanup:Post=10 | cleanup:cleanup and queue=290 | overhead:unassigned overhead=0",
		},
		{
			name: "sub-second window rounds up to one paid second", window: Window{Start: sec(0), End: sec(0.2)},
			job:     Job{Started: sec(0.1), Steps: []Step{step("Set up job", 0.1, 0.15)}},
			wantOut: "startup:runner startup and queue=1 | setup:Set up job=0 | cleanup:cleanup and queue=0 | overhead:unassigned overhead=0",
		},
		{name: "unknown start stays unknown", window: Window{End: sec(600)}, job: typicalJob(), wantErr: ErrUnknownStart},
		{name: "unconfirmed deletion", window: Window{Start: sec(0)}, job: typicalJob(), wantErr: ErrUnknownEnd},
		{name: "negative window", window: Window{Start: sec(600), End: sec(0)}, job: typicalJob(), wantErr: ErrNegativeInterval},
		{
			name: "overlapping steps", window: window,
			job:     Job{Started: sec(10), Steps: []Step{step("A", 10, 50), step("B", 40, 60)}},
			wantErr: ErrOverlap,
		},
		{
			name: "step before its job started", window: window,
			job:     Job{Started: sec(10), Steps: []Step{step("A", 5, 50)}},
			wantErr: ErrOverlap,
		},
		{
			name: "step ends before it starts", window: window,
			job:     Job{Started: sec(10), Steps: []Step{step("A", 50, 20)}},
			wantErr: ErrNegativeInterval,
		},
		{
			name: "job completes before it starts", window: window,
			job:     Job{Started: sec(50), Completed: sec(20)},
			wantErr: ErrNegativeInterval,
		},
		{
			name: "job before the provider start", window: window,
			job:     Job{Started: sec(-5)},
			wantErr: ErrBeforeWindow,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Stages(tc.window, tc.job, tc.isTest)
			if tc.wantErr != nil {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, render(got), tc.wantOut)
			assert.Equal(t, sumStages(got), tc.window.Seconds().N, "stages must sum exactly to the window")
		})
	}
}

func TestStagesErrorNamesTheStep(t *testing.T) {
	job := Job{Started: sec(10), Steps: []Step{step("Checkout", 10, 50), step("Download archive", 40, 60)}}
	_, err := Stages(Window{Start: sec(0), End: sec(600)}, job, nil)
	var ie *IntervalError
	assert.Assert(t, errors.As(err, &ie))
	assert.ErrorContains(t, err, `step "Download archive" (previous: step "Checkout" ends 2026-09-23T08:49:18Z)`)
	assert.ErrorContains(t, err, "steps overlap")
}

// FuzzStages checks the invariant on arbitrary step layouts: either an error,
// or non-negative stages that sum exactly to the window.
func FuzzStages(f *testing.F) {
	f.Add(int64(600_000), int64(95_300), uint8(6), int64(10_000), int64(7))
	f.Add(int64(1), int64(0), uint8(0), int64(1), int64(0))
	f.Add(int64(400_000), int64(-5_000), uint8(3), int64(300_000), int64(42))
	f.Fuzz(func(t *testing.T, windowMs, jobStartMs int64, nSteps uint8, stepMs int64, seed int64) {
		window := Window{Start: wire.KnownTime(base), End: wire.KnownTime(base.Add(time.Duration(windowMs) * time.Millisecond))}
		job := Job{Started: wire.KnownTime(base.Add(time.Duration(jobStartMs) * time.Millisecond))}
		cursor := jobStartMs
		for i := 0; i < int(nSteps%20); i++ {
			// A cheap deterministic generator: gaps, lengths and overlaps vary with seed.
			seed = seed*6364136223846793005 + 1442695040888963407
			gap := (seed >> 33) % 5_000
			length := stepMs % 100_000
			if length < 0 {
				length = -length
			}
			length = (length + (seed>>17)%7_000) % 200_000
			from := cursor + gap
			job.Steps = append(job.Steps, Step{
				Name:      fmt.Sprintf("step %d", i),
				Started:   wire.KnownTime(base.Add(time.Duration(from) * time.Millisecond)),
				Completed: wire.KnownTime(base.Add(time.Duration(from+length) * time.Millisecond)),
			})
			cursor = from + length
		}
		stages, err := Stages(window, job, TestStepNamed("step 2"))
		if err != nil {
			var ie *IntervalError
			if !errors.As(err, &ie) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, s := range stages {
			if s.Seconds < 0 {
				t.Fatalf("negative stage %+v", s)
			}
		}
		if got, want := sumStages(stages), window.Seconds(); !want.Known || got != want.N {
			t.Fatalf("stages sum to %d, window is %v", got, want)
		}
	})
}
