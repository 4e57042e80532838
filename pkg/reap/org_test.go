package reap

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

var orgNow = time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)

// orgPod is a pod started `age` before orgNow whose tags name repo and run.
func orgPod(id, repo string, run int64, age time.Duration) runpod.Pod {
	tags := ownership.Tags{Repository: repo, Workflow: testWorkflow, RunID: run, Attempt: 1, Candidate: 1}
	started := wire.KnownTime(orgNow.Add(-age))
	return runpod.Pod{ID: id, Name: tags.PodName(), Env: tags.Env(), Status: runpod.PodRunning, CreatedAt: started, StartedAt: started}
}

// orgRuns is one repository's RunAPI: run id → status ("" → 404), or a failure for every call.
type orgRuns struct {
	repo string
	runs map[int64]string
	fail error
}

func (f *orgRuns) GetWorkflowRun(_ context.Context, id int64) (*github.WorkflowRun, error) {
	status, ok := f.runs[id]
	switch {
	case f.fail != nil:
		return nil, f.fail
	case !ok:
		return nil, fmt.Errorf("run %d: %w", id, ghapi.ErrNotFound)
	}
	return &github.WorkflowRun{ID: github.Int64(id), RunAttempt: github.Int(1), Status: github.String(status),
		Path:       github.String(testWorkflow),
		Repository: &github.Repository{FullName: github.String(f.repo)},
		UpdatedAt:  &github.Timestamp{Time: orgNow.Add(-time.Hour)}}, nil
}

func (f *orgRuns) ArtifactsWithPrefix(context.Context, string, time.Time) ([]*github.Artifact, error) {
	return nil, nil
}

func (f *orgRuns) CancelWorkflowRun(context.Context, int64) error { return nil }

// fakeOrg connects to the repositories it knows; others are not visible;
// broken ones fail the lookup.
type fakeOrg struct {
	repos     map[string]*orgRuns
	broken    map[string]error
	connected []string
}

func (f *fakeOrg) Connect(_ context.Context, repo string) (RunAPI, error) {
	f.connected = append(f.connected, repo)
	if err := f.broken[repo]; err != nil {
		return nil, err
	}
	api, ok := f.repos[strings.ToLower(repo)]
	if !ok {
		return nil, fmt.Errorf("%s: %w", repo, ErrAppCannotSee)
	}
	return api, nil
}

type recordingDeleter struct{ deleted []string }

func (d *recordingDeleter) Delete(_ context.Context, id string) (time.Time, error) {
	d.deleted = append(d.deleted, id)
	return orgNow, nil
}

func orgDecisions(rec *OrgRecord) map[string]string {
	out := map[string]string{}
	for _, rr := range rec.Repositories {
		for _, p := range rr.Pods {
			out[p.PodID] = rr.Repository + " " + string(p.Decision) + " " + string(p.Reason)
		}
	}
	for _, p := range rec.Outside {
		out[p.PodID] = "outside " + string(p.Decision) + " " + string(p.Reason)
	}
	return out
}

func TestOrgSweepDecidesPerRepository(t *testing.T) {
	pods := []runpod.Pod{
		orgPod("done", "acme/alpha", 1, 30*time.Minute),
		orgPod("active", "acme/beta", 2, 30*time.Minute),
		orgPod("hidden", "acme/gamma", 3, 30*time.Minute),
		orgPod("hidden-old", "acme/gamma", 3, 3*time.Hour), // past the backstop, but the App cannot see its repository
		orgPod("other-org", "rival/alpha", 1, 3*time.Hour),
		orgPod("unlisted", "acme/delta", 4, 3*time.Hour),
		orgPod("broken", "acme/epsilon", 5, 30*time.Minute),
		orgPod("lookup-5xx", "acme/zeta", 6, 30*time.Minute),
		orgPod("case", "ACME/Alpha", 7, 3*time.Hour),
		{ID: "notebook", Name: "my-notebook", Status: runpod.PodRunning},
	}
	org := &fakeOrg{
		repos: map[string]*orgRuns{
			"acme/alpha":   {repo: "acme/alpha", runs: map[int64]string{1: "completed"}},
			"acme/beta":    {repo: "acme/beta", runs: map[int64]string{2: "in_progress"}},
			"acme/epsilon": {repo: "acme/epsilon", fail: errors.New("GitHub answered 502")},
		},
		broken: map[string]error{"acme/zeta": errors.New("find the App's installation: 503 Service Unavailable")},
	}
	del := &recordingDeleter{}
	sw := &OrgSweeper{Pods: podList(pods), Repos: org, Deleter: del, Clock: fixedClock(orgNow), LookupAttempts: 1}
	rec, err := sw.Sweep(context.Background(), OrgRequest{OrgScope: OrgScope{Organization: "acme",
		Repositories: []string{"alpha", "acme/beta", "gamma", "epsilon", "zeta"}}, Execute: true, Event: "schedule"})

	assert.Check(t, is.DeepEqual(orgDecisions(rec), map[string]string{
		"done":       "acme/alpha reclaim run-completed",
		"case":       "acme/alpha reclaim lifetime-exceeded",
		"active":     "acme/beta keep run-active",
		"hidden":     "acme/gamma skip-foreign app-cannot-see-repository",
		"hidden-old": "acme/gamma skip-foreign app-cannot-see-repository",
		"unlisted":   "acme/delta skip-foreign repository-not-listed",
		"broken":     "acme/epsilon error run-lookup-failed",
		"lookup-5xx": "acme/zeta error installation-lookup-failed",
		"other-org":  "outside skip-foreign other-organization",
		"notebook":   "outside skip-foreign untagged",
	}))
	sort.Strings(del.deleted)
	assert.Check(t, is.DeepEqual(del.deleted, []string{"case", "done"}), "only the visible repositories' reclaims are deleted")
	assert.Check(t, is.DeepEqual(org.connected, []string{"acme/alpha", "acme/beta", "acme/epsilon", "acme/gamma", "acme/zeta"}),
		"one connection per listed repository, in name order; none for other organizations or unlisted repositories")

	assert.ErrorContains(t, err, "2 of 6 repositories failed")
	assert.ErrorContains(t, err, "acme/epsilon")
	assert.ErrorContains(t, err, "acme/zeta")
	status := map[string]RepoStatus{}
	for _, rr := range rec.Repositories {
		status[rr.Repository] = rr.Status
	}
	assert.Check(t, is.DeepEqual(status, map[string]RepoStatus{"acme/alpha": RepoSwept, "acme/beta": RepoSwept,
		"acme/gamma": RepoSkipped, "acme/delta": RepoSkipped, "acme/epsilon": RepoFailed, "acme/zeta": RepoFailed}))

	md := rec.Markdown()
	for _, want := range []string{
		"| acme/alpha | swept | 2 | 2 | 0 | 0 | 0 | 0 |",
		"| acme/beta | swept | 1 | 0 | 1 | 0 | 0 | 0 |",
		"| acme/gamma | skipped | 2 | 0 | 0 | 2 | 0 | 0 |",
		"| acme/epsilon | **failed** | 1 | 0 | 0 | 0 | 0 | 1 |",
		"**2 repositories failed:**",
		"2 pod(s) outside the organization",
	} {
		assert.Check(t, is.Contains(md, want))
	}
}

// Once Pace refuses, the repository and every later one are deferred: no
// installation lookup, no run read, no deletion; the sweep does not fail.
func TestOrgSweepDefersWhenThePaceRefuses(t *testing.T) {
	pods := []runpod.Pod{orgPod("a", "acme/alpha", 1, 30*time.Minute), orgPod("b", "acme/beta", 2, 3*time.Hour), orgPod("c", "acme/gamma", 3, 3*time.Hour)}
	org := &fakeOrg{repos: map[string]*orgRuns{
		"acme/alpha": {repo: "acme/alpha", runs: map[int64]string{1: "completed"}},
		"acme/beta":  {repo: "acme/beta", runs: map[int64]string{}},
		"acme/gamma": {repo: "acme/gamma", runs: map[int64]string{}},
	}}
	calls := 0
	pace := func(context.Context) error {
		calls++
		if calls >= 2 {
			return errors.New("the GitHub core window has 4 of 50 requests left")
		}
		return nil
	}
	del := &recordingDeleter{}
	sw := &OrgSweeper{Pods: podList(pods), Repos: org, Deleter: del, Clock: fixedClock(orgNow), Pace: pace}
	rec, err := sw.Sweep(context.Background(), OrgRequest{OrgScope: OrgScope{Organization: "acme"}, Execute: true})

	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(orgDecisions(rec), map[string]string{
		"a": "acme/alpha reclaim run-completed",
		"b": "acme/beta deferred rate-limit-reserve",
		"c": "acme/gamma deferred rate-limit-reserve",
	}))
	assert.Check(t, is.DeepEqual(del.deleted, []string{"a"}), "a deferred pod is never deleted, even past the backstop")
	assert.Check(t, is.DeepEqual(org.connected, []string{"acme/alpha"}))
	assert.Check(t, is.Equal(calls, 2), "asked once per repository until it refuses")
	assert.Check(t, is.Contains(rec.Markdown(), "**2 repositories deferred**"))
}

func TestOrgScopeListed(t *testing.T) {
	tests := []struct {
		allow []string
		repo  string
		want  bool
	}{
		{repo: "acme/alpha", want: true},
		{allow: []string{"alpha"}, repo: "acme/alpha", want: true},
		{allow: []string{"ALPHA"}, repo: "acme/alpha", want: true},
		{allow: []string{"acme/alpha"}, repo: "acme/alpha", want: true},
		{allow: []string{"alpha"}, repo: "acme/alphabet", want: false},
		{allow: []string{"rival/alpha"}, repo: "acme/alpha", want: false},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(OrgScope{Organization: "acme", Repositories: tc.allow}.listed(tc.repo), tc.want), "%v %s", tc.allow, tc.repo)
	}
}

func TestOrgListingFailureDecidesNothing(t *testing.T) {
	sw := &OrgSweeper{Pods: failingLister{}, Repos: &fakeOrg{}, Deleter: &recordingDeleter{}, Clock: fixedClock(orgNow)}
	rec, err := sw.Sweep(context.Background(), OrgRequest{OrgScope: OrgScope{Organization: "acme"}})
	assert.ErrorContains(t, err, "nothing was decided")
	assert.Check(t, is.Len(rec.Repositories, 0))
	assert.Check(t, is.Contains(rec.Markdown(), "**Sweep failed, nothing was decided:**"))
}

type failingLister struct{}

func (failingLister) ListPods(context.Context, runpod.ListPodsQuery) ([]runpod.Pod, error) {
	return nil, errors.New("502 from RunPod")
}

func TestGroupByRepository(t *testing.T) {
	malformed := orgPod("malformed", "acme/alpha", 1, time.Minute)
	malformed.Env[ownership.EnvAttempt] = "x"
	tests := []struct {
		name       string
		pods       []runpod.Pod
		wantGroups map[string][]string // repository → pod ids, in listing order
		wantOut    map[string]Reason
	}{
		{name: "one group per repository, spelled as first seen",
			pods:       []runpod.Pod{orgPod("a1", "acme/Alpha", 1, time.Minute), orgPod("b", "acme/beta", 2, time.Minute), orgPod("a2", "ACME/alpha", 3, time.Minute)},
			wantGroups: map[string][]string{"acme/Alpha": {"a1", "a2"}, "acme/beta": {"b"}}, wantOut: map[string]Reason{}},
		{name: "another organization, even with a prefix in common",
			pods:       []runpod.Pod{orgPod("r", "rival/alpha", 1, time.Minute), orgPod("p", "acme-labs/alpha", 1, time.Minute)},
			wantGroups: map[string][]string{}, wantOut: map[string]Reason{"r": ReasonOtherOrganization, "p": ReasonOtherOrganization}},
		{name: "not the suite's pods keep their own reasons",
			pods:       []runpod.Pod{{ID: "u", Name: "notebook"}, malformed},
			wantGroups: map[string][]string{}, wantOut: map[string]Reason{"u": ReasonUntagged, "malformed": ReasonMalformedAttempt}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			groups, outside := groupByRepository(tc.pods, "acme", orgNow)
			got := map[string][]string{}
			for _, g := range groups {
				for _, p := range g.pods {
					got[g.repository] = append(got[g.repository], p.ID)
				}
			}
			assert.Check(t, is.DeepEqual(got, tc.wantGroups))
			out := map[string]Reason{}
			for _, p := range outside {
				out[p.PodID] = p.Reason
				assert.Check(t, is.Equal(p.RunID, int64(0)), "no tags repeated for pod %s", p.PodID)
			}
			assert.Check(t, is.DeepEqual(out, tc.wantOut))
		})
	}
}
