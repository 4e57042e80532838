package gatecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// The ff tests pin ClaimOrWait's exact waits and bounds, each failing fast
// when a line breaks: the sleeper is virtual and refuses to be called more
// than a few times, and every call has a short wall-clock deadline of its own,
// so a broken loop or a real sleep ends the test in seconds instead of hanging
// it. They come first in this file: under go test -failfast (as mutation
// testing runs it) they fail before a slower test could hang.

const ffApp = 777

var (
	ffHead   = strings.Repeat("a", 40)
	ffMerge  = strings.Repeat("b", 40)
	ffStart  = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	errSpins = errors.New("slept too often: the wait loop does not advance")
)

// ffChecks is a GitHub of check runs on a virtual clock that moves only when
// the protocol sleeps. Every call honours its context.
type ffChecks struct {
	now          time.Time
	runs         []*github.CheckRun
	nextID       int64
	sleeps       []time.Duration
	pages        []int
	listLeft     []time.Duration // virtual time left on each listing's deadline
	updates      []ghapi.CheckRunInput
	beforeCreate func(f *ffChecks)
	onSleep      func(f *ffChecks, n int)
}

func (f *ffChecks) Now() time.Time { return f.now }

func (f *ffChecks) sleep(ctx context.Context, d time.Duration) error {
	if len(f.sleeps) >= 8 {
		return errSpins
	}
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	if f.onSleep != nil {
		f.onSleep(f, len(f.sleeps))
	}
	return ctx.Err()
}

func (f *ffChecks) stake(id int64, status, conclusion string, started time.Time) *github.CheckRun {
	marker, _ := FormatMarker(ffMerge, KindPaid, nil)
	r := &github.CheckRun{ID: github.Int64(id), Name: github.String(DefaultCheckName), ExternalID: github.String(marker),
		Status: github.String(status), App: &github.App{ID: github.Int64(ffApp)}, StartedAt: &github.Timestamp{Time: started}}
	if conclusion != "" {
		r.Conclusion = github.String(conclusion)
		r.CompletedAt = &github.Timestamp{Time: f.now}
	}
	f.runs = append(f.runs, r)
	return r
}

func (f *ffChecks) ListCheckRunsForRef(ctx context.Context, _, _ string, maxPages int) ([]*github.CheckRun, error) {
	f.pages = append(f.pages, maxPages)
	left, _ := reqpolicy.New(reqpolicy.WithClock(f)).Remaining(ctx)
	f.listLeft = append(f.listLeft, left)
	return f.runs, ctx.Err()
}

func (f *ffChecks) CreateCheckRun(ctx context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.beforeCreate != nil {
		f.beforeCreate(f)
	}
	f.nextID += 10
	r := f.stake(f.nextID, in.Status, "", in.StartedAt)
	r.ExternalID = github.String(in.ExternalID)
	return r, nil
}

func (f *ffChecks) UpdateCheckRun(ctx context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.updates = append(f.updates, in)
	return &github.CheckRun{ID: github.Int64(id), Status: github.String(in.Status), Conclusion: github.String(in.Conclusion)}, nil
}

func (f *ffChecks) complete(id int64, conclusion string) {
	for _, r := range f.runs {
		if r.GetID() == id {
			r.Status, r.Conclusion, r.CompletedAt = github.String("completed"), github.String(conclusion), &github.Timestamp{Time: f.now}
		}
	}
}

// ffClaim runs ClaimOrWait with the fake as clock and sleeper, under a
// wall-clock deadline: a real sleep or a stuck loop fails within seconds.
func ffClaim(t *testing.T, f *ffChecks, r ClaimRequest) (Claim, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Query.HeadSHA, r.Query.TestedRef, r.Query.AppID = ffHead, ffMerge, ffApp
	r.Clock = f
	if r.Sleep == nil {
		r.Sleep = f.sleep
	}
	return ClaimOrWait(ctx, f, r)
}

// The waits of a lane behind a live stake: Poll at a time, the last pause cut
// to what is left of Wait, and a budget spent exactly is spent.
func TestClaimWaitArithmetic(t *testing.T) {
	tests := []struct {
		name       string
		wait, poll time.Duration
		wantSleeps []time.Duration
		wantReason string
	}{
		{name: "the last pause is what is left of the budget", wait: 90 * time.Second, poll: time.Minute,
			wantSleeps: []time.Duration{time.Minute, 30 * time.Second},
			wantReason: "after this lane waited 1m30s (its budget): running the paid path"},
		{name: "a budget of 0 never waits", wait: 0, poll: time.Minute,
			wantReason: "after this lane waited 0s (its budget): running the paid path"},
		{name: "a budget of 0 without a poll never waits", wait: 0, poll: 0,
			wantReason: "after this lane waited 0s (its budget): running the paid path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &ffChecks{now: ffStart, nextID: 100}
			leader := f.stake(5, "in_progress", "", ffStart)

			c, err := ffClaim(t, f, ClaimRequest{LaneBound: time.Hour, Wait: tc.wait, Poll: tc.poll})

			assert.NilError(t, err)
			assert.DeepEqual(t, f.sleeps, tc.wantSleeps)
			assert.Equal(t, c.Reuse, false)
			assert.Equal(t, c.Leader, leader.GetID())
			assert.Equal(t, c.Waited, tc.wait)
			assert.Check(t, strings.HasPrefix(c.Reason, fmt.Sprintf("gate 5 of another lane for the same tested ref %s is still in progress", ffMerge)), c.Reason)
			assert.Check(t, strings.Contains(c.Reason, tc.wantReason), c.Reason)
			assert.Check(t, c.Staked != nil, "a lane that pays stakes first")
		})
	}
}

// The sleeper given is the one used: a wait follows the policy clock, never
// the wall clock.
func TestClaimUsesTheGivenSleeper(t *testing.T) {
	f := &ffChecks{now: ffStart, nextID: 100}
	leader := f.stake(5, "in_progress", "", ffStart)
	f.onSleep = func(f *ffChecks, _ int) { f.complete(leader.GetID(), "success") }

	c, err := ffClaim(t, f, ClaimRequest{LaneBound: time.Hour, Wait: 10 * time.Minute, Poll: time.Minute})

	assert.NilError(t, err)
	assert.DeepEqual(t, f.sleeps, []time.Duration{time.Minute})
	assert.Check(t, c.Reuse, c.Reason)
	assert.Equal(t, c.CheckID, leader.GetID())
}

// A stake exactly LaneBound old is a lane that vanished: not waited for.
func TestClaimStakeExactlyTheLaneBoundOldIsNotWaitedFor(t *testing.T) {
	f := &ffChecks{now: ffStart, nextID: 100}
	f.stake(5, "in_progress", "", ffStart.Add(-time.Hour))

	c, err := ffClaim(t, f, ClaimRequest{LaneBound: time.Hour, Wait: 10 * time.Minute, Poll: time.Minute})

	assert.NilError(t, err)
	assert.Equal(t, len(f.sleeps), 0)
	assert.Equal(t, c.Leader, int64(0))
	assert.Check(t, strings.HasSuffix(c.Reason, "; this lane leads (in-progress gate 110)"), c.Reason)
}

// Each listing asks for MaxPages (10 when unset) and is bounded by
// ReadTimeout (60 s when unset) on the policy clock.
func TestClaimListingBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pages     int
		timeout   time.Duration
		wantPages int
		wantLeft  time.Duration
	}{
		{name: "defaults", wantPages: DefaultMaxPages, wantLeft: DefaultReadTimeout},
		{name: "given", pages: 3, timeout: 20 * time.Second, wantPages: 3, wantLeft: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &ffChecks{now: ffStart, nextID: 100}

			// No wait and no leader: nothing can loop, so the run's own
			// context carries no deadline that would hide the listing's.
			c, err := ClaimOrWait(context.Background(), f, ClaimRequest{Query: ReuseQuery{HeadSHA: ffHead, TestedRef: ffMerge, AppID: ffApp, MaxPages: tc.pages},
				LaneBound: time.Hour, ReadTimeout: tc.timeout, Clock: f, Sleep: f.sleep})

			assert.NilError(t, err)
			assert.Check(t, c.Staked != nil, c.Reason)
			assert.Check(t, !strings.Contains(c.Reason, "lookup failed"), c.Reason)
			assert.DeepEqual(t, f.pages, []int{tc.wantPages, tc.wantPages})
			assert.Equal(t, len(f.listLeft), 2)
			for _, left := range f.listLeft {
				// The wall-clock half of the bound has run a little.
				assert.Check(t, left <= tc.wantLeft && left > tc.wantLeft-5*time.Second, "%s left; want about %s", left, tc.wantLeft)
			}
		})
	}
}

// Request bounds: 0 is a valid budget, poll and read timeout; a negative read
// timeout is refused with what is expected.
func TestClaimRequestBounds(t *testing.T) {
	f := &ffChecks{now: ffStart, nextID: 100}
	_, err := ffClaim(t, f, ClaimRequest{LaneBound: time.Hour, ReadTimeout: -time.Second})
	assert.Error(t, err, "claim: read timeout -1s: want 0 (default 1m0s) or more")

	_, err = ffClaim(t, f, ClaimRequest{LaneBound: time.Nanosecond})
	assert.NilError(t, err)
}

// A lane stopped while it waits completes its own stake as failed (a
// neutral gate would pass branch protection untested), on a context of its
// own (the run's is already done).
func TestClaimWithdrawalOutlivesTheCancelledRun(t *testing.T) {
	f := &ffChecks{now: ffStart, nextID: 100}
	// Another lane's stake lands just before this one's: it is older, so this lane waits.
	f.beforeCreate = func(f *ffChecks) {
		f.beforeCreate = nil
		f.stake(5, "in_progress", "", f.now)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.onSleep = func(*ffChecks, int) { cancel() }

	_, err := ClaimOrWait(ctx, f, ClaimRequest{Query: ReuseQuery{HeadSHA: ffHead, TestedRef: ffMerge, AppID: ffApp},
		LaneBound: time.Hour, Wait: 10 * time.Minute, Poll: time.Minute, Clock: f, Sleep: f.sleep})

	assert.ErrorIs(t, err, context.Canceled)
	assert.Check(t, strings.HasPrefix(err.Error(), "waiting for another lane's gate: context canceled"), err.Error())
	assert.Check(t, !strings.Contains(err.Error(), "stays in progress"), err.Error())
	assert.Equal(t, len(f.updates), 1)
	assert.Equal(t, f.updates[0].Conclusion, "failure")
	assert.Check(t, strings.Contains(f.updates[0].Summary, "this lane stopped while it waited for another lane's result, before it tested anything; nothing was paid"))
}

// Among several live stakes for the key, the oldest (lowest id) leads.
func TestClaimWaitsForTheOldestLiveStake(t *testing.T) {
	f := &ffChecks{now: ffStart, nextID: 100}
	f.stake(7, "in_progress", "", ffStart)
	oldest := f.stake(3, "in_progress", "", ffStart)
	f.stake(5, "in_progress", "", ffStart)
	f.onSleep = func(f *ffChecks, _ int) { f.complete(oldest.GetID(), "success") }

	c, err := ffClaim(t, f, ClaimRequest{LaneBound: time.Hour, Wait: 10 * time.Minute, Poll: time.Minute})

	assert.NilError(t, err)
	assert.Equal(t, c.Leader, int64(3))
	assert.Check(t, c.Reuse, c.Reason)
	assert.Equal(t, c.CheckID, int64(3))
}

// fakeChecks is a GitHub of check runs on one head, on a fake clock that only
// moves when the protocol sleeps; onSleep lets a test change the world then.
type fakeChecks struct {
	now       time.Time
	runs      []*github.CheckRun
	nextID    int64
	listErr   error
	createErr error
	// createErrOn limits createErr to creates whose external_id starts with it.
	createErrOn string
	// beforeCreate runs right before this lane's stake lands (another lane racing it).
	beforeCreate func(f *fakeChecks)
	onSleep      func(f *fakeChecks, slept int)
	slept        int
	updates      []ghapi.CheckRunInput
	lists        []string // the ref of each listing
}

func (f *fakeChecks) Now() time.Time { return f.now }

func (f *fakeChecks) sleep(ctx context.Context, d time.Duration) error {
	f.now = f.now.Add(d)
	f.slept++
	if f.onSleep != nil {
		f.onSleep(f, f.slept)
	}
	return ctx.Err()
}

func (f *fakeChecks) ListCheckRunsForRef(_ context.Context, ref, _ string, _ int) ([]*github.CheckRun, error) {
	f.lists = append(f.lists, ref)
	var out []*github.CheckRun
	for _, r := range f.runs {
		if r.GetHeadSHA() == ref {
			out = append(out, r)
		}
	}
	return out, f.listErr
}

func (f *fakeChecks) add(status, conclusion, marker string, started time.Time) *github.CheckRun {
	return f.addOn(head, status, conclusion, marker, started)
}

// addOn adds a check run on another head than the lane's.
func (f *fakeChecks) addOn(on, status, conclusion, marker string, started time.Time) *github.CheckRun {
	f.nextID++
	r := gateRun(f.nextID, DefaultCheckName, marker, status, conclusion, ourApp, time.Time{})
	r.HeadSHA = github.String(on)
	r.StartedAt = &github.Timestamp{Time: started}
	if status == "completed" {
		r.CompletedAt = &github.Timestamp{Time: f.now}
	}
	f.runs = append(f.runs, r)
	return r
}

func (f *fakeChecks) CreateCheckRun(_ context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	if f.beforeCreate != nil {
		f.beforeCreate(f)
		f.beforeCreate = nil
	}
	if f.createErr != nil && (f.createErrOn == "" || strings.HasPrefix(in.ExternalID, f.createErrOn)) {
		return nil, f.createErr
	}
	return f.addOn(in.HeadSHA, in.Status, in.Conclusion, in.ExternalID, in.StartedAt), nil
}

func (f *fakeChecks) UpdateCheckRun(_ context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	f.updates = append(f.updates, in)
	for _, r := range f.runs {
		if r.GetID() == id {
			r.Status, r.Conclusion, r.ExternalID = github.String(in.Status), github.String(in.Conclusion), github.String(in.ExternalID)
			return r, nil
		}
	}
	return nil, fmt.Errorf("check run %d: 404", id)
}

// complete finishes check run id with conclusion at the fake now.
func (f *fakeChecks) complete(id int64, conclusion string) {
	for _, r := range f.runs {
		if r.GetID() == id {
			r.Status, r.Conclusion = github.String("completed"), github.String(conclusion)
			r.CompletedAt = &github.Timestamp{Time: f.now}
		}
	}
}

// earlierHead is a head the lane's PR had before (or another PR's head).
var earlierHead = strings.Repeat("e", 40)

// The in-progress protocol, decision by decision: who leads, who follows, who
// waits, and when a waiter reuses or pays.
func TestClaimOrWait(t *testing.T) {
	const bound, wait, poll = 2 * time.Hour, 10 * time.Minute, 30 * time.Second
	stakeMarker := mergeKeyM // what a lane for (merge, tree, lane) stakes: kind paid, v2
	followMarker := FollowPrefix + "1:" + mergeKeyM
	tests := []struct {
		name       string
		setup      func(f *fakeChecks)
		wantReuse  bool
		wantStaked string // the lane's own gate: "" none, "stake" in progress, "follow" a follow gate
		wantFollow bool
		wantLeader int64
		wantSlept  int
		wantIn     string
		// prHead: the lane's head is its PR's head now (FollowEarlierHeads).
		prHead bool
	}{
		{name: "nothing earlier: stake and lead", wantStaked: "stake", wantIn: "this lane leads"},
		{name: "an identical tree re-pushed while the first lane runs: follow the stake on the earlier head, never pay",
			setup:      func(f *fakeChecks) { f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now.Add(-30*time.Minute)) },
			prHead:     true,
			wantStaked: "follow", wantFollow: true, wantLeader: 1, wantIn: "on an earlier head of this PR (" + earlierHead + "): this lane follows it and pays nothing"},
		{name: "a re-push follows a leader on the earlier head that stakes at the same moment",
			setup: func(f *fakeChecks) {
				f.beforeCreate = func(f *fakeChecks) { f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now) }
			},
			prHead:     true,
			wantStaked: "follow", wantFollow: true, wantLeader: 1, wantIn: "this lane follows it"},
		{name: "a merge group's head is no PR's head: wait for the stake on the PR's head instead",
			setup:      func(f *fakeChecks) { f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now) },
			wantStaked: "stake", wantLeader: 1, wantSlept: int(wait / poll), wantIn: "still in progress after this lane waited 10m0s"},
		{name: "an earlier success for the tree: reuse without a stake",
			setup:     func(f *fakeChecks) { f.add("completed", "success", stakeMarker, f.now.Add(-time.Hour)) },
			wantReuse: true, wantIn: "already passed"},
		{name: "an older live stake on this head: follow it at once, never pay",
			setup:      func(f *fakeChecks) { f.add("in_progress", "", stakeMarker, f.now.Add(-5*time.Minute)) },
			wantStaked: "follow", wantFollow: true, wantLeader: 1, wantIn: "this lane follows it and pays nothing"},
		{name: "a follower whose leader passes while it publishes: reuse",
			setup: func(f *fakeChecks) {
				leader := f.add("in_progress", "", stakeMarker, f.now)
				f.beforeCreate = func(f *fakeChecks) { f.complete(leader.GetID(), "success") }
			},
			wantReuse: true, wantStaked: "follow", wantLeader: 1, wantIn: "already passed"},
		{name: "a follower whose leader fails while it publishes: lead under its gate",
			setup: func(f *fakeChecks) {
				leader := f.add("in_progress", "", stakeMarker, f.now)
				f.beforeCreate = func(f *fakeChecks) { f.complete(leader.GetID(), "failure") }
			},
			wantStaked: "stake", wantIn: "this lane leads"},
		{name: "an older live stake on another head that passes: wait, then reuse its result",
			setup: func(f *fakeChecks) {
				leader := f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now.Add(-5*time.Minute))
				f.onSleep = func(f *fakeChecks, n int) {
					if n == 3 {
						f.complete(leader.GetID(), "success")
					}
				}
			},
			wantReuse: true, wantLeader: 1, wantSlept: 3},
		{name: "an older live stake on another head that fails: wait, then stake and pay",
			setup: func(f *fakeChecks) {
				leader := f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now)
				f.onSleep = func(f *fakeChecks, n int) { f.complete(leader.GetID(), "failure") }
			},
			wantStaked: "stake", wantLeader: 1, wantSlept: 1, wantIn: "this lane leads"},
		{name: "a stake older than the lane's bound vanished: do not follow",
			setup:      func(f *fakeChecks) { f.add("in_progress", "", stakeMarker, f.now.Add(-bound)) },
			wantStaked: "stake", wantIn: "this lane leads"},
		{name: "a live stake on another head outlasting the wait budget: stake and pay",
			setup:      func(f *fakeChecks) { f.addOn(earlierHead, "in_progress", "", stakeMarker, f.now) },
			wantStaked: "stake", wantLeader: 1, wantSlept: int(wait / poll), wantIn: "still in progress after this lane waited 10m0s"},
		{name: "a lane that staked a moment earlier on this head leads; this one's stake becomes a follow gate",
			setup: func(f *fakeChecks) {
				f.beforeCreate = func(f *fakeChecks) { f.add("in_progress", "", stakeMarker, f.now) }
			},
			wantStaked: "follow", wantFollow: true, wantLeader: 1, wantIn: "this lane follows it"},
		{name: "a stake for another tree is not followed",
			setup: func(f *fakeChecks) {
				m, _ := FormatMarker(merge2, KindPaid, &TreeKey{Tree: tree2, Lane: lane})
				f.add("in_progress", "", m, f.now)
			},
			wantStaked: "stake", wantIn: "this lane leads"},
		{name: "a queued run is nobody's stake",
			setup:      func(f *fakeChecks) { f.add("queued", "", stakeMarker, f.now) },
			wantStaked: "stake", wantIn: "this lane leads"},
		{name: "another lane's follow gate is nobody's stake",
			setup:      func(f *fakeChecks) { f.add("queued", "", FollowPrefix+"99:"+stakeMarker, f.now) },
			wantStaked: "stake", wantIn: "this lane leads"},
		{name: "the listing fails: stake and pay (fail open)",
			setup:      func(f *fakeChecks) { f.listErr = errors.New("502 Bad Gateway") },
			wantStaked: "stake", wantIn: "gate lookup failed (502 Bad Gateway): running the paid path"},
		{name: "the stake cannot be published: pay without one",
			setup:  func(f *fakeChecks) { f.createErr = errors.New("403 Resource not accessible by integration") },
			wantIn: "the in-progress gate could not be published (403 Resource not accessible by integration)"},
		{name: "the follow gate cannot be published: wait as for another head, then pay",
			setup: func(f *fakeChecks) {
				f.add("in_progress", "", stakeMarker, f.now)
				f.createErr, f.createErrOn = errors.New("502 Bad Gateway"), FollowPrefix
			},
			wantStaked: "stake", wantLeader: 1, wantSlept: int(wait / poll), wantIn: "still in progress after this lane waited 10m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeChecks{now: t0}
			if tc.setup != nil {
				tc.setup(f)
			}
			c, err := ClaimOrWait(context.Background(), f, ClaimRequest{
				Query:     ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT, EarlierHeads: []string{earlierHead}},
				LaneBound: bound, Wait: wait, Poll: poll, Clock: f, Sleep: f.sleep, FollowEarlierHeads: tc.prHead,
			})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(c.Reuse, tc.wantReuse), c.Reason)
			assert.Check(t, is.Equal(c.Following, tc.wantFollow), c.Reason)
			assert.Check(t, is.Equal(c.Leader, tc.wantLeader))
			assert.Check(t, is.Equal(f.slept, tc.wantSlept))
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(c.Reason, tc.wantIn))
			}
			switch tc.wantStaked {
			case "":
				assert.Check(t, c.Staked == nil, c.Reason)
			case "stake":
				assert.Assert(t, c.Staked != nil, c.Reason)
				assert.Check(t, is.Equal(c.Staked.GetStatus(), "in_progress"))
				assert.Check(t, is.Equal(c.Staked.GetExternalID(), stakeMarker), "the stake carries the marker its success will")
			case "follow":
				assert.Assert(t, c.Staked != nil, c.Reason)
				assert.Check(t, is.Equal(c.Staked.GetStatus(), "queued"), "a follow gate is nobody's stake")
				assert.Check(t, is.Equal(c.Staked.GetExternalID(), followMarker), "it names its leader and the marker its result will carry")
			}
			if tc.wantFollow {
				stakes := 0
				for _, r := range f.runs {
					if r.GetStatus() == "in_progress" && r.GetExternalID() == stakeMarker {
						stakes++
					}
				}
				assert.Check(t, is.Equal(stakes, 1), "a follower adds no stake: the leader's is the one")
			}
		})
	}
}

// A lane stopped while it waits withdraws its stake: completed as failed, so
// no gate is left in progress and none passes untested; the error says it stopped.
func TestClaimOrWaitWithdrawsOnCancel(t *testing.T) {
	f := &fakeChecks{now: t0}
	ctx, cancel := context.WithCancel(context.Background())
	f.beforeCreate = func(f *fakeChecks) { f.addOn(earlierHead, "in_progress", "", mergeKeyM, f.now) }
	f.onSleep = func(*fakeChecks, int) { cancel() }
	_, err := ClaimOrWait(ctx, f, ClaimRequest{Query: ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT, EarlierHeads: []string{earlierHead}},
		LaneBound: time.Hour, Wait: time.Hour, Poll: time.Minute, Clock: f, Sleep: f.sleep})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Assert(t, is.Len(f.updates, 1))
	assert.Check(t, is.Equal(f.updates[0].Status, "completed"))
	assert.Check(t, is.Equal(f.updates[0].Conclusion, "failure"))
	assert.Check(t, is.Contains(f.updates[0].ExternalID, ":failed:tree:"))
}

func TestClaimOrWaitRefusesBadRequests(t *testing.T) {
	tests := []struct {
		name    string
		r       ClaimRequest
		wantErr string
	}{
		{name: "no lane bound", r: ClaimRequest{Wait: time.Minute, Poll: time.Second}, wantErr: "lane bound 0s: want the longest a lane can take"},
		{name: "negative wait", r: ClaimRequest{LaneBound: time.Hour, Wait: -1}, wantErr: "wait -1ns: want 0 (never wait) or more"},
		{name: "waiting without a poll", r: ClaimRequest{LaneBound: time.Hour, Wait: time.Minute}, wantErr: "poll 0s: want more than 0 when waiting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ClaimOrWait(context.Background(), &fakeChecks{}, tc.r)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}
