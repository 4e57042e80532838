package gatecheck

// Whether a stake's lane is alive. A stake (an in-progress gate) names the
// workflow run that published it in its details URL (.../actions/runs/<id>
// /attempts/<n>). Its lane is alive while that run attempt is not completed:
// however long its tiers, its host-fault re-run or its wait for a free
// slot take, a live lane is followed and never paid for twice, and
// a run that completed without completing its gate is a lane that vanished,
// at once. The run is read through the API, each read bounded; when it
// cannot be read (no URL, another form of URL, a failed or unusable answer)
// the rule fails safe: the stake is alive until the lane's generous bound
// (LaneBound) from its start.

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// SlotWaitMargin is what LaneBound allows for each provisioning's wait for a
// free slot under max_concurrent_pods (provision.SlotWaitLimit): lanes create
// pods at the same time, and only that maximum makes one wait for others.
const SlotWaitMargin = time.Hour

// LaneBound is the longest a lane can take from its stake to its gate when
// its workflow run cannot be read: the fallback of the run-based rule, so it
// is generous. A first provisioning of every tier in turn (tiers × attempts
// × startup budget, after its wait for a free slot), the GPU jobs within the
// pods' lifetime, then the same again for a host-fault re-run, and 15 minutes
// for the jobs around them.
func LaneBound(tiers, maxAttempts int, startupTimeout, lifetime time.Duration) time.Duration {
	provisioning := time.Duration(max(tiers, 1)*max(maxAttempts, 1)) * startupTimeout
	const rerun = 1 // a lane re-runs its lost pods once
	return (1+rerun)*(SlotWaitMargin+provisioning+lifetime) + 15*time.Minute
}

// RunReader reads a workflow run of the repository. *ghapi.Client has it.
type RunReader interface {
	GetWorkflowRun(ctx context.Context, runID int64) (*github.WorkflowRun, error)
}

// StakeRun is the workflow run a stake's details URL names and its attempt
// (0 when the URL names none); ok is false for any other URL.
func StakeRun(detailsURL string) (runID int64, attempt int, ok bool) {
	u, err := url.Parse(detailsURL)
	if err != nil || u.Path == "" {
		return 0, 0, false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	at := -1
	for i := len(parts) - 2; i >= 1; i-- {
		if parts[i] == "runs" && parts[i-1] == "actions" {
			at = i
			break
		}
	}
	if at < 0 {
		return 0, 0, false
	}
	id, err := strconv.ParseInt(parts[at+1], 10, 64)
	if err != nil || id <= 0 {
		return 0, 0, false
	}
	switch rest := parts[at+2:]; {
	case len(rest) == 0:
		return id, 0, true
	case len(rest) == 2 && rest[0] == "attempts":
		n, err := strconv.Atoi(rest[1])
		if err != nil || n <= 0 {
			return 0, 0, false
		}
		return id, n, true
	}
	return 0, 0, false
}

// maxRunReads bounds the run reads of one listing: the oldest stakes are
// read first and the first live one ends the search, so one read is usual.
const maxRunReads = 4

// stakeLife decides whether stakes' lanes are alive, one listing at a time.
type stakeLife struct {
	runs  RunReader // nil: the bound alone decides
	bound time.Duration
	clk   clock.Clock
	limit time.Duration // each read's deadline
	logf  func(string, ...any)
	// dead are stakes whose run attempt completed: they stay dead.
	dead  map[int64]string
	reads int // this listing's
}

// alive reports whether stake r's lane is alive at now (see the file comment).
func (l *stakeLife) alive(ctx context.Context, r *github.CheckRun, now time.Time) bool {
	if _, gone := l.dead[r.GetID()]; gone {
		return false
	}
	young := now.Sub(r.GetStartedAt().Time) < l.bound
	id, attempt, ok := StakeRun(r.GetDetailsURL())
	if l.runs == nil || !ok || l.reads >= maxRunReads {
		return young
	}
	l.reads++
	rctx, cancel := reqpolicy.Bound(ctx, l.clk, l.limit)
	run, err := l.runs.GetWorkflowRun(rctx, id)
	cancel()
	switch {
	case err != nil || run == nil || run.GetID() != id || run.GetStatus() == "" || run.GetRunAttempt() <= 0 || run.GetRunAttempt() < attempt:
		l.logf("in-progress gate %d: its workflow run %d could not be read (%v): alive while younger than the lane's bound %s (%t)",
			r.GetID(), id, errOrUnusable(err), l.bound, young)
		return young
	case attempt > 0 && run.GetRunAttempt() > attempt:
		l.markDead(r, "its run attempt %d was followed by attempt %d", attempt, run.GetRunAttempt())
		return false
	case run.GetStatus() == "completed":
		l.markDead(r, "its workflow run %d completed (%s) without completing it", id, run.GetConclusion())
		return false
	}
	return true
}

func (l *stakeLife) markDead(r *github.CheckRun, format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	l.dead[r.GetID()] = why
	l.logf("in-progress gate %d belongs to a lane that vanished: %s", r.GetID(), why)
}

func errOrUnusable(err error) any {
	if err != nil {
		return err
	}
	return "an answer without the run's id, attempt and status"
}
