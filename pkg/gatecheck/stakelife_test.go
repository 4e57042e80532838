package gatecheck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestStakeRun(t *testing.T) {
	tests := []struct {
		url         string
		wantID      int64
		wantAttempt int
		wantOK      bool
	}{
		{url: "https://github.com/o/r/actions/runs/123/attempts/2", wantID: 123, wantAttempt: 2, wantOK: true},
		{url: "https://ghe.example/o/r/actions/runs/123", wantID: 123, wantOK: true},
		{url: "https://github.com/o/r/actions/runs/123/attempts/0"},
		{url: "https://github.com/o/r/actions/runs/123/job/9"},
		{url: "https://github.com/o/r/actions/runs/x/attempts/1"},
		{url: "https://github.com/o/r/runs/7"},
		{url: ""},
		{url: "::"},
	}
	for _, tc := range tests {
		id, attempt, ok := StakeRun(tc.url)
		assert.Check(t, is.Equal(ok, tc.wantOK), tc.url)
		assert.Check(t, is.Equal(id, tc.wantID), tc.url)
		assert.Check(t, is.Equal(attempt, tc.wantAttempt), tc.url)
	}
}

// The fallback bound counts every tier's provisioning in turn and the
// host-fault re-run, each after a wait for a free slot.
func TestLaneBoundCountsTiersAndTheRerun(t *testing.T) {
	const startup, lifetime = 7 * time.Minute, time.Hour
	one := LaneBound(1, 6, startup, lifetime)
	assert.Check(t, is.Equal(one, 2*(SlotWaitMargin+6*startup+lifetime)+15*time.Minute))
	assert.Check(t, is.Equal(LaneBound(4, 6, startup, lifetime)-one, 2*3*6*startup), "three more tiers, in the first provisioning and the re-run's")
	old := 6*startup + lifetime + 15*time.Minute // the bound that ignored tiers, the re-run and the queue
	assert.Check(t, one >= 2*old)
	assert.Check(t, is.Equal(LaneBound(0, 0, startup, lifetime), LaneBound(1, 1, startup, lifetime)), "at least one tier and one attempt")
}

// fakeRuns answers GetWorkflowRun from a table; an id without a row fails.
type fakeRuns struct {
	runs  map[int64]*github.WorkflowRun
	reads int
}

func (f *fakeRuns) GetWorkflowRun(ctx context.Context, id int64) (*github.WorkflowRun, error) {
	f.reads++
	if r, ok := f.runs[id]; ok {
		return r, ctx.Err()
	}
	return nil, errors.New("403 Resource not accessible by integration")
}

func workflowRun(id int64, attempt int, status, conclusion string) *github.WorkflowRun {
	r := &github.WorkflowRun{ID: github.Int64(id), RunAttempt: github.Int(attempt), Status: github.String(status)}
	if conclusion != "" {
		r.Conclusion = github.String(conclusion)
	}
	return r
}

// A stake's lane is alive while its workflow run attempt is not completed,
// whatever its age; a run that completed without completing the gate is a
// lane that vanished at once; a run that cannot be read is alive until the
// generous bound.
func TestClaimFollowsAStakeWhileItsRunIsInProgress(t *testing.T) {
	const startup, lifetime, attempts = 7 * time.Minute, time.Hour, 6
	old := attempts*startup + lifetime + 15*time.Minute // the bound before runs were read
	bound := LaneBound(2, attempts, startup, lifetime)
	const url = "https://github.com/o/r/actions/runs/501/attempts/1"
	tests := []struct {
		name       string
		age        time.Duration
		url        string
		run        *github.WorkflowRun // nil: unreadable
		wantFollow bool
		wantIn     string
	}{
		{name: "older than the old bound, its run in progress: followed, not paid", age: old + time.Hour, url: url,
			run: workflowRun(501, 1, "in_progress", ""), wantFollow: true, wantIn: "this lane follows it and pays nothing"},
		{name: "older than the generous bound, its run still waiting for a slot: followed", age: bound + time.Hour, url: url,
			run: workflowRun(501, 1, "queued", ""), wantFollow: true},
		{name: "young, its run completed without completing the gate: dead, this lane leads", age: 10 * time.Minute, url: url,
			run: workflowRun(501, 1, "completed", "failure"), wantIn: "this lane leads"},
		{name: "its run attempt was followed by another: dead", age: 10 * time.Minute, url: url,
			run: workflowRun(501, 2, "in_progress", ""), wantIn: "this lane leads"},
		{name: "unreadable run, younger than the generous bound: followed", age: old + time.Hour, url: url, wantFollow: true},
		{name: "unreadable run, older than the generous bound: dead", age: bound, url: url, wantIn: "this lane leads"},
		{name: "no run in its URL, younger than the bound: followed", age: old + time.Hour, url: "https://github.com/o/r/runs/9", wantFollow: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeChecks{now: t0}
			stake := f.add("in_progress", "", mergeKeyM, f.now.Add(-tc.age))
			stake.DetailsURL = github.String(tc.url)
			runs := &fakeRuns{runs: map[int64]*github.WorkflowRun{}}
			if tc.run != nil {
				runs.runs[501] = tc.run
			}
			var logs []string
			c, err := ClaimOrWait(context.Background(), f, ClaimRequest{
				Query:     ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT},
				LaneBound: bound, Runs: runs, Wait: 10 * time.Minute, Poll: 30 * time.Second, Clock: f, Sleep: f.sleep,
				Logf: func(format string, args ...any) { logs = append(logs, format) },
			})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(c.Following, tc.wantFollow), c.Reason)
			if tc.wantFollow {
				assert.Check(t, is.Equal(c.Leader, stake.GetID()))
			} else {
				assert.Check(t, c.Staked != nil && c.Staked.GetStatus() == "in_progress", "this lane pays under its own stake: %s", c.Reason)
			}
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(c.Reason, tc.wantIn))
			}
			assert.Check(t, runs.reads <= 3*maxRunReads, "reads bounded: %d", runs.reads)
		})
	}
}
