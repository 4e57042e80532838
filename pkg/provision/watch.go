package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
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
	// imageFault: the image has no runner (the script exited with
	// startup.ExitRunnerMissing): every pod of it would end so, on any host.
	imageFault bool
	// foreign: the pod's record names another pod (the create answer gave
	// another pod's id); seen: a record of the pod, under its name, was read.
	foreign, seen bool
	screened      bool // placed on a machine the reputation holds bad: deleted before its proof
	screenedWhy   string
	// machine is the pod's machine as it reports it (its first GPU's UUID,
	// reputation.go); "" when unknown or when the lane keeps no reputation.
	machine string
	reason  string
	// hostFailed: the pod never delivered a runner through its host's fault —
	// it ended or lost its runtime while starting, or missed the startup
	// timeout while the watch could see it — as opposed to a rejection for
	// the PR's, the API's, the image's or the price's sake: the reputation's
	// evidence against the host.
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
// meanwhile is noticed within this interval, and always before acceptance.
// Ninety seconds, not sixty: a 300 s boot and a 60 s proof fit 14 calls
// (the pod's machine comes from its log, with no call of its own).
const PRWatchInterval = 90 * time.Second

// PodCheckInterval is how often the watch reads the pod while its log stream
// is open: the stream says when the container starts, when the proof passed
// or failed and when the runner listens, and ends when the container does, so
// these reads only guard against a stream that went quiet. Without a stream
// the pod is read every startup poll.
const PodCheckInterval = 4 * time.Minute

// FinalPollReserve is how long before startup_timeout_seconds ends the watch's
// last look goes out (at most half a poll): time for its reads, so a runner
// that comes online in the last interval is still seen.
const FinalPollReserve = 2 * time.Second

// watch follows the pod until it is accepted or rejected, with the fewest
// calls that keep detection within one poll. It follows the pod's container
// log (one long-lived request): the script's lines say when the proof passed
// (the runner registry is then read every poll), when the runner listens (read
// at once) and when the script exits and why (the pod is rejected at once).
// The pod is read every PodCheckInterval and whenever the stream ends; without
// a stream, every poll (and the registry every poll once the pod runs). The PR
// is read every PRWatchInterval (conditionally). A runner seen online is
// accepted only on a pod record of that moment and a PR read within a poll,
// so a pod that died or lost its runtime, or a PR that closed or moved,
// meanwhile is never accepted. Unknown or malformed observations back off and
// never count as death or health. Every call and every wait of the watch fits
// the candidate's startup budget (startup_timeout_seconds from creation): a
// pause that does not fit — a long Retry-After, the shared cooldown — ends the
// candidate instead of extending it.
func (r *run) watch(ctx context.Context, pod *runpod.Pod, c plan.Candidate, label string, created time.Time) watchResult {
	// The budget runs from the first POST: a reconciled pod may have been
	// billing since then, and no pod of the candidate can be older.
	deadline := created.Add(r.cfg.StartupTimeout())
	wctx, cancel := r.bound(ctx, max(deadline.Sub(r.now()), 0))
	defer cancel()
	poll := r.cfg.StartupPoll()
	s := &startupWatch{r: r, pod: pod, label: label, o: observer{r: r, c: c, label: label, podID: pod.ID, name: pod.Name},
		deadline: deadline, poll: poll}
	// The create's (or reconciliation's) answer is the first observation: a
	// misplaced GPU or an ended pod is rejected without another call.
	if s.o.observe(pod, &s.w) {
		return s.w
	}
	s.follow(wctx, "")
	defer s.unfollow()
	// The PR was read right before this candidate's create (and runner mint).
	s.prDue, s.lastPR = created.Add(PRWatchInterval), created
	s.podDue = created.Add(s.podEvery())
	s.dupDue = created.Add(poll)
	// The last look goes out a little before the deadline, with time left for
	// its reads: a pause to the deadline itself never fits the budget, so a
	// runner that came online in the last interval would be paid for and missed.
	s.last = deadline.Add(-min(FinalPollReserve, poll/2))
	for {
		if s.step(ctx, wctx) {
			return s.w
		}
	}
}

// startupWatch is one watch in progress: what it has seen and what it reads
// when.
type startupWatch struct {
	r     *run
	pod   *runpod.Pod
	label string
	o     observer
	w     watchResult
	// deadline ends the startup budget; last is the last look, a little before it.
	deadline, last time.Time
	poll           time.Duration
	// log follows the pod's container log; nil while the watch polls instead.
	log      *podLogFollower
	opens    int    // log stream opens so far
	resumeID string // where a reopened stream continues (the last event seen)
	// When the pod, the PR, the registry and the duplicate check are read
	// next; registryDue is zero until the runner may be online.
	podDue, prDue, registryDue, dupDue time.Time
	lastPR                             time.Time // the last PR read
	lastPod                            time.Time // the last pod read, when it showed the pod RUNNING; else zero
	proofPassed                        bool      // the log said so: the registry is read every poll
}

// podEvery is how often the pod is read: rarely while its log is followed.
func (s *startupWatch) podEvery() time.Duration {
	if s.log != nil {
		return PodCheckInterval
	}
	return s.poll
}

// follow opens the pod's log stream (resuming after lastID); when it cannot,
// the watch polls, and tries again once the pod runs.
func (s *startupWatch) follow(ctx context.Context, lastID string) {
	if s.opens >= maxStreamOpens {
		return
	}
	s.opens++
	f, err := s.r.followPodLog(ctx, s.pod.ID, lastID)
	if err != nil {
		s.r.logf("pod %s: its log stream could not be opened (%v): watching by polling every %s", s.pod.ID, err, s.poll)
		return
	}
	s.log = f
	if !s.podDue.IsZero() {
		s.podDue = s.r.now().Add(PodCheckInterval)
	}
}

func (s *startupWatch) unfollow() {
	if s.log != nil {
		s.log.close()
		s.log = nil
	}
}

// step takes in what the log brought, waits for the next due read (or a
// line), and makes the reads due; it reports true when the watch ends (s.w
// says how).
func (s *startupWatch) step(ctx, wctx context.Context) bool {
	if s.takeLog(wctx) {
		return true
	}
	now := s.r.now()
	if next := s.nextDue(); next.After(now) {
		woken, done := s.wait(ctx, wctx, next.Sub(now))
		if done || woken {
			return done
		}
	}
	return s.readDue(ctx, wctx)
}

// nextDue is the earliest read due, never past the last look.
func (s *startupWatch) nextDue() time.Time {
	next := s.last
	for _, due := range []time.Time{s.podDue, s.prDue, s.registryDue} {
		if !due.IsZero() && due.Before(next) {
			next = due
		}
	}
	if s.r.retriedCreate && s.dupDue.Before(next) {
		next = s.dupDue
	}
	return next
}

// wait pauses for d or until the log brings something (woken). done reports
// that the watch ends instead: the budget is spent, a pause does not fit it,
// or the run is cancelled.
func (s *startupWatch) wait(ctx, wctx context.Context, d time.Duration) (woken, done bool) {
	waitCtx, cancel := wctx, context.CancelFunc(func() {})
	if s.log != nil {
		waitCtx, cancel = s.log.waitContext(wctx)
	}
	defer cancel()
	// The wait never passes the last look; a cooldown that does not fit the
	// rest of the budget ends the candidate (a *WaitError).
	err := s.r.deps.Policy.Wait(waitCtx, d, "startup poll")
	switch {
	case ctx.Err() != nil:
		s.w.reason = "cancelled"
		return false, true
	case err == nil:
		return false, false
	case waitCtx.Err() != nil && wctx.Err() == nil:
		return true, false // a line of the pod's log
	case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline) && d < s.deadline.Sub(s.r.now()):
		s.w.reason = fmt.Sprintf("startup watch ended: %v (startup_timeout_seconds %d)", err, s.r.cfg.StartupTimeoutSeconds)
		return false, true
	}
	s.timedOut()
	return false, true
}

// readDue makes the reads due now, in order: duplicates, PR, pod, registry;
// at the last look, the pod and the registry once more, then the timeout.
func (s *startupWatch) readDue(ctx, wctx context.Context) bool {
	now := s.r.now()
	final := !now.Before(s.last)
	if ctx.Err() != nil {
		s.w.reason = "cancelled"
		return true
	}
	if s.r.retriedCreate && !now.Before(s.dupDue) {
		s.dupDue = now.Add(s.poll)
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
	if !now.Before(s.prDue) && s.readPR(wctx) {
		return true
	}
	if !now.Before(s.podDue) || (final && s.registryDue.IsZero()) {
		if done, _ := s.readPod(wctx); done {
			return true
		}
	}
	if !s.registryDue.IsZero() && (!now.Before(s.registryDue) || final) {
		s.registryDue = now.Add(s.poll)
		if s.readRunner(wctx) {
			return true
		}
	}
	if final {
		s.timedOut()
		return true
	}
	return false
}

// readPR reads the PR now; it reports true when the watch ends.
func (s *startupWatch) readPR(ctx context.Context) bool {
	now := s.r.now()
	s.prDue, s.lastPR = now.Add(PRWatchInterval), now
	return s.r.watchPR(ctx, &s.w)
}

// readPod reads the pod now (see observer.read). Without a log stream, a pod
// that runs arms the registry at once and gets one more try at a stream.
func (s *startupWatch) readPod(ctx context.Context) (done, ok bool) {
	s.podDue, s.lastPod = s.r.now().Add(s.podEvery()), time.Time{}
	done, ok = s.o.read(ctx, &s.w)
	if ok && s.o.running {
		s.lastPod = s.r.now()
	}
	if done && s.o.exited && s.log == nil {
		s.exitCause(ctx)
	}
	if !done && ok && s.o.running && s.log != nil && !s.o.containerUp {
		// The pod runs, yet its log showed nothing of the container's
		// start: the stream is not delivering (an edge may hold it back).
		s.r.logf("pod %s runs but its log stream shows nothing: watching by polling every %s", s.pod.ID, s.poll)
		s.unfollow()
		s.opens = maxStreamOpens
		s.podDue = s.r.now().Add(s.poll)
	}
	if !done && ok && s.o.running && s.log == nil {
		if s.opens < 2 {
			s.follow(ctx, s.resumeID) // the container runs: one more try
		}
		if s.log == nil && s.registryDue.IsZero() {
			s.registryDue = s.r.now()
		}
	}
	return done, ok
}

// takeLog takes in what the pod's log brought: an exit ends the watch (its
// cause named); the proof passing arms the registry, a poll on; the runner
// listening makes it due at once; the stream's end makes the pod due at once
// (and is resumed while the pod runs).
func (s *startupWatch) takeLog(ctx context.Context) bool {
	if s.log == nil {
		return false
	}
	lines, ended := s.log.take()
	now := s.r.now()
	for _, l := range lines {
		s.o.containerUp = true
		switch l.Stage {
		case startup.StageExit:
			s.exited(l.ExitCode)
			s.lastRecord(ctx)
			return true
		case startup.StageProofPassed:
			if !s.proofPassed {
				s.proofPassed, s.registryDue = true, now.Add(s.poll)
			}
		case startup.StageListening:
			s.registryDue = now
		case startup.StageGPU:
			if s.sawGPU(ctx, l) { // reputation.go
				return true
			}
		}
	}
	if ended {
		s.resumeID = s.log.resumeAfter()
		s.unfollow()
		done, ok := s.readPod(ctx)
		if done {
			return true
		}
		if ok && !s.o.ended && s.log == nil {
			s.follow(ctx, s.resumeID)
		}
	}
	return false
}

// exited ends the watch for a script that is exiting with code: the pod will
// never register its runner, and is rejected at once.
func (s *startupWatch) exited(code int) {
	s.w.reason = fmt.Sprintf("the startup script exited with %d: %s", code, startup.ExitCause(code))
	if code == startup.ExitRunnerMissing {
		// The image's fault, not the host's: no reputation evidence.
		s.w.imageFault = true
		return
	}
	s.w.hostFailed = true
}

// lastRecord reads the pod once more before it is deleted, for when it
// started, its price and where it ran (what its cost and the reputation are
// made of); a failure leaves them unknown.
func (s *startupWatch) lastRecord(ctx context.Context) {
	p, err := s.r.deps.RunPod.GetPod(reqpolicy.WithAttemptLimit(ctx, 1), s.pod.ID)
	switch {
	case err != nil:
		return
	case p.Name != s.o.name:
		s.w.foreign, s.w.reason = true, fmt.Sprintf("the create answer named pod %s, whose record is named %q, not %s", s.pod.ID, p.Name, s.o.name)
		return
	}
	s.w.seen = true
	s.w.place(p)
	if started, known := p.StartedAt.Get(); known && s.w.start.IsZero() {
		s.w.start = started
	}
	if c := money.PerHour(float64(p.Cost)); c > 0 && p.Status == runpod.PodRunning {
		s.w.price = cost.KnownPrice(c, "v2 cost while running")
	}
}

// exitCause names why a pod seen EXITED without its log stopped: its log's
// last lines, read once within a short bound.
func (s *startupWatch) exitCause(ctx context.Context) {
	cctx, cancel := s.r.bound(ctx, streamOpenTimeout)
	defer cancel()
	tail := 20
	stream, err := s.r.deps.RunPod.StreamPodLogs(reqpolicy.WithAttemptLimit(cctx, 1), s.pod.ID, runpod.LogQuery{Source: runpod.LogSourceContainer, Tail: &tail})
	if err != nil {
		return
	}
	defer stream.Close()
	for {
		ev, err := stream.Next()
		if err != nil {
			return
		}
		if l := startup.ReadLogLine(ev.Line); l.Stage == startup.StageExit {
			s.exited(l.ExitCode)
			return
		}
	}
}

// timedOut ends the watch at the startup timeout, the host's fault unless
// the last read failed.
func (s *startupWatch) timedOut() {
	s.w.hostFailed, s.w.reason = !s.o.blind, fmt.Sprintf("runner %s not online within startup_timeout_seconds %d", s.label, s.r.cfg.StartupTimeoutSeconds)
}

// readRunner reads the runner registry once the runner may be online. A
// runner online and idle is accepted on a RUNNING pod record and a PR read,
// each within a poll (made now when there is none); it reports true when the
// watch ends (s.w says how).
func (s *startupWatch) readRunner(wctx context.Context) bool {
	online, busy, err := s.r.runnerState(wctx, s.label)
	s.o.blind = err != nil
	switch {
	case err != nil:
		s.r.logf("runner %s: registry unreadable (%v): not counted", s.label, err)
		return false
	case online && busy:
		// The GPU job is queued only after acceptance: whatever the
		// runner runs now is some other job, holding a paid GPU.
		s.w.taken, s.w.reason = true, fmt.Sprintf("runner %s was already busy with a job before this run's GPU job was queued: "+
			"another job took it (restrict the runner group to the lane's workflow)", s.label)
		return true
	case !online:
		return false
	}
	if s.lastPod.IsZero() || s.r.now().Sub(s.lastPod) > s.poll {
		// Accepted only on a record of this poll: the pod may have died
		// or lost its runtime since an older one.
		done, ok := s.readPod(wctx)
		if done || !ok || !s.o.running {
			return done
		}
	}
	// Nor on a PR read more than a poll old: a head moved or a PR closed
	// since is noticed before the GPU job can start (an unchanged PR answers
	// 304, free of rate limit).
	if s.r.now().Sub(s.lastPR) > s.poll && s.readPR(wctx) {
		return true
	}
	s.w.accepted, s.w.acceptedAt = true, s.r.now()
	return true
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

// observer judges the pod records of one watch.
type observer struct {
	r     *run
	c     plan.Candidate
	label string
	podID string
	name  string
	// running: the last record was live RUNNING with its GPU.
	running bool
	runtime bool // a record with a runtime was seen (its loss is death)
	// containerUp: the pod's log showed its container running, so a
	// RUNNING record without a runtime has lost it (not still booting).
	containerUp bool
	// ended, exited: the last record showed the pod ended (EXITED: its
	// container stopped on its own).
	ended, exited bool
	// blind: the last pod or registry read failed. A timeout then may be the
	// API's fault, not the host's, and is no evidence against the host.
	blind bool
}

// read reads the pod once: done reports that the watch ends (w says how), ok
// that the record was read and judged.
func (o *observer) read(ctx context.Context, w *watchResult) (done, ok bool) {
	p, err := o.r.deps.RunPod.GetPod(ctx, o.podID)
	switch {
	case err != nil && errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		w.reason = fmt.Sprintf("pod %s: a required pause does not fit the rest of startup_timeout_seconds %d (%v)", o.podID, o.r.cfg.StartupTimeoutSeconds, err)
		return true, false
	case err != nil:
		o.r.logf("pod %s: observation failed (%v): backing off, not counted", o.podID, err)
		o.blind = true
		return false, false
	case p.Name != o.name:
		// Another pod's record: the create answer named another pod's id.
		// Never judged, priced, accepted — or deleted — as this one.
		w.foreign, w.reason = true, fmt.Sprintf("the create answer named pod %s, whose record is named %q, not %s", o.podID, p.Name, o.name)
		return true, false
	}
	o.blind, w.seen = false, true
	return o.observe(p, w), true
}

// observe judges one pod record; it reports true when the watch ends (w says how).
func (o *observer) observe(p *runpod.Pod, w *watchResult) bool {
	r := o.r
	w.place(p)
	if started, known := p.StartedAt.Get(); known && w.start.IsZero() {
		w.start = started
	}
	if why := r.wrongGPU(p, o.c); why != "" {
		w.wrongGPU, w.reason = true, why
		return true
	}
	o.running, o.ended, o.exited = false, p.Status.Ended(), p.Status == runpod.PodExited
	switch {
	case o.ended:
		w.hostFailed, w.reason = true, fmt.Sprintf("pod %s while starting (the CUDA smoke proof or the runner failed)", p.Status)
		return true
	case p.Status == runpod.PodRunning && p.Runtime != nil && p.GPU != nil && p.GPU.ID != "":
		o.running, o.runtime = true, true
		if c := money.PerHour(float64(p.Cost)); c > 0 {
			w.price = cost.KnownPrice(c, "v2 cost while running")
		}
		if why := r.refusedRunning(o.c, w.price); why != "" {
			w.overSpend, w.reason = true, why
			return true
		}
	case p.Status == runpod.PodRunning && p.Runtime != nil:
		o.runtime = true
		r.logf("pod %s: RUNNING without its GPU id in the record: not counted", o.podID)
	case (o.runtime || (o.containerUp && p.Status == runpod.PodRunning)) && p.Runtime == nil:
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

// refusedRunning says why a running pod billed at price (RunPod's own figure)
// could take the run past max_run_spend_usd, or "" when it cannot or no
// ceiling is set. The check before the create used the catalog price; the
// same bound is applied again with the higher of the two, so a pod billing
// above its catalog price is never accepted past the ceiling.
func (r *run) refusedRunning(c plan.Candidate, price cost.Price) string {
	return r.spendRun().RefuseRunning(price.PerHour, c.PricePerHour, price.Known)
}
