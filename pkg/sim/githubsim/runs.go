package githubsim

import (
	"cmp"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// maxFilteredRuns is GitHub's cap on workflow runs returned for a filtered search.
const maxFilteredRuns = 1000

// WorkflowRunSpec describes a workflow run for AddWorkflowRun.
type WorkflowRunSpec struct {
	Repo string
	// WorkflowPath is the workflow file (".github/workflows/gpu.yml"), registered on first use.
	WorkflowPath string
	// Event defaults to "push".
	Event string
	// HeadBranch defaults to the default branch; HeadSHA to HeadBranch's head.
	HeadBranch string
	HeadSHA    string
	// Actor defaults to the repository owner.
	Actor string
	// DisplayTitle defaults to the workflow's name.
	DisplayTitle string
	// PullRequests are numbers of pull requests in Repo that the run belongs to.
	PullRequests []int
	// CreatedAt defaults to the clock's now.
	CreatedAt time.Time
	// Status and Conclusion pin the first attempt's state; when empty it follows the jobs.
	Status     string
	Conclusion string
	Jobs       []JobSpec
}

// JobSpec describes a job of a run attempt.
type JobSpec struct {
	Name string
	// Labels are the job's runs-on labels. A queued job with labels waits for an online, idle
	// runner that carries all of them (case-insensitively); that runner then runs its Steps
	// on the clock, each for its Duration.
	Labels []string
	// Status defaults to "queued". A job set up in_progress or completed shows the fields below
	// as given.
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
	RunnerID    int64
	RunnerName  string
	Steps       []StepSpec
	// External says the job's steps run outside the simulator (a player that runs them as
	// real processes): once a runner takes the job its steps wait for StartStep and EndStep,
	// and EndJob completes it; Duration and Conclusion of its steps are ignored.
	External bool
}

// StepSpec describes a step. A step of a job set up in_progress or completed shows its fields
// as given. A step of a job a runner takes runs for Duration and then ends with Conclusion
// (default success); a failing step skips the steps after it.
type StepSpec struct {
	Name        string
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
	Duration    time.Duration
}

// Job is a job as the inspection API returns it.
type Job struct {
	ID          int64
	RunID       int64
	Attempt     int
	Name        string
	Labels      []string
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
	RunnerID    int64
	RunnerName  string
	Steps       []Step
	// RunnerLostAt is when the job's runner went offline in the middle of it: the job stays
	// in progress until its lock expires (RunnerLostTimeout later), then fails.
	RunnerLostAt time.Time
}

// Step is a job step as the inspection API returns it.
type Step struct {
	Number      int
	Name        string
	Status      string
	Conclusion  string
	StartedAt   time.Time
	CompletedAt time.Time
}

// RunAttempt is one attempt of a workflow run as the inspection API returns it.
type RunAttempt struct {
	RunID        int64
	Attempt      int
	WorkflowPath string
	Event        string
	HeadBranch   string
	HeadSHA      string
	Status       string
	Conclusion   string
	StartedAt    time.Time
	UpdatedAt    time.Time
}

// Dispatch is a recorded workflow_dispatch request.
type Dispatch struct {
	Repo         string
	WorkflowPath string
	Ref          string
	Inputs       map[string]any
	Actor        string
	At           time.Time
	// RunID is the run the dispatch created.
	RunID int64
}

// Cancellation is a recorded run cancellation.
type Cancellation struct {
	Repo    string
	RunID   int64
	Attempt int
	Actor   string
	At      time.Time
}

type workflow struct {
	id        int64
	repo      *repo
	path      string
	name      string
	createdAt time.Time
	jobs      []JobSpec // template for runs that dispatches create
	lastRun   int
}

type workflowRun struct {
	id           int64
	repo         *repo
	workflow     *workflow
	runNumber    int
	event        string
	headBranch   string
	headSHA      string
	actor        string
	displayTitle string
	pullRequests []int
	createdAt    time.Time
	checkSuiteID int64
	attempts     []*attempt
}

type attempt struct {
	run        *workflowRun
	number     int
	status     string
	conclusion string
	pinned     bool // state set explicitly, not derived from jobs
	startedAt  time.Time
	updatedAt  time.Time
	actor      string
	jobs       []*job
	logs       []byte // zip archive; nil when none were set
}

type job struct {
	Job
	attempt  *attempt
	scripted bool // steps follow the clock from startedAt
	external bool // steps are reported by StartStep and EndStep; see external.go
	plan     []plannedStep
	log      []byte // the runner's plain-text log of the job; nil until one was set
}

type plannedStep struct {
	duration   time.Duration
	conclusion string
	start, end time.Time // set when a runner takes the job
}

var (
	runStatuses  = []string{"queued", "in_progress", "completed", "waiting", "requested", "pending"}
	runOutcomes  = []string{"success", "failure", "cancelled", "skipped", "neutral", "timed_out", "action_required", "stale", "startup_failure"}
	failingEnds  = []string{"failure", "timed_out", "startup_failure"}
	jobStatusSet = []string{"queued", "in_progress", "completed", "waiting"}
)

// AddWorkflow registers a workflow file with a display name and returns its id.
func (s *Server) AddWorkflow(fullName, workflowPath, name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	if w := rp.workflowByPath(workflowPath); w != nil {
		return 0, alreadyExists("workflow %q already exists in %s", workflowPath, rp.FullName())
	}
	w, err := s.addWorkflow(rp, workflowPath, name)
	if err != nil {
		return 0, err
	}
	return w.id, nil
}

// SetWorkflowJobs sets the jobs that runs created by dispatching workflowPath start with.
func (s *Server) SetWorkflowJobs(fullName, workflowPath string, jobs []JobSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	w, err := s.workflowFor(rp, workflowPath)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := validateJobSpec(j); err != nil {
			return err
		}
	}
	w.jobs = slices.Clone(jobs)
	return nil
}

func (s *Server) addWorkflow(rp *repo, workflowPath, name string) (*workflow, error) {
	if !strings.HasPrefix(workflowPath, ".github/workflows/") ||
		(path.Ext(workflowPath) != ".yml" && path.Ext(workflowPath) != ".yaml") {
		return nil, invalid("workflow path %q, want .github/workflows/<file>.yml", workflowPath)
	}
	if name == "" {
		name = path.Base(workflowPath)
	}
	w := &workflow{id: s.nextID(), repo: rp, path: workflowPath, name: name, createdAt: s.clock.Now()}
	rp.workflows = append(rp.workflows, w)
	return w, nil
}

func (rp *repo) workflowByPath(workflowPath string) *workflow {
	for _, w := range rp.workflows {
		if w.path == workflowPath {
			return w
		}
	}
	return nil
}

// workflowFor finds a workflow by path, registering it on first use.
func (s *Server) workflowFor(rp *repo, workflowPath string) (*workflow, error) {
	if w := rp.workflowByPath(workflowPath); w != nil {
		return w, nil
	}
	return s.addWorkflow(rp, workflowPath, "")
}

// AddWorkflowRun adds a run with its first attempt and returns the run id. Queued jobs with
// labels go to matching idle runners at once.
func (s *Server) AddWorkflowRun(spec WorkflowRunSpec) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	rp, err := s.repoByName(spec.Repo)
	if err != nil {
		return 0, err
	}
	w, err := s.workflowFor(rp, spec.WorkflowPath)
	if err != nil {
		return 0, err
	}
	if spec.Event == "" {
		spec.Event = "push"
	}
	if err := rp.branchHead("HeadSHA", &spec.HeadBranch, &spec.HeadSHA); err != nil {
		return 0, err
	}
	for _, n := range spec.PullRequests {
		if _, ok := rp.pulls[n]; !ok {
			return 0, notFound("pull request %s", describe(rp, n))
		}
	}
	if spec.Actor == "" {
		spec.Actor = rp.Owner
	}
	if spec.CreatedAt.IsZero() {
		spec.CreatedAt = now
	}
	run := &workflowRun{
		id: s.nextID(), repo: rp, workflow: w, event: spec.Event, headBranch: spec.HeadBranch,
		headSHA: spec.HeadSHA, actor: spec.Actor, displayTitle: cmp.Or(spec.DisplayTitle, w.name),
		pullRequests: slices.Clone(spec.PullRequests), createdAt: spec.CreatedAt,
	}
	if _, err := s.addAttempt(run, spec.Actor, spec.Status, spec.Conclusion, spec.Jobs, spec.CreatedAt); err != nil {
		return 0, err
	}
	w.lastRun++
	run.runNumber = w.lastRun
	run.checkSuiteID = s.nextID()
	s.userFor(spec.Actor)
	s.workflowRuns = append(s.workflowRuns, run)
	s.assignJobs(now)
	return run.id, nil
}

// RerunWorkflowRun starts the next attempt of a completed run with jobs and returns its number.
func (s *Server) RerunWorkflowRun(fullName string, runID int64, jobs []JobSpec) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return 0, err
	}
	if latest := run.latest(); latest.status != "completed" {
		return 0, conflict("run %d attempt %d is %s; only completed runs can be re-run", run.id, latest.number, latest.status)
	}
	a, err := s.addAttempt(run, run.actor, "", "", jobs, now)
	if err != nil {
		return 0, err
	}
	s.assignJobs(now)
	return a.number, nil
}

// SetRunStatus pins the latest attempt's status and conclusion (for example to mark a run
// completed some time ago); jobs no longer change it.
func (s *Server) SetRunStatus(fullName string, runID int64, status, conclusion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return err
	}
	if status == "" {
		return invalid("run status must not be empty")
	}
	if err := validateRunState(status, conclusion); err != nil {
		return err
	}
	a := run.latest()
	a.status, a.conclusion, a.pinned, a.updatedAt = status, conclusion, true, s.clock.Now()
	return nil
}

// AddJob adds a job to the latest attempt of a run and returns its id, as a
// job GitHub creates once the jobs it needs have ended (a matrix job's legs,
// one per value); queued with labels it goes to a matching idle runner.
func (s *Server) AddJob(fullName string, runID int64, spec JobSpec) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return 0, err
	}
	if err := validateJobSpec(spec); err != nil {
		return 0, err
	}
	a := run.latest()
	j := newJob(a, spec, s.nextID())
	a.jobs = append(a.jobs, j)
	s.track(j)
	s.settleAttempt(a, now)
	s.assignJobs(now)
	return j.ID, nil
}

// SetJob replaces a job's state with spec, shown as given.
func (s *Server) SetJob(fullName string, jobID int64, spec JobSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.jobByName(fullName, jobID)
	if err != nil {
		return err
	}
	if err := validateJobSpec(spec); err != nil {
		return err
	}
	now := s.clock.Now()
	if spec.Status == "completed" {
		s.releaseRunner(j) // the job's ephemeral runner leaves with it
	}
	*j = *newJob(j.attempt, spec, j.ID)
	s.track(j)
	s.settleAttempt(j.attempt, now)
	s.assignJobs(now)
	return nil
}

// SetJobSteps replaces a job's steps, shown as given.
func (s *Server) SetJobSteps(fullName string, jobID int64, steps []StepSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.jobByName(fullName, jobID)
	if err != nil {
		return err
	}
	for _, st := range steps {
		if err := validateStepSpec(st); err != nil {
			return err
		}
	}
	j.Steps, j.scripted, j.plan = stepsFrom(steps), false, nil
	return nil
}

// Jobs returns the jobs of a run attempt (0 means the latest attempt).
func (s *Server) Jobs(fullName string, runID int64, attemptNumber int) ([]Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.clock.Now())
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return nil, err
	}
	a, err := run.attempt(attemptNumber)
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(a.jobs))
	for _, j := range a.jobs {
		jj := j.Job
		jj.Labels, jj.Steps = slices.Clone(j.Labels), slices.Clone(j.Steps)
		out = append(out, jj)
	}
	return out, nil
}

// WorkflowRunAttempt returns one attempt of a run (0 means the latest attempt).
func (s *Server) WorkflowRunAttempt(fullName string, runID int64, attemptNumber int) (RunAttempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.clock.Now())
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return RunAttempt{}, err
	}
	a, err := run.attempt(attemptNumber)
	if err != nil {
		return RunAttempt{}, err
	}
	return RunAttempt{
		RunID: run.id, Attempt: a.number, WorkflowPath: run.workflow.path, Event: run.event,
		HeadBranch: run.headBranch, HeadSHA: run.headSHA, Status: a.status, Conclusion: a.conclusion,
		StartedAt: a.startedAt, UpdatedAt: a.updatedAt,
	}, nil
}

// Dispatches returns every recorded workflow dispatch, oldest first.
func (s *Server) Dispatches() []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.dispatches)
	for i := range out {
		out[i].Inputs = maps.Clone(out[i].Inputs)
	}
	return out
}

// Cancellations returns every recorded run cancellation, oldest first.
func (s *Server) Cancellations() []Cancellation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancellations)
}

func validateRunState(status, conclusion string) error {
	if status != "" && !slices.Contains(runStatuses, status) {
		return invalid("run status %q, want one of %s", status, strings.Join(runStatuses, ", "))
	}
	if conclusion != "" && !slices.Contains(runOutcomes, conclusion) {
		return invalid("run conclusion %q, want one of %s", conclusion, strings.Join(runOutcomes, ", "))
	}
	if (status == "completed") != (conclusion != "") {
		return invalid("run status %q with conclusion %q: a conclusion goes with status completed, and only then", status, conclusion)
	}
	return nil
}

func validateJobSpec(j JobSpec) error {
	if j.Name == "" {
		return invalid("job name must not be empty")
	}
	status := cmp.Or(j.Status, "queued")
	if !slices.Contains(jobStatusSet, status) {
		return invalid("job %q: status %q, want one of %s", j.Name, status, strings.Join(jobStatusSet, ", "))
	}
	if j.Conclusion != "" && !slices.Contains(runOutcomes, j.Conclusion) {
		return invalid("job %q: conclusion %q, want one of %s", j.Name, j.Conclusion, strings.Join(runOutcomes, ", "))
	}
	if (status == "completed") != (j.Conclusion != "") {
		return invalid("job %q: a conclusion goes with status completed, and only then", j.Name)
	}
	for _, st := range j.Steps {
		if err := validateStepSpec(st); err != nil {
			return err
		}
	}
	return nil
}

func validateStepSpec(st StepSpec) error {
	if st.Name == "" {
		return invalid("step name must not be empty")
	}
	if st.Duration < 0 {
		return invalid("step %q: negative duration %s", st.Name, st.Duration)
	}
	if st.Status != "" && !slices.Contains(jobStatusSet, st.Status) {
		return invalid("step %q: status %q, want one of %s", st.Name, st.Status, strings.Join(jobStatusSet, ", "))
	}
	if st.Conclusion != "" && !slices.Contains(runOutcomes, st.Conclusion) {
		return invalid("step %q: conclusion %q, want one of %s", st.Name, st.Conclusion, strings.Join(runOutcomes, ", "))
	}
	return nil
}

func (s *Server) addAttempt(run *workflowRun, actor, status, conclusion string, jobs []JobSpec, now time.Time) (*attempt, error) {
	if err := validateRunState(status, conclusion); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if err := validateJobSpec(j); err != nil {
			return nil, err
		}
	}
	a := &attempt{
		run: run, number: len(run.attempts) + 1, status: cmp.Or(status, "queued"), conclusion: conclusion,
		pinned: status != "", startedAt: now, updatedAt: now, actor: actor,
	}
	for _, spec := range jobs {
		j := newJob(a, spec, s.nextID())
		a.jobs = append(a.jobs, j)
		s.track(j)
	}
	run.attempts = append(run.attempts, a)
	s.settleAttempt(a, now)
	return a, nil
}

// track indexes a job by id and, when it waits for a runner, in the waiting list.
func (s *Server) track(j *job) {
	s.jobs[j.ID] = j
	if j.Status == "queued" && len(j.Labels) > 0 && !slices.Contains(s.waiting, j) {
		s.waiting = append(s.waiting, j)
	}
}

func newJob(a *attempt, spec JobSpec, id int64) *job {
	return &job{
		Job: Job{
			ID: id, RunID: a.run.id, Attempt: a.number, Name: spec.Name, Labels: slices.Clone(spec.Labels),
			Status: cmp.Or(spec.Status, "queued"), Conclusion: spec.Conclusion,
			StartedAt: spec.StartedAt, CompletedAt: spec.CompletedAt,
			RunnerID: spec.RunnerID, RunnerName: spec.RunnerName, Steps: stepsFrom(spec.Steps),
		},
		attempt:  a,
		external: spec.External,
		plan:     planFrom(spec.Steps),
	}
}

func stepsFrom(specs []StepSpec) []Step {
	steps := make([]Step, 0, len(specs))
	for i, st := range specs {
		steps = append(steps, Step{
			Number: i + 1, Name: st.Name, Status: cmp.Or(st.Status, "queued"), Conclusion: st.Conclusion,
			StartedAt: st.StartedAt, CompletedAt: st.CompletedAt,
		})
	}
	return steps
}

// planFrom keeps each step's duration and outcome for when a runner takes the job; times are
// filled in then.
func planFrom(specs []StepSpec) []plannedStep {
	plan := make([]plannedStep, 0, len(specs))
	for _, st := range specs {
		plan = append(plan, plannedStep{duration: st.Duration, conclusion: cmp.Or(st.Conclusion, "success")})
	}
	return plan
}

func (r *workflowRun) latest() *attempt { return r.attempts[len(r.attempts)-1] }

func (r *workflowRun) attempt(n int) (*attempt, error) {
	if n == 0 {
		return r.latest(), nil
	}
	if n < 0 || n > len(r.attempts) {
		return nil, notFound("attempt %d of run %d", n, r.id)
	}
	return r.attempts[n-1], nil
}

func (s *Server) runByName(fullName string, runID int64) (*workflowRun, error) {
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	return s.runIn(rp, runID)
}

func (s *Server) runIn(rp *repo, runID int64) (*workflowRun, error) {
	for _, run := range s.workflowRuns {
		if run.id == runID && run.repo == rp {
			return run, nil
		}
	}
	return nil, notFound("workflow run %d", runID)
}

func (s *Server) jobByID(id int64) *job { return s.jobs[id] }

func (s *Server) jobByName(fullName string, jobID int64) (*job, error) {
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	return s.jobIn(rp, jobID)
}

// jobIn is the job of rp with the id, or a 404: a job of another repository is not shown.
func (s *Server) jobIn(rp *repo, jobID int64) (*job, error) {
	if j := s.jobByID(jobID); j != nil && j.attempt.run.repo == rp {
		return j, nil
	}
	return nil, notFound("job %d", jobID)
}
