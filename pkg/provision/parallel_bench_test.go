package provision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/spend"
)

// laneClock runs lanes at the same time on one virtual clock, as GitHub runs
// their jobs side by side: a lane's sleep does not move the clock itself (a
// simclock.Virtual's would, for every lane); the clock moves to the earliest
// wake only once every running lane sleeps, firing the cloud's timers on the
// way. A lane counts as running from begin to end, and while it is not asleep
// (an HTTP call over loopback is running).
type laneClock struct {
	v       *simclock.Virtual
	mu      sync.Mutex
	running int
	asleep  []*laneSleep
}

type laneSleep struct {
	wake  time.Time
	done  chan struct{}
	woken bool
}

func (c *laneClock) Now() time.Time { return c.v.Now() }

// stampCreates is the lanes' HTTP transport to RunPod: each create request
// (each attempt) first moves the clock a millisecond and goes out alone, so
// no two pods share a createdAt, as a database's insert stamps do not (no
// lane's sleep ends within it: wakes are whole poll intervals away).
type stampCreates struct{ clock *laneClock }

func (s stampCreates) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.URL.Path != "/v2/pods" {
		return http.DefaultTransport.RoundTrip(req)
	}
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	s.clock.v.Advance(time.Millisecond)
	return http.DefaultTransport.RoundTrip(req)
}

func (c *laneClock) begin() {
	c.mu.Lock()
	c.running++
	c.mu.Unlock()
}

func (c *laneClock) end() {
	c.mu.Lock()
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
}

// Sleep waits d of virtual time or until ctx ends.
func (c *laneClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	s := &laneSleep{wake: c.v.Now().Add(d), done: make(chan struct{})}
	c.mu.Lock()
	c.asleep = append(c.asleep, s)
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if s.woken {
			return nil
		}
		c.asleep = slices.DeleteFunc(c.asleep, func(o *laneSleep) bool { return o == s })
		c.running++
		return ctx.Err()
	}
}

// advanceLocked moves the clock while every lane sleeps, waking the earliest.
func (c *laneClock) advanceLocked() {
	for c.running == 0 && len(c.asleep) > 0 {
		earliest := c.asleep[0].wake
		for _, s := range c.asleep[1:] {
			if s.wake.Before(earliest) {
				earliest = s.wake
			}
		}
		if d := earliest.Sub(c.v.Now()); d > 0 {
			c.v.Advance(d)
		}
		now := c.v.Now()
		c.asleep = slices.DeleteFunc(c.asleep, func(s *laneSleep) bool {
			if s.wake.After(now) {
				return false
			}
			s.woken = true
			close(s.done)
			c.running++
			return true
		})
	}
}

// laneRunPod is one lane's RunPod in the many-lanes model. It has no log
// stream (noLogStream): the watch polls, every startup_poll_seconds, which
// laneClock schedules; a stream would wake its reader outside any lane's
// sleep. With a barrier its first create waits until every lane is about to
// create, so the lanes race as ones that passed their budget check together do.
type laneRunPod struct {
	noLogStream
	barrier *sync.WaitGroup // nil: none
	once    sync.Once
}

func (l *laneRunPod) CreatePod(ctx context.Context, r runpod.CreatePodRequest) (*runpod.Pod, error) {
	if l.barrier != nil {
		l.once.Do(func() { l.barrier.Done(); l.barrier.Wait() })
	}
	return l.RunPod.CreatePod(ctx, r)
}

// manyLanes is a simulated cloud on which lanes run at the same time.
type manyLanes struct {
	s     *scenario
	clock *laneClock
	limit spend.Limits
	// barrier, when set, holds each lane's first create until all have one.
	barrier *sync.WaitGroup
	faults  runpodsim.Faults
	// job, when set, is each accepted pod's GPU job: its pod is deleted
	// that long after acceptance, as cleanup does.
	job time.Duration
}

// laneOutcome is one lane's provision run.
type laneOutcome struct {
	pr       int
	res      Result
	err      error
	toRunner time.Duration // from the push to the accepted runner
}

func newManyLanes(tb testing.TB, hosts int, faults runpodsim.Faults, mutate func(*config.Config)) *manyLanes {
	tb.Helper()
	var hs []runpodsim.HostProfile
	for i := range hosts {
		hs = append(hs, host(fmt.Sprintf("h%d", i+1), a4000))
	}
	s := newScenario(tb, cloud.Options{Market: market(hs...), Faults: faults}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}}
		c.MaxPriceCandidates = 1
		if mutate != nil {
			mutate(c)
		}
	})
	return &manyLanes{s: s, clock: &laneClock{v: s.clock}, faults: faults}
}

// lane runs one PR's paid path as the shipped lane does (the claim with the
// shipped policy, shippedLanePolicy, then provision when it says pay), with
// its own clients, policy and budget guard.
// Long: one lane's setup, read top to bottom.
func (m *manyLanes) lane(tb testing.TB, i int) laneOutcome {
	tb.Helper()
	s := m.s
	head, merge, tree := fmt.Sprintf("a%039x", i+1), fmt.Sprintf("b%039x", i+1), fmt.Sprintf("7%039x", i+1)
	pr, err := s.cloud.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: head, HeadRef: fmt.Sprintf("f%d", i), MergeCommitSHA: merge})
	assert.NilError(tb, err)
	assert.NilError(tb, s.cloud.GitHub.SetCommitTree(cloud.Repository, merge, tree))
	policy := reqpolicy.New(reqpolicy.WithClock(m.clock), reqpolicy.WithSleeper(m.clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(m.clock), reqpolicy.WithSleeper(m.clock.Sleep))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: s.cloud.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(tb, err)
	client := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy), runpod.WithHTTPClient(&http.Client{Transport: stampCreates{m.clock}}))
	rp := &laneRunPod{noLogStream: noLogStream{client}, barrier: m.barrier}
	deps := s.deps
	rec := &recorder{}
	deps.RunPod, deps.GitHub, deps.Policy, deps.Observer = rp, gh, policy, rec
	defer func() {
		if testing.Verbose() {
			for _, l := range rec.lines {
				tb.Logf("PR lane %d: %s", i, l)
			}
		}
	}()
	if m.limit.Set() {
		deps.Budget = &budget.Guard{Limits: m.limit, RunPod: client, Repository: cloud.Repository,
			PodBound: s.req.Config.StartupTimeout() + s.req.Config.Lifetime(), Clock: m.clock}
	}
	req := s.req
	req.Owner.RunID, req.PRNumber, req.ExpectedHeadSHA, req.TestedRef = int64(8000+i), pr, head, merge
	key, err := gatecheck.ParseTreeKey("tree:" + tree + ":lane:" + fmt.Sprintf("%064x", 1))
	assert.NilError(tb, err)
	req.Reuse = gatecheck.ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: cloud.AppID, Key: key}

	p := shippedLanePolicy(tb, req.Config)
	start := m.clock.Now()
	c, err := gatecheck.ClaimOrWait(context.Background(), gh, gatecheck.ClaimRequest{Query: req.Reuse, LaneBound: p.bound,
		Wait: p.wait, Poll: p.poll, Clock: m.clock, Sleep: m.clock.Sleep, FollowEarlierHeads: true})
	if err != nil || c.Reuse || c.Following {
		return laneOutcome{pr: pr, err: fmt.Errorf("the claim of PR %d did not lead (%v): %s", pr, err, c.Reason)}
	}
	res, err := Run(context.Background(), deps, req)
	out := laneOutcome{pr: pr, res: res, err: err}
	if res.Accepted != nil {
		out.toRunner = res.Accepted.AcceptedAt.Sub(start)
		if m.job > 0 {
			id := res.Accepted.PodID
			s.clock.AfterFunc(m.job, func() {
				if err := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey).DeletePod(context.Background(), id); err != nil {
					tb.Errorf("the job's end: delete pod %s: %v", id, err)
				}
			})
		}
	}
	return out
}

// run runs n lanes pushed at once and returns their outcomes, in PR order.
func (m *manyLanes) run(tb testing.TB, n int) []laneOutcome {
	tb.Helper()
	if m.barrier != nil {
		m.barrier.Add(n)
	}
	out := make([]laneOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		m.clock.begin()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer m.clock.end()
			out[i] = m.lane(tb, i)
		}()
	}
	wg.Wait()
	return out
}

// spend is what every pod of the scenario billed, and how many pods are
// still live (leaks, once the lanes deleted what they rejected).
func (m *manyLanes) spend(tb testing.TB) (dollars float64, pods, live int) {
	tb.Helper()
	for _, p := range m.s.cloud.RunPod.Pods() {
		pods++
		if p.TerminatedAt.IsZero() {
			live++
		}
		b, err := m.s.cloud.RunPod.Bill(p.ID)
		assert.NilError(tb, err)
		dollars += b.Dollars
	}
	return dollars, pods, live
}

// endJobs ends every accepted pod's GPU job after job: cleanup deletes it.
func (m *manyLanes) endJobs(tb testing.TB, outs []laneOutcome, job time.Duration) {
	tb.Helper()
	m.s.clock.Advance(job)
	rp := runpod.New(m.s.cloud.RunPodURL, cloud.RunPodKey)
	for _, o := range outs {
		if o.res.Accepted != nil {
			assert.NilError(tb, rp.DeletePod(context.Background(), o.res.Accepted.PodID))
		}
	}
}

// Two lanes race for the budget's last dollar: both pass the check before
// either pod exists (the barrier), both create; the re-check after the
// creates keeps the older pod and deletes the younger at once, and both
// summaries say why. Spend stays within the budget plus the printed bound.
func TestManyPRsTwoLanesRaceForTheLastDollar(t *testing.T) {
	m := newManyLanes(t, 4, runpodsim.Faults{}, nil)
	cfg := m.s.req.Config
	worst := spend.Candidate(money.PerHour(0.25), cfg.StartupTimeout(), cfg.Lifetime())
	m.limit = spend.Limits{DailyUSD: worst * 3 / 2} // one pod's worst case fits, two do not
	m.barrier = &sync.WaitGroup{}

	outs := m.run(t, 2)

	var kept, refused []laneOutcome
	for _, o := range outs {
		if o.err == nil {
			kept = append(kept, o)
		} else {
			refused = append(refused, o)
		}
	}
	assert.Assert(t, is.Len(kept, 1), "one pod kept: %v", errorsOf(outs))
	assert.Assert(t, is.Len(refused, 1), "the other deleted at once: %v", errorsOf(outs))
	k, r := kept[0], refused[0]
	assert.Check(t, k.res.Accepted != nil)
	assert.Check(t, is.Contains(k.res.Summary(nil), "within the budget: kept"))
	assert.Check(t, errors.Is(r.err, spend.ErrOverBudget), "got %v", r.err)
	summary := r.res.Summary(r.err)
	assert.Check(t, is.Contains(summary, "another lane's pod took the budget first"))
	assert.Check(t, is.Contains(summary, "is deleted at once"))
	assert.Check(t, is.Contains(summary, "it can bill at most "+budget.OvershootBound(money.PerHour(0.25)).Format(money.Fine)))
	assert.Assert(t, is.Len(r.res.Attempts, 1))
	var refusedPod runpodsim.PodInfo
	for _, p := range m.s.cloud.RunPod.Pods() {
		if p.ID != k.res.Accepted.PodID {
			refusedPod = p
		}
	}
	assert.Check(t, !refusedPod.TerminatedAt.IsZero(), "the refused pod is deleted")
	assert.Check(t, refusedPod.TerminatedAt.Sub(refusedPod.CreatedAt) < budget.RecheckWindow, "deleted at once: %s after its create", refusedPod.TerminatedAt.Sub(refusedPod.CreatedAt))

	m.endJobs(t, outs, 5*time.Minute)
	spent, pods, live := m.spend(t)
	assert.Check(t, is.Equal(pods, 2))
	assert.Check(t, is.Equal(live, 0), "no pod leaks")
	bound := budget.OvershootBound(money.PerHour(0.25))
	assert.Check(t, spent <= (m.limit.DailyUSD+bound).Dollars(), "spent $%.4f, budget %s + bound %s", spent, m.limit.DailyUSD, bound.Format(money.Fine))
}

func errorsOf(outs []laneOutcome) []error {
	var errs []error
	for _, o := range outs {
		errs = append(errs, o.err)
	}
	return errs
}

// max_concurrent_pods 2 and three PRs pushed at once: two lanes keep their
// pods, the third waits for a free slot (or, when all three created
// together, deletes its pod at once and waits) and creates once a GPU job
// ended and its pod was deleted; never more than two kept pods live at once.
func TestManyPRsWaitForAFreeSlotUnderMaxConcurrentPods(t *testing.T) {
	const job = 5 * time.Minute
	m := newManyLanes(t, 4, runpodsim.Faults{}, func(c *config.Config) { c.MaxConcurrentPods = 2 })
	m.job = job

	outs := m.run(t, 3)

	var times []time.Duration
	for _, o := range outs {
		assert.NilError(t, o.err)
		times = append(times, o.toRunner)
	}
	slices.Sort(times)
	assert.Check(t, times[2]-times[0] >= job, "the third waited for a GPU job to end: %v", times)
	assert.Check(t, times[2]-times[0] < job+2*time.Minute, "and then got its slot within a poll or two: %v", times)
	accepted := map[string]bool{}
	for _, o := range outs {
		accepted[o.res.Accepted.PodID] = true
	}
	var kept []runpodsim.PodInfo
	for _, p := range m.s.cloud.RunPod.Pods() {
		if accepted[p.ID] {
			kept = append(kept, p)
			continue
		}
		// A pod created past the maximum by lanes that created together.
		assert.Check(t, !p.TerminatedAt.IsZero() && p.TerminatedAt.Sub(p.CreatedAt) < budget.RecheckWindow, "pod %s past the maximum is deleted at once", p.ID)
	}
	assert.Assert(t, is.Len(kept, 3), "one kept pod per PR")
	for _, p := range kept {
		live := 0
		for _, o := range kept {
			if !o.CreatedAt.After(p.CreatedAt) && (o.TerminatedAt.IsZero() || o.TerminatedAt.After(p.CreatedAt)) {
				live++
			}
		}
		assert.Check(t, live <= 2, "%d kept pods live when %s was created", live, p.ID)
	}
}

// A lane whose create is answered 429 with a Retry-After backs off on its
// own policy; the other lane, creating at the same moment, is not held: its
// pod is created at once and its runner is ready first.
func TestManyPRsALaneHitting429BacksOffWithoutBlockingTheOthers(t *testing.T) {
	const retryAfter = 20 * time.Second
	faults := runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "POST /v2/pods"},
		When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: retryAfter}}}
	m := newManyLanes(t, 4, faults, nil)
	m.barrier = &sync.WaitGroup{}
	start := m.clock.Now()

	outs := m.run(t, 2)

	for _, o := range outs {
		assert.NilError(t, o.err)
		assert.Assert(t, o.res.Accepted != nil)
	}
	var created []time.Time
	for _, p := range m.s.cloud.RunPod.Pods() {
		created = append(created, p.CreatedAt)
	}
	assert.Assert(t, is.Len(created, 2), "one pod per lane, none twice")
	slices.SortFunc(created, func(a, b time.Time) int { return a.Compare(b) })
	assert.Check(t, created[0].Sub(start) < time.Second, "the other lane's create went out at once: %s", created[0].Sub(start))
	assert.Check(t, created[1].Sub(start) >= retryAfter, "the rate-limited lane waited its Retry-After: %s", created[1].Sub(start))
	assert.Check(t, created[1].Sub(start) < retryAfter+10*time.Second, "and no longer: %s", created[1].Sub(start))
	first, second := outs[0].toRunner, outs[1].toRunner
	assert.Check(t, min(first, second) < max(first, second), "runners %s and %s: the lane not rate limited got its runner first", first, second)
}

// manyPRsStats is one BenchmarkManyPRs round.
type manyPRsStats struct {
	prs, pods, leaks, refused int
	last, lone                time.Duration
	spent, limit              float64
	bound                     float64 // refused × budget.OvershootBound
}

// manyPRs pushes n PRs of different trees at once and measures the last
// PR's time to its runner against a lone PR's (measured first, alone).
func manyPRs(tb testing.TB, n int) manyPRsStats {
	tb.Helper()
	lone := newManyLanes(tb, 1, runpodsim.Faults{}, nil)
	loneOut := lone.run(tb, 1)
	assert.NilError(tb, loneOut[0].err)

	m := newManyLanes(tb, n, runpodsim.Faults{}, nil)
	cfg := m.s.req.Config
	// A budget that holds every PR's pod at its worst case: the lanes race
	// for it, and the re-check keeps all of them.
	m.limit = spend.Limits{DailyUSD: money.Amount(n)*spend.Candidate(money.PerHour(0.25), cfg.StartupTimeout(), cfg.Lifetime()) + money.Cent}
	outs := m.run(tb, n)
	st := manyPRsStats{prs: n, lone: loneOut[0].toRunner, limit: m.limit.DailyUSD.Dollars()}
	for _, o := range outs {
		if errors.Is(o.err, spend.ErrOverBudget) { // a lane that lost the race: its pod deleted at once, within the bound
			st.refused++
			continue
		}
		assert.NilError(tb, o.err, "PR %d", o.pr)
		st.last = max(st.last, o.toRunner)
	}
	st.bound = float64(st.refused) * budget.OvershootBound(money.PerHour(0.25)).Dollars()
	m.endJobs(tb, outs, 5*time.Minute)
	st.spent, st.pods, st.leaks = m.spend(tb)
	return st
}

// BenchmarkManyPRs pushes 1, 5, 10 and 20 pull requests of different trees at
// once through the lane's paid path (claim, provision) on the model-mode
// simulated cloud, every lane at the same time on one virtual clock, under
// one budget that holds them all. It prints the last PR's time to runner
// against a lone PR's (target ≤ 1.25× for 10 PRs: no lock makes them wait for
// each other), the pods created (= PRs), the spend against the budget plus
// the printed bound, and the leaks (0):
//
//	go test ./pkg/provision -run '^$' -bench ManyPRs -benchtime 1x
func BenchmarkManyPRs(b *testing.B) {
	for _, n := range []int{1, 5, 10, 20} {
		b.Run(fmt.Sprintf("prs=%d", n), func(b *testing.B) {
			var st manyPRsStats
			for range b.N {
				st = manyPRs(b, n)
			}
			ratio := st.last.Seconds() / st.lone.Seconds()
			b.ReportMetric(ratio, "last/lone")
			b.ReportMetric(float64(st.pods), "pods")
			fmt.Printf("%d PRs pushed at once, no lock: last PR's time to runner %s, a lone PR's %s: %.2f× (target ≤ 1.25× for 10); "+
				"%d pods created for %d PRs; spent $%.4f of a $%.2f budget + bound $%.4f (%d pod(s) refused by the re-check × $%.4f, %s at $0.25/h); %d leaked\n",
				n, st.last, st.lone, ratio, st.pods, st.prs, st.spent, st.limit, st.bound, st.refused, budget.OvershootBound(money.PerHour(0.25)).Dollars(), budget.RecheckWindow, st.leaks)
			if n == 10 && ratio > 1.25 {
				b.Errorf("10 PRs: the last PR's time to runner is %.2f× a lone PR's: want ≤ 1.25×", ratio)
			}
			if st.pods != st.prs {
				b.Errorf("%d pods created for %d PRs: want one each", st.pods, st.prs)
			}
			if st.spent > st.limit+st.bound {
				b.Errorf("spent $%.4f: above the budget $%.2f + the bound $%.4f", st.spent, st.limit, st.bound)
			}
			if st.leaks != 0 {
				b.Errorf("%d pods leaked", st.leaks)
			}
		})
	}
}

// The benchmark's figures hold for 10 PRs in a test as well, so a change that
// serialises creation again fails `go test`, not only a benchmark run.
func TestManyPRsTenAtOnceGetRunnersAsFastAsOne(t *testing.T) {
	st := manyPRs(t, 10)
	assert.Check(t, st.last.Seconds() <= 1.25*st.lone.Seconds(), "last %s, lone %s", st.last, st.lone)
	assert.Check(t, is.Equal(st.pods, 10))
	assert.Check(t, is.Equal(st.leaks, 0))
	assert.Check(t, st.spent <= st.limit+st.bound)
}
