package githubsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Actions results service is what actions/upload-artifact and actions/download-artifact
// (v4) speak inside a run: Twirp (JSON over POST) at ACTIONS_RESULTS_URL, authenticated by
// the job's ACTIONS_RUNTIME_TOKEN, with the bytes going to and from signed blob URLs. The
// REST artifact routes (artifacts.go) then list and download what was uploaded.

// ResultsServicePath is the Twirp path prefix of the artifact service under
// ACTIONS_RESULTS_URL.
const ResultsServicePath = "/twirp/github.actions.results.api.v1.ArtifactService/"

// Runtime is what the runner hands a job's steps for the results service: the
// ACTIONS_RUNTIME_TOKEN and the backend ids the real token carries in its claims.
type Runtime struct {
	Token        string
	RunBackendID string
	JobBackendID string
}

type runtimeGrant struct {
	run          *workflowRun
	runBackendID string
	jobBackendID string
}

type pendingUpload struct {
	grant *runtimeGrant
	name  string
	data  []byte
	put   bool
}

// RuntimeToken mints the runtime token of a job of a run (named jobName), as the runner
// receives it in the job's message.
func (s *Server) RuntimeToken(fullName string, runID int64, jobName string) (Runtime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return Runtime{}, err
	}
	if jobName == "" {
		return Runtime{}, invalid("job name must not be empty")
	}
	g := &runtimeGrant{run: run, runBackendID: backendID("run", run.id), jobBackendID: backendID("job", s.stableID("job/"+itoa(run.id)+"/"+jobName))}
	token := "rt_" + s.randomString(36)
	s.runtimes[token] = g
	return Runtime{Token: token, RunBackendID: g.runBackendID, JobBackendID: g.jobBackendID}, nil
}

// backendID is a UUID-shaped id, as the results service's backend ids are.
func backendID(kind string, id int64) string {
	sum := sha256.Sum256([]byte(kind + "/" + itoa(id)))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// twirpError is the Twirp error document.
type twirpError struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

var twirpStatus = map[string]int{
	"invalid_argument": http.StatusBadRequest, "unauthenticated": http.StatusUnauthorized,
	"permission_denied": http.StatusForbidden, "not_found": http.StatusNotFound,
	"already_exists": http.StatusConflict, "failed_precondition": http.StatusPreconditionFailed,
}

func (c *call) twirpFail(code, format string, args ...any) error {
	c.writeJSON(twirpStatus[code], twirpError{Code: code, Msg: fmt.Sprintf(format, args...)})
	return nil
}

// resultsCall authenticates a results-service call by its runtime token and reads its body,
// whose backend ids must be the token's. It answers the error itself and returns nil then.
func (s *Server) resultsCall(c *call, req any) *runtimeGrant {
	token, ok := strings.CutPrefix(c.r.Header.Get("Authorization"), "Bearer ")
	g := s.runtimes[token]
	if !ok || g == nil {
		_ = c.twirpFail("unauthenticated", "the runtime token is missing or unknown")
		return nil
	}
	if err := json.Unmarshal(c.body, req); err != nil {
		_ = c.twirpFail("invalid_argument", "the body is not the request's JSON: %v", err)
		return nil
	}
	var ids struct {
		Run string `json:"workflow_run_backend_id"`
		Job string `json:"workflow_job_run_backend_id"`
	}
	_ = json.Unmarshal(c.body, &ids)
	if ids.Run != g.runBackendID || ids.Job != g.jobBackendID {
		_ = c.twirpFail("permission_denied", "the backend ids are not the runtime token's")
		return nil
	}
	return g
}

func (s *Server) runArtifact(run *workflowRun, name string) *artifact {
	for _, a := range s.artifacts {
		if a.run == run && a.name == name {
			return a
		}
	}
	return nil
}

// createArtifact answers CreateArtifact: a signed URL to PUT the artifact's zip to.
func (s *Server) createArtifact(c *call) error {
	var req struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	g := s.resultsCall(c, &req)
	if g == nil {
		return nil
	}
	if req.Name == "" || strings.ContainsAny(req.Name, "\":<>|*?\r\n\\/") {
		return c.twirpFail("invalid_argument", "artifact name %q is empty or has a character an artifact name cannot have", req.Name)
	}
	if req.Version != 4 {
		return c.twirpFail("invalid_argument", "artifact version %d, want 4", req.Version)
	}
	if s.runArtifact(g.run, req.Name) != nil {
		return c.twirpFail("already_exists", "an artifact with this name already exists on the workflow run")
	}
	key := s.randomString(40)
	s.uploads[key] = &pendingUpload{grant: g, name: req.Name}
	c.writeJSON(http.StatusOK, map[string]any{"ok": true, "signed_upload_url": c.apiURL + "/_sim/uploads/" + key})
	return nil
}

// putUpload is the blob store's PUT of a signed upload URL (a block blob, in one request).
func (s *Server) putUpload(c *call) error {
	u := s.uploads[c.r.PathValue("key")]
	if u == nil || u.put {
		return forbidden("Server failed to authenticate the request.")
	}
	u.data, u.put = c.body, true
	c.noContent(http.StatusCreated)
	return nil
}

// finalizeArtifact answers FinalizeArtifact: the uploaded zip becomes the run's artifact once
// its size and hash are the ones declared.
func (s *Server) finalizeArtifact(c *call) error {
	var req struct {
		Name string `json:"name"`
		Size string `json:"size"`
		Hash string `json:"hash"`
	}
	g := s.resultsCall(c, &req)
	if g == nil {
		return nil
	}
	var u *pendingUpload
	var key string
	for k, p := range s.uploads {
		if p.grant.run == g.run && p.name == req.Name && p.put {
			u, key = p, k
		}
	}
	if u == nil {
		return c.twirpFail("not_found", "no upload of artifact %q on this run", req.Name)
	}
	sum := sha256.Sum256(u.data)
	if req.Size != strconv.Itoa(len(u.data)) || req.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		return c.twirpFail("invalid_argument", "artifact %q: size %s and hash %s are not the uploaded bytes'", req.Name, req.Size, req.Hash)
	}
	delete(s.uploads, key)
	a := &artifact{id: s.nextID(), run: g.run, name: req.Name, archive: u.data, createdAt: c.now, expiresAt: c.now.Add(artifactRetention)}
	s.artifacts = append(s.artifacts, a)
	c.writeJSON(http.StatusOK, map[string]any{"ok": true, "artifact_id": itoa(a.id)})
	return nil
}

type resultsArtifactJSON struct {
	RunBackendID string `json:"workflow_run_backend_id"`
	JobBackendID string `json:"workflow_job_run_backend_id"`
	DatabaseID   string `json:"database_id"`
	Name         string `json:"name"`
	Size         string `json:"size"`
	CreatedAt    string `json:"created_at"`
}

// listResultsArtifacts answers ListArtifacts: the run's unexpired artifacts, by name when
// name_filter is given.
func (s *Server) listResultsArtifacts(c *call) error {
	var req struct {
		NameFilter *string `json:"name_filter"`
	}
	g := s.resultsCall(c, &req)
	if g == nil {
		return nil
	}
	out := []resultsArtifactJSON{}
	for _, a := range s.artifacts {
		if a.run != g.run || !c.now.Before(a.expiresAt) || req.NameFilter != nil && a.name != *req.NameFilter {
			continue
		}
		out = append(out, resultsArtifactJSON{RunBackendID: g.runBackendID, JobBackendID: g.jobBackendID,
			DatabaseID: itoa(a.id), Name: a.name, Size: strconv.Itoa(len(a.archive)), CreatedAt: a.createdAt.UTC().Format(time.RFC3339Nano)})
	}
	c.writeJSON(http.StatusOK, map[string]any{"artifacts": out})
	return nil
}

// signedArtifactURL answers GetSignedArtifactURL: a short-lived URL of the artifact's zip.
func (s *Server) signedArtifactURL(c *call) error {
	var req struct {
		Name string `json:"name"`
	}
	g := s.resultsCall(c, &req)
	if g == nil {
		return nil
	}
	a := s.runArtifact(g.run, req.Name)
	if a == nil || !c.now.Before(a.expiresAt) {
		return c.twirpFail("not_found", "artifact %q not found on the workflow run", req.Name)
	}
	c.writeJSON(http.StatusOK, map[string]any{"signed_url": s.signedURL(c, a.archive, "application/zip")})
	return nil
}

// deleteArtifact answers the REST DELETE of an artifact: 204.
func (s *Server) deleteArtifact(c *call) error {
	a, err := s.artifactFromPath(c)
	if err != nil {
		return err
	}
	for i, x := range s.artifacts {
		if x == a {
			s.artifacts = append(s.artifacts[:i], s.artifacts[i+1:]...)
			break
		}
	}
	c.noContent(http.StatusNoContent)
	return nil
}

func (s *Server) resultsRoutes() {
	s.handle("POST "+ResultsServicePath+"CreateArtifact", authNone, s.createArtifact)
	s.handle("POST "+ResultsServicePath+"FinalizeArtifact", authNone, s.finalizeArtifact)
	s.handle("POST "+ResultsServicePath+"ListArtifacts", authNone, s.listResultsArtifacts)
	s.handle("POST "+ResultsServicePath+"GetSignedArtifactURL", authNone, s.signedArtifactURL)
	s.handle("PUT /_sim/uploads/{key}", authNone, s.putUpload)
	s.handle("DELETE /repos/{owner}/{repo}/actions/artifacts/{artifact_id}", authToken, s.deleteArtifact)
}
