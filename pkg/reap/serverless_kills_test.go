package reap

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
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The tests in this file pin the Serverless sweep's exact rules, found
// untested by mutation testing (issue 21): the deadline's edge, where the
// owner is read from, each run answer, and each listing failure.

const slsAttemptName = "rpg-sls-org-gpu-project-9001-1-0badc0de"

// fakeSls serves fixed endpoints and templates. listErrs fail the n-th
// listing call (ListEndpoints and ListTemplates each count); deleting empties
// the lists unless keep is set.
type fakeSls struct {
	endpoints []runpod.Endpoint
	templates []runpod.Template
	listErrs  map[int]error
	scaleErr  error
	deleteErr error
	keep      bool
	lists     int
	calls     []string
}

func (f *fakeSls) list() error {
	f.lists++
	return f.listErrs[f.lists]
}

func (f *fakeSls) ListEndpoints(context.Context) ([]runpod.Endpoint, error) {
	if err := f.list(); err != nil {
		return nil, err
	}
	return f.endpoints, nil
}

func (f *fakeSls) ListTemplates(context.Context) ([]runpod.Template, error) {
	if err := f.list(); err != nil {
		return nil, err
	}
	return f.templates, nil
}

func (f *fakeSls) ScaleEndpoint(_ context.Context, id string, w runpod.EndpointWorkers) (*runpod.Endpoint, error) {
	f.calls = append(f.calls, fmt.Sprintf("SCALE %s %d-%d", id, w.Min, w.Max))
	return nil, f.scaleErr
}

func (f *fakeSls) DeleteEndpoint(_ context.Context, id string) error {
	f.calls = append(f.calls, "DELETE endpoint "+id)
	if f.deleteErr != nil {
		return f.deleteErr
	}
	if !f.keep {
		f.endpoints = nil
	}
	return nil
}

func (f *fakeSls) DeleteTemplate(_ context.Context, id string) error {
	f.calls = append(f.calls, "DELETE template "+id)
	if !f.keep {
		f.templates = nil
	}
	return nil
}

// slsPair is one attempt's endpoint, created createdAgo before decisionNow,
// and its template, both owned by owner.
func slsPair(owner string, createdAgo time.Duration) ([]runpod.Endpoint, []runpod.Template) {
	env := map[string]string{"RPG_OWNER": owner}
	return []runpod.Endpoint{{ID: "ep1", Name: slsAttemptName, Env: env, CreatedAt: wire.KnownTime(decisionNow.Add(-createdAgo))}},
		[]runpod.Template{{ID: "tpl1", Name: slsAttemptName + "-tpl", Env: env}}
}

func TestServerlessDecisions(t *testing.T) {
	other := ghRun(1, "in_progress")
	other.ID = github.Int64(testRun + 1)
	for _, tc := range []struct {
		name             string
		createdAgo       time.Duration
		deadline, margin time.Duration
		noTemplate       bool
		owner            string
		runs             fakeRuns
		want             string // "decision reason: detail"
		wantLookups      int
	}{
		{name: "exactly at the default deadline + margin (40 min): the run decides", createdAgo: 40 * time.Minute,
			runs: fakeRuns{run: ghRun(1, "in_progress")}, wantLookups: 1,
			want: "keep run-active: run 9001 attempt 1 is in_progress: its own cleanup runs first"},
		{name: "a nanosecond past it: reclaimed without asking", createdAgo: 40*time.Minute + time.Nanosecond,
			want: "reclaim deadline: created 2026-10-07T11:19:59Z, past the cleanup deadline 30m0s + margin 10m0s"},
		{name: "configured deadline and margin", createdAgo: 3*time.Minute + time.Nanosecond, deadline: 2 * time.Minute, margin: time.Minute,
			want: "reclaim deadline: created 2026-10-07T11:56:59Z, past the cleanup deadline 2m0s + margin 1m0s"},
		{name: "template gone: the endpoint's owner counts", createdAgo: time.Minute, noTemplate: true,
			runs: fakeRuns{run: ghRun(1, "completed")}, wantLookups: 1,
			want: "reclaim run-over: run 9001 attempt 1 completed"},
		{name: "another owner", createdAgo: time.Hour, owner: "org/other",
			want: `skip-foreign unproven: the template's RPG_OWNER is "org/other", not org/gpu-project: not provably this repository's, left alone`},
		{name: "another owner on a lone endpoint", createdAgo: time.Hour, owner: "org/other", noTemplate: true,
			want: `skip-foreign unproven: the endpoint's RPG_OWNER is "org/other", not org/gpu-project: not provably this repository's, left alone`},
		{name: "run not found", createdAgo: time.Minute, runs: fakeRuns{runErr: fmt.Errorf("404: %w", ghapi.ErrNotFound)}, wantLookups: 1,
			want: "reclaim run-over: run 9001 was not found"},
		{name: "run unreadable", createdAgo: time.Minute, runs: fakeRuns{runErr: errors.New("502 Bad Gateway")}, wantLookups: 1,
			want: "error lookup-failed: 502 Bad Gateway"},
		{name: "superseded", createdAgo: time.Minute, runs: fakeRuns{run: ghRun(2, "in_progress")}, wantLookups: 1,
			want: "reclaim run-over: attempt 1 superseded by attempt 2"},
		{name: "an answer about another run", createdAgo: time.Minute, runs: fakeRuns{run: other}, wantLookups: 1,
			want: `error lookup-failed: asked for run 9001 of org/gpu-project attempt 1, the answer is run 9002 of "org/gpu-project" with 1 attempts: not trusted`},
		{name: "an answer with fewer attempts", createdAgo: time.Minute, runs: fakeRuns{run: ghRun(0, "in_progress")}, wantLookups: 1,
			want: `error lookup-failed: asked for run 9001 of org/gpu-project attempt 1, the answer is run 9001 of "org/gpu-project" with 0 attempts: not trusted`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := tc.owner
			if owner == "" {
				owner = testRepo
			}
			api := &fakeSls{}
			api.endpoints, api.templates = slsPair(owner, tc.createdAgo)
			if tc.noTemplate {
				api.templates = nil
			}
			s := &ServerlessSweeper{API: api, GitHub: &tc.runs, Clock: fixedClock(decisionNow), Deadline: tc.deadline, Margin: tc.margin}

			recs, _ := s.Sweep(context.Background(), testRepo, false)

			assert.Assert(t, is.Len(recs, 1))
			r := recs[0]
			assert.Check(t, is.Equal(fmt.Sprintf("%s %s: %s", r.Decision, r.Reason, r.Detail), tc.want))
			assert.Check(t, is.Len(tc.runs.calls, tc.wantLookups))
			assert.Check(t, is.Len(api.calls, 0), "a dry run deletes nothing")
		})
	}
}

// Executing, the endpoint is scaled to zero and deleted before its template,
// a failed scale only logs, and a failed listing fails the sweep visibly.
func TestServerlessReclaimAndListingFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		api       fakeSls
		wantCalls []string
		wantErr   string
		wantDel   string // DeleteError
		wantLog   string
	}{
		{name: "reclaimed and confirmed",
			wantCalls: []string{"SCALE ep1 0-0", "DELETE endpoint ep1", "DELETE template tpl1"}},
		{name: "scale fails: deleted anyway", api: fakeSls{scaleErr: errors.New("500")},
			wantCalls: []string{"SCALE ep1 0-0", "DELETE endpoint ep1", "DELETE template tpl1"},
			wantLog:   "serverless endpoint ep1: scale to 0: 500 (deleting anyway)"},
		{name: "still listed afterwards", api: fakeSls{keep: true},
			wantCalls: []string{"SCALE ep1 0-0", "DELETE endpoint ep1", "DELETE template tpl1"},
			wantErr:   "reap: serverless sweep incomplete: " + slsAttemptName + " undecided or not confirmed deleted; the next sweep retries",
			wantLog:   "serverless attempt " + slsAttemptName + ": still listed after deletion; the next sweep retries"},
		{name: "endpoint listing fails", api: fakeSls{listErrs: map[int]error{1: errors.New("503")}},
			wantErr: "reap: list serverless endpoints and templates (nothing was decided): 503"},
		{name: "template listing fails", api: fakeSls{listErrs: map[int]error{2: errors.New("503")}},
			wantErr: "reap: list serverless endpoints and templates (nothing was decided): 503"},
		{name: "confirmation listing fails", api: fakeSls{listErrs: map[int]error{3: errors.New("503")}},
			wantCalls: []string{"SCALE ep1 0-0", "DELETE endpoint ep1", "DELETE template tpl1"},
			wantErr:   "reap: serverless sweep incomplete: " + slsAttemptName + " undecided or not confirmed deleted; the next sweep retries",
			wantDel:   "confirmation listing failed: 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &tc.api
			api.endpoints, api.templates = slsPair(testRepo, time.Hour)
			var logs []string
			s := &ServerlessSweeper{API: api, GitHub: &fakeRuns{}, Clock: fixedClock(decisionNow),
				Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }}

			recs, err := s.Sweep(context.Background(), testRepo, true)

			assert.DeepEqual(t, api.calls, tc.wantCalls)
			if tc.wantErr == "" {
				assert.NilError(t, err)
			} else {
				assert.Error(t, err, tc.wantErr)
			}
			if len(recs) > 0 {
				assert.Check(t, is.Equal(recs[0].DeleteError, tc.wantDel))
				assert.Check(t, is.Equal(recs[0].Confirmed, tc.wantErr == ""))
			}
			if tc.wantLog != "" {
				assert.Check(t, is.Contains(strings.Join(logs, "\n"), tc.wantLog))
			}
		})
	}
}
