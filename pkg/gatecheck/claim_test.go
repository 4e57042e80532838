package gatecheck

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
)

// fakeChecks is a GitHub of check runs on one head, on a fake clock that only
// moves when the protocol sleeps; onSleep lets a test change the world then.
type fakeChecks struct {
	now       time.Time
	runs      []*github.CheckRun
	nextID    int64
	listErr   error
	createErr error
	// beforeCreate runs right before this lane's stake lands (another lane racing it).
	beforeCreate func(f *fakeChecks)
	onSleep      func(f *fakeChecks, slept int)
	slept        int
	updates      []ghapi.CheckRunInput
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

func (f *fakeChecks) ListCheckRunsForRef(context.Context, string, string, int) ([]*github.CheckRun, error) {
	return f.runs, f.listErr
}

func (f *fakeChecks) add(status, conclusion, marker string, started time.Time) *github.CheckRun {
	f.nextID++
	r := gateRun(f.nextID, DefaultCheckName, marker, status, conclusion, ourApp, time.Time{})
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
	if f.createErr != nil {
		return nil, f.createErr
	}
	return f.add(in.Status, in.Conclusion, in.ExternalID, in.StartedAt), nil
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

// The in-progress protocol, decision by decision: who leads, who waits, and
// when a waiter reuses or pays.
func TestClaimOrWait(t *testing.T) {
	const bound, wait, poll = 2 * time.Hour, 10 * time.Minute, 30 * time.Second
	stakeMarker := mergeKeyM // what a lane for (merge, tree, lane) stakes: kind paid, v2
	tests := []struct {
		name       string
		setup      func(f *fakeChecks)
		wantReuse  bool
		wantStaked bool
		wantLeader int64
		wantSlept  int
		wantIn     string
	}{
		{name: "nothing earlier: stake and lead", wantStaked: true, wantIn: "this lane leads"},
		{name: "an earlier success for the tree: reuse without a stake",
			setup:     func(f *fakeChecks) { f.add("completed", "success", stakeMarker, f.now.Add(-time.Hour)) },
			wantReuse: true, wantIn: "already passed"},
		{name: "an older live stake that passes: wait, then reuse its result",
			setup: func(f *fakeChecks) {
				leader := f.add("in_progress", "", stakeMarker, f.now.Add(-5*time.Minute))
				f.onSleep = func(f *fakeChecks, n int) {
					if n == 3 {
						f.complete(leader.GetID(), "success")
					}
				}
			},
			wantReuse: true, wantLeader: 1, wantSlept: 3},
		{name: "an older live stake that fails: wait, then stake and pay",
			setup: func(f *fakeChecks) {
				leader := f.add("in_progress", "", stakeMarker, f.now)
				f.onSleep = func(f *fakeChecks, n int) { f.complete(leader.GetID(), "failure") }
			},
			wantStaked: true, wantLeader: 1, wantSlept: 1, wantIn: "this lane leads"},
		{name: "a stake older than the lane's bound vanished: do not wait",
			setup:      func(f *fakeChecks) { f.add("in_progress", "", stakeMarker, f.now.Add(-bound)) },
			wantStaked: true, wantIn: "this lane leads"},
		{name: "a live stake outlasting the wait budget: stake and pay",
			setup:      func(f *fakeChecks) { f.add("in_progress", "", stakeMarker, f.now) },
			wantStaked: true, wantLeader: 1, wantSlept: int(wait / poll), wantIn: "still in progress after this lane waited 10m0s"},
		{name: "a lane that staked a moment earlier leads; this one waits and reuses",
			setup: func(f *fakeChecks) {
				var other *github.CheckRun
				f.beforeCreate = func(f *fakeChecks) { other = f.add("in_progress", "", stakeMarker, f.now) }
				f.onSleep = func(f *fakeChecks, n int) { f.complete(other.GetID(), "success") }
			},
			wantReuse: true, wantStaked: true, wantLeader: 1, wantSlept: 1},
		{name: "a stake for another tree is not waited for",
			setup: func(f *fakeChecks) {
				m, _ := FormatMarker(merge2, KindPaid, &TreeKey{Tree: tree2, Lane: lane})
				f.add("in_progress", "", m, f.now)
			},
			wantStaked: true, wantIn: "this lane leads"},
		{name: "a queued run is nobody's stake",
			setup:      func(f *fakeChecks) { f.add("queued", "", stakeMarker, f.now) },
			wantStaked: true, wantIn: "this lane leads"},
		{name: "the listing fails: stake and pay (fail open)",
			setup:      func(f *fakeChecks) { f.listErr = errors.New("502 Bad Gateway") },
			wantStaked: true, wantIn: "gate lookup failed (502 Bad Gateway): running the paid path"},
		{name: "the stake cannot be published: pay without one",
			setup:  func(f *fakeChecks) { f.createErr = errors.New("403 Resource not accessible by integration") },
			wantIn: "the in-progress gate could not be published (403 Resource not accessible by integration)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeChecks{now: t0}
			if tc.setup != nil {
				tc.setup(f)
			}
			c, err := ClaimOrWait(context.Background(), f, ClaimRequest{
				Query:     ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT},
				LaneBound: bound, Wait: wait, Poll: poll, Clock: f, Sleep: f.sleep,
			})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(c.Reuse, tc.wantReuse), c.Reason)
			assert.Check(t, is.Equal(c.Staked != nil, tc.wantStaked), c.Reason)
			assert.Check(t, is.Equal(c.Leader, tc.wantLeader))
			assert.Check(t, is.Equal(f.slept, tc.wantSlept))
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(c.Reason, tc.wantIn))
			}
			if c.Staked != nil {
				assert.Check(t, is.Equal(c.Staked.GetStatus(), "in_progress"))
				assert.Check(t, is.Equal(c.Staked.GetExternalID(), stakeMarker), "the stake carries the marker its success will")
			}
		})
	}
}

// A lane stopped while it waits withdraws its stake: completed as skipped, so
// no gate is left in progress, and the error says it stopped.
func TestClaimOrWaitWithdrawsOnCancel(t *testing.T) {
	f := &fakeChecks{now: t0}
	ctx, cancel := context.WithCancel(context.Background())
	f.beforeCreate = func(f *fakeChecks) { f.add("in_progress", "", mergeKeyM, f.now) }
	f.onSleep = func(*fakeChecks, int) { cancel() }
	_, err := ClaimOrWait(ctx, f, ClaimRequest{Query: ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT},
		LaneBound: time.Hour, Wait: time.Hour, Poll: time.Minute, Clock: f, Sleep: f.sleep})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Assert(t, is.Len(f.updates, 1))
	assert.Check(t, is.Equal(f.updates[0].Status, "completed"))
	assert.Check(t, is.Equal(f.updates[0].Conclusion, "neutral"))
	assert.Check(t, is.Contains(f.updates[0].ExternalID, ":skipped:tree:"))
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
