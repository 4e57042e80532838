package githubsim

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// An organization's App installation covers selected repositories: the App's
// JWT finds it per repository, and its token sees only those repositories.
func TestSelectedRepositoryInstallation(t *testing.T) {
	key, pemBytes := rsaKey(t, 0)
	clock := simclock.NewVirtual(time.Now())
	f := newFixture(t, WithClock(clock), WithApp(App{ID: gateAppID, Slug: gateAppSlug, PublicKey: &key.PublicKey}),
		WithInstallation(Installation{ID: 88, AppID: gateAppID, Account: "octo", Repositories: []string{"gpu-lib"}}))
	assert.NilError(t, f.srv.AddRepo(Repo{Owner: "octo", Name: "hidden"}))
	assert.NilError(t, f.srv.AddRepo(Repo{Owner: "elsewhere", Name: "gpu-lib"}))
	var runs []int64
	for _, repo := range []string{"octo/gpu-lib", "octo/hidden"} {
		id, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repo, WorkflowPath: ".github/workflows/gpu.yml"})
		assert.NilError(t, err)
		runs = append(runs, id)
	}

	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, gateAppID, pemBytes)
	assert.NilError(t, err)
	atr.BaseURL = f.ts.URL
	app := github.NewClient(&http.Client{Transport: atr})
	app.BaseURL, _ = url.Parse(f.ts.URL + "/")

	tests := []struct {
		owner, repo string
		want        int64 // 0: 404
	}{
		{owner: "octo", repo: "gpu-lib", want: 88},
		{owner: "OCTO", repo: "GPU-LIB", want: 88},
		{owner: "octo", repo: "hidden"},
		{owner: "elsewhere", repo: "gpu-lib"},
		{owner: "octo", repo: "missing"},
	}
	for _, tc := range tests {
		inst, resp, err := app.Apps.FindRepositoryInstallation(ctx, tc.owner, tc.repo)
		if tc.want == 0 {
			assert.Check(t, resp != nil && resp.StatusCode == http.StatusNotFound, "%s/%s: %v", tc.owner, tc.repo, err)
			continue
		}
		assert.NilError(t, err)
		assert.Check(t, is.Equal(inst.GetID(), tc.want))
		assert.Check(t, is.Equal(inst.GetRepositorySelection(), "selected"))
	}

	itr := ghinstallation.NewFromAppsTransport(atr, 88)
	c := github.NewClient(&http.Client{Transport: itr})
	c.BaseURL, _ = url.Parse(f.ts.URL + "/")
	_, _, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "gpu-lib", runs[0])
	assert.NilError(t, err)
	_, resp, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "hidden", runs[1])
	assert.Check(t, resp != nil && resp.StatusCode == http.StatusNotFound, "a repository outside the installation is 404: %v", err)

	// An installation id of another App mints nothing.
	other := ghinstallation.NewFromAppsTransport(atr, 4243)
	_, err = other.Token(ctx)
	assert.Check(t, err != nil)
}
