package githubsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// twirp posts one results-service call with the runtime token and decodes the answer.
func twirp(t *testing.T, f *fixture, token, method string, body map[string]any) (int, map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	assert.NilError(t, err)
	req, err := http.NewRequest("POST", f.ts.URL+ResultsServicePath+method, bytes.NewReader(data))
	assert.NilError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	out := map[string]any{}
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// An artifact goes up as upload-artifact v4 sends it (CreateArtifact, the zip PUT to the
// signed URL, FinalizeArtifact with its size and hash), is listed and downloaded within the
// run (ListArtifacts, GetSignedArtifactURL) and through the REST API, and is deleted there.
// A name taken, a wrong hash, another run's ids or no token are refused.
func TestResultsServiceUploadsAndDownloadsArtifacts(t *testing.T) {
	f := newFixture(t)
	runID, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	rt, err := f.srv.RuntimeToken(repoName, runID, "build")
	assert.NilError(t, err)
	ids := func(m map[string]any) map[string]any {
		m["workflow_run_backend_id"], m["workflow_job_run_backend_id"] = rt.RunBackendID, rt.JobBackendID
		return m
	}
	zipped, err := zipFiles(map[string]string{"gpu-tests.tar.gz": "archive bytes"}, start)
	assert.NilError(t, err)

	status, created := twirp(t, f, rt.Token, "CreateArtifact", ids(map[string]any{"name": "gpu-tests", "version": 4}))
	assert.Equal(t, status, http.StatusOK)
	put, err := http.NewRequest("PUT", created["signed_upload_url"].(string), bytes.NewReader(zipped))
	assert.NilError(t, err)
	put.Header.Set("x-ms-blob-type", "BlockBlob")
	resp, err := http.DefaultClient.Do(put)
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusCreated)

	status, bad := twirp(t, f, rt.Token, "FinalizeArtifact", ids(map[string]any{"name": "gpu-tests", "size": strconv.Itoa(len(zipped)), "hash": "sha256:00"}))
	assert.Equal(t, status, http.StatusBadRequest)
	assert.Equal(t, bad["code"], "invalid_argument")
	sum := sha256.Sum256(zipped)
	status, done := twirp(t, f, rt.Token, "FinalizeArtifact", ids(map[string]any{"name": "gpu-tests", "size": strconv.Itoa(len(zipped)), "hash": "sha256:" + hex.EncodeToString(sum[:])}))
	assert.Equal(t, status, http.StatusOK, "%v", done)
	artifactID, _ := strconv.ParseInt(done["artifact_id"].(string), 10, 64)

	status, again := twirp(t, f, rt.Token, "CreateArtifact", ids(map[string]any{"name": "gpu-tests", "version": 4}))
	assert.Equal(t, status, http.StatusConflict)
	assert.Equal(t, again["code"], "already_exists")

	gpu, err := f.srv.RuntimeToken(repoName, runID, "gpu")
	assert.NilError(t, err)
	gpuIDs := map[string]any{"workflow_run_backend_id": gpu.RunBackendID, "workflow_job_run_backend_id": gpu.JobBackendID, "name_filter": "gpu-tests"}
	status, listed := twirp(t, f, gpu.Token, "ListArtifacts", gpuIDs)
	assert.Equal(t, status, http.StatusOK)
	assert.Assert(t, is.Len(listed["artifacts"], 1))
	assert.Equal(t, listed["artifacts"].([]any)[0].(map[string]any)["database_id"], strconv.FormatInt(artifactID, 10))
	delete(gpuIDs, "name_filter")
	gpuIDs["name"] = "gpu-tests"
	status, signed := twirp(t, f, gpu.Token, "GetSignedArtifactURL", gpuIDs)
	assert.Equal(t, status, http.StatusOK)
	u, err := url.Parse(signed["signed_url"].(string))
	assert.NilError(t, err)
	assert.DeepEqual(t, fetchZip(t, u), map[string]string{"gpu-tests.tar.gz": "archive bytes"})
	gpuIDs["name"] = "nope"
	status, _ = twirp(t, f, gpu.Token, "GetSignedArtifactURL", gpuIDs)
	assert.Equal(t, status, http.StatusNotFound)

	status, _ = twirp(t, f, "rt_unknown", "ListArtifacts", gpuIDs)
	assert.Equal(t, status, http.StatusUnauthorized)
	otherRun, err := f.srv.AddWorkflowRun(WorkflowRunSpec{Repo: repoName, WorkflowPath: gpuWorkflow})
	assert.NilError(t, err)
	other, err := f.srv.RuntimeToken(repoName, otherRun, "gpu")
	assert.NilError(t, err)
	status, _ = twirp(t, f, other.Token, "ListArtifacts", gpuIDs)
	assert.Equal(t, status, http.StatusForbidden, "a token is its run's only")

	location, _, err := f.app.Actions.DownloadArtifact(ctx, "octo", "gpu-lib", artifactID, 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, fetchZip(t, location), map[string]string{"gpu-tests.tar.gz": "archive bytes"})
	resp2, err := f.app.Actions.DeleteArtifact(ctx, "octo", "gpu-lib", artifactID)
	assert.NilError(t, err)
	assert.Equal(t, resp2.StatusCode, http.StatusNoContent)
	_, _, err = f.app.Actions.GetArtifact(ctx, "octo", "gpu-lib", artifactID)
	assert.ErrorContains(t, err, "404")
}
