package githubsim

import (
	"cmp"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// workflow finds the workflow an API path names by id or by file name.
func (c *call) workflow(rp *repo) (*workflow, error) {
	ref := c.r.PathValue("workflow_id")
	id, idErr := strconv.ParseInt(ref, 10, 64)
	for _, w := range rp.workflows {
		if (idErr == nil && w.id == id) || path.Base(w.path) == ref {
			return w, nil
		}
	}
	return nil, notFound("workflow %q", ref)
}

// repoWorkflow is the call's repository and the workflow its path names.
func (c *call) repoWorkflow() (*repo, *workflow, error) {
	rp, err := c.repo()
	if err != nil {
		return nil, nil, err
	}
	w, err := c.workflow(rp)
	return rp, w, err
}

type workflowJSON struct {
	ID        int64  `json:"id"`
	NodeID    string `json:"node_id"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	State     string `json:"state"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	URL       string `json:"url"`
	HTMLURL   string `json:"html_url"`
	BadgeURL  string `json:"badge_url"`
}

func (s *Server) getWorkflow(c *call) error {
	rp, w, err := c.repoWorkflow()
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, workflowJSON{
		ID: w.id, NodeID: nodeID("W", w.id), Name: w.name, Path: w.path, State: "active",
		CreatedAt: stamp(w.createdAt), UpdatedAt: stamp(w.createdAt),
		URL:      c.repoAPIURL(rp) + "/actions/workflows/" + itoa(w.id),
		HTMLURL:  s.webURL + "/" + rp.FullName() + "/blob/" + rp.DefaultBranch + "/" + w.path,
		BadgeURL: s.webURL + "/" + rp.FullName() + "/workflows/" + url.PathEscape(w.name) + "/badge.svg",
	})
	return nil
}

type dispatchRequest struct {
	Ref              *string        `json:"ref"`
	Inputs           map[string]any `json:"inputs"`
	ReturnRunDetails bool           `json:"return_run_details"`
}

type dispatchDetailsJSON struct {
	WorkflowRunID int64  `json:"workflow_run_id"`
	RunURL        string `json:"run_url"`
	HTMLURL       string `json:"html_url"`
}

// dispatchWorkflow records a workflow_dispatch and creates its run from the workflow's job
// template; it answers 204, or 200 with the run when return_run_details is set.
func (s *Server) dispatchWorkflow(c *call) error {
	rp, w, err := c.repoWorkflow()
	if err != nil {
		return err
	}
	var req dispatchRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	if req.Ref == nil || *req.Ref == "" {
		return invalid("Invalid request. \"ref\" wasn't supplied.")
	}
	branch := strings.TrimPrefix(*req.Ref, "refs/heads/")
	sha, ok := rp.branches[branch]
	if !ok {
		return invalid("No ref found for: %s", *req.Ref)
	}
	for k, v := range req.Inputs {
		switch v.(type) {
		case string, bool, float64:
		default:
			return invalid("inputs.%s: value must be a string, number or boolean", k)
		}
	}
	run := &workflowRun{
		id: s.nextID(), repo: rp, workflow: w, event: "workflow_dispatch", headBranch: branch,
		headSHA: sha, actor: c.who.Login, displayTitle: w.name, createdAt: c.now, checkSuiteID: s.nextID(),
	}
	if _, err := s.addAttempt(run, c.who.Login, "", "", w.jobs, c.now); err != nil {
		return err
	}
	w.lastRun++
	run.runNumber = w.lastRun
	s.workflowRuns = append(s.workflowRuns, run)
	s.dispatches = append(s.dispatches, Dispatch{
		Repo: rp.FullName(), WorkflowPath: w.path, Ref: *req.Ref, Inputs: req.Inputs,
		Actor: c.who.Login, At: c.now, RunID: run.id,
	})
	s.assignJobs(c.now)
	if req.ReturnRunDetails {
		c.writeJSON(http.StatusOK, dispatchDetailsJSON{
			WorkflowRunID: run.id, RunURL: c.repoAPIURL(rp) + "/actions/runs/" + itoa(run.id),
			HTMLURL: s.webURL + "/" + rp.FullName() + "/actions/runs/" + itoa(run.id),
		})
		return nil
	}
	c.noContent(http.StatusNoContent)
	return nil
}

func (s *Server) cancelWorkflowRun(c *call) error {
	run, err := s.runFromPath(c)
	if err != nil {
		return err
	}
	a := run.latest()
	if a.status == "completed" {
		return conflict("Cannot cancel a workflow run that is completed.")
	}
	for _, j := range a.jobs {
		if j.Status != "completed" {
			s.finish(j, c.now, "cancelled", "cancelled")
		}
	}
	// A cancelled run shows cancelled whatever its jobs had reached.
	a.status, a.conclusion, a.pinned, a.updatedAt = "completed", "cancelled", true, c.now
	s.cancellations = append(s.cancellations, Cancellation{Repo: run.repo.FullName(), RunID: run.id, Attempt: a.number, Actor: c.who.Login, At: c.now})
	c.writeJSON(http.StatusAccepted, struct{}{})
	return nil
}

type headCommitJSON struct {
	ID        string `json:"id"`
	TreeID    string `json:"tree_id"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
	Author    struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"author"`
}

type runJSON struct {
	ID                 int64          `json:"id"`
	Name               string         `json:"name"`
	NodeID             string         `json:"node_id"`
	HeadBranch         string         `json:"head_branch"`
	HeadSHA            string         `json:"head_sha"`
	Path               string         `json:"path"`
	DisplayTitle       string         `json:"display_title"`
	RunNumber          int            `json:"run_number"`
	Event              string         `json:"event"`
	Status             string         `json:"status"`
	Conclusion         *string        `json:"conclusion"`
	WorkflowID         int64          `json:"workflow_id"`
	CheckSuiteID       int64          `json:"check_suite_id"`
	CheckSuiteNodeID   string         `json:"check_suite_node_id"`
	URL                string         `json:"url"`
	HTMLURL            string         `json:"html_url"`
	PullRequests       []prMiniJSON   `json:"pull_requests"`
	CreatedAt          string         `json:"created_at"`
	UpdatedAt          string         `json:"updated_at"`
	Actor              userJSON       `json:"actor"`
	RunAttempt         int            `json:"run_attempt"`
	RunStartedAt       string         `json:"run_started_at"`
	TriggeringActor    userJSON       `json:"triggering_actor"`
	JobsURL            string         `json:"jobs_url"`
	LogsURL            string         `json:"logs_url"`
	CheckSuiteURL      string         `json:"check_suite_url"`
	ArtifactsURL       string         `json:"artifacts_url"`
	CancelURL          string         `json:"cancel_url"`
	RerunURL           string         `json:"rerun_url"`
	PreviousAttemptURL *string        `json:"previous_attempt_url"`
	WorkflowURL        string         `json:"workflow_url"`
	HeadCommit         headCommitJSON `json:"head_commit"`
	Repository         repoJSON       `json:"repository"`
	HeadRepository     repoJSON       `json:"head_repository"`
}

func (s *Server) runJSON(c *call, a *attempt) runJSON {
	run, rp := a.run, a.run.repo
	runURL := c.repoAPIURL(rp) + "/actions/runs/" + itoa(run.id)
	var previous *string
	if a.number > 1 {
		p := runURL + "/attempts/" + strconv.Itoa(a.number-1)
		previous = &p
	}
	prs := []prMiniJSON{}
	for _, n := range run.pullRequests {
		if p := rp.pulls[n]; p != nil && p.HeadRepo == "" { // GitHub leaves fork PRs out
			prs = append(prs, prMini(c, rp, p))
		}
	}
	head := headCommitJSON{ID: run.headSHA, TreeID: run.headSHA, Message: run.displayTitle, Timestamp: stamp(run.createdAt)}
	head.Author.Name, head.Author.Email = run.actor, run.actor+"@users.noreply.github.com"
	return runJSON{
		ID: run.id, Name: run.workflow.name, NodeID: nodeID("WFR", run.id), HeadBranch: run.headBranch,
		HeadSHA: run.headSHA, Path: run.workflow.path, DisplayTitle: run.displayTitle, RunNumber: run.runNumber,
		Event: run.event, Status: a.status, Conclusion: strOrNull(a.conclusion), WorkflowID: run.workflow.id,
		CheckSuiteID: run.checkSuiteID, CheckSuiteNodeID: nodeID("CS", run.checkSuiteID), URL: runURL,
		HTMLURL:      s.webURL + "/" + rp.FullName() + "/actions/runs/" + itoa(run.id),
		PullRequests: prs, CreatedAt: stamp(run.createdAt), UpdatedAt: stamp(a.updatedAt),
		Actor: s.userJSON(run.actor), RunAttempt: a.number, RunStartedAt: stamp(a.startedAt),
		TriggeringActor: s.userJSON(a.actor), JobsURL: runURL + "/jobs", LogsURL: runURL + "/logs",
		CheckSuiteURL: c.repoAPIURL(rp) + "/check-suites/" + itoa(run.checkSuiteID), ArtifactsURL: runURL + "/artifacts",
		CancelURL: runURL + "/cancel", RerunURL: runURL + "/rerun", PreviousAttemptURL: previous,
		WorkflowURL: c.repoAPIURL(rp) + "/actions/workflows/" + itoa(run.workflow.id),
		HeadCommit:  head, Repository: s.repoJSON(rp), HeadRepository: s.repoJSON(rp),
	}
}

func prMini(c *call, rp *repo, p *pull) prMiniJSON {
	pr := prMiniJSON{URL: c.repoAPIURL(rp) + "/pulls/" + itoa(int64(p.Number)), ID: p.id, Number: p.Number}
	pr.Head.Ref, pr.Head.SHA = p.HeadRef, p.HeadSHA
	pr.Base.Ref, pr.Base.SHA = p.BaseRef, p.BaseSHA
	for _, r := range []*prRefJSON{&pr.Head, &pr.Base} {
		r.Repo.ID, r.Repo.URL, r.Repo.Name = rp.id, c.repoAPIURL(rp), rp.Name
	}
	return pr
}

// runFromPath is the run the call's path names ({run_id}) in its repository, or a 404.
func (s *Server) runFromPath(c *call) (*workflowRun, error) {
	rp, id, err := c.repoAndID("run_id")
	if err != nil {
		return nil, err
	}
	return s.runIn(rp, id)
}

// attemptFromPath finds the run and attempt an API path names; without an attempt number
// it is the latest attempt.
func (s *Server) attemptFromPath(c *call) (*attempt, error) {
	run, err := s.runFromPath(c)
	if err != nil {
		return nil, err
	}
	if c.r.PathValue("attempt_number") == "" {
		return run.latest(), nil
	}
	n, err := pathInt(c, "attempt_number")
	if err != nil {
		return nil, err
	}
	return run.attempt(int(n))
}

func (s *Server) getWorkflowRun(c *call) error {
	return getOne(c, s.attemptFromPath, func(a *attempt) runJSON { return s.runJSON(c, a) })
}

// listWorkflowRuns answers both the repository list and the per-workflow list, newest first.
// A filtered search sees at most 1,000 runs, as GitHub's does.
func (s *Server) listWorkflowRuns(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	var only *workflow
	if c.r.PathValue("workflow_id") != "" {
		if only, err = c.workflow(rp); err != nil {
			return err
		}
	}
	q := c.r.URL.Query()
	var created timeRange
	if v := q.Get("created"); v != "" {
		var ok bool
		if created, ok = parseCreated(v); !ok {
			return invalid("created %q: want a date (YYYY-MM-DD) or range such as 2026-01-01..2026-01-31, >=2026-01-01", v)
		}
	}
	var suiteID int64
	if v := q.Get("check_suite_id"); v != "" {
		if suiteID, err = strconv.ParseInt(v, 10, 64); err != nil {
			return invalid("check_suite_id %q is not an integer", v)
		}
	}
	filtered := false
	for _, k := range []string{"actor", "branch", "check_suite_id", "created", "event", "head_sha", "status"} {
		filtered = filtered || q.Get(k) != ""
	}
	var matched []*attempt
	for _, run := range slices.Backward(s.workflowRuns) {
		a := run.latest()
		switch {
		case run.repo != rp, only != nil && run.workflow != only,
			q.Get("actor") != "" && !strings.EqualFold(run.actor, q.Get("actor")),
			q.Get("branch") != "" && run.headBranch != q.Get("branch"),
			q.Get("event") != "" && run.event != q.Get("event"),
			q.Get("head_sha") != "" && run.headSHA != q.Get("head_sha"),
			q.Get("status") != "" && a.status != q.Get("status") && a.conclusion != q.Get("status"),
			suiteID != 0 && run.checkSuiteID != suiteID,
			!created.contains(run.createdAt):
			continue
		}
		matched = append(matched, a)
	}
	slices.SortStableFunc(matched, func(x, y *attempt) int { return y.run.createdAt.Compare(x.run.createdAt) })
	if filtered && len(matched) > maxFilteredRuns {
		matched = matched[:maxFilteredRuns]
	}
	return writePage(c, "workflow_runs", matched, func(a *attempt) runJSON { return s.runJSON(c, a) })
}

type stepJSON struct {
	Name        string  `json:"name"`
	Status      string  `json:"status"`
	Conclusion  *string `json:"conclusion"`
	Number      int     `json:"number"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
}

type jobJSON struct {
	ID              int64      `json:"id"`
	RunID           int64      `json:"run_id"`
	RunURL          string     `json:"run_url"`
	RunAttempt      int        `json:"run_attempt"`
	NodeID          string     `json:"node_id"`
	HeadSHA         string     `json:"head_sha"`
	HeadBranch      string     `json:"head_branch"`
	URL             string     `json:"url"`
	HTMLURL         string     `json:"html_url"`
	Status          string     `json:"status"`
	Conclusion      *string    `json:"conclusion"`
	CreatedAt       string     `json:"created_at"`
	StartedAt       string     `json:"started_at"`
	CompletedAt     *string    `json:"completed_at"`
	Name            string     `json:"name"`
	Steps           []stepJSON `json:"steps"`
	CheckRunURL     string     `json:"check_run_url"`
	Labels          []string   `json:"labels"`
	RunnerID        *int64     `json:"runner_id"`
	RunnerName      *string    `json:"runner_name"`
	RunnerGroupID   *int64     `json:"runner_group_id"`
	RunnerGroupName *string    `json:"runner_group_name"`
	WorkflowName    string     `json:"workflow_name"`
}

func (s *Server) jobJSON(c *call, j *job) jobJSON {
	run, rp := j.attempt.run, j.attempt.run.repo
	steps := []stepJSON{}
	for _, st := range j.Steps {
		steps = append(steps, stepJSON{
			Name: st.Name, Status: st.Status, Conclusion: strOrNull(st.Conclusion), Number: st.Number,
			StartedAt: stampOrNull(st.StartedAt), CompletedAt: stampOrNull(st.CompletedAt),
		})
	}
	var groupID *int64
	var groupName *string
	if r := s.runnerByID(j.RunnerID); r != nil {
		groupID, groupName = &r.GroupID, strOrNull(s.runnerGroups[r.GroupID])
	}
	created := j.attempt.startedAt
	return jobJSON{
		ID: j.ID, RunID: run.id, RunURL: c.repoAPIURL(rp) + "/actions/runs/" + itoa(run.id), RunAttempt: j.Attempt,
		NodeID: nodeID("CR", j.ID), HeadSHA: run.headSHA, HeadBranch: run.headBranch,
		URL:     c.repoAPIURL(rp) + "/actions/jobs/" + itoa(j.ID),
		HTMLURL: s.webURL + "/" + rp.FullName() + "/actions/runs/" + itoa(run.id) + "/job/" + itoa(j.ID),
		Status:  j.Status, Conclusion: strOrNull(j.Conclusion), CreatedAt: stamp(created),
		// GitHub shows a queued job's started_at as its creation time.
		StartedAt: stamp(cmp.Or(j.StartedAt, created)), CompletedAt: stampOrNull(j.CompletedAt),
		Name: j.Name, Steps: steps, CheckRunURL: c.repoAPIURL(rp) + "/check-runs/" + itoa(j.ID),
		Labels: append([]string{}, j.Labels...), RunnerID: idOrNull(j.RunnerID), RunnerName: strOrNull(j.RunnerName),
		RunnerGroupID: groupID, RunnerGroupName: groupName, WorkflowName: run.workflow.name,
	}
}

// runnerByID finds a runner, including one already removed, so finished jobs keep their group.
func (s *Server) runnerByID(id int64) *runner { return s.everyRunner[id] }

// listJobs answers the jobs of a run (filter=latest, the default, or all attempts) and of
// one attempt.
func (s *Server) listJobs(c *call) error {
	a, err := s.attemptFromPath(c)
	if err != nil {
		return err
	}
	jobs := a.jobs
	if c.r.PathValue("attempt_number") == "" {
		switch filter := cmp.Or(c.r.URL.Query().Get("filter"), "latest"); filter {
		case "latest":
		case "all":
			jobs = nil
			for _, at := range a.run.attempts {
				jobs = append(jobs, at.jobs...)
			}
		default:
			return invalid("filter %q, want latest or all", filter)
		}
	}
	return writePage(c, "jobs", jobs, func(j *job) jobJSON { return s.jobJSON(c, j) })
}

func (s *Server) getJob(c *call) error {
	return getOne(c, s.jobFromPath, func(j *job) jobJSON { return s.jobJSON(c, j) })
}

// jobFromPath is the job the call's path names ({job_id}) in its repository, or a 404.
func (s *Server) jobFromPath(c *call) (*job, error) {
	rp, id, err := c.repoAndID("job_id")
	if err != nil {
		return nil, err
	}
	return s.jobIn(rp, id)
}
