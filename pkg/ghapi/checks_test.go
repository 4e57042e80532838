package ghapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

const (
	headSHA     = "ce587453ced02b1526dfb4cb910479d431683101"
	checkRunsAt = "repos/acme/widgets/commits/" + headSHA + "/check-runs"
)

func TestListCheckRunsForRef(t *testing.T) {
	tests := []struct {
		name     string
		maxPages int
		stubs    func(t *testing.T, f *fakeGitHub)
		wantIDs  []int64
		wantErr  string
	}{
		{
			name:     "all pages",
			maxPages: 5,
			stubs: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", checkRunsAt+"?check_name=CI+GPU+gate&filter=all&per_page=100&page=1", withNextPage(2, 2, respondFile(t, http.StatusOK, "check_runs_page1.json")))
				f.on("GET", checkRunsAt+"?check_name=CI+GPU+gate&filter=all&per_page=100&page=2", respondFile(t, http.StatusOK, "check_runs_page2.json"))
			},
			wantIDs: []int64{4003, 4002, 4001},
		},
		{
			name:     "more pages than the bound",
			maxPages: 1,
			stubs: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", checkRunsAt+"?filter=all&page=1", withNextPage(2, 9, respondFile(t, http.StatusOK, "check_runs_page1.json")))
			},
			wantErr: "list check runs \"CI GPU gate\" for " + headSHA + ": more than 1 pages",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			tt.stubs(t, env.fake)
			runs, err := env.client.ListCheckRunsForRef(context.Background(), headSHA, "CI GPU gate", tt.maxPages)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.ErrorIs(t, err, ErrPageBound)
				var bound *PageBoundError
				assert.Assert(t, errors.As(err, &bound))
				assert.Equal(t, bound.MaxPages, tt.maxPages)
				return
			}
			assert.NilError(t, err)
			var ids []int64
			for _, r := range runs {
				ids = append(ids, r.GetID())
			}
			assert.DeepEqual(t, ids, tt.wantIDs)
			assert.Equal(t, runs[0].GetExternalID(), "runpod-gpu-gate:v1:0123456789abcdef0123456789abcdef01234567:paid")
			assert.Equal(t, runs[0].GetApp().GetID(), int64(901))
			assert.Equal(t, runs[0].GetCompletedAt().UTC(), time.Date(2026, 9, 23, 8, 48, 28, 0, time.UTC))
			assert.Equal(t, runs[2].GetApp().GetID(), int64(15368))
		})
	}
}

func TestCreateCheckRun(t *testing.T) {
	env := newTestEnv(t)
	started := time.Date(2026, 9, 23, 8, 40, 0, 0, time.UTC)
	want := `{
		"name": "CI GPU gate",
		"head_sha": "` + headSHA + `",
		"external_id": "runpod-gpu-gate:v1:0123456789abcdef0123456789abcdef01234567:paid",
		"details_url": "https://github.com/acme/widgets/actions/runs/78",
		"status": "completed",
		"conclusion": "success",
		"started_at": "2026-09-23T08:40:00Z",
		"completed_at": "2026-09-23T08:48:28Z",
		"output": {"title": "GPU tests passed", "summary": "Accepted pod abc123 on NVIDIA L4."}
	}`
	env.fake.on("POST", "repos/acme/widgets/check-runs", expectJSONBody(t, want, respondFile(t, http.StatusCreated, "check_run_created.json")))

	run, err := env.client.CreateCheckRun(context.Background(), CheckRunInput{
		Name:        "CI GPU gate",
		HeadSHA:     headSHA,
		ExternalID:  "runpod-gpu-gate:v1:0123456789abcdef0123456789abcdef01234567:paid",
		DetailsURL:  "https://github.com/acme/widgets/actions/runs/78",
		Status:      "completed",
		Conclusion:  "success",
		StartedAt:   started,
		CompletedAt: started.Add(8*time.Minute + 28*time.Second),
		Title:       "GPU tests passed",
		Summary:     "Accepted pod abc123 on NVIDIA L4.",
	})
	assert.NilError(t, err)
	assert.Equal(t, run.GetID(), int64(4004))
	assert.Equal(t, run.GetHTMLURL(), "https://github.com/acme/widgets/runs/4004")
}

func TestCreateCheckRunIsNotRetried(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("POST", "repos/acme/widgets/check-runs", respond(http.StatusServiceUnavailable, `{"message":"Service Unavailable"}`))
	_, err := env.client.CreateCheckRun(context.Background(), CheckRunInput{Name: "CI GPU gate", HeadSHA: headSHA})
	assert.ErrorContains(t, err, `create check run "CI GPU gate": POST `)
	assert.ErrorContains(t, err, "503 Service Unavailable")
}

func TestCreateCheckRunRejectsBadInput(t *testing.T) {
	valid := CheckRunInput{Name: "CI GPU gate", HeadSHA: headSHA}
	tests := []struct {
		name    string
		edit    func(*CheckRunInput)
		wantErr string
	}{
		{name: "no name", edit: func(in *CheckRunInput) { in.Name = "" }, wantErr: "check-run name is empty"},
		{name: "no sha", edit: func(in *CheckRunInput) { in.HeadSHA = "" }, wantErr: "HeadSHA is empty"},
		{name: "status", edit: func(in *CheckRunInput) { in.Status = "done" }, wantErr: `status "done": want one of`},
		{name: "conclusion", edit: func(in *CheckRunInput) { in.Conclusion = "passed" }, wantErr: `conclusion "passed": want one of`},
		{name: "conclusion while running", edit: func(in *CheckRunInput) { in.Status, in.Conclusion = "in_progress", "success" }, wantErr: "a conclusion needs status completed"},
		{name: "summary without title", edit: func(in *CheckRunInput) { in.Summary = "x" }, wantErr: "needs both Title and Summary"},
		{name: "title without summary", edit: func(in *CheckRunInput) { in.Title = "x" }, wantErr: "needs both Title and Summary"},
		{name: "summary too long", edit: func(in *CheckRunInput) { in.Title, in.Summary = "t", strings.Repeat("é", 40000) }, wantErr: "Summary is 80000 bytes; GitHub takes at most 65535"},
		{name: "text too long", edit: func(in *CheckRunInput) { in.Title, in.Summary, in.Text = "t", "s", strings.Repeat("x", 65536) }, wantErr: "Text is 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t) // no stubs: nothing may be sent
			in := valid
			tt.edit(&in)
			_, err := env.client.CreateCheckRun(context.Background(), in)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestListCheckRunsForRefNeedsRef(t *testing.T) {
	env := newTestEnv(t)
	_, err := env.client.ListCheckRunsForRef(context.Background(), "", "CI GPU gate", 1)
	assert.Check(t, is.ErrorContains(err, "check-run ref is empty"))
}
