package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// watchResult is what the startup watch saw.
type watchResult struct {
	accepted   bool
	acceptedAt time.Time
	obsolete   bool // the PR closed or its head moved
	local      bool // the PR was labelled for local validation
	wrongGPU   bool // RunPod placed another GPU than the reviewed one requested
	overSpend  bool // the price RunPod bills could take the run past max_run_spend_usd
	taken      bool // the runner was busy with a job before the GPU job was even queued
	screened   bool // placed on a machine the reputation holds bad: deleted before its proof
	reason     string
	// hostFailed: the pod never delivered a runner through its host's fault —
	// it ended or lost its runtime while starting, or missed the startup
	// timeout while the watch could see it — as opposed to a rejection for
	// the PR's, the API's or the price's sake: the reputation's evidence
	// against the host.
	hostFailed bool
	start      time.Time  // provider start (startedAt), zero when never seen
	price      cost.Price // hourly cost captured while RUNNING
	// Where RunPod placed the pod, from the last record that said so: the
	// attempt's evidence for the lane's reputation.
	cloud, dataCenter, driver string
}

// place keeps where a pod record says the pod runs; a record that does not
// say (before scheduling) leaves what an earlier one said.
func (w *watchResult) place(p *runpod.Pod) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&w.cloud, p.Cloud}, {&w.dataCenter, p.DataCenterID}, {&w.driver, p.CudaVersion},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
}

// PRWatchInterval is how often the startup watch re-reads the PR while a pod
// boots. The PR was read right before the create; an unchanged PR answers a
// conditional read with 304, which costs no rate limit. A PR closed or moved
// meanwhile is noticed within this interval (a poll later when the interval
// is not a whole number of polls).
const PRWatchInterval = time.Minute

// FinalPollReserve is how long before startup_timeout_seconds ends the watch's
// last poll goes out (at most half a poll): time for its reads, so a runner
// that comes online in the last interval is still seen.
const FinalPollReserve = 2 * time.Second

// RunnerStartFloor bounds the least time a runner is taken to need after its
// container starts before it can be online: the startup script fetches and
// runs the CUDA proof, then the runner registers (25 s and more on a real
// pod). The watch assumes min(RunnerStartFloor, poll) of it (runnerFloor) to
// read less while keeping detection within one poll: the pod is read every
// second poll while the floor is a whole poll (RUNNING noticed a poll late
// still finds the runner not yet online), and the registry from
// startedAt+floor. With a short poll the floor shrinks with it, so a fast
// runner is never waited for longer than that.
const RunnerStartFloor = 10 * time.Second

// runnerFloor is the part of RunnerStartFloor the watch relies on at poll.
func runnerFloor(poll time.Duration) time.Duration { return min(RunnerStartFloor, poll) }

// watch polls the pod until it is accepted or rejected, with the fewest calls
// that keep detection within one poll. Every read happens on the poll grid
// (creation + k·startup_poll_seconds): the pod every podPolls polls (the
// create's own answer is the first observation); the runner registry every
// poll, only after a live RUNNING observation and runnerFloor after the
// container started; the PR every PRWatchInterval (conditionally). A runner
// seen online is accepted only on a pod record and a PR read of the same poll,
// so a pod that died or lost its runtime, or a PR that closed or moved,
// meanwhile is never accepted. Unknown or malformed
// observations back off and never count as death or health. Every call and
// every wait of the watch fits the candidate's startup budget
// (startup_timeout_seconds from creation): a pause that does not fit — a long
// Retry-After, the shared cooldown — ends the candidate instead of extending it.
func (r *run) watch(ctx context.Context, pod *runpod.Pod, c plan.Candidate, label string, created time.Time) watchResult {
	// The budget runs from the first POST: a reconciled pod may have been
	// billing since then, and no pod of the candidate can be older.
	deadline := created.Add(r.cfg.StartupTimeout())
	wctx, cancel := r.bound(ctx, max(deadline.Sub(r.now()), 0))
	defer cancel()
	poll := r.cfg.StartupPoll()
	s := &startupWatch{r: r, pod: pod, label: label, o: observer{r: r, c: c, label: label, podID: pod.ID},
		deadline: deadline, poll: poll, podEvery: time.Duration(podPolls(poll)) * poll}
	// The PR was read right before this candidate's create (and runner mint).
	s.prDue = created.Add(PRWatchInterval)
	// The create's (or reconciliation's) answer is the first observation: a
	// misplaced GPU or an ended pod is rejected without another call.
	s.tick = created
	if s.o.observe(pod, &s.w, s.tick, poll) {
		return s.w
	}
	s.podDue = created.Add(s.podEvery)
	// The last poll goes out a little before the deadline, with time left for
	// its reads: a pause to the deadline itself never fits the budget, so a
	// runner that came online in the last interval would be paid for and missed.
	s.last = deadline.Add(-min(FinalPollReserve, poll/2))
	for {
		if s.pollOnce(ctx, wctx) {
			return s.w
		}
	}
}

// startupWatch is one watch in progress: what it has seen and where it
// stands on its poll grid.
type startupWatch struct {
	r     *run
	pod   *runpod.Pod
	label string
	o     observer
	w     watchResult
	// deadline ends the startup budget; last is the last poll, a little before it.
	deadline, last time.Time
	poll, podEvery time.Duration
	// tick is the grid point being polled; podDue and prDue are when the pod
	// and the PR are read next.
	tick, podDue, prDue time.Time
}

// pollOnce waits for the next tick and reads what is due at it; it reports
// true when the watch ends (s.w says how).
func (s *startupWatch) pollOnce(ctx, wctx context.Context) bool {
	if s.waitForTick(ctx, wctx) {
		return true
	}
	if s.r.retriedCreate {
		// Both POSTs of a retried create may have made a pod, sharing the
		// one runner config: the other is deleted as soon as it is listed,
		// before its runner can stand in for this pod's.
		if found, why := s.r.dropDuplicates(wctx, s.pod.Name, s.pod.ID, s.label); found {
			s.r.retriedCreate = false
			if why != "" {
				s.w.reason = why
				return true
			}
		}
	}
	prRead := false // the PR was read at this tick
	if !s.tick.Before(s.prDue) {
		s.prDue, prRead = s.tick.Add(PRWatchInterval), true
		if s.r.watchPR(wctx, &s.w) {
			return true
		}
	}
	fresh := false // a pod record of this tick says RUNNING
	if !s.tick.Before(s.podDue) {
		s.podDue = s.tick.Add(s.podEvery)
		done, ok := s.o.read(wctx, &s.w, s.tick, s.poll)
		if done {
			return true
		}
		fresh = ok && s.o.running
	}
	if !s.o.running || s.tick.Before(s.o.registryDue) {
		return false
	}
	return s.readRunner(wctx, fresh, prRead)
}

// waitForTick moves to the next tick of the grid that has not passed (a slow
// call skips ticks) and waits for it; it reports true when the watch ends
// instead: the budget is spent, a pause does not fit it, or the run is cancelled.
func (s *startupWatch) waitForTick(ctx, wctx context.Context) bool {
	now := s.r.now()
	s.tick = s.tick.Add(s.poll)
	if s.tick.Before(now) {
		s.tick = s.tick.Add(now.Sub(s.tick).Truncate(s.poll))
		if s.tick.Before(now) {
			s.tick = s.tick.Add(s.poll)
		}
	}
	if !now.Before(s.last) || wctx.Err() != nil {
		s.timedOut()
		return true
	}
	// The poll never sleeps past the last one; a cooldown that does not
	// fit the rest of the budget ends the candidate (a *WaitError).
	if s.tick.After(s.last) {
		s.tick = s.last
	}
	wait := s.tick.Sub(now)
	if err := s.r.deps.Policy.Wait(wctx, wait, "startup poll"); err != nil {
		switch {
		case ctx.Err() != nil:
			s.w.reason = "cancelled"
		case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline) && wait < s.deadline.Sub(now):
			s.w.reason = fmt.Sprintf("startup watch ended: %v (startup_timeout_seconds %d)", err, s.r.cfg.StartupTimeoutSeconds)
		default:
			s.timedOut()
		}
		return true
	}
	if ctx.Err() != nil {
		s.w.reason = "cancelled"
		return true
	}
	return false
}

// timedOut ends the watch at the startup timeout, the host's fault unless
// the last read failed.
func (s *startupWatch) timedOut() {
	s.w.hostFailed, s.w.reason = !s.o.blind, fmt.Sprintf("runner %s not online within startup_timeout_seconds %d", s.label, s.r.cfg.StartupTimeoutSeconds)
}

// readRunner reads the runner registry once the pod runs and its runner may
// be online. A runner online and idle is accepted on a pod record and a PR
// read of this tick (each made now when the tick has none); it reports true
// when the watch ends (s.w says how).
func (s *startupWatch) readRunner(wctx context.Context, fresh, prRead bool) bool {
	online, busy, err := s.r.runnerState(wctx, s.label)
	s.o.blind = err != nil
	switch {
	case err != nil:
		s.r.logf("runner %s: registry unreadable (%v): not counted", s.label, err)
	case online && busy:
		// The GPU job is queued only after acceptance: whatever the
		// runner runs now is some other job, holding a paid GPU.
		s.w.taken, s.w.reason = true, fmt.Sprintf("runner %s was already busy with a job before this run's GPU job was queued: "+
			"another job took it (restrict the runner group to the lane's workflow)", s.label)
		return true
	case online:
		if !fresh {
			// Accepted only on a record of this poll: the pod may have
			// died or lost its runtime since the last one.
			s.podDue = s.tick.Add(s.podEvery)
			done, ok := s.o.read(wctx, &s.w, s.tick, s.poll)
			if done {
				return true
			}
			if !ok || !s.o.running {
				return false
			}
		}
		// Nor on a PR read a minute old: a head moved or a PR closed
		// since is noticed before the GPU job can start (an unchanged PR
		// answers 304, free of rate limit).
		if !prRead {
			s.prDue = s.tick.Add(PRWatchInterval)
			if s.r.watchPR(wctx, &s.w) {
				return true
			}
		}
		s.w.accepted, s.w.acceptedAt = true, s.r.now()
		return true
	}
	return false
}

// watchPR reads the PR once; it reports true when the watch ends (closed,
// moved or labelled for local validation; w says how).
func (r *run) watchPR(ctx context.Context, w *watchResult) bool {
	switch verdict, why := r.readPR(ctx); verdict {
	case prObsolete:
		w.obsolete, w.reason = true, why
		return true
	case prLocal:
		w.local, w.reason = true, why
		return true
	}
	return false
}

// podPolls is how many polls apart the watch reads the pod: RUNNING noticed
// that late still leaves the registry read within one poll of the runner
// coming online, since the runner needs runnerFloor after the start.
func podPolls(poll time.Duration) int {
	if poll <= 0 || runnerFloor(poll) < poll {
		return 1
	}
	return 2
}

// observer judges the pod records of one watch.
type observer struct {
	r     *run
	c     plan.Candidate
	label string
	podID string
	// running: the last record was live RUNNING with its GPU; registryDue is
	// when its runner may first be online (startedAt + runnerFloor).
	running     bool
	registryDue time.Time
	runtime     bool // a record with a runtime was seen (its loss is death)
	// blind: the last pod or registry read failed. A timeout then may be the
	// API's fault, not the host's, and is no evidence against the host.
	blind bool
}

// read reads the pod once: done reports that the watch ends (w says how), ok
// that the record was read and judged.
func (o *observer) read(ctx context.Context, w *watchResult, tick time.Time, poll time.Duration) (done, ok bool) {
	p, err := o.r.deps.RunPod.GetPod(ctx, o.podID)
	switch {
	case err != nil && errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		w.reason = fmt.Sprintf("pod %s: a required pause does not fit the rest of startup_timeout_seconds %d (%v)", o.podID, o.r.cfg.StartupTimeoutSeconds, err)
		return true, false
	case err != nil:
		o.r.logf("pod %s: observation failed (%v): backing off, not counted", o.podID, err)
		o.blind = true
		return false, false
	}
	o.blind = false
	return o.observe(p, w, tick, poll), true
}

// observe judges one pod record seen at tick; it reports true when the watch
// ends (w says how).
func (o *observer) observe(p *runpod.Pod, w *watchResult, tick time.Time, poll time.Duration) bool {
	r := o.r
	w.place(p)
	started, startKnown := p.StartedAt.Get()
	if startKnown && w.start.IsZero() {
		w.start = started
	}
	if why := r.wrongGPU(p, o.c); why != "" {
		w.wrongGPU, w.reason = true, why
		return true
	}
	wasRunning := o.running
	o.running = false
	switch {
	case p.Status.Ended():
		w.hostFailed, w.reason = true, fmt.Sprintf("pod %s while starting (the CUDA smoke proof or the runner failed)", p.Status)
		return true
	case p.Status == runpod.PodRunning && p.Runtime != nil && p.GPU != nil && p.GPU.ID != "":
		o.running, o.runtime = true, true
		if c := float64(p.Cost); c > 0 {
			w.price = cost.KnownPrice(c, "v2 cost while running")
		}
		if why := r.overCeiling(o.c, w.price); why != "" {
			w.overSpend, w.reason = true, why
			return true
		}
		if !wasRunning {
			// The runner cannot be online before startedAt+floor: the registry
			// is read from the first tick after that (at once when the start
			// is unknown, never later than the floor from now).
			o.registryDue = tick
			if floor := runnerFloor(poll); startKnown {
				due := started.Add(floor)
				for o.registryDue.Before(due) && o.registryDue.Before(tick.Add(floor)) {
					o.registryDue = o.registryDue.Add(poll)
				}
			}
		}
	case p.Status == runpod.PodRunning && p.Runtime != nil:
		o.runtime = true
		r.logf("pod %s: RUNNING without its GPU id in the record: not counted", o.podID)
	case o.runtime && p.Runtime == nil:
		w.hostFailed, w.reason = true, fmt.Sprintf("pod runtime lost after boot (status %s)", p.Status)
		return true
	}
	return false
}

// wrongGPU says why an observed pod is not the GPU the candidate requested
// (the reviewed allowlist is the boundary, also against a misplacement), or ""
// when its GPU matches or is not reported yet.
func (r *run) wrongGPU(p *runpod.Pod, c plan.Candidate) string {
	if p.GPU == nil || p.GPU.ID == "" {
		return ""
	}
	count := p.GPU.Count
	if count == 0 {
		count = 1 // RunPod's default count
	}
	if p.GPU.ID != c.GPUID || count != r.cfg.GPUCount {
		return fmt.Sprintf("RunPod gave %s x%d for a request of %s x%d: not the reviewed GPU", p.GPU.ID, count, c.GPUID, r.cfg.GPUCount)
	}
	return ""
}

// runnerOnline looks the attempt's runner up by its unique name and checks it
// is online with the attempt's label (a stale record of another pod cannot pass).
func (r *run) runnerOnline(ctx context.Context, label string) (bool, error) {
	online, _, err := r.runnerState(ctx, label)
	return online, err
}

// runnerState is runnerOnline that also says whether the runner is busy.
func (r *run) runnerState(ctx context.Context, label string) (online, busy bool, _ error) {
	runner, found, err := r.deps.GitHub.RunnerByName(ctx, label, r.req.Scope)
	if err != nil || !found {
		return false, false, err
	}
	if runner.GetStatus() != "online" {
		return false, false, nil
	}
	for _, l := range runner.Labels {
		if l.GetName() == label {
			return true, runner.GetBusy(), nil
		}
	}
	return false, false, nil
}

// overCeiling says why a running pod billed at price (RunPod's own figure)
// could take the run past max_run_spend_usd, or "" when it cannot or no
// ceiling is set. The check before the create used the catalog price; the
// same bound is applied again with the higher of the two, so a pod billing
// above its catalog price is never accepted past the ceiling.
func (r *run) overCeiling(c plan.Candidate, price cost.Price) string {
	ceiling, ok := r.cfg.SpendCeiling()
	if !ok || !price.Known || price.PerHour <= c.PricePerHour {
		return ""
	}
	worst := r.spentBound + CandidateWorstCase(price.PerHour, r.cfg.StartupTimeout(), r.cfg.Lifetime())
	if worst <= ceiling {
		return ""
	}
	return fmt.Sprintf("max_run_spend_usd $%.2f: RunPod bills this pod at $%.4f/h (catalog $%.2f/h), which could bring the run to $%.4f "+
		"(rejected pods $%.4f + startup_timeout_seconds %d + lifetime_seconds %d at that price): not accepted",
		ceiling, price.PerHour, c.PricePerHour, worst, r.spentBound, r.cfg.StartupTimeoutSeconds, r.cfg.LifetimeSeconds)
}
