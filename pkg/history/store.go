package history

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Evidence directory layout: one folder per workflow run attempt,
// attempts/<run id>-<attempt>/, holding attempt.json (the record below),
// logs.zip and artifact-<id>.zip as GitHub served them, and jobs.json, the
// attempt's jobs (which say whose logs are trusted).
const (
	attemptsFolder = "attempts"
	recordFile     = "attempt.json"
	logsFile       = "logs.zip"
	recordSchema   = "runpod-gpu-history-attempt/v1"
)

// AttemptKey identifies one attempt of a workflow run.
type AttemptKey struct {
	RunID   int64
	Attempt int
}

// String renders the key as "<run id>-<attempt>", the attempt's folder name.
func (k AttemptKey) String() string { return fmt.Sprintf("%d-%d", k.RunID, k.Attempt) }

// parseAttemptKey reads a folder name written by AttemptKey.String.
func parseAttemptKey(name string) (AttemptKey, bool) {
	run, attempt, ok := strings.Cut(name, "-")
	id, err1 := strconv.ParseInt(run, 10, 64)
	n, err2 := strconv.Atoi(attempt)
	if !ok || err1 != nil || err2 != nil || id < 1 || n < 1 || name != (AttemptKey{id, n}).String() {
		return AttemptKey{}, false
	}
	return AttemptKey{RunID: id, Attempt: n}, true
}

// DownloadState says whether a download is final.
type DownloadState string

// Download states. Only complete and unavailable are final; the others are
// tried again by the next collection.
const (
	StateComplete    DownloadState = "complete"    // downloaded and saved
	StateFailed      DownloadState = "failed"      // the request failed; retried next time
	StatePending     DownloadState = "pending"     // the attempt had not completed; retried next time
	StateUnavailable DownloadState = "unavailable" // GitHub will never serve it (expired, too large)
)

// final reports whether a download in this state is never tried again.
func (s DownloadState) final() bool { return s == StateComplete || s == StateUnavailable }

// Download is the state of one download, with why it is not complete.
type Download struct {
	State DownloadState `json:"state"`
	Error string        `json:"error,omitempty"`
}

// ArtifactFile is one cost artifact of an attempt.
type ArtifactFile struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// CreatedAt is when GitHub created the artifact: it must fall while the
	// job its name claims ran (zero in evidence of earlier versions).
	CreatedAt time.Time `json:"createdAt,omitzero"`
	Download            // of the archive, saved as artifact-<id>.zip
}

// fileName is where the artifact's archive is saved in the attempt folder.
func (a ArtifactFile) fileName() string { return fmt.Sprintf("artifact-%d.zip", a.ID) }

// AttemptRecord is attempt.json: what GitHub said about the attempt and the
// state of each of its downloads.
type AttemptRecord struct {
	Schema       string    `json:"schema"`
	Repository   string    `json:"repository"` // owner/name
	Workflow     string    `json:"workflow"`   // .github/workflows/<file>
	RunID        int64     `json:"runId"`
	Attempt      int       `json:"runAttempt"`
	RunNumber    int       `json:"runNumber"`
	Event        string    `json:"event"`
	HeadSHA      string    `json:"headSha"`
	HeadBranch   string    `json:"headBranch"`
	PullRequests []int     `json:"pullRequests"`
	CreatedAt    time.Time `json:"createdAt"` // the run's creation, what the created filter matches
	StartedAt    time.Time `json:"startedAt"` // this attempt's start
	Status       string    `json:"status"`
	Conclusion   string    `json:"conclusion"`
	URL          string    `json:"url"` // the attempt's page
	// Logs is the state of logs.zip; Jobs of jobs.json; ArtifactList of the
	// listing that found the cost artifacts; Artifacts of each artifact found.
	// A record saved before jobs were listed has no Jobs state: not final, so
	// the next collection lists them.
	Logs         Download       `json:"logs"`
	Jobs         Download       `json:"jobs"`
	ArtifactList Download       `json:"artifactList"`
	Artifacts    []ArtifactFile `json:"artifacts"`
}

// Key returns the attempt's key.
func (r AttemptRecord) Key() AttemptKey { return AttemptKey{RunID: r.RunID, Attempt: r.Attempt} }

// Final reports whether every download of the attempt is final, so that a
// later collection leaves it alone.
func (r AttemptRecord) Final() bool {
	if !r.Logs.State.final() || !r.Jobs.State.final() || !r.ArtifactList.State.final() {
		return false
	}
	for _, a := range r.Artifacts {
		if !a.State.final() {
			return false
		}
	}
	return true
}

// validate checks what the summary relies on.
func (r AttemptRecord) validate() error {
	switch {
	case r.Schema != recordSchema:
		return fmt.Errorf("key \"schema\": %q: want %q", r.Schema, recordSchema)
	case r.RunID < 1 || r.Attempt < 1:
		return fmt.Errorf("keys \"runId\"/\"runAttempt\": %d/%d: want positive numbers", r.RunID, r.Attempt)
	case r.CreatedAt.IsZero():
		return errors.New(`key "createdAt": missing; want an RFC 3339 time`)
	}
	return nil
}

// store is an evidence directory.
type store struct{ dir string }

func (s store) attemptDir(k AttemptKey) string {
	return filepath.Join(s.dir, attemptsFolder, k.String())
}

// load reads an attempt's record; ok is false when none is saved.
func (s store) load(k AttemptKey) (rec AttemptRecord, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(s.attemptDir(k), recordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return AttemptRecord{}, false, nil
	}
	if err != nil {
		return AttemptRecord{}, false, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return AttemptRecord{}, false, fmt.Errorf("%w: %s: %v", ErrCorruptEvidence, filepath.Join(s.attemptDir(k), recordFile), err)
	}
	if err := rec.validate(); err != nil {
		return AttemptRecord{}, false, fmt.Errorf("%w: %s: %v", ErrCorruptEvidence, filepath.Join(s.attemptDir(k), recordFile), err)
	}
	if rec.Key() != k {
		return AttemptRecord{}, false, fmt.Errorf("%w: %s names run %d attempt %d", ErrCorruptEvidence,
			filepath.Join(s.attemptDir(k), recordFile), rec.RunID, rec.Attempt)
	}
	return rec, true, nil
}

// save writes an attempt's record, after the files it describes.
func (s store) save(rec AttemptRecord) error {
	rec.Schema = recordSchema
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFile(rec.Key(), recordFile, append(data, '\n'))
}

// writeFile writes one file of an attempt atomically: a collection that dies
// midway never leaves a truncated archive that a record calls complete.
func (s store) writeFile(k AttemptKey, name string, data []byte) error {
	if err := os.MkdirAll(s.attemptDir(k), 0o755); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.attemptDir(k), name), data)
}

// readFile reads one file of an attempt.
func (s store) readFile(k AttemptKey, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.attemptDir(k), name))
}

// keys lists the saved attempts in run and attempt order. Folders that are
// not attempt folders are ignored.
func (s store) keys() ([]AttemptKey, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, attemptsFolder))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []AttemptKey
	for _, e := range entries {
		if k, ok := parseAttemptKey(e.Name()); ok && e.IsDir() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys)
	return keys, nil
}

func compareKeys(a, b AttemptKey) int {
	return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Attempt, b.Attempt))
}
