package githubsim

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func gateOptions(headSHA string) github.CreateCheckRunOptions {
	return github.CreateCheckRunOptions{
		Name:       "CI GPU gate",
		HeadSHA:    headSHA,
		ExternalID: github.String("runpod-gpu-gate:v1:" + sha('b') + ":paid"),
		DetailsURL: github.String("https://example.test/details"),
		Status:     github.String("in_progress"),
		Output: &github.CheckRunOutput{
			Title:   github.String("GPU tests running"),
			Summary: github.String("pod abc on RTX 4090"),
		},
	}
}

func TestCreateCheckRun(t *testing.T) {
	f := newFixture(t)

	cr, resp, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusCreated)
	assert.Equal(t, cr.GetName(), "CI GPU gate")
	assert.Equal(t, cr.GetHeadSHA(), sha('a'))
	assert.Equal(t, cr.GetStatus(), "in_progress")
	assert.Equal(t, cr.GetConclusion(), "")
	assert.Equal(t, cr.GetExternalID(), "runpod-gpu-gate:v1:"+sha('b')+":paid")
	assert.Equal(t, cr.GetDetailsURL(), "https://example.test/details")
	assert.Equal(t, cr.GetHTMLURL(), fmt.Sprintf("https://github.com/octo/gpu-lib/runs/%d", cr.GetID()))
	assert.Equal(t, cr.GetURL(), fmt.Sprintf("%s/repos/octo/gpu-lib/check-runs/%d", f.ts.URL, cr.GetID()))
	assert.Equal(t, cr.GetApp().GetID(), gateAppID)
	assert.Equal(t, cr.GetApp().GetSlug(), gateAppSlug)
	assert.Assert(t, cr.GetCheckSuite().GetID() != 0)
	assert.Equal(t, cr.GetStartedAt().Time, start)
	assert.Assert(t, cr.CompletedAt == nil, "not completed yet: null")
	assert.Equal(t, cr.GetOutput().GetTitle(), "GPU tests running")
	assert.Equal(t, cr.GetOutput().GetSummary(), "pod abc on RTX 4090")

	recorded := f.srv.CheckRuns(repoName, sha('a'))
	assert.Equal(t, len(recorded), 1)
	assert.Equal(t, recorded[0].ID, cr.GetID())
}

func TestUpdateCheckRun(t *testing.T) {
	f := newFixture(t)
	cr, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.NilError(t, err)
	f.clock.Advance(5 * time.Minute)

	updated, _, err := f.app.Checks.UpdateCheckRun(ctx, "octo", "gpu-lib", cr.GetID(), github.UpdateCheckRunOptions{
		Name:       "CI GPU gate",
		Conclusion: github.String("success"),
		Output:     &github.CheckRunOutput{Title: github.String("passed"), Summary: github.String("all good")},
	})
	assert.NilError(t, err)
	assert.Equal(t, updated.GetStatus(), "completed", "a conclusion completes the run")
	assert.Equal(t, updated.GetConclusion(), "success")
	assert.Equal(t, updated.GetCompletedAt().Time, start.Add(5*time.Minute))
	assert.Equal(t, updated.GetOutput().GetTitle(), "passed", "a PATCH replaces the output")

	got, _, err := f.app.Checks.GetCheckRun(ctx, "octo", "gpu-lib", cr.GetID())
	assert.NilError(t, err)
	assert.Equal(t, got.GetConclusion(), "success")
}

func TestCheckRunRefusals(t *testing.T) {
	long := strings.Repeat("x", maxOutputChars+1)
	tests := []struct {
		name       string
		token      string
		mutate     func(*github.CreateCheckRunOptions)
		wantStatus int
	}{
		{name: "user token", token: userToken, wantStatus: http.StatusForbidden},
		{name: "summary over 65535 characters", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.Output.Summary = &long }},
		{name: "text over 65535 characters", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.Output.Text = &long }},
		{name: "output without summary", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.Output.Summary = nil }},
		{name: "completed without conclusion", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.Status = github.String("completed") }},
		{name: "unknown conclusion", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.Conclusion = github.String("passed") }},
		{name: "head SHA not a commit", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) { o.HeadSHA = "main" }},
		{name: "51 annotations", token: appToken, wantStatus: http.StatusUnprocessableEntity,
			mutate: func(o *github.CreateCheckRunOptions) {
				for range 51 {
					o.Output.Annotations = append(o.Output.Annotations, &github.CheckRunAnnotation{Path: github.String("a")})
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			opts := gateOptions(sha('a'))
			if tt.mutate != nil {
				tt.mutate(&opts)
			}
			_, _, err := f.client(tt.token).Checks.CreateCheckRun(ctx, "octo", "gpu-lib", opts)
			assert.Equal(t, statusOf(err), tt.wantStatus)
			assert.Equal(t, len(f.srv.CheckRuns(repoName, sha('a'))), 0)
		})
	}
}

func TestCheckRunOutputLimits(t *testing.T) {
	f := newFixture(t)
	exact := strings.Repeat("s", maxOutputChars)
	// 30,000 three-byte runes: within the character limit, over the byte limit.
	wide := strings.Repeat("€", 30000)
	opts := gateOptions(sha('a'))
	opts.Output.Summary, opts.Output.Text = &exact, &wide

	cr, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", opts)
	assert.NilError(t, err)
	assert.Equal(t, len(cr.GetOutput().GetSummary()), maxOutputChars, "exactly 65535 is accepted")
	text := cr.GetOutput().GetText()
	assert.Check(t, len(text) <= maxOutputChars, "text over the bytesize is cut: %d bytes", len(text))
	assert.Check(t, strings.HasPrefix(wide, text) && len(text)%3 == 0, "cut on a character boundary")
}

func TestUpdateCheckRunRefusals(t *testing.T) {
	tests := []struct {
		name       string
		token      string
		opts       github.UpdateCheckRunOptions
		wantStatus int
	}{
		{name: "another app", token: otherApp, opts: github.UpdateCheckRunOptions{Name: "CI GPU gate"}, wantStatus: http.StatusForbidden},
		// go-github v66 always sends "name"; leaving it unset sends "" and GitHub refuses a blank name.
		{name: "name left unset", token: appToken, opts: github.UpdateCheckRunOptions{Conclusion: github.String("success")}, wantStatus: http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			cr, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
			assert.NilError(t, err)
			_, _, err = f.client(tt.token).Checks.UpdateCheckRun(ctx, "octo", "gpu-lib", cr.GetID(), tt.opts)
			assert.Equal(t, statusOf(err), tt.wantStatus)
			assert.Equal(t, f.srv.CheckRuns(repoName, sha('a'))[0].Status, "in_progress", "a refused update changes nothing")
		})
	}
}

func TestActionsTokenCheckRun(t *testing.T) {
	f := newFixture(t)
	cr, _, err := f.client(actionsTok).Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.NilError(t, err)
	assert.Equal(t, cr.GetApp().GetID(), ActionsAppID)
	assert.Equal(t, cr.GetApp().GetSlug(), "github-actions")
	assert.Equal(t, cr.GetDetailsURL(), cr.GetHTMLURL(), "GITHUB_TOKEN check runs get details_url overwritten")
}

func TestListCheckRunsForRef(t *testing.T) {
	f := newFixture(t)
	head := sha('a')
	// Two gates from this App, one from GITHUB_TOKEN (a spoof), one with another name.
	var ids []int64
	for i, tok := range []string{appToken, appToken, actionsTok} {
		opts := gateOptions(head)
		opts.Conclusion = github.String([]string{"failure", "success", "success"}[i])
		cr, _, err := f.client(tok).Checks.CreateCheckRun(ctx, "octo", "gpu-lib", opts)
		assert.NilError(t, err)
		ids = append(ids, cr.GetID())
		f.clock.Advance(time.Minute)
	}
	other := gateOptions(head)
	other.Name = "lint"
	_, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", other)
	assert.NilError(t, err)

	tests := []struct {
		name    string
		opts    *github.ListCheckRunsOptions
		wantIDs []int64
	}{
		{name: "all gates, newest first",
			opts:    &github.ListCheckRunsOptions{CheckName: github.String("CI GPU gate"), Filter: github.String("all")},
			wantIDs: []int64{ids[2], ids[1], ids[0]}},
		{name: "latest per app by default",
			opts:    &github.ListCheckRunsOptions{CheckName: github.String("CI GPU gate")},
			wantIDs: []int64{ids[2], ids[1]}},
		{name: "one app",
			opts:    &github.ListCheckRunsOptions{CheckName: github.String("CI GPU gate"), Filter: github.String("all"), AppID: github.Int64(gateAppID)},
			wantIDs: []int64{ids[1], ids[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, err := f.app.Checks.ListCheckRunsForRef(ctx, "octo", "gpu-lib", head, tt.opts)
			assert.NilError(t, err)
			var got []int64
			for _, cr := range res.CheckRuns {
				got = append(got, cr.GetID())
			}
			assert.DeepEqual(t, got, tt.wantIDs)
			assert.Equal(t, res.GetTotal(), len(tt.wantIDs))
		})
	}

	_, _, err = f.app.Checks.ListCheckRunsForRef(ctx, "octo", "gpu-lib", head, &github.ListCheckRunsOptions{Filter: github.String("newest")})
	assert.Equal(t, statusOf(err), http.StatusUnprocessableEntity)
}

func TestListCheckRunsForBranchRef(t *testing.T) {
	f := newFixture(t)
	assert.NilError(t, f.srv.SetBranch(repoName, "feature/gpu", sha('c')))
	_, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('c')))
	assert.NilError(t, err)

	res, _, err := f.app.Checks.ListCheckRunsForRef(ctx, "octo", "gpu-lib", "feature/gpu", nil)
	assert.NilError(t, err)
	assert.Equal(t, res.GetTotal(), 1, "a branch name with a slash resolves to its head")
}

func TestListCheckRunsPagination(t *testing.T) {
	f := newFixture(t)
	for i := range 25 {
		opts := gateOptions(sha('a'))
		opts.ExternalID = github.String(fmt.Sprint(i))
		_, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", opts)
		assert.NilError(t, err)
	}
	opts := &github.ListCheckRunsOptions{Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 10}}
	var externalIDs []string
	var links []string
	for {
		res, resp, err := f.app.Checks.ListCheckRunsForRef(ctx, "octo", "gpu-lib", sha('a'), opts)
		assert.NilError(t, err)
		links = append(links, resp.Header.Get("Link"))
		for _, cr := range res.CheckRuns {
			externalIDs = append(externalIDs, cr.GetExternalID())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	assert.Equal(t, len(externalIDs), 25)
	assert.Equal(t, externalIDs[0], "24", "newest first")
	assert.Equal(t, len(links), 3)
	base := f.ts.URL + "/repos/octo/gpu-lib/commits/" + sha('a') + "/check-runs?filter=all&page="
	assert.Equal(t, links[0], "<"+base+`2&per_page=10>; rel="next", <`+base+`3&per_page=10>; rel="last"`)
	assert.Equal(t, links[1], "<"+base+`3&per_page=10>; rel="next", <`+base+`3&per_page=10>; rel="last", <`+
		base+`1&per_page=10>; rel="first", <`+base+`1&per_page=10>; rel="prev"`)
	assert.Equal(t, links[2], "<"+base+`1&per_page=10>; rel="first", <`+base+`2&per_page=10>; rel="prev"`)
}

func TestAddCheckRun(t *testing.T) {
	f := newFixture(t)
	done := start.Add(-time.Hour)
	id, err := f.srv.AddCheckRun(repoName, CheckRun{
		Name: "CI GPU gate", HeadSHA: sha('a'), Conclusion: "success", AppID: gateAppID, AppSlug: gateAppSlug,
		ExternalID: "runpod-gpu-gate:v1:" + sha('b') + ":paid", StartedAt: done.Add(-time.Minute), CompletedAt: done,
	})
	assert.NilError(t, err)

	res, _, err := f.app.Checks.ListCheckRunsForRef(ctx, "octo", "gpu-lib", sha('a'), nil)
	assert.NilError(t, err)
	assert.Equal(t, res.CheckRuns[0].GetID(), id)
	assert.Equal(t, res.CheckRuns[0].GetStatus(), "completed")
	assert.Equal(t, res.CheckRuns[0].GetCompletedAt().Time, done)

	_, err = f.srv.AddCheckRun(repoName, CheckRun{Name: "x", HeadSHA: sha('a')})
	assert.Check(t, errors.Is(err, ErrInvalid), "only Apps own check runs")
	_, err = f.srv.AddCheckRun("octo/missing", CheckRun{Name: "x", HeadSHA: sha('a'), AppID: 1})
	assert.Check(t, is.ErrorIs(err, ErrNotFound))
}
