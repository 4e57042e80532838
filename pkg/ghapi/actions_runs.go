package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// searchCap is how many results GitHub returns for one filtered
// workflow-run search; later pages simply do not exist.
const searchCap = 1000

// ListRunsFilter narrows ListWorkflowRuns; empty fields do not filter.
type ListRunsFilter struct {
	// Created is GitHub's date search, e.g. "2026-09-01..2026-09-30" or ">=2026-09-01".
	Created string
	// Status is a run status or conclusion, e.g. "completed" or "success".
	Status  string
	Event   string // e.g. "pull_request", "workflow_dispatch"
	HeadSHA string
	Branch  string
}

func (f ListRunsFilter) isSet() bool { return f != ListRunsFilter{} }

// GetWorkflowRun reads workflow run runID (its latest attempt).
func (c *Client) GetWorkflowRun(ctx context.Context, runID int64) (*github.WorkflowRun, error) {
	if runID <= 0 {
		return nil, fmt.Errorf("ghapi: workflow run id is %d; want a positive id", runID)
	}
	run, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, c.owner, c.repo, runID)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get workflow run %d", runID), err, nil)
	}
	return run, nil
}

// GetWorkflowRunAttempt reads one attempt (1-based) of workflow run runID.
func (c *Client) GetWorkflowRunAttempt(ctx context.Context, runID int64, attempt int) (*github.WorkflowRun, error) {
	if err := checkRunAttempt(runID, attempt); err != nil {
		return nil, err
	}
	run, _, err := c.gh.Actions.GetWorkflowRunAttempt(ctx, c.owner, c.repo, runID, attempt, nil)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get workflow run %d attempt %d", runID, attempt), err, nil)
	}
	return run, nil
}

// ListWorkflowRuns lists the runs of workflowFile (e.g. "gpu.yml"; empty for
// every workflow of the repository) matching filter, newest first. More than
// maxPages pages (<= 0: DefaultMaxPages) fails with *PageBoundError; a
// filtered search matching more than GitHub's 1,000-result cap fails with
// ErrSearchCapped instead of returning a silently partial list.
func (c *Client) ListWorkflowRuns(ctx context.Context, workflowFile string, filter ListRunsFilter, maxPages int) ([]*github.WorkflowRun, error) {
	opts := &github.ListWorkflowRunsOptions{
		Created: filter.Created, Status: filter.Status, Event: filter.Event,
		HeadSHA: filter.HeadSHA, Branch: filter.Branch,
		ListOptions: github.ListOptions{PerPage: perPage},
	}
	what := "list workflow runs"
	if workflowFile != "" {
		what += " of " + workflowFile
	}
	return listPages(c, what, maxPages, func(page int) ([]*github.WorkflowRun, *github.Response, error) {
		opts.Page = page
		var list *github.WorkflowRuns
		var resp *github.Response
		var err error
		if workflowFile != "" {
			list, resp, err = c.gh.Actions.ListWorkflowRunsByFileName(ctx, c.owner, c.repo, workflowFile, opts)
		} else {
			list, resp, err = c.gh.Actions.ListRepositoryWorkflowRuns(ctx, c.owner, c.repo, opts)
		}
		if err != nil {
			return nil, resp, err
		}
		if filter.isSet() && list.GetTotalCount() > searchCap {
			return nil, resp, fmt.Errorf("%d runs match: %w; narrow the filter (e.g. a shorter Created range)", list.GetTotalCount(), ErrSearchCapped)
		}
		return list.WorkflowRuns, resp, nil
	})
}

// ListAttemptJobs lists the jobs, with their steps, of one attempt of
// workflow run runID, reading all pages (bounded by DefaultMaxPages).
func (c *Client) ListAttemptJobs(ctx context.Context, runID int64, attempt int) ([]*github.WorkflowJob, error) {
	if err := checkRunAttempt(runID, attempt); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("list jobs of workflow run %d attempt %d", runID, attempt)
	opts := &github.ListOptions{PerPage: perPage}
	return listPages(c, what, DefaultMaxPages, func(page int) ([]*github.WorkflowJob, *github.Response, error) {
		opts.Page = page
		list, resp, err := c.gh.Actions.ListWorkflowJobsAttempt(ctx, c.owner, c.repo, runID, int64(attempt), opts)
		if err != nil {
			return nil, resp, err
		}
		return list.Jobs, resp, nil
	})
}

// DispatchWorkflow starts workflowFile on ref with inputs, with one POST
// (never retried: a repeat would start a second run).
func (c *Client) DispatchWorkflow(ctx context.Context, workflowFile, ref string, inputs map[string]any) error {
	if err := checkPrintable("workflow file", workflowFile); err != nil {
		return err
	}
	if err := checkPrintable("dispatch ref", ref); err != nil {
		return err
	}
	event := github.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: inputs}
	_, err := c.gh.Actions.CreateWorkflowDispatchEventByFileName(ctx, c.owner, c.repo, workflowFile, event)
	return c.fail(fmt.Sprintf("dispatch %s on %s", workflowFile, ref), err, nil)
}

// CancelWorkflowRun asks GitHub to cancel run runID. A run that already
// completed is refused with 409, reported as an error matching
// ErrRunCompleted. Cancelling is idempotent, so the request policy may retry it.
func (c *Client) CancelWorkflowRun(ctx context.Context, runID int64) error {
	if runID <= 0 {
		return fmt.Errorf("ghapi: workflow run id is %d; want a positive id", runID)
	}
	_, err := c.gh.Actions.CancelWorkflowRunByID(reqpolicy.AllowRetry(ctx), c.owner, c.repo, runID)
	// GitHub answers 202 Accepted, which go-github reports as an error.
	var accepted *github.AcceptedError
	if err == nil || errors.As(err, &accepted) {
		return nil
	}
	var also error
	if statusOf(err) == http.StatusConflict {
		also = ErrRunCompleted
	}
	return c.fail(fmt.Sprintf("cancel workflow run %d", runID), err, also)
}

// DownloadRunLogs downloads the logs archive (a zip) of one attempt of run
// runID, or of its latest attempt when attempt is 0, following GitHub's
// redirect without credentials. Archives over Options.MaxDownloadBytes fail
// with ErrTooLarge.
func (c *Client) DownloadRunLogs(ctx context.Context, runID int64, attempt int) ([]byte, error) {
	if runID <= 0 {
		return nil, fmt.Errorf("ghapi: workflow run id is %d; want a positive id", runID)
	}
	if attempt < 0 {
		return nil, fmt.Errorf("ghapi: run attempt is %d; want 0 (latest) or a positive attempt", attempt)
	}
	path := fmt.Sprintf("repos/%s/%s/actions/runs/%d/logs", c.owner, c.repo, runID)
	op := fmt.Sprintf("download logs of workflow run %d", runID)
	if attempt > 0 {
		path = fmt.Sprintf("repos/%s/%s/actions/runs/%d/attempts/%d/logs", c.owner, c.repo, runID, attempt)
		op += fmt.Sprintf(" attempt %d", attempt)
	}
	return c.downloadArchive(ctx, op, path)
}

func checkRunAttempt(runID int64, attempt int) error {
	if runID <= 0 {
		return fmt.Errorf("ghapi: workflow run id is %d; want a positive id", runID)
	}
	if attempt <= 0 {
		return fmt.Errorf("ghapi: run attempt is %d; want a positive attempt number", attempt)
	}
	return nil
}
