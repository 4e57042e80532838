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
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/wire"
)

// slsWorld is a simulated cloud with Serverless on a virtual clock, the
// clients the reap action builds, and a lane to create attempts as it would.
type slsWorld struct {
	cloud   *cloud.Cloud
	clock   *simclock.Virtual
	rp      *runpod.Client
	policy  *reqpolicy.Policy
	sweeper *ServerlessSweeper
	logs    strings.Builder
}

func newSlsWorld(t *testing.T, faults runpodsim.ServerlessFaults) *slsWorld {
	t.Helper()
	clock := simclock.NewVirtual(time.Now().UTC().Truncate(time.Second))
	c, err := cloud.Start(cloud.Options{Clock: clock, RunPodOptions: []runpodsim.Option{
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Faults: faults})}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	w := &slsWorld{cloud: c, clock: clock}
	w.policy = reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
	w.rp = runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(w.policy))
	ghPolicy := reqpolicy.New(reqpolicy.WithSleeper(func(context.Context, time.Duration) error { return nil }))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken,
		Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	w.sweeper = &ServerlessSweeper{API: w.rp, GitHub: gh, Clock: clock, Logf: func(f string, a ...any) { fmt.Fprintf(&w.logs, f+"\n", a...) }}
	return w
}

func (w *slsWorld) addRun(t *testing.T) int64 {
	t.Helper()
	id, err := w.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/serverless.yml",
		Event: "pull_request", Status: "in_progress"})
	assert.NilError(t, err)
	return id
}

// setup creates an attempt's template and endpoint with the lane's requests,
// as an attempt whose runner was lost leaves them (the lane itself runs one
// attempt of a repository at a time, so it is not used to make several).
func (w *slsWorld) setup(t *testing.T, repository string, runID int64, attempt int) string {
	t.Helper()
	name, err := ownership.ServerlessAttemptName(repository, runID, attempt)
	assert.NilError(t, err)
	env, err := serverless.TemplateEnv("https://example.com/serverless-worker", strings.Repeat("a", 64), repository, name)
	assert.NilError(t, err)
	s := serverless.DefaultSettings()
	tpl, err := w.rp.CreateTemplate(context.Background(), s.TemplateRequest(name+"-tpl", serverless.BootstrapArgs, env))
	assert.NilError(t, err)
	_, err = w.rp.CreateEndpoint(context.Background(), s.EndpointRequest(name, tpl.ID, nil))
	assert.NilError(t, err)
	return name
}

// live lists the names of templates and endpoints not deleted.
func (w *slsWorld) live() map[string]bool {
	out := map[string]bool{}
	for _, r := range w.cloud.RunPod.ServerlessResources() {
		if !r.Deleted {
			out[r.Kind+" "+r.Name] = true
		}
	}
	return out
}

func TestServerlessSweep(t *testing.T) {
	tests := []struct {
		name    string
		faults  runpodsim.ServerlessFaults
		execute bool
		// arrange creates the attempts and moves the world; it returns the
		// names whose resources must survive and those that must be gone.
		arrange      func(t *testing.T, w *slsWorld) (keep, gone []string)
		wantDecision map[string]string // attempt → "decision reason"
		wantErr      string
	}{
		{name: "a running attempt is left to its own cleanup", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				a := w.setup(t, cloud.Repository, w.addRun(t), 1)
				w.clock.Advance(20 * time.Minute)
				return []string{a}, nil
			}, wantDecision: map[string]string{"0": "keep run-active"}},
		{name: "a completed run's attempt is reclaimed", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				a := w.setup(t, cloud.Repository, run, 1)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "failure"))
				return nil, []string{a}
			}, wantDecision: map[string]string{"0": "reclaim run-over"}},
		{name: "a superseded attempt is reclaimed", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				a := w.setup(t, cloud.Repository, run, 1)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "failure"))
				_, err := w.cloud.GitHub.RerunWorkflowRun(cloud.Repository, run, nil)
				assert.NilError(t, err)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "in_progress", ""))
				b := w.setup(t, cloud.Repository, run, 2)
				return []string{b}, []string{a}
			}, wantDecision: map[string]string{"0": "reclaim run-over", "1": "keep run-active"}},
		{name: "past the deadline and margin, a running attempt is reclaimed without asking GitHub", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				a := w.setup(t, cloud.Repository, w.addRun(t), 1)
				w.clock.Advance(40*time.Minute + time.Second)
				w.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502})
				return nil, []string{a}
			}, wantDecision: map[string]string{"0": "reclaim deadline"}},
		{name: "at the deadline, before the margin, it is not", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				a := w.setup(t, cloud.Repository, w.addRun(t), 1)
				w.clock.Advance(39 * time.Minute)
				return []string{a}, nil
			}, wantDecision: map[string]string{"0": "keep run-active"}},
		{name: "another repository's attempt is not even considered", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				a := w.setup(t, "org/other-project", 77, 1)
				w.clock.Advance(2 * time.Hour)
				return []string{a}, nil
			}, wantDecision: map[string]string{}},
		{name: "our name with another owner is left alone", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				name, err := ownership.ServerlessAttemptName(cloud.Repository, run, 1)
				assert.NilError(t, err)
				_, err = w.rp.CreateTemplate(context.Background(), serverless.DefaultSettings().TemplateRequest(name+"-tpl", "", map[string]string{"RPG_OWNER": "someone/else"}))
				assert.NilError(t, err)
				w.clock.Advance(2 * time.Hour)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "success"))
				return []string{name}, nil
			}, wantDecision: map[string]string{"0": "skip-foreign unproven"}},
		{name: "a lone template of a completed run is reclaimed", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				a := w.setup(t, cloud.Repository, run, 1)
				for _, r := range w.cloud.RunPod.ServerlessResources() {
					if r.Kind == "endpoint" {
						// The sim deletes an endpoint's template with it; recreate the lone template.
						assert.NilError(t, w.rp.DeleteEndpoint(context.Background(), r.ID))
					}
				}
				env, _ := serverless.TemplateEnv("https://example.com/w", strings.Repeat("a", 64), cloud.Repository, a)
				_, err := w.rp.CreateTemplate(context.Background(), serverless.DefaultSettings().TemplateRequest(a+"-tpl", "", env))
				assert.NilError(t, err)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "success"))
				return nil, []string{a}
			}, wantDecision: map[string]string{"0": "reclaim run-over"}},
		{name: "a dry run decides and deletes nothing",
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				a := w.setup(t, cloud.Repository, run, 1)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "failure"))
				return []string{a}, nil
			}, wantDecision: map[string]string{"0": "reclaim run-over"}},
		{name: "an unreadable run leaves the attempt and fails the sweep", execute: true,
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				a := w.setup(t, cloud.Repository, w.addRun(t), 1)
				w.cloud.GitHub.AddFault(githubsim.Fault{Kind: githubsim.FaultServerError, Status: 502})
				return []string{a}, nil
			}, wantDecision: map[string]string{"0": "error lookup-failed"}, wantErr: "undecided or not confirmed deleted"},
		{name: "an unconfirmed deletion fails the sweep", execute: true,
			faults: runpodsim.ServerlessFaults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100}},
			arrange: func(t *testing.T, w *slsWorld) ([]string, []string) {
				run := w.addRun(t)
				a := w.setup(t, cloud.Repository, run, 1)
				assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "failure"))
				return []string{a}, nil
			}, wantDecision: map[string]string{"0": "reclaim run-over"}, wantErr: "undecided or not confirmed deleted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newSlsWorld(t, tc.faults)
			keep, gone := tc.arrange(t, w)
			recs, err := w.sweeper.Sweep(context.Background(), cloud.Repository, tc.execute)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.ErrorIs(t, err, ErrServerlessIncomplete)
			} else {
				assert.NilError(t, err, w.logs.String())
			}
			got := map[string]string{}
			for i, r := range recs {
				got[fmt.Sprint(i)] = string(r.Decision) + " " + string(r.Reason)
				if r.Decision == DecisionReclaim && tc.execute && tc.wantErr == "" {
					assert.Check(t, r.Confirmed, "attempt %s not confirmed", r.Attempt)
				}
			}
			assert.DeepEqual(t, got, tc.wantDecision)
			live := w.live()
			for _, a := range keep {
				assert.Check(t, live["template "+a+"-tpl"], "template of %s was deleted:\n%s", a, w.logs.String())
			}
			for _, a := range gone {
				assert.Check(t, !live["template "+a+"-tpl"] && !live["endpoint "+a], "%s left behind:\n%s", a, w.logs.String())
			}
			assert.Check(t, !strings.Contains(w.logs.String(), "RPG_BOOTSTRAP_B64"), "no environment in the log")
		})
	}
}

// TestServerlessSweepScalesDownThenDeletes checks the order of the calls: the
// endpoint is scaled to zero, deleted, then its template deleted, then fresh
// listings confirm both gone.
func TestServerlessSweepScalesDownThenDeletes(t *testing.T) {
	w := newSlsWorld(t, runpodsim.ServerlessFaults{})
	run := w.addRun(t)
	w.setup(t, cloud.Repository, run, 1)
	assert.NilError(t, w.cloud.GitHub.SetRunStatus(cloud.Repository, run, "completed", "success"))
	before := len(w.cloud.RunPod.Requests())
	recs, err := w.sweeper.Sweep(context.Background(), cloud.Repository, true)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(recs, 1))
	var calls []string
	for _, r := range w.cloud.RunPod.Requests()[before:] {
		p := r.Path
		for _, id := range []string{recs[0].EndpointID, recs[0].TemplateID} {
			p = strings.ReplaceAll(p, id, "{id}")
		}
		calls = append(calls, r.Method+" "+p)
	}
	assert.DeepEqual(t, calls, []string{
		"GET /v2/serverless", "GET /v2/templates",
		"PATCH /v2/serverless/{id}", "DELETE /v2/serverless/{id}", "DELETE /v2/templates/{id}",
		"GET /v2/serverless", "GET /v2/templates",
	})
}

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

// TestServerlessDecisions pins the Serverless sweep's exact rules: the
// deadline's edge, where the owner is read from, each run answer.
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

// An executed Serverless sweep that reclaims nothing lists once: no
// confirmation listing without deletions to confirm.
func TestServerlessSweepWithoutReclaimListsOnce(t *testing.T) {
	api := &fakeSls{}
	api.endpoints, api.templates = slsPair(testRepo, time.Minute)
	s := &ServerlessSweeper{API: api, GitHub: &fakeRuns{run: ghRun(1, "in_progress")}, Clock: fixedClock(decisionNow)}

	recs, err := s.Sweep(context.Background(), testRepo, true)

	assert.NilError(t, err)
	assert.Check(t, is.Equal(recs[0].Reason, SlsReasonRunActive))
	assert.Check(t, is.Equal(api.lists, 2), "one ListEndpoints and one ListTemplates")
	assert.Check(t, is.Len(api.calls, 0))
}
