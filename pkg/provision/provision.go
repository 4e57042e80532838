// Package provision turns a reviewed GPU allowlist into one accepted pod
// running a single-use JIT runner: plan candidates from one catalog read, then
// for each candidate mint a runner config, create one pod, watch it prove CUDA
// and register, and accept it or delete it at once — within the attempt,
// failure and spend bounds, never leaving a pod it created behind.
package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/wire"
)

// RunPod is the part of the RunPod client provisioning uses.
type RunPod interface {
	ListGPUTypes(ctx context.Context, q runpod.GPUQuery) ([]runpod.GPUType, error)
	ListDataCenters(ctx context.Context, q runpod.DataCenterQuery) ([]runpod.DataCenter, error)
	CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error)
	GetPod(ctx context.Context, id string) (*runpod.Pod, error)
	ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error)
	DeletePod(ctx context.Context, id string) error
	// StreamPodLogs follows a starting pod's container log (see watch).
	StreamPodLogs(ctx context.Context, id string, q runpod.LogQuery) (*runpod.LogStream, error)
}

// GitHub is the part of the GitHub client provisioning uses.
type GitHub interface {
	GenerateJITConfig(ctx context.Context, req ghapi.JITRequest) (*ghapi.JITConfig, error)
	RunnerByName(ctx context.Context, name string, scope ghapi.Scope) (*github.Runner, bool, error)
	DeleteRunner(ctx context.Context, id int64, scope ghapi.Scope) error
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	gatecheck.CheckRunLister
}

// ImageResolver pins an image tag to its current digest.
type ImageResolver interface {
	Resolve(ctx context.Context, image string) (string, error)
}

// Observer hears what a provision run does, as it happens: the action turns
// these into log lines and outputs. Every method must be quick.
type Observer interface {
	Logf(format string, args ...any)
	// PodCreated publishes a pod id the moment it exists, so failure-path cleanup can find it.
	PodCreated(podID string)
	// AttemptDone reports one finished attempt (a structured log line).
	AttemptDone(a cost.Attempt)
}

// Deps are the services a run uses. Policy supplies the clock and every wait.
type Deps struct {
	RunPod   RunPod
	GitHub   GitHub
	Images   ImageResolver
	Policy   *reqpolicy.Policy
	Observer Observer
	// LabelNonce is where runner label nonces come from; nil means
	// crypto/rand. Only a deterministic simulation (the demo) sets it.
	LabelNonce io.Reader
	// Budget is the repository's daily and monthly budget, checked before
	// each create (budget.go); nil means none is configured.
	Budget budget.Checker
	// LogPacer is told each time a pod log's reader has taken in what its
	// stream brought (podlog.go); nil in the shipped lane. Only a simulation
	// that serves the stream in step with a virtual clock (the market
	// replay) sets it.
	LogPacer LogPacer
}

// Request describes one provision run.
type Request struct {
	Config *config.Config
	// Owner tags every pod (repository, workflow, run id, attempt).
	Owner ownership.Tags
	// LabelPrefix starts the per-attempt runner label <prefix>-<run>-<attempt>-c<N>-<nonce>.
	LabelPrefix   string
	RunnerGroupID int64
	Scope         ghapi.Scope
	// PRNumber and ExpectedHeadSHA drive the obsolescence checks; PRNumber 0 is a manual validation.
	PRNumber        int
	ExpectedHeadSHA string
	// TestedRef enables the gate reuse lookup right before spending (empty: none).
	TestedRef string
	// NoReuse skips that lookup: a host-fault re-run's tier has no passed
	// gate, its tests just lost their host.
	NoReuse bool
	Reuse   gatecheck.ReuseQuery
	// KeepFailedPods keeps rejected pods for inspection instead of deleting them.
	KeepFailedPods bool
	// DebugSSHKey, with KeepFailedPods, is a maintainer's OpenSSH public key
	// (ParseDebugSSHKey): each pod publishes 22/tcp and lets the key in once
	// its startup script and tests have ended (debugssh.go). Empty: no port.
	DebugSSHKey string
	// ProofURL and ProofSHA256 locate the CUDA smoke proof binary.
	ProofURL, ProofSHA256 string
	// RunnerDir is where the pod image's runner (run.sh) is; empty means
	// startup.DefaultRunnerDir, the official runner image's.
	RunnerDir string
	// WorkDir is where the pod's startup script makes its temporary
	// directory; empty means startup.DefaultWorkDir.
	WorkDir string
	// Reputation is the evidence of earlier runs (reputation.go); nil plans as the seed does.
	Reputation *reputation.Record

	// The lane around this run (lane.go); zero for a run on its own.
	//
	// Plan, when set, is the plan to try (built by RunLane from one
	// catalog read for every tier of the lane) instead of reading the catalog.
	Plan *plan.Plan
	// CandidateBase numbers this run's candidates from CandidateBase+1, so
	// pod names and runner labels stay unique across the runs of one attempt.
	CandidateBase int
	// Committed bounds what the lane's other pods can cost: the spend
	// ceiling covers them and this run together. CommittedUnknown: a pod
	// of the lane has no known price, so no create can be bounded.
	Committed        money.Amount
	CommittedUnknown bool
	// CommittedPods are the ids of the lane's other pods Committed bounds
	// (lanetiers.Record.PodIDs), for the budget check.
	CommittedPods []string
}

// Decision says whether the paid path ran.
type Decision string

// Paid-path decisions.
const (
	DecisionPaid   Decision = "paid"
	DecisionReused Decision = "reused"
	// DecisionSkipped: the PR carries gpu-validated-locally; a maintainer's
	// own GPU stands in for the pod, so nothing is (further) paid.
	DecisionSkipped Decision = "skipped"
)

// Deadlines of the outside calls a run makes besides the startup watch (whose
// calls fit the candidate's startup budget) and the create (create_deadline).
// Each is measured on the policy's clock and, as a backstop, in wall time, so
// a stalled answer can never hold a lane until the step timeout.
const (
	ReuseLookupBudget   = 60 * time.Second // the gate reuse lookup (fails open)
	ImageResolveBudget  = 90 * time.Second // the runner image's digest
	CatalogBudget       = 60 * time.Second // the catalog reads (fall back to static candidates)
	PRReadBudget        = 30 * time.Second // one PR read before a create (unknown on failure)
	JITBudget           = 60 * time.Second // minting one runner config
	RunnerRemovalBudget = 30 * time.Second // removing an unused runner registration
	// CancelReconcileBudget bounds the by-name search for a pod whose create
	// was in flight when the run was cancelled: GitHub kills the step seconds
	// after SIGINT, and the deletion must still fit.
	CancelReconcileBudget = 8 * time.Second
)

// Accepted describes the pod that passed.
type Accepted struct {
	PodID          string
	RunnerLabel    string
	GPU            string
	DataCenter     string
	Candidate      string
	Tier           string
	Cloud          string
	Price          cost.Price
	StartupSeconds int64
	StartedAt      time.Time
	// AcceptedAt is when the run accepted the pod (its clock).
	AcceptedAt time.Time
}

// Result is what a run produced; on error it still says what was spent.
type Result struct {
	Decision       Decision
	ReusedCheckURL string
	Image          string
	Plan           plan.Plan
	WorstCase      spend.PlanWorstCase
	Accepted       *Accepted
	Attempts       []cost.Attempt
	RetainedPodIDs []string
	// Kept are the retained pods a maintainer can enter (with DebugSSHKey).
	Kept []KeptPod
	// RetentionArtifact names the artifact the workflow uploads when pods were
	// kept for debugging; the reaper reads the kept ids from this name.
	RetentionArtifact string
	Warnings          []string
	// Budget is what the last budget check saw; nil without a budget.
	Budget *spend.Usage
	// BudgetRecheck says what the re-check after the last create found:
	// the pod kept, or deleted at once and why (parallel.go).
	BudgetRecheck string
	// SpentBound bounds what the rejected pods cost (each at its highest
	// known price from creation to confirmed deletion); AcceptedWorst is
	// the accepted pod at its worst case, AcceptedUnpriced when its price
	// is unknown. Together they are what this run commits the lane to.
	SpentBound       money.Amount
	AcceptedWorst    money.Amount
	AcceptedUnpriced bool
}

// RejectedCost sums what rejected candidates cost (unknown parts stay unknown).
func (r Result) RejectedCost() (known cost.Money, unknown int) {
	total := money.Amount(0)
	for _, a := range r.Attempts {
		if a.Outcome != cost.OutcomeRejected {
			continue
		}
		if d := a.Dollars(); d.Known {
			total += d.USD
		} else {
			unknown++
		}
	}
	return cost.KnownMoney(total), unknown
}

// ErrExhausted, ErrStartupFailures, ErrObsolete, ErrUnconfirmedDeletion,
// ErrStopped, ErrRunnerTaken and ErrImageWithoutRunner classify why a run
// ended without an accepted pod.
var (
	ErrExhausted           = errors.New("provision attempts exhausted")
	ErrStartupFailures     = errors.New("too many consecutive startup failures")
	ErrObsolete            = errors.New("pull request is obsolete")
	ErrUnconfirmedDeletion = errors.New("a rejected pod's deletion is unconfirmed")
	ErrStopped             = errors.New("provisioning stopped")
	// ErrRunnerTaken: a job other than the lane's GPU job took the runner.
	ErrRunnerTaken = errors.New("runner taken by another job")
	// ErrImageWithoutRunner: the image's pod passed the proof but has no
	// runner to start; no further pod is paid for the same image.
	ErrImageWithoutRunner = errors.New("the runner image has no runner")
)

// RunError is a failed run with the cost of what it rejected.
type RunError struct {
	Err      error
	Detail   string
	Rejected int
	Seconds  int64 // known paid seconds of rejected pods
	Dollars  cost.Money
	Unknown  int // rejected pods whose cost is unknown
}

func (e *RunError) Error() string {
	s := fmt.Sprintf("%v: %s; %d pod(s) rejected, %d paid second(s), %s estimated", e.Err, e.Detail, e.Rejected, e.Seconds, e.Dollars)
	if e.Unknown > 0 {
		s += fmt.Sprintf(" (+%d with unknown cost)", e.Unknown)
	}
	return s
}

// Unwrap exposes the classifying sentinel.
func (e *RunError) Unwrap() error { return e.Err }

// run is one provision invocation's state.
type run struct {
	deps    Deps
	req     Request
	cfg     *config.Config
	deleter *lifecycle.Deleter
	res     Result          // the run's one result: Run returns it as it stands
	created []string        // every pod this invocation created, in order
	live    map[string]bool // created pods not yet confirmed deleted (and not handed over)
	// current is the candidate being tried, for costs found on the side (duplicates).
	current currentAttempt
	// uncertain are the creates that may have made a pod that was never
	// found, each with its candidate (for the run's last look).
	uncertain []currentAttempt
	// retriedCreate is set when the current candidate's pod came from a retried create.
	retriedCreate bool
	// reputation is the estimator of the request's record, once the plan
	// ranked by it (nil without evidence): it holds machines bad.
	reputation *reputation.Estimator
	// started is when the run began: its provision budget
	// (config.ProvisionTierBudget) runs from there.
	started time.Time
}

// Run provisions one pod. On ctx cancellation (SIGTERM) it deletes every pod
// it created, within seconds, before returning.
func Run(ctx context.Context, deps Deps, req Request) (Result, error) {
	r := &run{deps: deps, req: req, cfg: req.Config, live: map[string]bool{},
		deleter: &lifecycle.Deleter{Pods: deps.RunPod, Policy: deps.Policy, Logf: deps.Observer.Logf}}
	err := r.provision(ctx)
	r.sweepUncertain(ctx) // its pods join r.res: attempts and the spent bound
	if ids := r.res.RetainedPodIDs; len(ids) > 0 && ctx.Err() == nil {
		name, nerr := ownership.FormatRetentionName(r.req.Owner.RunID, r.req.Owner.Attempt, ids)
		if nerr != nil {
			r.logf("warning: retention record: %v (the kept pods stay reclaimable by the reaper)", nerr)
		}
		r.res.RetentionArtifact = name
	}
	if ctx.Err() != nil {
		// Cancelled even after acceptance (SIGTERM during the last checks or
		// the sweep): no GPU job of a cancelled run uses the pod, so it is
		// deleted with the others and no longer reported as accepted.
		if a := r.res.Accepted; a != nil {
			r.live[a.PodID] = true
		}
		r.deleteAllCreated()
		if a := r.res.Accepted; a != nil && !r.live[a.PodID] {
			r.res.Accepted = nil
		}
		if err == nil {
			err = ctx.Err()
		}
		return r.res, fmt.Errorf("provisioning cancelled: %w", err)
	}
	return r.res, err
}

func (r *run) logf(format string, args ...any) { r.deps.Observer.Logf(format, args...) }
func (r *run) now() time.Time                  { return r.deps.Policy.Now() }

// provisionLeft is what is left of the run's provision budget
// (config.ProvisionTierBudget from its start); never negative.
func (r *run) provisionLeft() time.Duration {
	return max(r.started.Add(r.cfg.ProvisionTierBudget()).Sub(r.now()), 0)
}

func (r *run) provision(ctx context.Context) error {
	if err := r.checkRequest(); err != nil {
		return err
	}
	r.started = r.now()
	// The paid path is decided right before any spend; the lookup fails open.
	if r.req.TestedRef != "" && r.req.PRNumber > 0 && !r.req.NoReuse && r.reused(ctx) {
		return nil
	}
	r.res.Decision = DecisionPaid

	ictx, cancel := r.bound(ctx, ImageResolveBudget)
	image, err := r.deps.Images.Resolve(ictx, r.cfg.Image)
	cancel()
	if err != nil {
		return fmt.Errorf("runner image: %w (no GPU was allocated)", err)
	}
	r.res.Image = image
	r.logf("runner image: %s", image)

	endPlan := r.phase("plan: the candidates to try, in order")
	if r.req.Plan != nil {
		r.res.Plan = *r.req.Plan
		r.estimate() // the lane ranked it; this run screens placements by the same record
	} else if r.cfg.NetworkVolume != nil { // volume.go
		p, err := r.planForVolume(ctx)
		if err != nil {
			endPlan()
			return err
		}
		r.res.Plan = p
	} else {
		pctx, cancel := r.bound(ctx, CatalogBudget)
		r.res.Plan = r.plan(pctx)
		cancel()
	}
	r.res.Plan = renumber(r.res.Plan, r.req.CandidateBase)
	r.res.WorstCase = spend.OfPlan(r.res.Plan, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	r.res.Warnings = append(r.res.Warnings, r.res.Plan.Warnings...)
	r.logf("plan (%d candidates, worst-case spend %s%s):\n%s%s", len(r.res.Plan.Candidates), r.res.WorstCase, r.spendRun().Note(), r.res.Plan.Table(), volumeLine(r.res.Plan))
	endPlan()
	for _, w := range r.res.Plan.Warnings { // outside the folded plan: they are read
		r.logf("warning: %s", w)
	}
	if len(r.res.Plan.Candidates) == 0 {
		return r.fail(ErrExhausted, "the plan has no candidate")
	}
	return r.tryCandidates(ctx)
}

// checkRequest checks what the run's pods, startup script, SHAs and runner
// labels will be made of, before any API call.
func (r *run) checkRequest() error {
	probe := r.req.Owner
	probe.Candidate = 1 // each attempt sets its own
	if err := probe.Validate(); err != nil {
		return err
	}
	// Script parameters are checked before any API call, not at the first create.
	if err := r.startupParams().Validate(); err != nil {
		return err
	}
	if err := r.req.validateSHAs(); err != nil {
		return err
	}
	// The longest label this run can make must fit GitHub's runner-name limit.
	if err := CheckLabelPrefix(r.req.LabelPrefix, r.req.Owner.RunID, r.req.Owner.Attempt, r.req.CandidateBase+max(r.cfg.MaxProvisionAttempts, 1)); err != nil {
		return err
	}
	return nil
}

// reused looks for an earlier passing gate of the tested ref, within
// ReuseLookupBudget; when one exists the run's decision is reuse.
func (r *run) reused(ctx context.Context) bool {
	q := r.req.Reuse
	q.HeadSHA, q.TestedRef = r.req.ExpectedHeadSHA, r.req.TestedRef
	rctx, cancel := r.bound(ctx, ReuseLookupBudget)
	d := gatecheck.DecideReuse(rctx, r.deps.GitHub, q)
	cancel()
	r.logf("paid-path decision: %s", d.Reason)
	if d.Reuse {
		r.res.Decision, r.res.ReusedCheckURL = DecisionReused, d.CheckURL
		return true
	}
	return false
}

// tryCandidates attempts the plan's candidates in order until one is
// accepted, the PR no longer wants a pod, or the run stops.
func (r *run) tryCandidates(ctx context.Context) error {
	consecutive := 0
	for i := 0; i < len(r.res.Plan.Candidates); i++ {
		c := r.res.Plan.Candidates[i]
		// The PR (state, head and labels) is re-read right before each create.
		switch verdict, why := r.readPR(ctx); verdict {
		case prObsolete:
			return r.fail(ErrObsolete, why)
		case prLocal:
			r.logf("%s: no pod is created", why)
			r.res.Decision = DecisionSkipped
			return nil
		}
		if err := r.checkSpend(c); err != nil {
			return err
		}
		if err := r.waitForSlot(ctx); err != nil { // parallel.go
			return err
		}
		if err := r.checkBudget(ctx, c); err != nil {
			return err
		}
		endAttempt := r.phase("attempt %d of %d: %s (%s)", c.N, len(r.res.Plan.Candidates), c.Name, c.GPUID)
		out, err := r.attempt(ctx, c)
		endAttempt()
		if err != nil {
			return err
		}
		switch out {
		case outcomeLocal:
			r.res.Decision = DecisionSkipped
			return nil
		case outcomeAccepted:
			return nil
		case outcomeSlotTaken:
			r.retryAfterSlot(i) // parallel.go
			continue
		case outcomeStartupFailure:
			consecutive++
			if max := r.cfg.MaxConsecutiveStartupFailures; max > 0 && consecutive >= max {
				return r.fail(ErrStartupFailures, fmt.Sprintf("%d created pods in a row never came online (max_consecutive_startup_failures %d); the provider is not delivering runners", consecutive, max))
			}
		}
	}
	return r.fail(ErrExhausted, fmt.Sprintf("all %d candidates tried (max_provision_attempts %d)", len(r.res.Plan.Candidates), r.cfg.MaxProvisionAttempts))
}

// fail wraps a sentinel with what the rejected candidates cost.
func (r *run) fail(sentinel error, detail string) error {
	e := &RunError{Err: sentinel, Detail: detail}
	e.Dollars, e.Unknown = r.res.RejectedCost()
	for _, a := range r.res.Attempts {
		if a.Outcome == cost.OutcomeRejected {
			e.Rejected++
			if a.Seconds.Known {
				e.Seconds += a.Seconds.N
			}
		}
	}
	return e
}

// currentAttempt is what the ceiling needs of the candidate being tried.
type currentAttempt struct {
	postAt time.Time  // its first POST: no pod of it is older
	price  money.Rate // its catalog price per hour (0 when unknown)
	cand   plan.Candidate
}

// prVerdict is what one read of the PR says about spending on it.
type prVerdict int

const (
	prCurrent  prVerdict = iota // open at the expected head: go on
	prUnknown                   // unreadable: go on (unknown never means obsolete)
	prObsolete                  // closed, or its head moved
	prLocal                     // labelled gpu-validated-locally: a maintainer's GPU stands in
)

// readPR reads the PR once, within PRReadBudget (and ctx's own deadline). A
// 404 is obsolete (no such PR to pay for); any other failure, an unusable
// answer included, is unknown and never obsolete.
func (r *run) readPR(ctx context.Context) (prVerdict, string) {
	if r.req.PRNumber <= 0 {
		return prCurrent, ""
	}
	ctx, cancel := r.bound(ctx, PRReadBudget)
	defer cancel()
	pr, err := r.deps.GitHub.GetPullRequest(ctx, r.req.PRNumber)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		// Not a flaky read: there is no such PR for this token, so no pod is
		// paid for it (and none already created is accepted).
		return prObsolete, fmt.Sprintf("PR #%d not found (404): it does not exist or the token cannot read it; no pod is paid for it", r.req.PRNumber)
	case err != nil:
		r.logf("PR #%d state unknown (%v): carrying on", r.req.PRNumber, err)
		return prUnknown, ""
	}
	switch state := pr.GetState(); {
	case state == "closed":
		return prObsolete, fmt.Sprintf("PR #%d is closed", r.req.PRNumber)
	case state != "open":
		r.logf("PR #%d state %q unknown: carrying on", r.req.PRNumber, state)
		return prUnknown, ""
	}
	if head := pr.GetHead().GetSHA(); head != r.req.ExpectedHeadSHA && !r.sameTreePushed(ctx, pr) { // parallel.go
		return prObsolete, fmt.Sprintf("PR #%d head moved from %s to %s", r.req.PRNumber, r.req.ExpectedHeadSHA, head)
	}
	for _, l := range pr.Labels {
		if l.GetName() == gatecheck.LocalLabel {
			return prLocal, fmt.Sprintf("PR #%d carries %s: a maintainer validates it on their own GPU", r.req.PRNumber, gatecheck.LocalLabel)
		}
	}
	return prCurrent, ""
}

// checkSpend asks the spend room whether candidate c may be created under
// max_run_spend_usd (spend.Run.RefuseCreate). Later candidates are asked in
// turn before their own create, with what was really spent by then, so the
// run as a whole never passes the ceiling.
func (r *run) checkSpend(c plan.Candidate) error {
	if why := r.spendRun().RefuseCreate(c.Name, c.GPUID, c.PricePerHour, c.PriceKnown); why != "" {
		return r.fail(ErrStopped, why)
	}
	return nil
}

// spendRun is the run as the spend room counts it against max_run_spend_usd.
func (r *run) spendRun() spend.Run {
	ceiling, ok := r.cfg.MaxRunSpend()
	return spend.Run{Ceiling: ceiling, HasCeiling: ok, Committed: r.req.Committed, CommittedUnknown: r.req.CommittedUnknown,
		SpentBound: r.res.SpentBound, StartupTimeout: r.cfg.StartupTimeout(), Lifetime: r.cfg.Lifetime()}
}

// renumber numbers the plan's candidates from base+1 (plan.Build numbers from 1).
func renumber(p plan.Plan, base int) plan.Plan {
	if base <= 0 {
		return p
	}
	p.Candidates = slices.Clone(p.Candidates)
	for i := range p.Candidates {
		p.Candidates[i].N = base + i + 1
	}
	return p
}

// bound limits a call to d on the policy's clock (and in wall time).
func (r *run) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return reqpolicy.Bound(ctx, r.deps.Policy, d)
}

// validateSHAs checks the commit SHAs that decide obsolescence and reuse: a
// PR run must name the head it authorized and the ref it tests (a manual
// dispatch gets both from authorize), and every SHA given is a full commit SHA.
func (q Request) validateSHAs() error {
	if q.PRNumber > 0 && q.ExpectedHeadSHA == "" {
		return fmt.Errorf("expected head SHA: empty for PR #%d; want authorize's pinned head-sha output (a full commit SHA), so a moved head is detected", q.PRNumber)
	}
	if q.PRNumber > 0 && q.TestedRef == "" {
		return fmt.Errorf("tested ref: empty for PR #%d; want authorize's tested-ref output (a full commit SHA): no pod is paid for an unnamed commit", q.PRNumber)
	}
	for _, f := range []struct{ name, value string }{{"expected head SHA", q.ExpectedHeadSHA}, {"tested ref", q.TestedRef}} {
		if f.value != "" && !wire.IsCommitSHA(f.value) {
			return fmt.Errorf("%s: got %q; want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)", f.name, f.value)
		}
	}
	return nil
}

// runnerLabel is the candidate's unique, unguessable label and runner name.
func (r *run) runnerLabel(n int) (string, error) {
	if r.deps.LabelNonce != nil {
		return newRunnerLabelFrom(r.deps.LabelNonce.Read, r.req.LabelPrefix, r.req.Owner.RunID, r.req.Owner.Attempt, n)
	}
	return NewRunnerLabel(r.req.LabelPrefix, r.req.Owner.RunID, r.req.Owner.Attempt, n)
}

// deleteAllCreated deletes every pod still alive, on a fresh bounded context:
// the run's own context is already cancelled.
func (r *run) deleteAllCreated() {
	defer r.phase("cancelled: deleting this run's pods")()
	for _, id := range r.created {
		if !r.live[id] {
			continue
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(context.Background()), 30*time.Second)
		at, err := r.deleter.Delete(ctx, id)
		cancel()
		if err != nil {
			r.logf("cancelled: pod %s: %v", id, err)
			continue
		}
		delete(r.live, id)
		r.logf("cancelled: pod %s deleted at %s", id, at.Format(time.RFC3339))
	}
}
