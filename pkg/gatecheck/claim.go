package gatecheck

// Overlapping lanes pay once, in code. A lane that is about to pay publishes
// its gate as in progress first (the stake), with the marker its success will
// carry, and lists the gates again. Among the live stakes for one key (the
// same tested ref, or the same tree and lane) the lowest check-run id leads:
// GitHub hands ids out in creation order, so every lane that staked later
// sees the leader's stake when it lists after its own, and exactly one lane
// of those that staked finds no older stake. The others wait for the leader
// on the policy clock, inside their own budget, then reuse its success — or
// pay if it failed, vanished (older than the lane's bound) or outlasted the
// budget. A lane that finds a live stake before staking waits without one.

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
	// LaneBound is the longest a lane can take from its stake to its gate: a
	// stake older than that is a lane that vanished, and is not waited for.
	LaneBound time.Duration
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
	// Staked is this lane's in-progress gate, nil when it published none.
	// Whatever the decision, the lane's gate job completes it (Evidence.CheckRunID).
	Staked *github.CheckRun
	// Leader is the stake this lane waited for (0: none) and Waited how long.
	Leader int64
	Waited time.Duration
}

// ClaimOrWait decides, right before the first create, whether this lane pays:
// it reuses a reusable earlier gate, waits for an older live stake for the same
// key, or stakes and leads. It fails open — a failed listing or stake answers
// "pay" — and errs only for a bad request or when ctx ends, after withdrawing
// its stake so that no gate is left in progress.
func ClaimOrWait(ctx context.Context, c ClaimClient, r ClaimRequest) (Claim, error) {
	if err := r.validate(); err != nil {
		return Claim{}, err
	}
	if c == nil {
		return Claim{Decision: Decision{Reason: "no GitHub client for the in-progress gate: running the paid path"}}, nil
	}
	clk, sleep := r.Clock, r.Sleep
	if clk == nil {
		clk = clock.Wall{}
	}
	if sleep == nil {
		sleep = clock.SleepContext
	}
	logf := r.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	q, name := r.query()
	limit := r.readTimeout()
	start := clk.Now()
	var out Claim
	for {
		runs, err := r.list(ctx, c, clk, q, limit)
		if ctx.Err() != nil {
			return out, r.withdraw(c, out.Staked, ctx.Err())
		}
		if err != nil {
			out.Decision = Decision{Reason: fmt.Sprintf("gate lookup failed (%v): running the paid path", err)}
			return r.stakeOnce(ctx, c, clk, out, logf), nil
		}
		if out.Decision = decide(runs, name, q); out.Reuse {
			return out, nil
		}
		now := clk.Now()
		leader := oldestLiveStake(runs, name, q, now, r.LaneBound, out.Staked)
		if leader == nil {
			if out.Staked != nil {
				out.Reason = fmt.Sprintf("%s; this lane leads (in-progress gate %d)", out.Reason, out.Staked.GetID())
				return out, nil
			}
			out = r.stakeOnce(ctx, c, clk, out, logf)
			if out.Staked == nil {
				return out, nil // could not stake: pay without one (fail open)
			}
			continue // list again: a lane that staked at the same moment may be older
		}
		out.Leader, out.Waited = leader.GetID(), now.Sub(start)
		if out.Waited >= r.Wait {
			return r.waitedEnough(ctx, c, clk, out, leader, q, logf), nil
		}
		logf("waiting for in-progress gate %d (%s) of another lane for the same %s; waited %s of %s",
			leader.GetID(), leader.GetHTMLURL(), keyOrRef(q), out.Waited.Round(time.Second), r.Wait)
		pause := min(r.Poll, r.Wait-out.Waited)
		if err := sleep(ctx, pause); err != nil || ctx.Err() != nil {
			return out, r.withdraw(c, out.Staked, errors.Join(ctx.Err(), err))
		}
	}
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
	if out.Staked == nil {
		out = r.stakeOnce(ctx, c, clk, out, logf)
	}
	return out
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

// withdraw completes a stake as skipped when the lane stops before deciding,
// on a fresh bounded context (ctx is already done), and returns why it stopped.
func (r ClaimRequest) withdraw(c ClaimClient, staked *github.CheckRun, why error) error {
	err := fmt.Errorf("waiting for another lane's gate: %w", why)
	if staked == nil {
		return err
	}
	e := Evidence{Kind: KindSkipped, HeadSHA: r.Query.HeadSHA, TestedRef: r.Query.TestedRef, CheckName: r.Query.CheckName,
		Key: r.Query.Key, RunURL: r.RunURL, CheckRunID: staked.GetID(),
		Reason: "this lane stopped while it waited for another lane's result; nothing was paid"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, perr := Publish(ctx, c, e); perr != nil {
		return errors.Join(err, fmt.Errorf("in-progress gate %d stays in progress: %w", staked.GetID(), perr))
	}
	return err
}

// oldestLiveStake is the lowest-id in-progress gate for the same key from the
// trusted app, younger than bound, other than (and older than) this lane's own
// stake; nil when there is none.
func oldestLiveStake(runs []*github.CheckRun, name string, q ReuseQuery, now time.Time, bound time.Duration, own *github.CheckRun) *github.CheckRun {
	var live []*github.CheckRun
	for _, g := range matchingGates(runs, name, q, false) {
		r := g.run
		if r.GetStatus() != "in_progress" || r.StartedAt == nil || now.Sub(r.GetStartedAt().Time) >= bound {
			continue // queued is nobody's stake; an old one is a lane that vanished
		}
		if own != nil && r.GetID() >= own.GetID() {
			continue // this lane's own stake, or a younger one that waits for it
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return nil
	}
	sort.Slice(live, func(i, j int) bool { return live[i].GetID() < live[j].GetID() })
	return live[0]
}

func keyOrRef(q ReuseQuery) string {
	if q.Key != nil {
		return q.Key.String()
	}
	return "tested ref " + q.TestedRef
}
