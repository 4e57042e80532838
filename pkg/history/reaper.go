package history

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/ownership"
)

// The reaper's decision records are evidence too: a pod the lane never
// reported (its cleanup never ran) is priced by the reaper that deleted it,
// from the provider's start to the confirmed deletion, rather than estimated
// from the lane's log. The records are the reaper's artifacts
// (ownership.ReapRecordPrefix<run>-<attempt>) of runs on the default
// branch, where the reaper runs with the environment's key; a record
// another branch uploaded is never read. They are saved, as their JSON, under
// reaper/<artifact id>.json in the evidence directory.

const reaperFolder = "reaper"

// runAttempt is the end of the reaper's record artifact's name, after
// ownership.ReapRecordPrefix: "<run id>-<run attempt>".
var runAttempt = lazyre.Regexp{Pattern: `^[0-9]+-[0-9]+$`}

// isReaperRecord reports whether an artifact name is the reaper's workflow's
// record (not, say, the organization reaper's runpod-gpu-reap-org-…).
func isReaperRecord(name string) bool {
	rest, ok := strings.CutPrefix(name, ownership.ReapRecordPrefix)
	return ok && runAttempt.MatchString(rest)
}

// reaperRecord is the part of the reaper's decision record (pkg/reap's
// Record, version 1) the history reads: the owning run attempt and the
// estimated cost of each pod the sweep deleted.
type reaperRecord struct {
	Version    int    `json:"version"`
	Repository string `json:"repository"`
	Pods       []struct {
		PodID   string       `json:"podId"`
		RunID   int64        `json:"runId"`
		Attempt int          `json:"attempt"`
		Cost    *cost.Report `json:"cost"`
	} `json:"pods"`
}

// reaperRepository is what collection reads the records through.
type reaperRepository interface {
	Repository(ctx context.Context) (*github.Repository, error)
	ArtifactsWithPrefix(ctx context.Context, prefix string, since time.Time) ([]*github.Artifact, error)
}

// collectReaperRecords saves the reaper's records uploaded since the
// range's start (a later sweep may have reclaimed a pod of the range) by
// runs on the default branch. A failure is logged and left to the next
// collection: the lane's own evidence does not depend on it.
func (c *Collector) collectReaperRecords(ctx context.Context, r Range) error {
	gh, ok := c.GitHub.(reaperRepository)
	if !ok {
		return nil
	}
	repo, err := gh.Repository(ctx)
	if err != nil {
		c.logf("the reaper's records: read the repository: %v: tried again next time", err)
		return nil
	}
	list, err := gh.ArtifactsWithPrefix(ctx, ownership.ReapRecordPrefix, r.Since)
	if err != nil {
		c.logf("the reaper's records: %v: tried again next time", err)
		return nil
	}
	dir := filepath.Join(c.Dir, reaperFolder)
	for _, a := range list {
		path := filepath.Join(dir, fmt.Sprintf("%d.json", a.GetID()))
		if _, err := os.Stat(path); err == nil || !isReaperRecord(a.GetName()) || a.GetExpired() || a.GetSizeInBytes() > maxArtifactBytes {
			continue
		}
		if branch := a.GetWorkflowRun().GetHeadBranch(); branch != repo.GetDefaultBranch() {
			c.logf("the reaper's record %s comes from branch %q, not the default branch: not read", a.GetName(), branch)
			continue
		}
		data, err := c.GitHub.DownloadArtifact(ctx, a.GetID())
		if err == nil {
			data, err = recordJSON(data)
		}
		if err != nil {
			c.logf("the reaper's record %s: %s: tried again next time", a.GetName(), describeFailure(err))
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeAtomic(path, data); err != nil {
			return err
		}
	}
	return nil
}

// recordJSON takes the record's JSON out of its artifact's archive and
// checks it is one.
func recordJSON(archive []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".json") || f.UncompressedSize64 > maxArtifactBytes {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxArtifactBytes))
		rc.Close()
		if err != nil {
			return nil, err
		}
		var rec reaperRecord
		if err := json.Unmarshal(data, &rec); err != nil || rec.Version != 1 {
			return nil, fmt.Errorf("%s is not a version 1 decision record", f.Name)
		}
		return data, nil
	}
	return nil, errors.New("the archive holds no decision record")
}

// reaperCosts are the reaper's reports by pod id, with the run attempt
// each pod belonged to.
type reaperCosts map[string]reaperCost

type reaperCost struct {
	key    AttemptKey
	report cost.Report
}

// loadReaperCosts reads every saved record; a record that no longer parses
// is a problem for the report, not an error.
func loadReaperCosts(dir string) (reaperCosts, []string) {
	out := reaperCosts{}
	var problems []string
	entries, err := os.ReadDir(filepath.Join(dir, reaperFolder))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, []string{fmt.Sprintf("the reaper's records: %v", err)}
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, reaperFolder, e.Name()))
		var rec reaperRecord
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("the reaper's record %s: %v: left out", e.Name(), err))
			continue
		}
		for _, p := range rec.Pods {
			if p.Cost != nil && p.PodID != "" && p.RunID > 0 {
				out[p.PodID] = reaperCost{key: AttemptKey{RunID: p.RunID, Attempt: max(p.Attempt, 1)}, report: *p.Cost}
			}
		}
	}
	return out, problems
}

// of returns the reaper's reports of pods of attempt k.
func (r reaperCosts) of(k AttemptKey) []cost.Report {
	var out []cost.Report
	for _, c := range r {
		if c.key == k {
			out = append(out, c.report)
		}
	}
	return out
}
