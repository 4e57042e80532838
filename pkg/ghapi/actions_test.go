package ghapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

func TestGetWorkflowRunAndAttempt(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77", respondFile(t, http.StatusOK, "workflow_run.json"))
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77/attempts/2", respondFile(t, http.StatusOK, "workflow_run.json"))

	run, err := env.client.GetWorkflowRun(context.Background(), 77)
	assert.NilError(t, err)
	assert.Equal(t, run.GetPath(), ".github/workflows/gpu.yml")
	assert.Equal(t, run.GetRunAttempt(), 2)
	assert.Equal(t, run.GetRepository().GetFullName(), "acme/widgets")

	attempt, err := env.client.GetWorkflowRunAttempt(context.Background(), 77, 2)
	assert.NilError(t, err)
	assert.Equal(t, attempt.GetConclusion(), "success")
}

func TestGetWorkflowRunNotFound(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/runs/78", respond(http.StatusNotFound, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run","status":"404"}`))
	_, err := env.client.GetWorkflowRun(context.Background(), 78)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorContains(t, err, "get workflow run 78: GET ")
}

func TestListWorkflowRuns(t *testing.T) {
	filter := ListRunsFilter{Created: "2026-09-01..2026-09-30", Status: "completed", Event: "pull_request", HeadSHA: headSHA, Branch: "feature"}
	query := "created=2026-09-01..2026-09-30&status=completed&event=pull_request&head_sha=" + headSHA + "&branch=feature&per_page=100"
	runsPage := func(total int) string {
		run := `{"id":77,"name":"GPU CI","path":".github/workflows/gpu.yml","run_attempt":2,"status":"completed","conclusion":"success","head_sha":"` + headSHA + `","event":"pull_request"}`
		return `{"total_count":` + strconv.Itoa(total) + `,"workflow_runs":[` + run + `]}`
	}
	tests := []struct {
		name    string
		file    string
		filter  ListRunsFilter
		stubs   func(f *fakeGitHub)
		wantIDs int
		wantErr error
	}{
		{
			name:   "one workflow, two pages",
			file:   "gpu.yml",
			filter: filter,
			stubs: func(f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/workflows/gpu.yml/runs?"+query+"&page=1", withNextPage(2, 2, respond(200, runsPage(2))))
				f.on("GET", "repos/acme/widgets/actions/workflows/gpu.yml/runs?"+query+"&page=2", respond(200, runsPage(2)))
			},
			wantIDs: 2,
		},
		{
			name: "every workflow",
			stubs: func(f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runs?per_page=100", respond(200, runsPage(1)))
			},
			wantIDs: 1,
		},
		{
			name:   "more than a filtered search returns",
			file:   "gpu.yml",
			filter: filter,
			stubs: func(f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/workflows/gpu.yml/runs?"+query, withNextPage(2, 11, respond(200, runsPage(1500))))
			},
			wantErr: ErrSearchCapped,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			tt.stubs(env.fake)
			runs, err := env.client.ListWorkflowRuns(context.Background(), tt.file, tt.filter, 5)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorContains(t, err, "1500 runs match")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, len(runs), tt.wantIDs)
			assert.Equal(t, runs[0].GetRunAttempt(), 2)
		})
	}
}

func TestListAttemptJobs(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77/attempts/2/jobs?per_page=100&page=1", respondFile(t, http.StatusOK, "attempt_jobs.json"))

	jobs, err := env.client.ListAttemptJobs(context.Background(), 77, 2)
	assert.NilError(t, err)
	assert.Equal(t, len(jobs), 2)
	assert.Equal(t, jobs[0].GetRunnerName(), "gpu-77-2-c1")
	assert.Equal(t, len(jobs[0].Steps), 2)
	assert.Equal(t, jobs[0].Steps[1].GetName(), "Run GPU tests")
	assert.Equal(t, jobs[1].GetStatus(), "in_progress")
	assert.Check(t, jobs[1].CompletedAt == nil)
}

func TestRunAttemptArgumentsAreChecked(t *testing.T) {
	env := newTestEnv(t)
	_, err := env.client.ListAttemptJobs(context.Background(), 77, 0)
	assert.Check(t, is.ErrorContains(err, "run attempt is 0; want a positive attempt number"))
	_, err = env.client.GetWorkflowRunAttempt(context.Background(), -1, 1)
	assert.Check(t, is.ErrorContains(err, "workflow run id is -1"))
	_, err = env.client.DownloadRunLogs(context.Background(), 77, -1)
	assert.Check(t, is.ErrorContains(err, "run attempt is -1; want 0 (latest)"))
}

func TestArtifactsByName(t *testing.T) {
	env := newTestEnv(t)
	// v66 has no name filter: the request is hand-built, so check it exactly.
	env.fake.on("GET", "repos/acme/widgets/actions/artifacts?name=runpod-cost-77-1&per_page=100&page=1",
		withNextPage(2, 2, respondFile(t, http.StatusOK, "artifacts_page1.json")))
	env.fake.on("GET", "repos/acme/widgets/actions/artifacts?name=runpod-cost-77-1&per_page=100&page=2",
		respondFile(t, http.StatusOK, "artifacts_page2.json"))

	artifacts, err := env.client.ArtifactsByName(context.Background(), "runpod-cost-77-1")
	assert.NilError(t, err)
	var ids []int64
	for _, a := range artifacts {
		ids = append(ids, a.GetID())
	}
	// 12 is a longer name the fake's filter let through; only exact names stay.
	assert.DeepEqual(t, ids, []int64{11, 9})
	assert.Equal(t, artifacts[0].GetWorkflowRun().GetID(), int64(77))
	assert.Equal(t, artifacts[1].GetExpired(), true)
}

func TestListRunArtifacts(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77/artifacts?per_page=100&page=1", respondFile(t, http.StatusOK, "artifacts_page1.json"))

	artifacts, err := env.client.ListRunArtifacts(context.Background(), 77)
	assert.NilError(t, err)
	assert.Equal(t, len(artifacts), 2)
	assert.Equal(t, artifacts[1].GetName(), "runpod-cost-77-1-extra")
}

// storageServer is a second host, like GitHub's signed-URL storage.
func storageServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, is.Equal(r.Header.Get("Authorization"), ""), "credentials sent to the storage host")
		if r.URL.Query().Get("sig") != "SIGNATURE-SECRET" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func redirectTo(location string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", location)
		w.WriteHeader(http.StatusFound)
	}
}

func TestDownloads(t *testing.T) {
	const archive = "PK\x03\x04 fake zip bytes"
	tests := []struct {
		name      string
		path      string
		sig       string
		maxBytes  int64
		download  func(*Client) ([]byte, error)
		wantErr   string
		wantErrIs error
	}{
		{
			name:     "latest run logs",
			path:     "repos/acme/widgets/actions/runs/77/logs",
			sig:      "SIGNATURE-SECRET",
			download: func(c *Client) ([]byte, error) { return c.DownloadRunLogs(context.Background(), 77, 0) },
		},
		{
			name:     "attempt logs",
			path:     "repos/acme/widgets/actions/runs/77/attempts/2/logs",
			sig:      "SIGNATURE-SECRET",
			download: func(c *Client) ([]byte, error) { return c.DownloadRunLogs(context.Background(), 77, 2) },
		},
		{
			name:     "artifact",
			path:     "repos/acme/widgets/actions/artifacts/11/zip",
			sig:      "SIGNATURE-SECRET",
			download: func(c *Client) ([]byte, error) { return c.DownloadArtifact(context.Background(), 11) },
		},
		{
			name:      "over the size bound",
			path:      "repos/acme/widgets/actions/artifacts/11/zip",
			sig:       "SIGNATURE-SECRET",
			maxBytes:  8,
			download:  func(c *Client) ([]byte, error) { return c.DownloadArtifact(context.Background(), 11) },
			wantErr:   "download artifact 11: download exceeds size bound: more than 8 bytes",
			wantErrIs: ErrTooLarge,
		},
		{
			name:     "storage refuses",
			path:     "repos/acme/widgets/actions/runs/77/logs",
			sig:      "EXPIRED-SIGNATURE",
			download: func(c *Client) ([]byte, error) { return c.DownloadRunLogs(context.Background(), 77, 0) },
			wantErr:  "download logs of workflow run 77: GET http://",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, func(o *Options) { o.MaxDownloadBytes = tt.maxBytes })
			storage := storageServer(t, archive)
			env.fake.on("GET", tt.path, redirectTo(storage.URL+"/blob/archive.zip?sig="+tt.sig))

			data, err := tt.download(env.client)
			if tt.wantErr == "" {
				assert.NilError(t, err)
				assert.Equal(t, string(data), archive)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Check(t, !strings.Contains(err.Error(), tt.sig), "error shows the signature: %v", err)
			if tt.wantErrIs != nil {
				assert.ErrorIs(t, err, tt.wantErrIs)
			}
		})
	}
}

func TestDownloadRunLogsGone(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77/logs", respond(http.StatusNotFound, `{"message":"Not Found"}`))
	_, err := env.client.DownloadRunLogs(context.Background(), 77, 0)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorContains(t, err, "404 Not Found")
}

func TestCancelWorkflowRun(t *testing.T) {
	tests := []struct {
		name      string
		answers   []http.HandlerFunc
		wantErrIs error
		wantWaits int
	}{
		{name: "accepted", answers: []http.HandlerFunc{respond(http.StatusAccepted, `{}`)}},
		{
			name:      "already completed",
			answers:   []http.HandlerFunc{respond(http.StatusConflict, `{"message":"Cannot cancel a workflow run that is completed.","documentation_url":"https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run","status":"409"}`)},
			wantErrIs: ErrRunCompleted,
		},
		{
			name:      "retried after a 502, being idempotent",
			answers:   []http.HandlerFunc{respond(http.StatusBadGateway, `{"message":"Server Error"}`), respond(http.StatusAccepted, `{}`)},
			wantWaits: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			for _, answer := range tt.answers {
				env.fake.on("POST", "repos/acme/widgets/actions/runs/77/cancel", answer)
			}
			err := env.client.CancelWorkflowRun(context.Background(), 77)
			if tt.wantErrIs != nil {
				assert.ErrorIs(t, err, tt.wantErrIs)
				assert.ErrorContains(t, err, "cancel workflow run 77: ")
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, len(env.recordedWaits()), tt.wantWaits)
		})
	}
}

func TestDispatchWorkflow(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("POST", "repos/acme/widgets/actions/workflows/relay.yml/dispatches",
		expectJSONBody(t, `{"ref":"main","inputs":{"pr":"7","sha":"`+headSHA+`"}}`,
			func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	err := env.client.DispatchWorkflow(context.Background(), "relay.yml", "main", map[string]any{"pr": "7", "sha": headSHA})
	assert.NilError(t, err)
}

func TestDispatchWorkflowIsNotRetried(t *testing.T) {
	env := newTestEnv(t)
	env.fake.on("POST", "repos/acme/widgets/actions/workflows/relay.yml/dispatches", respond(http.StatusInternalServerError, `{"message":"Server Error"}`))
	err := env.client.DispatchWorkflow(context.Background(), "relay.yml", "main", nil)
	assert.ErrorContains(t, err, "dispatch relay.yml on main: POST ")
	assert.Check(t, is.Len(env.recordedWaits(), 0))
	assert.Check(t, !errors.Is(err, ErrNotFound))
}

func TestDownloadArchiveServedDirectly(t *testing.T) {
	// Some servers answer the archive endpoint with the archive itself.
	env := newTestEnv(t)
	env.fake.on("GET", "repos/acme/widgets/actions/artifacts/11/zip", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		_, _ = w.Write([]byte("PK\x03\x04"))
	})
	data, err := env.client.DownloadArtifact(context.Background(), 11)
	assert.NilError(t, err)
	assert.Equal(t, string(data), "PK\x03\x04")
}

func TestDownloadArchiveRateLimitIsTyped(t *testing.T) {
	env := newTestEnv(t, func(o *Options) {
		o.Policy = nil // the default policy, and a deadline too short for its wait
	})
	env.fake.on("GET", "repos/acme/widgets/actions/runs/77/logs", limited(403, secondaryLimitBody, "", time.Time{}, "120"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := env.client.DownloadRunLogs(ctx, 77, 0)
	assert.ErrorIs(t, err, reqpolicy.ErrWaitExceedsDeadline)
	assert.ErrorContains(t, err, "download logs of workflow run 77: ")
}
