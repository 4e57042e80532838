package githubsim

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

// fetchZip downloads a signed URL without credentials and returns the archive's files.
func fetchZip(t *testing.T, u *url.URL) map[string]string {
	t.Helper()
	resp, err := http.Get(u.String())
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	data, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	assert.NilError(t, err)
	files := map[string]string{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		assert.NilError(t, err)
		b, err := io.ReadAll(rc)
		assert.NilError(t, err)
		rc.Close()
		files[zf.Name] = string(b)
	}
	return files
}

func TestArtifacts(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow, Status: "completed", Conclusion: "success"})
	assert.NilError(t, err)
	otherRun, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	retained := "runpod-debug-retained-" + "7-1-podA,podB"
	costID, err := f.srv.AddArtifact(repoName, runID, ArtifactSpec{Name: "runpod-cost", Files: map[string]string{"cost.json": `{"usd":0.42}`}})
	assert.NilError(t, err)
	retainedID, err := f.srv.AddArtifact(repoName, runID, ArtifactSpec{Name: retained, Files: map[string]string{"ids": "podA\npodB"}})
	assert.NilError(t, err)
	_, err = f.srv.AddArtifact(repoName, otherRun, ArtifactSpec{Name: "runpod-cost", Files: map[string]string{"cost.json": "{}"}})
	assert.NilError(t, err)

	// go-github v66 has no name filter; callers build the request, as this one does.
	var byName github.ArtifactList
	_, err = f.raw(t, f.app, "GET", "repos/octo/gpu-lib/actions/artifacts?name="+url.QueryEscape(retained)+"&per_page=100", nil, &byName)
	assert.NilError(t, err)
	assert.Equal(t, byName.GetTotalCount(), int64(1))
	a := byName.Artifacts[0]
	assert.Equal(t, a.GetID(), retainedID)
	assert.Equal(t, a.GetName(), retained)
	assert.Equal(t, a.GetWorkflowRun().GetID(), runID)
	assert.Equal(t, a.GetExpired(), false)
	assert.Equal(t, a.GetExpiresAt().Time, start.Add(90*24*time.Hour))
	assert.Assert(t, a.GetSizeInBytes() > 0)

	perRun, _, err := f.app.Actions.ListWorkflowRunArtifacts(ctx, "octo", "gpu-lib", runID, nil)
	assert.NilError(t, err)
	assert.Equal(t, perRun.GetTotalCount(), int64(2))
	assert.Equal(t, perRun.Artifacts[0].GetID(), retainedID, "newest first")

	all, _, err := f.app.Actions.ListArtifacts(ctx, "octo", "gpu-lib", nil)
	assert.NilError(t, err)
	assert.Equal(t, all.GetTotalCount(), int64(3))

	location, resp, err := f.app.Actions.DownloadArtifact(ctx, "octo", "gpu-lib", costID, 0)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusFound)
	assert.DeepEqual(t, fetchZip(t, location), map[string]string{"cost.json": `{"usd":0.42}`})
}

func TestExpiredArtifact(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	id, err := f.srv.AddArtifact(repoName, runID, ArtifactSpec{Name: "old", ExpiresAt: start.Add(time.Hour)})
	assert.NilError(t, err)
	f.clock.Advance(time.Hour)

	a, _, err := f.app.Actions.GetArtifact(ctx, "octo", "gpu-lib", id)
	assert.NilError(t, err)
	assert.Equal(t, a.GetExpired(), true)
	_, resp, err := f.app.Actions.DownloadArtifact(ctx, "octo", "gpu-lib", id, 0)
	assert.Assert(t, err != nil)
	assert.Equal(t, resp.StatusCode, http.StatusGone)
}

func TestRunLogs(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow, Status: "completed", Conclusion: "failure"})
	assert.NilError(t, err)
	_, err = f.srv.RerunWorkflowRun(repoName, runID, nil)
	assert.NilError(t, err)
	assert.NilError(t, f.srv.SetRunLogs(repoName, runID, 1, map[string]string{"gpu-tests/3_Run.txt": "FAIL"}))
	assert.NilError(t, f.srv.SetRunLogs(repoName, runID, 2, map[string]string{"gpu-tests/3_Run.txt": "ok", "0_gpu-tests.txt": "all"}))

	latest, resp, err := f.app.Actions.GetWorkflowRunLogs(ctx, "octo", "gpu-lib", runID, 0)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusFound)
	assert.DeepEqual(t, fetchZip(t, latest), map[string]string{"gpu-tests/3_Run.txt": "ok", "0_gpu-tests.txt": "all"})

	first, _, err := f.app.Actions.GetWorkflowRunAttemptLogs(ctx, "octo", "gpu-lib", runID, 1, 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, fetchZip(t, first), map[string]string{"gpu-tests/3_Run.txt": "FAIL"})

	f.clock.Advance(downloadURLLifetime)
	resp2, err := http.Get(first.String())
	assert.NilError(t, err)
	resp2.Body.Close()
	assert.Equal(t, resp2.StatusCode, http.StatusForbidden, "signed URLs expire after a minute")

	other, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	_, resp, err = f.app.Actions.GetWorkflowRunLogs(ctx, "octo", "gpu-lib", other, 0)
	assert.Assert(t, err != nil)
	assert.Equal(t, resp.StatusCode, http.StatusNotFound, "a run without logs")
}

// A job's log, once its runner set it, is served as GitHub serves it: 302 to a short-lived
// plain-text URL; a job without one is 404.
func TestJobLogs(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	withLog, err := f.srv.AddJob(repoName, runID, JobSpec{Name: "GPU tests", Labels: []string{"gpu-1"}})
	assert.NilError(t, err)
	without, err := f.srv.AddJob(repoName, runID, JobSpec{Name: "build"})
	assert.NilError(t, err)
	assert.NilError(t, f.srv.SetJobLog(repoName, withLog, "3 passed, 0 failed\n"))
	assert.ErrorContains(t, f.srv.SetJobLog(repoName, 999999, "x"), "job 999999")

	u, resp, err := f.app.Actions.GetWorkflowJobLogs(ctx, "octo", "gpu-lib", withLog, 0)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusFound)
	got, err := http.Get(u.String())
	assert.NilError(t, err)
	defer got.Body.Close()
	body, err := io.ReadAll(got.Body)
	assert.NilError(t, err)
	assert.Equal(t, got.Header.Get("Content-Type"), "text/plain")
	assert.Equal(t, string(body), "3 passed, 0 failed\n")

	_, resp, err = f.app.Actions.GetWorkflowJobLogs(ctx, "octo", "gpu-lib", without, 0)
	assert.Assert(t, err != nil)
	assert.Equal(t, resp.StatusCode, http.StatusNotFound, "a job without a log")
}

func TestZipIsDeterministic(t *testing.T) {
	files := map[string]string{"b.txt": "2", "a.txt": "1", "c/d.txt": "3"}
	first, err := zipFiles(files, start)
	assert.NilError(t, err)
	second, err := zipFiles(files, start)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(first, second))
}
