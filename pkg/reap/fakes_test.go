package reap

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"
)

// The hand-written fakes the sweep, Serverless and organization tests share.

// fixedClock is a clock that always reads the same instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// fakeRuns answers run reads (first from reads, then from run), artifact
// listings and cancels, recording each call and the time its context had left.
type fakeRuns struct {
	run       *github.WorkflowRun
	runErr    error
	failIDs   map[int64]error // runs whose read fails with this error
	cancelErr error
	artifacts []*github.Artifact
	artErr    error
	calls     []string
	since     []time.Time
	left      []time.Duration
}

func (f *fakeRuns) record(ctx context.Context, call string) error {
	f.calls = append(f.calls, call)
	if dl, ok := ctx.Deadline(); ok {
		f.left = append(f.left, time.Until(dl))
	}
	return ctx.Err()
}

func (f *fakeRuns) GetWorkflowRun(ctx context.Context, id int64) (*github.WorkflowRun, error) {
	if err := f.record(ctx, fmt.Sprintf("GET run %d", id)); err != nil {
		return nil, err
	}
	if err := f.failIDs[id]; err != nil {
		return nil, err
	}
	return f.run, f.runErr
}

func (f *fakeRuns) ArtifactsWithPrefix(ctx context.Context, prefix string, since time.Time) ([]*github.Artifact, error) {
	f.since = append(f.since, since)
	if err := f.record(ctx, "LIST "+prefix); err != nil {
		return nil, err
	}
	var out []*github.Artifact
	for _, a := range f.artifacts {
		if a.CreatedAt == nil || !a.GetCreatedAt().Before(since) {
			out = append(out, a)
		}
	}
	return out, f.artErr
}

func (f *fakeRuns) CancelWorkflowRun(ctx context.Context, id int64) error {
	if err := f.record(ctx, fmt.Sprintf("CANCEL run %d", id)); err != nil {
		return err
	}
	return f.cancelErr
}

func ghRun(attempt int, status string) *github.WorkflowRun {
	return &github.WorkflowRun{ID: github.Int64(testRun), RunAttempt: github.Int(attempt), Status: github.String(status),
		Path: github.String(testWorkflow), Repository: &github.Repository{FullName: github.String(testRepo)}}
}
