package history

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

// DefaultWorkflow is the GPU workflow file whose runs are collected by default.
const DefaultWorkflow = "runpod-gpu.yml"

const (
	// searchCap is how many runs one filtered GitHub search returns.
	searchCap = 1000
	// searchPages reads a whole capped search, 100 runs a page.
	searchPages = searchCap / 100
	// maxArtifactBytes bounds a cost artifact: it holds one small JSON file,
	// so anything bigger is not a cost artifact and is not downloaded.
	maxArtifactBytes = 1 << 20
)

// GitHub is the part of the GitHub client (*ghapi.Client) collection uses.
type GitHub interface {
	ListWorkflowRuns(ctx context.Context, workflowFile string, filter ghapi.ListRunsFilter, maxPages int) ([]*github.WorkflowRun, error)
	GetWorkflowRunAttempt(ctx context.Context, runID int64, attempt int) (*github.WorkflowRun, error)
	DownloadRunLogs(ctx context.Context, runID int64, attempt int) ([]byte, error)
	ListAttemptJobs(ctx context.Context, runID int64, attempt int) ([]*github.WorkflowJob, error)
	ListRunArtifacts(ctx context.Context, runID int64) ([]*github.Artifact, error)
	DownloadArtifact(ctx context.Context, artifactID int64) ([]byte, error)
}

// Collector downloads the evidence of the workflow attempts in a date range
// into an evidence directory.
type Collector struct {
	GitHub   GitHub
	Dir      string
	Workflow string                           // workflow file name; "" means DefaultWorkflow
	Logf     func(format string, args ...any) // progress and failures; nil discards
}

// CollectStats counts what one collection did.
type CollectStats struct {
	Searches   int // run searches made; more than one when the range was split
	Runs       int // runs created in the range
	Attempts   int // attempts visited: those of the range, and unfinished ones saved earlier
	Cached     int // attempts whose evidence was already final
	Complete   int // attempts whose evidence is now final
	Incomplete int // attempts with a download left for the next collection
}

// add sums another collection's counts into s.
func (s *CollectStats) add(o CollectStats) {
	s.Searches += o.Searches
	s.Runs += o.Runs
	s.Attempts += o.Attempts
	s.Cached += o.Cached
	s.Complete += o.Complete
	s.Incomplete += o.Incomplete
}

// Collect lists every run of the workflow created in r — splitting the search
// where GitHub would cap it — and saves each attempt's record, logs and cost
// artifacts. Downloads that fail are recorded and tried again by the next
// collection, as are the unfinished attempts of earlier collections. Only a
// failed listing, a cancelled ctx or a local write error is an error.
func (c *Collector) Collect(ctx context.Context, r Range) (CollectStats, error) {
	var stats CollectStats
	runs, err := c.search(ctx, r.Since, r.end(), &stats)
	if err != nil {
		return stats, fmt.Errorf("list runs of %s created %s: %w", c.workflow(), r, err)
	}
	byID := map[int64]*github.WorkflowRun{}
	for _, run := range runs {
		byID[run.GetID()] = run
	}
	ids := make([]int64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	stats.Runs = len(ids)

	s := &collection{Collector: c, store: store{dir: c.Dir}, stats: &stats, artifacts: map[int64][]*github.Artifact{}}
	visited := map[AttemptKey]bool{}
	for _, id := range ids {
		run := byID[id]
		for n := 1; n <= max(run.GetRunAttempt(), 1); n++ {
			k := AttemptKey{RunID: id, Attempt: n}
			visited[k] = true
			if err := s.attempt(ctx, k, run); err != nil {
				return stats, err
			}
		}
	}
	// Unfinished attempts of earlier collections may lie outside this range:
	// their failed downloads are retried all the same.
	keys, err := s.store.keys()
	if err != nil {
		return stats, err
	}
	for _, k := range keys {
		if visited[k] {
			continue
		}
		if rec, ok, err := s.store.load(k); err != nil || !ok || rec.Final() {
			continue
		}
		if err := s.attempt(ctx, k, nil); err != nil {
			return stats, err
		}
	}
	return stats, c.collectReaperRecords(ctx, r)
}

func (c *Collector) workflow() string {
	if c.Workflow == "" {
		return DefaultWorkflow
	}
	return c.Workflow
}

func (c *Collector) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// search lists the runs created in [from, to). A search GitHub caps is split
// in halves — days, then hours and finer — until every part fits. A search
// that returns a full 1,000 runs counts as capped too: the last page cannot
// tell whether more exist.
func (c *Collector) search(ctx context.Context, from, to time.Time, stats *CollectStats) ([]*github.WorkflowRun, error) {
	stats.Searches++
	filter := createdFilter(from, to)
	runs, err := c.GitHub.ListWorkflowRuns(ctx, c.workflow(), ghapi.ListRunsFilter{Created: filter}, searchPages)
	capped := errors.Is(err, ghapi.ErrSearchCapped) || (err == nil && len(runs) >= searchCap)
	if !capped {
		return runs, err
	}
	mid, ok := splitPoint(from, to)
	if !ok {
		return nil, fmt.Errorf("more than %d runs created in the second %s: GitHub cannot list them all", searchCap, filter)
	}
	c.logf("more than %d runs created %s: splitting the search at %s", searchCap, filter, mid.Format(time.RFC3339))
	early, err := c.search(ctx, from, mid, stats)
	if err != nil {
		return nil, err
	}
	late, err := c.search(ctx, mid, to, stats)
	if err != nil {
		return nil, err
	}
	return append(early, late...), nil
}

// collection is one Collect call's state.
type collection struct {
	*Collector
	store store
	stats *CollectStats
	// artifacts caches each run's artifact list: every attempt reads it.
	artifacts map[int64][]*github.Artifact
}

// attempt brings one attempt's evidence up to date. run is the listed run
// (its latest attempt), or nil for an attempt saved by an earlier collection.
func (s *collection) attempt(ctx context.Context, k AttemptKey, run *github.WorkflowRun) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.stats.Attempts++
	rec, saved, err := s.store.load(k)
	if err != nil {
		s.logf("run %d attempt %d: %v: collecting it again", k.RunID, k.Attempt, err)
		saved = false
	}
	if saved && rec.Final() {
		s.stats.Cached++
		return nil
	}
	if run == nil || run.GetRunAttempt() != k.Attempt {
		fresh, err := s.GitHub.GetWorkflowRunAttempt(ctx, k.RunID, k.Attempt)
		switch {
		case err == nil:
			run = fresh
		case !saved && run != nil:
			// Record what the run says so the attempt is retried next time.
			rec = recordOf(run, k.Attempt)
			rec.Status, rec.Conclusion = "", ""
			rec.Logs = Download{State: StateFailed, Error: "attempt details: " + describeFailure(err)}
			rec.Jobs, rec.ArtifactList = rec.Logs, rec.Logs
			return s.finish(rec)
		default:
			s.logf("run %d attempt %d: %v: retried next time", k.RunID, k.Attempt, err)
			s.stats.Incomplete++
			return nil
		}
	}
	fresh := recordOf(run, k.Attempt)
	if saved {
		fresh.Logs, fresh.Jobs, fresh.ArtifactList, fresh.Artifacts = rec.Logs, rec.Jobs, rec.ArtifactList, rec.Artifacts
	}
	rec = fresh
	if rec.Status != "completed" {
		// Logs of a running attempt are partial: wait until it completes.
		markPending(&rec)
		return s.finish(rec)
	}
	if err := s.fetchLogs(ctx, &rec); err != nil {
		return err
	}
	if err := s.fetchJobs(ctx, &rec); err != nil {
		return err
	}
	if err := s.fetchArtifacts(ctx, &rec); err != nil {
		return err
	}
	return s.finish(rec)
}

// markPending marks what rec has not downloaded yet as pending until its
// attempt completes.
func markPending(rec *AttemptRecord) {
	pending := Download{State: StatePending, Error: "the attempt is " + rec.Status}
	if rec.Logs.State != StateComplete {
		rec.Logs = pending
	}
	if rec.Jobs.State != StateComplete {
		rec.Jobs = pending
	}
	if rec.ArtifactList.State != StateComplete {
		rec.ArtifactList = pending
	}
}

// finish saves the record and counts it.
func (s *collection) finish(rec AttemptRecord) error {
	if err := s.store.save(rec); err != nil {
		return err
	}
	if rec.Final() {
		s.stats.Complete++
	} else {
		s.stats.Incomplete++
	}
	return nil
}

func (s *collection) fetchLogs(ctx context.Context, rec *AttemptRecord) error {
	if rec.Logs.State == StateComplete {
		return nil
	}
	data, err := s.GitHub.DownloadRunLogs(ctx, rec.RunID, rec.Attempt)
	if err == nil {
		err = checkZip(data)
	}
	if err != nil {
		rec.Logs = Download{State: StateFailed, Error: describeFailure(err)}
		s.logf("run %d attempt %d: logs: %s: retried next time", rec.RunID, rec.Attempt, rec.Logs.Error)
		return nil
	}
	if err := s.store.writeFile(rec.Key(), logsFile, data); err != nil {
		return err
	}
	rec.Logs = Download{State: StateComplete}
	return nil
}

// fetchJobs saves the attempt's jobs: they tell the lane's own jobs, whose
// logs are read, from the GPU job, which runs the pull request's code.
func (s *collection) fetchJobs(ctx context.Context, rec *AttemptRecord) error {
	if rec.Jobs.State == StateComplete {
		return nil
	}
	jobs, err := s.GitHub.ListAttemptJobs(ctx, rec.RunID, rec.Attempt)
	if err != nil {
		rec.Jobs = Download{State: StateFailed, Error: describeFailure(err)}
		s.logf("run %d attempt %d: jobs: %s: retried next time", rec.RunID, rec.Attempt, rec.Jobs.Error)
		return nil
	}
	data, err := json.MarshalIndent(jobInfos(jobs), "", "  ")
	if err != nil {
		return err
	}
	if err := s.store.writeFile(rec.Key(), jobsFile, append(data, '\n')); err != nil {
		return err
	}
	rec.Jobs = Download{State: StateComplete}
	return nil
}

func (s *collection) fetchArtifacts(ctx context.Context, rec *AttemptRecord) error {
	if rec.ArtifactList.State != StateComplete {
		list, err := s.runArtifacts(ctx, rec.RunID)
		if err != nil {
			rec.ArtifactList = Download{State: StateFailed, Error: describeFailure(err)}
			s.logf("run %d attempt %d: artifact list: %s: retried next time", rec.RunID, rec.Attempt, rec.ArtifactList.Error)
			return nil
		}
		for _, a := range list {
			if !(ownArtifact(a.GetName(), rec.Key()) || isUsageArtifact(a.GetName(), rec.Key())) || slices.ContainsFunc(rec.Artifacts, func(f ArtifactFile) bool { return f.ID == a.GetID() }) {
				continue
			}
			f := ArtifactFile{ID: a.GetID(), Name: a.GetName(), CreatedAt: a.GetCreatedAt().UTC(),
				Download: Download{State: StateFailed, Error: "not downloaded yet"}}
			switch {
			case !claimsJob(a.GetName(), rec.Key()) && !isUsageArtifact(a.GetName(), rec.Key()):
				// The GPU usage needs no claim: the GPU job (the PR's code) writes it, and it
				// only informs the right-sizing advice, never a cost.
				f.Download = Download{State: StateUnavailable, Error: "its name claims no job (not uploaded with job-check-run-id), so it is never counted"}
			case a.GetExpired():
				f.Download = Download{State: StateUnavailable, Error: "the artifact expired"}
			case a.GetSizeInBytes() > maxArtifactBytes:
				f.Download = Download{State: StateUnavailable,
					Error: fmt.Sprintf("%d bytes: more than a cost artifact's %d", a.GetSizeInBytes(), maxArtifactBytes)}
			}
			rec.Artifacts = append(rec.Artifacts, f)
		}
		rec.ArtifactList = Download{State: StateComplete}
	}
	for i := range rec.Artifacts {
		f := &rec.Artifacts[i]
		if f.State.final() {
			continue
		}
		data, err := s.GitHub.DownloadArtifact(ctx, f.ID)
		if err == nil {
			err = checkZip(data)
		}
		if err != nil {
			f.Download = Download{State: StateFailed, Error: describeFailure(err)}
			s.logf("run %d attempt %d: artifact %s: %s: retried next time", rec.RunID, rec.Attempt, f.Name, f.Error)
			continue
		}
		if err := s.store.writeFile(rec.Key(), f.fileName(), data); err != nil {
			return err
		}
		f.Download = Download{State: StateComplete}
	}
	return nil
}

func (s *collection) runArtifacts(ctx context.Context, runID int64) ([]*github.Artifact, error) {
	if list, ok := s.artifacts[runID]; ok {
		return list, nil
	}
	list, err := s.GitHub.ListRunArtifacts(ctx, runID)
	if err != nil {
		return nil, err
	}
	s.artifacts[runID] = list
	return list, nil
}

// ownArtifact reports whether an artifact is a cost artifact of attempt k:
// named cost.ArtifactName(run, attempt), or that name and a "-" suffix.
// A run's artifact list holds every attempt's, so the name decides.
func ownArtifact(name string, k AttemptKey) bool {
	own := cost.ArtifactName(k.RunID, k.Attempt)
	return name == own || strings.HasPrefix(name, own+"-")
}

// claimsJob reports whether a cost artifact's name claims a job of attempt
// k; only such an artifact can count (see laneArtifact), so only it is
// downloaded.
func claimsJob(name string, k AttemptKey) bool {
	_, ok := cost.ArtifactJob(name, k.RunID, k.Attempt)
	return ok
}

// recordOf is what a listed run says about one of its attempts. The run's
// own fields are the same for every attempt; the attempt's are only right
// when run is that attempt.
func recordOf(run *github.WorkflowRun, attempt int) AttemptRecord {
	rec := AttemptRecord{
		Repository: run.GetRepository().GetFullName(), Workflow: run.GetPath(),
		RunID: run.GetID(), Attempt: attempt, RunNumber: run.GetRunNumber(),
		Event: run.GetEvent(), HeadSHA: run.GetHeadSHA(), HeadBranch: run.GetHeadBranch(),
		PullRequests: []int{},
		CreatedAt:    run.GetCreatedAt().UTC(), StartedAt: run.GetRunStartedAt().UTC(),
		Status: run.GetStatus(), Conclusion: run.GetConclusion(),
		URL: fmt.Sprintf("%s/attempts/%d", run.GetHTMLURL(), attempt),
	}
	for _, pr := range run.PullRequests {
		rec.PullRequests = append(rec.PullRequests, pr.GetNumber())
	}
	return rec
}

// checkZip rejects a download that is not a zip archive (an error page
// served with 200, a truncated body), so it is not saved as complete.
func checkZip(data []byte) error {
	if _, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err != nil {
		return fmt.Errorf("not a zip archive: %w", err)
	}
	return nil
}

// describeFailure says why a download failed, briefly and the same way
// every time: the HTTP status when GitHub answered, else the error. It is
// saved in the evidence directory and shown in the report.
func describeFailure(err error) string {
	var apiErr *ghapi.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode > 0 {
		return fmt.Sprintf("HTTP %d %s", apiErr.StatusCode, http.StatusText(apiErr.StatusCode))
	}
	return err.Error()
}
