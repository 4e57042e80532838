// Package watchdog bounds an accepted pod from a hosted runner beside the GPU
// job: from the pod's provider start to the start of the real test
// step (the setup budget) and over its whole life (the lifetime). It polls the
// run attempt's jobs and the pull request, deletes the pod when a bound
// expires, the GPU job ends or the pull request becomes obsolete, and cancels
// the run only after the deletion is confirmed — never a newer attempt.
//
// The watch is a plain loop over small interfaces with an injected clock and
// sleeper, so tests run it on virtual time. A failed observation changes
// nothing: it neither disarms nor extends a deadline, and an unknown pull
// request state never means obsolete. The GPU job is read first in every poll
// and no read may run past a due deadline, so other reads failing can neither
// hide the job's progress nor delay a deletion.
package watchdog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Defaults of a Request's zero fields.
const (
	DefaultSetupBudget    = 900 * time.Second
	DefaultLifetime       = 3600 * time.Second
	DefaultPoll           = 30 * time.Second
	DefaultRequestTimeout = 15 * time.Second
	// DefaultGPUJob is the GPU job's name in gpu-lane.yml (its gpu-tests job).
	DefaultGPUJob = "GPU tests"
)

// GitHub is the part of the GitHub client the watchdog uses. The runner
// calls need a credential that administers self-hosted runners; without one
// they fail, which only turns the foreign-job check and the registration's
// removal into warnings.
type GitHub interface {
	ListAttemptJobs(ctx context.Context, runID int64, attempt int) ([]*github.WorkflowJob, error)
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	GetWorkflowRun(ctx context.Context, runID int64) (*github.WorkflowRun, error)
	CancelWorkflowRun(ctx context.Context, runID int64) error
	ListWorkflowRuns(ctx context.Context, workflowFile string, filter ghapi.ListRunsFilter, maxPages int) ([]*github.WorkflowRun, error)
	RunnerByName(ctx context.Context, name string, scope ghapi.Scope) (*github.Runner, bool, error)
	DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error
}

// Deps are the services a watch uses. Policy is the RunPod client's (deletion
// shares its cooldown); Clock and Sleep drive the loop and default to the
// policy's clock and a real, cancellable sleep.
type Deps struct {
	Pods   lifecycle.PodAPI
	GitHub GitHub
	Policy *reqpolicy.Policy
	Clock  clock.Clock
	Sleep  clock.Sleeper
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
}

// Request describes one watch.
type Request struct {
	PodID   string
	RunID   int64
	Attempt int
	// RunnerLabel is the runner's name and the label the GPU job runs on
	// (provision's runner-label output).
	RunnerLabel string
	// GPUJob is the GPU job's name as the workflow gives it (its name:, or its
	// id without one); empty means DefaultGPUJob. Listed as "<caller job> /
	// <name>" when the job is in a called workflow, which matches too. Any
	// other job on the runner took it.
	GPUJob string
	// RunnerScope is where the runner is registered; empty means ghapi.ScopeRepo.
	RunnerScope ghapi.Scope
	// TestStep names the real test step; empty means cost.DefaultTestStep.
	TestStep string
	// PRNumber > 0 enables the obsolescence check against ExpectedHeadSHA
	// (empty: only a closed pull request is obsolete).
	PRNumber        int
	ExpectedHeadSHA string
	// TestedTree is the tree the lane tests (authorize's tree key): a head
	// moved to a merge commit of that tree (an identical tree re-pushed) is
	// not obsolete, since the re-push's lane follows this one. Empty: any
	// moved head is.
	TestedTree string
	// SetupBudget, Lifetime and Poll default to the constants above; RequestTimeout bounds each observation.
	SetupBudget, Lifetime, Poll, RequestTimeout time.Duration
	// HandOverWait is how long the pod, accepted, waited in provision for
	// the lane's other tiers before its GPU job could start
	// (lanetiers.Pod.HandOverWait): the setup deadline moves that much
	// later (SetupDeadline); the lifetime does not.
	HandOverWait time.Duration
	// Snapshot is provision's startup snapshot, the price fallback of the cost report.
	Snapshot cost.Snapshot
	// Tier is the pod's tier in the lane ("" in a lane of one pod) and
	// Rerun marks a host-fault re-run's pod: both go into a host fault.
	Tier  string
	Rerun bool
}

// Outcome is how a watch ended.
type Outcome string

// Outcomes.
const (
	OutcomeNoPod           Outcome = "no-pod"                 // no pod id: nothing to watch
	OutcomePodGone         Outcome = "pod-gone"               // the pod was deleted before the watch began
	OutcomeJobFinished     Outcome = "job-finished"           // the GPU job completed after its tests started
	OutcomeNoTests         Outcome = "job-ended-before-tests" // the GPU job completed without reaching its tests
	OutcomeSetupExpired    Outcome = "setup-expired"          // the test step had not started within the setup budget
	OutcomeLifetimeExpired Outcome = "lifetime-expired"       // the pod outlived the lifetime
	OutcomeObsolete        Outcome = "obsolete"               // the pull request closed or its head moved
	OutcomeStartUnknown    Outcome = "start-unreadable"       // the pod's provider start could not be read
	OutcomeInterrupted     Outcome = "interrupted"            // the watch itself was cancelled
	OutcomeRunnerTaken     Outcome = "runner-taken"           // a job other than this attempt's GPU job ran on the runner
	OutcomeHostFault       Outcome = "host-fault"             // the pod was lost to its host while its GPU job ran (hostfault.go)
)

// early reports whether the outcome ends the pod before its job did, so its
// cost is an interrupted run's evidence and the run is cancelled.
func (o Outcome) early() bool {
	switch o {
	case OutcomeSetupExpired, OutcomeLifetimeExpired, OutcomeObsolete, OutcomeStartUnknown, OutcomeRunnerTaken:
		return true
	}
	return false
}

// Cancel is what became of the run's cancellation.
type Cancel struct {
	Requested bool   // the cancel request was accepted
	Skipped   string // why no cancel was sent ("" when sent or not wanted)
	Err       error  // the cancel could not be sent or was refused
}

// Result is what a watch did; it is complete even when Run returns an error.
type Result struct {
	Outcome   Outcome
	Reason    string
	PodID     string
	StartedAt wire.Time // the pod's provider start
	// TestsStarted is true once the real test step was seen running.
	TestsStarted bool
	// Deleted is true when the watch confirmed the pod's deletion (at DeletedAt).
	Deleted   bool
	DeletedAt time.Time
	// RunnerRemoved is true when the runner's registration is known gone, so
	// its credentials are worth nothing.
	RunnerRemoved bool
	Cancel        Cancel
	// Report is the interrupted pod's cost, from the metadata the watch held;
	// nil unless the watch ended the pod early.
	Report *cost.Report
	// HostFault is the pod lost to its host (OutcomeHostFault); nil otherwise.
	HostFault *lanetiers.HostFault
	// KeptForSSH is true when the watch left the pod because its GPU tests
	// failed and the lane made it enterable (keptForSSH): cleanup keeps it.
	KeptForSSH bool
}

// Sentinel errors; test for them with errors.Is.
var (
	// ErrDeadline matches a *DeadlineError: a bound expired and the pod was deleted.
	ErrDeadline = errors.New("watchdog deadline expired")
	// ErrStartUnreadable means the pod's provider start could not be read, so no bound could be set.
	ErrStartUnreadable = errors.New("pod start metadata unreadable")
	// ErrCancel means the obsolete run could not be cancelled.
	ErrCancel = errors.New("workflow run not cancelled")
	// ErrInvalidRequest means a Request field is out of range.
	ErrInvalidRequest = errors.New("invalid watchdog request")
	// ErrRunnerTaken means a job other than this run attempt's GPU job ran on the pod's runner.
	ErrRunnerTaken = errors.New("runner taken by another job")
)

// DeadlineError names the bound that expired.
type DeadlineError struct {
	Which    string // "setup" or "lifetime"
	Budget   time.Duration
	Started  time.Time
	Deadline time.Time
	// Wait is the hand-over wait the setup deadline added (Request.HandOverWait).
	Wait time.Duration
}

// Error names the bound, its length and when it ran out.
func (e *DeadlineError) Error() string {
	wait := ""
	if e.Wait > 0 {
		wait = fmt.Sprintf(" plus the %s it waited for the lane's other tiers", e.Wait)
	}
	return fmt.Sprintf("%s budget of %s from the pod's start (%s)%s expired at %s", e.Which, e.Budget,
		e.Started.UTC().Format(time.RFC3339), wait, e.Deadline.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrDeadline) hold.
func (e *DeadlineError) Is(target error) bool { return target == ErrDeadline }

// Run watches the pod until its GPU job ends, a bound expires or the pull
// request becomes obsolete, and deletes it in every one of those cases. It
// fails for an expired bound, an unreadable start, an unconfirmed deletion
// (lifecycle.ErrUnconfirmed) and a cancel that could not be sent.
func Run(ctx context.Context, deps Deps, req Request) (Result, error) {
	w, err := newWatch(deps, req)
	if err != nil {
		return Result{}, err
	}
	if req.PodID == "" {
		return Result{Outcome: OutcomeNoPod, Reason: "no pod was accepted: nothing to watch"}, nil
	}
	return w.run(ctx)
}

type watch struct {
	deps  Deps
	req   Request
	clock clock.Clock
	sleep clock.Sleeper
	// sameTreeHead is the moved head last said to hold the tested tree (sameTree).
	sameTreeHead string

	record   *runpod.Pod         // the pod as read when the watch began
	lastJob  *github.WorkflowJob // the GPU job as last observed
	started  time.Time
	setupAt  time.Time
	lifeAt   time.Time
	tests    bool
	jobsErr  bool // the last job observation failed (log once per streak)
	prErr    bool
	jobFound bool
	// jobMissing is set once a jobs read found no GPU job (logged once).
	jobMissing bool
	// onRunner is set by a poll's jobs read when this attempt's GPU job is
	// running (or ran) on the runner; jobsRead when that read succeeded.
	onRunner, jobsRead bool
	runnerErr          bool // the last runner read failed (log once per streak)
	// runnerOffline is set by a poll's runner read that found it offline;
	// suspect is a host fault seen and not yet confirmed, fault a confirmed one.
	runnerOffline bool
	suspect       *suspicion
	fault         *lanetiers.HostFault
}

func newWatch(deps Deps, req Request) (*watch, error) {
	if deps.Pods == nil || deps.GitHub == nil || deps.Policy == nil {
		return nil, fmt.Errorf("%w: Pods, GitHub and Policy are required", ErrInvalidRequest)
	}
	// A zero or negative duration takes the default.
	req.SetupBudget = cmp.Or(max(req.SetupBudget, 0), DefaultSetupBudget)
	req.Lifetime = cmp.Or(max(req.Lifetime, 0), DefaultLifetime)
	req.Poll = cmp.Or(max(req.Poll, 0), DefaultPoll)
	req.RequestTimeout = cmp.Or(max(req.RequestTimeout, 0), DefaultRequestTimeout)
	req.TestStep = cmp.Or(req.TestStep, cost.DefaultTestStep)
	req.GPUJob = cmp.Or(req.GPUJob, DefaultGPUJob)
	switch {
	case req.RunID <= 0 || req.Attempt <= 0:
		return nil, fmt.Errorf("%w: run %d attempt %d: want positive numbers", ErrInvalidRequest, req.RunID, req.Attempt)
	case req.SetupBudget > req.Lifetime:
		return nil, fmt.Errorf("%w: setup budget %s exceeds the lifetime %s", ErrInvalidRequest, req.SetupBudget, req.Lifetime)
	case req.PRNumber < 0:
		return nil, fmt.Errorf("%w: pull request number %d: want 0 (none) or more", ErrInvalidRequest, req.PRNumber)
	}
	w := &watch{deps: deps, req: req, clock: deps.Clock, sleep: deps.Sleep}
	if w.clock == nil {
		w.clock = deps.Policy
	}
	if w.sleep == nil {
		w.sleep = clock.SleepContext
	}
	return w, nil
}

// run polls until the pod must go. Each poll reads the GPU job first, then the
// pull request, and checks the deadlines against the clock before and after
// each read. No read may run past a due deadline, and the pull request read
// (one attempt, no retries) may not run into the next poll, so a failing pull
// request read can neither hide the GPU job's progress nor delay a deletion.
func (w *watch) run(ctx context.Context) (Result, error) {
	if res, done, err := w.begin(ctx); done {
		return res, err
	}
	setup := w.req.SetupBudget.String()
	if w.req.HandOverWait > 0 {
		setup += fmt.Sprintf(" + %s waiting for the lane's other tiers", w.req.HandOverWait)
	}
	w.logf("pod %s started %s: setup deadline %s (%s), lifetime deadline %s (%s); polling every %s",
		w.req.PodID, stampOf(w.started), stampOf(w.setupAt), setup, stampOf(w.lifeAt), w.req.Lifetime, w.req.Poll)
	for {
		next := w.clock.Now().Add(w.req.Poll)
		if outcome, why := w.poll(ctx, next); outcome != "" {
			return w.finish(ctx, outcome, why)
		}
		// Sleep to the next poll, or exactly to the next deadline if sooner.
		wake := next
		if d := w.nextDeadline(); d.Before(wake) {
			wake = d
		}
		if err := w.sleep(ctx, wake.Sub(w.clock.Now())); err != nil {
			res := w.result(OutcomeInterrupted, "the watch was cancelled: "+err.Error())
			return res, err
		}
	}
}

// poll is one round of observation; next is when the following one begins. It
// returns an outcome when the pod must go now.
func (w *watch) poll(ctx context.Context, next time.Time) (Outcome, string) {
	// The lifetime admits no last look. A due setup deadline does: the jobs read
	// below may show that the tests started, and is bounded by one poll.
	if outcome, why := w.due(true); outcome != "" {
		return outcome, why
	}
	// The runner is read before the jobs: a runner busy at that moment keeps
	// its one job, so if the jobs read after it does not show this attempt's
	// GPU job on the runner, the runner is running someone else's job.
	busy := w.runnerBusy(ctx, min(w.req.RequestTimeout, w.req.Poll, w.lifeAt.Sub(w.clock.Now())))
	if outcome, why := w.observeJob(ctx, min(w.req.RequestTimeout, w.req.Poll, w.lifeAt.Sub(w.clock.Now()))); outcome != "" {
		return outcome, why
	}
	if busy && w.jobsRead && !w.onRunner {
		return OutcomeRunnerTaken, fmt.Sprintf("runner %s is busy with a job that is not run %d attempt %d's GPU job", w.req.RunnerLabel, w.req.RunID, w.req.Attempt)
	}
	if outcome, why := w.due(false); outcome != "" {
		return outcome, why
	}
	if w.jobsRead {
		if outcome, why := w.hostLost(ctx, w.lastJob, min(w.req.RequestTimeout, w.req.Poll, w.nextDeadline().Sub(w.clock.Now()))); outcome != "" {
			return outcome, why
		}
	}
	now := w.clock.Now()
	if budget := min(w.req.RequestTimeout, next.Sub(now), w.nextDeadline().Sub(now)); budget > 0 {
		if why, obsolete := w.prObsolete(ctx, budget); obsolete {
			return OutcomeObsolete, why
		}
	}
	return w.due(false)
}

// due returns the outcome of a deadline the clock has reached, or "". With
// lifetimeOnly it checks the lifetime alone.
func (w *watch) due(lifetimeOnly bool) (Outcome, string) {
	now := w.clock.Now()
	switch {
	case !now.Before(w.lifeAt):
		return OutcomeLifetimeExpired, fmt.Sprintf("lifetime of %s from the pod's start expired", w.req.Lifetime)
	case !lifetimeOnly && !w.tests && !now.Before(w.setupAt):
		return OutcomeSetupExpired, w.setupExpired()
	}
	return "", ""
}

// begin reads the pod's provider start, from which both bounds run. An
// unreadable start is deleted at once: an unbounded pod is the one thing the
// watchdog exists to prevent.
func (w *watch) begin(ctx context.Context) (res Result, done bool, err error) {
	rctx, cancel := reqpolicy.Bound(ctx, w.clock, w.req.RequestTimeout)
	pod, readErr := w.deps.Pods.GetPod(rctx, w.req.PodID)
	cancel()
	switch {
	case errors.Is(readErr, runpod.ErrNotFound):
		w.logf("pod %s was already deleted: nothing to watch", w.req.PodID)
		res = w.result(OutcomePodGone, fmt.Sprintf("pod %s was already deleted", w.req.PodID))
		res.RunnerRemoved = w.removeRunner(ctx)
		return res, true, nil
	case readErr != nil:
		res, err = w.finish(ctx, OutcomeStartUnknown, fmt.Sprintf("reading pod %s failed: %v", w.req.PodID, readErr))
		return res, true, err
	case pod == nil || pod.ID != w.req.PodID:
		// Another pod's record would bound and price this pod by that pod's
		// start, or call it deleted when only the other one is.
		other := "no record"
		if pod != nil {
			other = fmt.Sprintf("the record of pod %q", pod.ID)
		}
		res, err = w.finish(ctx, OutcomeStartUnknown, fmt.Sprintf("reading pod %s answered %s: unusable", w.req.PodID, other))
		return res, true, err
	case pod.Status == runpod.PodTerminated:
		w.logf("pod %s was already deleted: nothing to watch", w.req.PodID)
		res = w.result(OutcomePodGone, fmt.Sprintf("pod %s was already deleted", w.req.PodID))
		res.RunnerRemoved = w.removeRunner(ctx)
		return res, true, nil
	case !pod.StartedAt.Known():
		w.record = pod
		res, err = w.finish(ctx, OutcomeStartUnknown, fmt.Sprintf("pod %s (%s) has no provider start time", w.req.PodID, pod.Status))
		return res, true, err
	}
	w.record = pod
	w.started, _ = pod.StartedAt.Get()
	w.setupAt = setupDeadline(w.started, w.req.SetupBudget, w.req.HandOverWait)
	w.lifeAt = w.started.Add(w.req.Lifetime)
	return Result{}, false, nil
}

// SetupDeadline is when the watchdog deletes pod, started (its provider
// start) at start, if its GPU job's test step has not begun: the setup
// budget from the start, plus the time the pod waited after its acceptance
// for the lane's other tiers (lanetiers.Pod.HandOverWait). A matrix lane
// provisions its tiers one after another in one job and its GPU jobs start
// only when that job ends: without the wait, a first tier's pod would spend
// its budget waiting for the later tiers and be deleted before its tests.
// The wait, not the hand-over itself, is what moves the deadline: every pod
// keeps what its budget is for (its own boot and proof, then its job's
// set-up), as the lane's last pod and a lane of one pod do. The lifetime
// runs from the provider start all the same, so the pod's worst case
// (startup + lifetime at its price) still bounds its cost.
func SetupDeadline(start time.Time, budget time.Duration, pod lanetiers.Pod) time.Time {
	return setupDeadline(start, budget, pod.HandOverWait())
}

func setupDeadline(start time.Time, budget, wait time.Duration) time.Time {
	return start.Add(budget + max(wait, 0))
}

func (w *watch) nextDeadline() time.Time {
	if w.tests {
		return w.lifeAt
	}
	return w.setupAt
}

// observeJob reads the GPU job within budget. It returns an outcome when the
// pod must go now; a failed read only logs, so it neither disarms nor extends
// anything.
func (w *watch) observeJob(ctx context.Context, budget time.Duration) (Outcome, string) {
	w.jobsRead, w.onRunner = false, false
	job, err := w.gpuJob(ctx, budget)
	var taken *takenError
	if errors.As(err, &taken) {
		return OutcomeRunnerTaken, taken.Error()
	}
	if err != nil {
		if !w.jobsErr {
			w.logf("GPU job progress unknown (%v): the deadlines stand", err)
		}
		w.jobsErr = true
		return "", ""
	}
	if w.jobsErr {
		w.logf("GPU job progress readable again")
	}
	w.jobsErr = false
	w.jobsRead = true
	if job == nil {
		if !w.jobFound && !w.jobMissing {
			w.logf("no job named %q of run %d attempt %d waits for runner %s yet", w.req.GPUJob, w.req.RunID, w.req.Attempt, w.req.RunnerLabel)
		}
		w.jobMissing = true
		return "", ""
	}
	w.lastJob = job
	if job.GetRunnerName() == w.req.RunnerLabel {
		switch job.GetStatus() {
		case "in_progress", "completed":
			w.onRunner = true
		}
	}
	if !w.jobFound {
		w.jobFound = true
		w.logf("GPU job %q found (%s)", job.GetName(), job.GetStatus())
	}
	if !w.tests && testsStarted(job, w.req.TestStep) {
		w.tests = true
		w.logf("test step %q started: setup deadline disarmed; the lifetime deadline %s still holds", w.req.TestStep, stampOf(w.lifeAt))
	}
	if job.GetStatus() == "completed" {
		if w.tests {
			return OutcomeJobFinished, fmt.Sprintf("GPU job finished (%s)", job.GetConclusion())
		}
		return OutcomeNoTests, fmt.Sprintf("GPU job ended (%s) before its test step %q started", job.GetConclusion(), w.req.TestStep)
	}
	return "", ""
}

// testsStarted reports whether the real test step is running or has run.
func testsStarted(job *github.WorkflowJob, name string) bool {
	for _, s := range job.Steps {
		if s.GetName() != name || s.GetConclusion() == "skipped" {
			continue
		}
		if st := s.GetStatus(); st == "in_progress" || st == "completed" {
			return true
		}
	}
	return false
}

func (w *watch) gpuJob(ctx context.Context, budget time.Duration) (*github.WorkflowJob, error) {
	rctx, cancel := reqpolicy.Bound(ctx, w.clock, budget)
	defer cancel()
	jobs, err := w.deps.GitHub.ListAttemptJobs(rctx, w.req.RunID, w.req.Attempt)
	if err != nil {
		return nil, err
	}
	return w.pickGPUJob(jobs)
}

// prObsolete reports a closed pull request or a moved head. Any failure to
// read it is unknown, which is never obsolete. The read is one attempt within
// budget: the next poll is its retry, so its backoff cannot push the shared
// GitHub cooldown past the next jobs read.
func (w *watch) prObsolete(ctx context.Context, budget time.Duration) (string, bool) {
	if w.req.PRNumber <= 0 {
		return "", false
	}
	rctx, cancel := reqpolicy.Bound(reqpolicy.WithAttemptLimit(ctx, 1), w.clock, budget)
	defer cancel()
	pr, err := w.deps.GitHub.GetPullRequest(rctx, w.req.PRNumber)
	if err == nil {
		err = ghapi.UsablePullRequest(pr, w.req.PRNumber) // the watch does not rely on the client having checked
	}
	if err != nil {
		if !w.prErr {
			w.logf("pull request #%d state unknown (%v): not treated as obsolete", w.req.PRNumber, err)
		}
		w.prErr = true
		return "", false
	}
	if w.prErr {
		w.logf("pull request #%d state readable again", w.req.PRNumber)
	}
	w.prErr = false
	switch head := pr.GetHead().GetSHA(); {
	case pr.GetState() == "closed":
		return fmt.Sprintf("pull request #%d is closed", w.req.PRNumber), true
	case w.req.ExpectedHeadSHA != "" && head != w.req.ExpectedHeadSHA && !w.sameTree(rctx, pr):
		return fmt.Sprintf("pull request #%d head moved from %s to %s", w.req.PRNumber, w.req.ExpectedHeadSHA, head), true
	}
	return "", false
}

// treeReader reads a commit's tree. *ghapi.Client has it.
type treeReader interface {
	CommitTree(ctx context.Context, sha string) (string, error)
}

// sameTree reports whether the pull request's merge commit has the tested
// tree (Request.TestedTree), said once per head; anything it cannot read says no.
func (w *watch) sameTree(ctx context.Context, pr *github.PullRequest) bool {
	tr, ok := w.deps.GitHub.(treeReader)
	merge := pr.GetMergeCommitSHA()
	if w.req.TestedTree == "" || !ok || merge == "" {
		return false
	}
	tree, err := tr.CommitTree(ctx, merge)
	if err != nil || tree != w.req.TestedTree {
		return false
	}
	if head := pr.GetHead().GetSHA(); w.sameTreeHead != head {
		w.sameTreeHead = head
		w.logf("pull request #%d head moved from %s to %s with the same merged tree %s: not obsolete, the new head's lane follows this one",
			w.req.PRNumber, w.req.ExpectedHeadSHA, head, tree)
	}
	return true
}

// finish deletes the pod, logs an early end's cost line (cost.CostLine) from
// the metadata already held, and only then, after a confirmed deletion,
// cancels the run when the end was early.
func (w *watch) finish(ctx context.Context, outcome Outcome, why string) (Result, error) {
	if outcome == OutcomeJobFinished && w.keptForSSH() {
		w.logf("%s: %s: pod %s left running: the lane made it enterable (keep-failed-pods with debug-ssh-public-key), so cleanup keeps it for the maintainer",
			outcome, why, w.req.PodID)
		res := w.result(outcome, why)
		res.KeptForSSH = true
		res.RunnerRemoved = w.removeRunner(ctx) // its job is over: the runner's credentials go all the same
		return res, nil
	}
	w.logf("%s: %s: deleting pod %s", outcome, why, w.req.PodID)
	res := w.result(outcome, why)
	deleter := &lifecycle.Deleter{Pods: w.deps.Pods, Policy: w.deps.Policy, Logf: w.deps.Logf}
	at, delErr := deleter.Delete(ctx, w.req.PodID)
	if delErr == nil {
		res.Deleted, res.DeletedAt = true, at
	}
	// With its pod gone, or its job over, the runner's registration goes too:
	// credentials the job's code could read are then worth nothing.
	res.RunnerRemoved = w.removeRunner(ctx)
	if outcome == OutcomeRunnerTaken && !strings.HasPrefix(why, "runner taken by job") {
		if who := w.findTaker(ctx); who != "" {
			res.Reason = who
			w.logf("%s", who)
		}
	}
	if outcome.early() {
		// The cost goes to the log before the run is cancelled: the cancel can
		// end this very job, and the interrupted run's evidence must survive it.
		report := w.report(res)
		res.Report = &report
		w.logf("%s", cost.CostLine(report).Format())
		switch {
		case delErr != nil:
			res.Cancel.Skipped = "the pod's deletion is unconfirmed; cancelling only follows a confirmed deletion"
		case outcome == OutcomeStartUnknown:
			// Nothing says the run is wrong, only that its pod could not be bounded.
		default:
			res.Cancel = w.cancelRun(ctx)
		}
	}
	return res, errors.Join(delErr, w.failure(res))
}

// keptForSSH reports whether the pod is the one exception to deleting it when
// its GPU job ended: its tests ran and failed, and its record (read at the
// start) is a keep-failed lane's pod with the maintainer's SSH open, as
// cleanup decides (it keeps such a pod; the reaper bounds it). The GPU job's
// conclusion is the one last observed.
func (w *watch) keptForSSH() bool {
	if w.record == nil || w.lastJob == nil || !w.tests || w.lastJob.GetConclusion() != "failure" {
		return false
	}
	tags, err := ownership.FromPod(w.record.Name, w.record.Env)
	return err == nil && tags.KeepFailed && startup.DebugSSHOpen(w.record.Ports, w.record.Env)
}

func (w *watch) result(outcome Outcome, why string) Result {
	res := Result{Outcome: outcome, Reason: why, PodID: w.req.PodID, TestsStarted: w.tests, HostFault: w.fault}
	if !w.started.IsZero() {
		res.StartedAt = wire.KnownTime(w.started)
	}
	return res
}

// failure is the error a finished watch reports besides a deletion error.
func (w *watch) failure(res Result) error {
	var errs []error
	switch res.Outcome {
	case OutcomeSetupExpired:
		errs = append(errs, &DeadlineError{Which: "setup", Budget: w.req.SetupBudget, Started: w.started, Deadline: w.setupAt, Wait: max(w.req.HandOverWait, 0)})
	case OutcomeLifetimeExpired:
		errs = append(errs, &DeadlineError{Which: "lifetime", Budget: w.req.Lifetime, Started: w.started, Deadline: w.lifeAt})
	case OutcomeStartUnknown:
		errs = append(errs, fmt.Errorf("%w: %s; the pod was deleted rather than left unbounded", ErrStartUnreadable, res.Reason))
	case OutcomeRunnerTaken:
		errs = append(errs, fmt.Errorf("%w: %s; the pod was deleted at once (restrict the runner group to the lane's workflow)", ErrRunnerTaken, res.Reason))
	}
	if res.Cancel.Err != nil {
		errs = append(errs, res.Cancel.Err)
	}
	return errors.Join(errs...)
}

// report is the interrupted pod's cost from the record read at the start and
// the job as last observed; nothing is read again.
func (w *watch) report(res Result) cost.Report {
	e := cost.Evidence{PodID: w.req.PodID, Record: w.record, Snapshot: w.req.Snapshot, Job: w.lastJob, TestStep: w.req.TestStep}
	if w.record == nil {
		e.RecordErr = errors.New("the pod record could not be read")
	}
	if w.lastJob == nil {
		e.JobErr = errors.New("the GPU job was never observed")
	}
	if res.Deleted {
		e.DeletedAt = wire.KnownTime(res.DeletedAt)
	}
	r := cost.BuildReport(e)
	r.Notes = append(r.Notes, fmt.Sprintf("The watchdog ended this pod early (%s): %s.", res.Outcome, res.Reason))
	return r
}

// cancelRun cancels the run attempt the pod served — after checking it is
// still that attempt and still running, so a newer attempt is never cancelled.
// A 409 (already completed) re-reads the run to say what happened.
func (w *watch) cancelRun(ctx context.Context) Cancel {
	rctx, cancel := reqpolicy.Bound(ctx, w.clock, w.req.RequestTimeout)
	defer cancel()
	run, err := w.deps.GitHub.GetWorkflowRun(rctx, w.req.RunID)
	if err == nil {
		err = w.usableRun(run)
	}
	if err != nil {
		return Cancel{Err: fmt.Errorf("%w: reading run %d before cancelling it failed: %w", ErrCancel, w.req.RunID, err)}
	}
	if why := w.notOurs(run); why != "" {
		w.logf("not cancelling: %s", why)
		return Cancel{Skipped: why}
	}
	w.logf("requesting cancellation of workflow run %d attempt %d", w.req.RunID, w.req.Attempt)
	err = w.deps.GitHub.CancelWorkflowRun(rctx, w.req.RunID)
	if err == nil {
		w.logf("cancelled workflow run %d attempt %d", w.req.RunID, w.req.Attempt)
		return Cancel{Requested: true}
	}
	if errors.Is(err, ghapi.ErrRunCompleted) {
		again, rerr := w.deps.GitHub.GetWorkflowRun(rctx, w.req.RunID)
		if rerr == nil {
			rerr = w.usableRun(again)
		}
		if rerr == nil {
			if why := w.notOurs(again); why != "" {
				w.logf("cancel answered 409; not cancelling: %s", why)
				return Cancel{Skipped: why}
			}
			err = fmt.Errorf("%w; re-read shows attempt %d %s", err, again.GetRunAttempt(), again.GetStatus())
		} else {
			err = errors.Join(err, rerr)
		}
	}
	return Cancel{Err: fmt.Errorf("%w: run %d: %w", ErrCancel, w.req.RunID, err)}
}

// usableRun rejects a run answer that does not say which run, attempt and
// status it describes: whether to cancel must not rest on a missing field.
func (w *watch) usableRun(run *github.WorkflowRun) error {
	switch {
	case run == nil:
		return fmt.Errorf("no answer: %w", ghapi.ErrUnusableAnswer)
	case run.GetID() != w.req.RunID:
		return fmt.Errorf("the answer describes run %d: %w", run.GetID(), ghapi.ErrUnusableAnswer)
	case run.GetRunAttempt() <= 0 || run.GetStatus() == "":
		return fmt.Errorf("the answer has attempt %d and status %q; want both: %w", run.GetRunAttempt(), run.GetStatus(), ghapi.ErrUnusableAnswer)
	}
	return nil
}

// notOurs says why the run must not be cancelled, or "" when it may.
func (w *watch) notOurs(run *github.WorkflowRun) string {
	switch {
	case run.GetRunAttempt() != w.req.Attempt:
		return fmt.Sprintf("run %d is at attempt %d, not this attempt %d: a newer attempt is never cancelled", w.req.RunID, run.GetRunAttempt(), w.req.Attempt)
	case run.GetStatus() == "completed":
		return fmt.Sprintf("run %d attempt %d already completed (%s)", w.req.RunID, w.req.Attempt, run.GetConclusion())
	}
	return ""
}

func stampOf(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (w *watch) logf(format string, args ...any) {
	if w.deps.Logf != nil {
		w.deps.Logf(format, args...)
	}
}
