package gatecheck

// Overlapping lanes pay once, in code. A lane that is about to pay publishes
// its gate as in progress first (the stake), with the marker its success will
// carry, and lists the gates again. Among the live stakes for one key (the
// same tested ref, or the same tree and lane) the lowest check-run id leads:
// GitHub hands ids out in creation order, so every lane that staked later
// sees the leader's stake when it lists after its own, and exactly one lane
// of those that staked finds no older stake. A lane whose leader stakes on
// its own head, or on an earlier head of its PR for the same tree (a
// re-push), follows it (follow.go): it publishes a follow gate and ends,
// never paying, whatever the length of the leader's GPU job; the leader's gate
// job completes the follow gate with its result, on its head and its PR's
// head. A leader of another PR with the same tree cannot complete a gate it
// does not know of: the others wait for it on the policy clock, inside their
// own budget, then reuse its success — or pay if it failed, vanished (its
// workflow run completed without completing it; stakelife.go) or outlasted
// the budget. A lane that finds a live stake before staking waits without one.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// DefaultReadTimeout bounds each GitHub read of the gate protocol (Authorize
// in pkg/gate, ClaimOrWait here; retries and waits included) when the request
// gives no read timeout. A stalled GitHub answer then ends the step within a
// minute, not at the step timeout.
const DefaultReadTimeout = 60 * time.Second

// ClaimClient is what the in-progress protocol reads and writes. *ghapi.Client has it.
type ClaimClient interface {
	CheckRunLister
	CheckRunCreator
	CheckRunUpdater
}

// ClaimRequest configures ClaimOrWait.
type ClaimRequest struct {
	// Query names the head, tested ref, tree key, check name and trusted app;
	// the stake is published on Query.HeadSHA as the trusted app.
	Query ReuseQuery
	// RunURL is the stake's details URL (this workflow run).
	RunURL string
	// LaneBound is the longest a lane can take from its stake to its gate
	// (LaneBound): a stake whose workflow run cannot be read is alive until
	// then (stakelife.go).
	LaneBound time.Duration
	// Runs reads the workflow run a stake names: its lane is alive while
	// that run attempt is not completed. Nil: the bound alone decides.
	Runs RunReader
	// FollowEarlierHeads lets the lane follow a leader on an earlier head of
	// its PR (Query.EarlierHeads) for the same tree key: set when Query.HeadSHA
	// is the PR's head now, which the leader's gate job completes (pkg/gate
	// completes follow gates on its head and its PR's head). A merge group's
	// head is no PR's head: its lane waits instead.
	FollowEarlierHeads bool
	// Wait is the most this lane waits for another lane's result; 0 never waits.
	Wait time.Duration
	// Poll is the pause between listings while waiting.
	Poll time.Duration
	// ReadTimeout bounds each listing; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// Clock and Sleep are the policy clock; nil means the wall clock.
	Clock clock.Clock
	Sleep clock.Sleeper
	// Logf hears each step; nil is silent.
	Logf func(format string, args ...any)
}

// Claim is the answer of ClaimOrWait.
type Claim struct {
	// Decision says whether to reuse (an earlier or the leader's success) and why.
	Decision
	// Staked is this lane's gate, nil when it published none: in progress when
	// it leads or reuses, a queued follow gate when it follows. Unless it
	// follows, the lane's gate job completes it (Evidence.CheckRunID); a follow
	// gate is the leader's to complete.
	Staked *github.CheckRun
	// Leader is the stake this lane waited for or follows (0: none) and Waited how long.
	Leader int64
	Waited time.Duration
	// Following is set when this lane follows Leader: it pays nothing and
	// publishes nothing more; the leader's gate job completes Staked.
	Following bool
}

// ClaimOrWait decides, right before the first create, whether this lane pays:
// it reuses a reusable earlier gate, follows an older live stake for the same
// key on its head, waits for one on another head, or stakes and leads. It fails
// open — a failed listing or stake answers "pay" — and errs only for a bad
// request or when ctx ends, after withdrawing its stake so that no gate is left
// in progress.
func ClaimOrWait(ctx context.Context, c ClaimClient, r ClaimRequest) (Claim, error) {
	if err := r.validate(); err != nil {
		return Claim{}, err
	}
	if c == nil {
		return Claim{Decision: Decision{Reason: "no GitHub client for the in-progress gate: running the paid path"}}, nil
	}
	w := r.walker(c)
	for {
		runs, err := r.list(ctx, c, w.clk, w.q, w.limit)
		if ctx.Err() != nil {
			return w.out, r.withdraw(c, w.out.Staked, ctx.Err())
		}
		if err != nil {
			w.out.Decision = Decision{Reason: fmt.Sprintf("gate lookup failed (%v): running the paid path", err)}
			return w.lead(ctx), nil
		}
		if w.out.Decision = decide(runs, w.name, w.q); w.out.Reuse {
			w.out.Following = false
			return w.out, nil
		}
		now := w.clk.Now()
		w.life.reads = 0
		leader := oldestLiveStake(runs, w.name, w.q, w.out.Staked, func(s *github.CheckRun) bool { return w.life.alive(ctx, s, now) })
		done, next, err := w.step(ctx, leader, now)
		if done || err != nil {
			return w.out, err
		}
		if next {
			continue
		}
		if err := w.sleep(ctx, leader); err != nil {
			return w.out, r.withdraw(c, w.out.Staked, err)
		}
	}
}

// claimWalk is one ClaimOrWait's state.
type claimWalk struct {
	r       ClaimRequest
	c       ClaimClient
	clk     clock.Clock
	sleeper clock.Sleeper
	logf    func(string, ...any)
	q       ReuseQuery
	name    string
	limit   time.Duration
	start   time.Time
	out     Claim
	// noFollow: a follow gate could not be published; the lane waits instead.
	noFollow bool
	life     *stakeLife
}

func (r ClaimRequest) walker(c ClaimClient) *claimWalk {
	w := &claimWalk{r: r, c: c, clk: r.Clock, sleeper: r.Sleep, logf: r.Logf, limit: r.readTimeout()}
	if w.clk == nil {
		w.clk = clock.Wall{}
	}
	if w.sleeper == nil {
		w.sleeper = clock.SleepContext
	}
	if w.logf == nil {
		w.logf = func(string, ...any) {}
	}
	w.q, w.name = r.query()
	w.start = w.clk.Now()
	w.life = &stakeLife{runs: r.Runs, bound: r.LaneBound, clk: w.clk, limit: w.limit, logf: w.logf, dead: map[int64]string{}}
	return w
}

// step acts on one listing's live leader (nil: none): it returns done when
// the claim is decided, next to list again at once, neither to wait.
func (w *claimWalk) step(ctx context.Context, leader *github.CheckRun, now time.Time) (done, next bool, err error) {
	switch {
	case leader == nil && isFollow(w.out.Staked):
		// The lane this one followed ended without a result to reuse, or vanished: lead.
		w.out.Following, w.out.Leader = false, 0
		w.out.Staked = w.r.restake(ctx, w.c, w.clk, w.out.Staked, w.logf)
		return w.out.Staked == nil, w.out.Staked != nil, nil
	case leader == nil && w.out.Staked != nil:
		w.out.Reason = fmt.Sprintf("%s; this lane leads (in-progress gate %d)", w.out.Reason, w.out.Staked.GetID())
		return true, false, nil
	case leader == nil:
		w.out = w.r.stakeOnce(ctx, w.c, w.clk, w.out, w.logf)
		// Without a stake: pay without one (fail open). With one: list again,
		// a lane that staked at the same moment may be older.
		return w.out.Staked == nil, w.out.Staked != nil, nil
	case w.followable(leader) && !w.noFollow:
		return w.follow(ctx, leader)
	}
	w.out.Leader, w.out.Waited = leader.GetID(), now.Sub(w.start)
	if w.out.Waited >= w.r.Wait {
		w.out = w.r.waitedEnough(ctx, w.c, w.clk, w.out, leader, w.q, w.logf)
		return true, false, nil
	}
	return false, false, nil
}

// followable reports whether this lane can follow leader instead of waiting:
// its stake is on this lane's head, or, for the same tree key, on an earlier
// head of this lane's PR (an identical tree re-pushed while the first lane
// runs; FollowEarlierHeads). The leader's gate job completes the follow gates on its own head and
// on its PR's head when it publishes (pkg/gate), so this head's follow gate
// is completed whatever the length of the leader's GPU job. A leader of
// another PR cannot know this head: the lane waits for it instead.
func (w *claimWalk) followable(leader *github.CheckRun) bool {
	if leader.GetHeadSHA() == w.q.HeadSHA {
		return true
	}
	return w.r.FollowEarlierHeads && w.q.Key != nil && slices.Contains(w.q.EarlierHeads, leader.GetHeadSHA())
}

// follow makes this lane a follower of leader, a live stake on its own head:
// it publishes (or turns its stake into) a follow gate naming leader, then
// lists once more, and is done when leader is still the one live stake to
// follow. A follow gate that cannot be published leaves the lane to wait as
// for a leader on another head.
func (w *claimWalk) follow(ctx context.Context, leader *github.CheckRun) (done, next bool, err error) {
	if w.out.Following && w.out.Leader == leader.GetID() {
		where := "on this head"
		if leader.GetHeadSHA() != w.q.HeadSHA {
			where = "on an earlier head of this PR (" + leader.GetHeadSHA() + ")"
		}
		w.out.Reason = fmt.Sprintf("gate %d (%s) of another lane is testing the same %s %s: this lane follows it and pays nothing; "+
			"its result completes this head's gate %d", leader.GetID(), leader.GetHTMLURL(), keyOrRef(w.q), where, w.out.Staked.GetID())
		return true, false, nil
	}
	staked, err := w.r.publishFollow(ctx, w.c, w.clk, w.out.Staked, leader)
	if err != nil {
		w.logf("the follow gate could not be published (%v): waiting for gate %d instead", err, leader.GetID())
		w.noFollow = true
		return false, true, nil
	}
	w.logf("following in-progress gate %d (%s) of another lane for the same %s: follow gate %d", leader.GetID(), leader.GetHTMLURL(), keyOrRef(w.q), staked.GetID())
	w.out.Staked, w.out.Leader, w.out.Following = staked, leader.GetID(), true
	return false, true, nil
}

// sleep waits one poll for leader, within what is left of the budget.
func (w *claimWalk) sleep(ctx context.Context, leader *github.CheckRun) error {
	w.logf("waiting for in-progress gate %d (%s) of another lane for the same %s; waited %s of %s",
		leader.GetID(), leader.GetHTMLURL(), keyOrRef(w.q), w.out.Waited.Round(time.Second), w.r.Wait)
	pause := min(w.r.Poll, w.r.Wait-w.out.Waited)
	if err := w.sleeper(ctx, pause); err != nil || ctx.Err() != nil {
		return errors.Join(ctx.Err(), err)
	}
	return nil
}

// lead ends the claim paying, under a stake when one can be published.
func (w *claimWalk) lead(ctx context.Context) Claim {
	if isFollow(w.out.Staked) {
		w.out.Following, w.out.Leader = false, 0
		if st := w.r.restake(ctx, w.c, w.clk, w.out.Staked, w.logf); st != nil {
			w.out.Staked = st
			return w.out
		}
		w.out.Staked = nil
	}
	if w.out.Staked != nil {
		return w.out
	}
	return w.r.stakeOnce(ctx, w.c, w.clk, w.out, w.logf)
}

// isFollow reports whether a lane's own gate is a follow gate.
func isFollow(r *github.CheckRun) bool {
	return r != nil && strings.HasPrefix(r.GetExternalID(), FollowPrefix)
}

// query is the reuse query the claim lists gates with: only the trusted
// app's gates, under the check name (DefaultCheckName when unset), which it
// also returns.
func (r ClaimRequest) query() (q ReuseQuery, name string) {
	q = r.Query
	q.AppID = TrustedGateApp(q.AppID, 0)
	name = q.CheckName
	if name == "" {
		name = DefaultCheckName
	}
	q.CheckName = name
	return q, name
}

// waitedEnough ends a wait that used its whole budget while leader's gate
// was still in progress: this lane pays, under its own stake.
func (r ClaimRequest) waitedEnough(ctx context.Context, c ClaimClient, clk clock.Clock, out Claim, leader *github.CheckRun, q ReuseQuery,
	logf func(string, ...any)) Claim {
	out.Reason = fmt.Sprintf("gate %d of another lane for the same %s is still in progress after this lane waited %s (its budget): running the paid path",
		leader.GetID(), keyOrRef(q), out.Waited.Round(time.Second))
	w := &claimWalk{r: r, c: c, clk: clk, logf: logf, q: q, out: out}
	return w.lead(ctx)
}

// publishFollow publishes this lane's follow gate naming leader: a new one,
// or, when the lane already holds a gate (a stake of the same moment, younger
// than leader's, or a follow gate naming another leader), that gate turned
// into one.
func (r ClaimRequest) publishFollow(ctx context.Context, c ClaimClient, clk clock.Clock, own, leader *github.CheckRun) (*github.CheckRun, error) {
	in, err := FollowContent(Evidence{HeadSHA: r.Query.HeadSHA, TestedRef: r.Query.TestedRef, CheckName: r.Query.CheckName,
		Key: r.Query.Key, RunURL: r.RunURL}, leader, r.LaneBound)
	if err != nil {
		return nil, err
	}
	sctx, cancel := reqpolicy.Bound(ctx, clk, r.readTimeout())
	defer cancel()
	if own != nil {
		return c.UpdateCheckRun(sctx, own.GetID(), in)
	}
	return c.CreateCheckRun(sctx, in)
}

// restake turns this lane's follow gate into its in-progress stake: the lane
// it followed ended without a result to reuse, so this lane leads. Failing,
// it publishes a stake of its own (stakeOnce) and nil when that fails too.
func (r ClaimRequest) restake(ctx context.Context, c ClaimClient, clk clock.Clock, own *github.CheckRun, logf func(string, ...any)) *github.CheckRun {
	in, err := InProgressContent(Evidence{HeadSHA: r.Query.HeadSHA, TestedRef: r.Query.TestedRef, CheckName: r.Query.CheckName,
		Key: r.Query.Key, RunURL: r.RunURL}, clk.Now())
	if err == nil {
		sctx, cancel := reqpolicy.Bound(ctx, clk, r.readTimeout())
		var st *github.CheckRun
		st, err = c.UpdateCheckRun(sctx, own.GetID(), in)
		cancel()
		if err == nil {
			logf("the lane this one followed ended without a result to reuse: gate %d is now this lane's in-progress gate", st.GetID())
			return st
		}
	}
	logf("follow gate %d could not become this lane's in-progress gate (%v): publishing another", own.GetID(), err)
	return r.stakeOnce(ctx, c, clk, Claim{}, logf).Staked
}

func (r ClaimRequest) validate() error {
	switch {
	case r.LaneBound <= 0:
		return fmt.Errorf("claim: lane bound %s: want the longest a lane can take (more than 0)", r.LaneBound)
	case r.Wait < 0:
		return fmt.Errorf("claim: wait %s: want 0 (never wait) or more", r.Wait)
	case r.Wait > 0 && r.Poll <= 0:
		return fmt.Errorf("claim: poll %s: want more than 0 when waiting", r.Poll)
	case r.ReadTimeout < 0:
		return fmt.Errorf("claim: read timeout %s: want 0 (default %s) or more", r.ReadTimeout, DefaultReadTimeout)
	}
	return nil
}

// list lists the gates once, within the read timeout, failing open as DecideReuse does.
func (r ClaimRequest) list(ctx context.Context, c ClaimClient, clk clock.Clock, q ReuseQuery, limit time.Duration) (runs []*github.CheckRun, err error) {
	defer func() {
		if p := recover(); p != nil {
			runs, err = nil, fmt.Errorf("program error: %v", p)
		}
	}()
	lctx, cancel := reqpolicy.Bound(ctx, clk, limit)
	defer cancel()
	pages := q.MaxPages
	if pages <= 0 {
		pages = DefaultMaxPages
	}
	return listGates(lctx, c, q, q.CheckName, pages)
}

// stakeOnce publishes this lane's in-progress gate; failing, the lane pays
// without one and says so.
func (r ClaimRequest) stakeOnce(ctx context.Context, c ClaimClient, clk clock.Clock, out Claim, logf func(string, ...any)) Claim {
	in, err := InProgressContent(Evidence{HeadSHA: r.Query.HeadSHA, TestedRef: r.Query.TestedRef, CheckName: r.Query.CheckName,
		Key: r.Query.Key, RunURL: r.RunURL}, clk.Now())
	if err == nil {
		sctx, cancel := reqpolicy.Bound(ctx, clk, r.readTimeout())
		out.Staked, err = c.CreateCheckRun(sctx, in)
		cancel()
	}
	if err != nil {
		out.Staked = nil
		out.Reason = fmt.Sprintf("%s; the in-progress gate could not be published (%v), so other lanes cannot wait for this one", out.Reason, err)
		return out
	}
	logf("published in-progress gate %d (%s)", out.Staked.GetID(), out.Staked.GetExternalID())
	return out
}

func (r ClaimRequest) readTimeout() time.Duration {
	if r.ReadTimeout == 0 {
		return DefaultReadTimeout
	}
	return r.ReadTimeout
}

// withdraw completes a stake as failed when the lane stops before deciding,
// on a fresh bounded context (ctx is already done), and returns why it
// stopped. Failed, not skipped: a neutral gate would pass branch protection
// for a tree nothing tested. A follow gate stays: its leader completes it.
func (r ClaimRequest) withdraw(c ClaimClient, staked *github.CheckRun, why error) error {
	err := fmt.Errorf("waiting for another lane's gate: %w", why)
	if staked == nil || isFollow(staked) {
		return err
	}
	e := Evidence{Kind: KindFailed, HeadSHA: r.Query.HeadSHA, TestedRef: r.Query.TestedRef, CheckName: r.Query.CheckName,
		Key: r.Query.Key, RunURL: r.RunURL, CheckRunID: staked.GetID(),
		Reason: "this lane stopped while it waited for another lane's result, before it tested anything; nothing was paid: re-run it to test this head"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, perr := Publish(ctx, c, e); perr != nil {
		return errors.Join(err, fmt.Errorf("in-progress gate %d stays in progress: %w", staked.GetID(), perr))
	}
	return err
}

// oldestLiveStake is the lowest-id in-progress gate for the same key from the
// trusted app whose lane is alive (stakelife.go), other than (and older than)
// this lane's own stake; nil when there is none. The stakes are looked at
// oldest first and the first alive ends the search. A lane whose own gate is
// a follow gate takes any live stake as its leader, younger ones included:
// it is nobody's stake.
func oldestLiveStake(runs []*github.CheckRun, name string, q ReuseQuery, own *github.CheckRun, alive func(*github.CheckRun) bool) *github.CheckRun {
	var stakes []*github.CheckRun
	for _, g := range matchingGates(runs, name, q, false) {
		r := g.run
		if r.GetStatus() != "in_progress" || r.StartedAt == nil {
			continue // queued is nobody's stake
		}
		if own != nil && !isFollow(own) && r.GetID() >= own.GetID() {
			continue // this lane's own stake, or a younger one that waits for it
		}
		stakes = append(stakes, r)
	}
	sort.Slice(stakes, func(i, j int) bool { return stakes[i].GetID() < stakes[j].GetID() })
	for _, r := range stakes {
		if alive(r) {
			return r
		}
	}
	return nil
}

func keyOrRef(q ReuseQuery) string {
	if q.Key != nil {
		return q.Key.String()
	}
	return "tested ref " + q.TestedRef
}
