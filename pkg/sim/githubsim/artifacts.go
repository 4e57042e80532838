package githubsim

import (
	"archive/zip"
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"time"
)

const (
	// artifactRetention is GitHub's default artifact and log retention.
	artifactRetention = 90 * 24 * time.Hour
	// downloadURLLifetime is how long GitHub's signed log and artifact URLs stay valid.
	downloadURLLifetime = time.Minute
)

// ArtifactSpec describes an artifact for AddArtifact.
type ArtifactSpec struct {
	Name string
	// Files become the artifact's zip archive, stored in name order and stamped with the clock.
	Files map[string]string
	// CreatedAt defaults to the clock's now; ExpiresAt to 90 days after CreatedAt. An
	// artifact past ExpiresAt lists as expired and no longer downloads.
	CreatedAt time.Time
	ExpiresAt time.Time
}

type artifact struct {
	id        int64
	run       *workflowRun
	name      string
	archive   []byte
	createdAt time.Time
	expiresAt time.Time
}

// blob is content behind a signed download URL, as GitHub's redirects point to.
type blob struct {
	data        []byte
	contentType string
	expires     time.Time
}

// AddArtifact uploads an artifact to a run and returns its id.
func (s *Server) AddArtifact(fullName string, runID int64, spec ArtifactSpec) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return 0, err
	}
	if spec.Name == "" {
		return 0, invalid("artifact name must not be empty")
	}
	now := s.clock.Now()
	archive, err := zipFiles(spec.Files, now)
	if err != nil {
		return 0, err
	}
	created := cmp.Or(spec.CreatedAt, now)
	a := &artifact{
		id: s.nextID(), run: run, name: spec.Name, archive: archive,
		createdAt: created, expiresAt: cmp.Or(spec.ExpiresAt, created.Add(artifactRetention)),
	}
	s.artifacts = append(s.artifacts, a)
	return a.id, nil
}

// SetRunLogs sets the log archive of a run attempt (0 means the latest): one file per entry.
func (s *Server) SetRunLogs(fullName string, runID int64, attemptNumber int, files map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runByName(fullName, runID)
	if err != nil {
		return err
	}
	a, err := run.attempt(attemptNumber)
	if err != nil {
		return err
	}
	archive, err := zipFiles(files, s.clock.Now())
	if err != nil {
		return err
	}
	a.logs = archive
	return nil
}

// SetJobLog sets the plain-text log of a job, as its runner uploads it once the job ended.
func (s *Server) SetJobLog(fullName string, jobID int64, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.jobByName(fullName, jobID)
	if err != nil {
		return err
	}
	j.log = []byte(text)
	return nil
}

// zipFiles builds a zip archive whose bytes depend only on files and stamp.
func zipFiles(files map[string]string, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "" {
			return nil, invalid("archive entry names must not be empty")
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: stamp.UTC()})
		if err != nil {
			return nil, invalid("archive entry %q: %v", name, err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// signedURL stores data behind a fresh unguessable key and returns its URL.
func (s *Server) signedURL(c *call, data []byte, contentType string) string {
	key := s.randomString(40)
	s.blobs[key] = &blob{data: data, contentType: contentType, expires: c.now.Add(downloadURLLifetime)}
	return c.apiURL + "/_sim/blobs/" + key
}

func (s *Server) getBlob(c *call) error {
	b, ok := s.blobs[c.r.PathValue("key")]
	if !ok {
		return notFound("blob")
	}
	if !c.now.Before(b.expires) {
		delete(s.blobs, c.r.PathValue("key"))
		return forbidden("Server failed to authenticate the request. Signed expiry time has passed.")
	}
	c.header.Set("Content-Type", b.contentType)
	c.status, c.out = http.StatusOK, b.data
	return nil
}

// downloadRunLogs answers 302 to a short-lived URL of the attempt's log archive, as GitHub does.
func (s *Server) downloadRunLogs(c *call) error {
	a, err := s.attemptFromPath(c)
	if err != nil {
		return err
	}
	if a.logs == nil {
		return notFound("logs of run %d attempt %d", a.run.id, a.number)
	}
	c.redirect(s.signedURL(c, a.logs, "application/zip"))
	return nil
}

// downloadJobLogs answers 302 to a short-lived URL of the job's plain-text log, as GitHub does.
func (s *Server) downloadJobLogs(c *call) error {
	j, err := s.jobFromPath(c)
	if err != nil {
		return err
	}
	if j.log == nil {
		return notFound("logs of job %d", j.ID)
	}
	c.redirect(s.signedURL(c, j.log, "text/plain"))
	return nil
}

type artifactRunJSON struct {
	ID               int64  `json:"id"`
	RepositoryID     int64  `json:"repository_id"`
	HeadRepositoryID int64  `json:"head_repository_id"`
	HeadBranch       string `json:"head_branch"`
	HeadSHA          string `json:"head_sha"`
}

type artifactJSON struct {
	ID                 int64           `json:"id"`
	NodeID             string          `json:"node_id"`
	Name               string          `json:"name"`
	SizeInBytes        int64           `json:"size_in_bytes"`
	URL                string          `json:"url"`
	ArchiveDownloadURL string          `json:"archive_download_url"`
	Expired            bool            `json:"expired"`
	CreatedAt          string          `json:"created_at"`
	UpdatedAt          string          `json:"updated_at"`
	ExpiresAt          string          `json:"expires_at"`
	WorkflowRun        artifactRunJSON `json:"workflow_run"`
}

func (s *Server) artifactJSON(c *call, a *artifact) artifactJSON {
	rp := a.run.repo
	artifactURL := c.repoAPIURL(rp) + "/actions/artifacts/" + itoa(a.id)
	return artifactJSON{
		ID: a.id, NodeID: nodeID("MDg", a.id), Name: a.name, SizeInBytes: int64(len(a.archive)),
		URL: artifactURL, ArchiveDownloadURL: artifactURL + "/zip", Expired: !c.now.Before(a.expiresAt),
		CreatedAt: stamp(a.createdAt), UpdatedAt: stamp(a.createdAt), ExpiresAt: stamp(a.expiresAt),
		WorkflowRun: artifactRunJSON{
			ID: a.run.id, RepositoryID: rp.id, HeadRepositoryID: rp.id, HeadBranch: a.run.headBranch, HeadSHA: a.run.headSHA,
		},
	}
}

// listArtifacts answers the repository list and a run's list, newest first, with the exact
// name filter GitHub has (go-github v66 cannot send it; callers build the request).
func (s *Server) listArtifacts(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	var run *workflowRun
	if c.r.PathValue("run_id") != "" {
		id, err := pathInt(c, "run_id")
		if err != nil {
			return err
		}
		if run, err = s.runIn(rp, id); err != nil {
			return err
		}
	}
	q := c.r.URL.Query()
	var matched []*artifact
	for _, a := range slices.Backward(s.artifacts) {
		if a.run.repo == rp && (run == nil || a.run == run) && (!q.Has("name") || a.name == q.Get("name")) {
			matched = append(matched, a)
		}
	}
	return writePage(c, "artifacts", matched, func(a *artifact) artifactJSON { return s.artifactJSON(c, a) })
}

func (s *Server) artifactFromPath(c *call) (*artifact, error) {
	return repoObject(c, "artifact_id", "artifact", s.artifacts, func(a *artifact) (int64, *repo) { return a.id, a.run.repo })
}

func (s *Server) getArtifact(c *call) error {
	return getOne(c, s.artifactFromPath, func(a *artifact) artifactJSON { return s.artifactJSON(c, a) })
}

func (s *Server) downloadArtifact(c *call) error {
	a, err := s.artifactFromPath(c)
	if err != nil {
		return err
	}
	if c.r.PathValue("archive_format") != "zip" {
		return notFound("archive format %q", c.r.PathValue("archive_format"))
	}
	if !c.now.Before(a.expiresAt) {
		return gone("Artifact has expired")
	}
	c.redirect(s.signedURL(c, a.archive, "application/zip"))
	return nil
}
