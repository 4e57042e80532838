package workflowplay

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ResultsServicePath is the Twirp path of the artifact service under ACTIONS_RESULTS_URL.
const ResultsServicePath = "/twirp/github.actions.results.api.v1.ArtifactService/"

// artifactCallTimeout bounds every call to the results service and the blob store.
const artifactCallTimeout = 60 * time.Second

// Artifacts is a client of a run's Actions results service, as actions/upload-artifact and
// actions/download-artifact v4 speak it: Twirp at ACTIONS_RESULTS_URL with the job's
// ACTIONS_RUNTIME_TOKEN, the zip going to and from signed blob URLs. Unlike the real
// actions, it does not retry a failed call: a failure fails the step, so a workflow's own
// retry step is what recovers.
type Artifacts struct {
	URL          string // ACTIONS_RESULTS_URL
	Token        string // ACTIONS_RUNTIME_TOKEN; never logged
	RunBackendID string // workflow_run_backend_id, which the real token carries
	JobBackendID string // workflow_job_run_backend_id
	HTTP         *http.Client
}

func (a *Artifacts) client() *http.Client {
	if a.HTTP != nil {
		return a.HTTP
	}
	return &http.Client{Timeout: artifactCallTimeout}
}

// twirp posts one call to the service and decodes its answer into out.
func (a *Artifacts) twirp(ctx context.Context, method string, body map[string]any, out any) error {
	body["workflow_run_backend_id"], body["workflow_job_run_backend_id"] = a.RunBackendID, a.JobBackendID
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, artifactCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(a.URL, "/")+ResultsServicePath+method, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client().Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Msg string }
		_ = json.Unmarshal(raw, &e)
		return fmt.Errorf("%s: %s %s %s", method, resp.Status, e.Code, e.Msg)
	}
	return json.Unmarshal(raw, out)
}

// blob moves bytes to or from a signed URL.
func (a *Artifacts) blob(ctx context.Context, method, url string, data []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, artifactCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if method == http.MethodPut {
		req.Header.Set("x-ms-blob-type", "BlockBlob")
	}
	resp, err := a.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s the artifact's blob: %w", method, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s the artifact's blob: %w", method, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s the artifact's blob: %s", method, resp.Status)
	}
	return out, nil
}

// Upload stores zipped as the run's artifact name and returns its id.
func (a *Artifacts) Upload(ctx context.Context, name string, zipped []byte) (int64, error) {
	var created struct {
		SignedUploadURL string `json:"signed_upload_url"`
	}
	if err := a.twirp(ctx, "CreateArtifact", map[string]any{"name": name, "version": 4}, &created); err != nil {
		return 0, err
	}
	if _, err := a.blob(ctx, http.MethodPut, created.SignedUploadURL, zipped); err != nil {
		return 0, err
	}
	sum := sha256.Sum256(zipped)
	var done struct {
		ArtifactID string `json:"artifact_id"`
	}
	if err := a.twirp(ctx, "FinalizeArtifact", map[string]any{"name": name, "size": strconv.Itoa(len(zipped)), "hash": "sha256:" + hex.EncodeToString(sum[:])}, &done); err != nil {
		return 0, err
	}
	return strconv.ParseInt(done.ArtifactID, 10, 64)
}

// List names the run's artifacts, or checks that one named name exists.
func (a *Artifacts) List(ctx context.Context, name string) ([]string, error) {
	body := map[string]any{}
	if name != "" {
		body["name_filter"] = name
	}
	var listed struct {
		Artifacts []struct {
			Name string `json:"name"`
		} `json:"artifacts"`
	}
	if err := a.twirp(ctx, "ListArtifacts", body, &listed); err != nil {
		return nil, err
	}
	var out []string
	for _, x := range listed.Artifacts {
		out = append(out, x.Name)
	}
	return out, nil
}

// Download returns the zip of the run's artifact name.
func (a *Artifacts) Download(ctx context.Context, name string) ([]byte, error) {
	var signed struct {
		SignedURL string `json:"signed_url"`
	}
	if err := a.twirp(ctx, "GetSignedArtifactURL", map[string]any{"name": name}, &signed); err != nil {
		return nil, err
	}
	return a.blob(ctx, http.MethodGet, signed.SignedURL, nil)
}

// zipPaths zips what the upload-artifact path input names (one path or glob a line,
// relative to dir), each file under its path from the files' least common ancestor
// directory, as the action stores them; a single directory is stored from itself.
func zipPaths(dir, paths string) ([]byte, int, error) {
	files, root, err := artifactFiles(dir, paths)
	if err != nil || len(files) == 0 {
		return nil, 0, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, 0, err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Deflate})
		if err != nil {
			return nil, 0, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, 0, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), len(files), nil
}

// artifactFiles are the files the path input names, sorted, and the directory they are
// stored from.
func artifactFiles(dir, paths string) ([]string, string, error) {
	var files, roots []string
	for _, line := range strings.Split(paths, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "!") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		matches, err := filepath.Glob(line)
		if err != nil {
			return nil, "", fmt.Errorf("path %q: %w", line, err)
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				return nil, "", err
			}
			if !info.IsDir() {
				files, roots = append(files, m), append(roots, filepath.Dir(m))
				continue
			}
			roots = append(roots, m)
			err = filepath.WalkDir(m, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, p)
				}
				return err
			})
			if err != nil {
				return nil, "", err
			}
		}
	}
	if len(files) == 0 {
		return nil, "", nil
	}
	root := roots[0]
	for _, r := range roots[1:] {
		for !strings.HasPrefix(r+string(filepath.Separator), root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), root, nil
}

// unzipInto extracts an artifact's zip under dir; an entry that would land outside it is
// refused (the archive is outside data).
func unzipInto(zipped []byte, dir string) error {
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		return fmt.Errorf("the artifact is not a zip: %w", err)
	}
	for _, zf := range zr.File {
		target := filepath.Join(dir, filepath.FromSlash(zf.Name))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("artifact entry %q lands outside %s", zf.Name, dir)
		}
		if strings.HasSuffix(zf.Name, "/") {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		// Artifacts keep no file permissions (upload-artifact's README): an archive inside
		// one (a tar) is how a workflow keeps them.
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
