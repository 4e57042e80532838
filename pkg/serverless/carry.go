package serverless

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/money"
)

// LedgerArtifact is the default name of the artifact that carries a
// repository's ledger from one CI run to the next.
const LedgerArtifact = "runpod-gpu-serverless-ledger"

// maxLedgerBytes bounds a carried ledger: a ledger is small, so anything
// bigger is not one and is not downloaded.
const maxLedgerBytes = 1 << 20

// ArtifactStore is the part of the GitHub client (*ghapi.Client) the carry uses.
type ArtifactStore interface {
	ArtifactsByName(ctx context.Context, name string) ([]*github.Artifact, error)
	GetWorkflowRun(ctx context.Context, runID int64) (*github.WorkflowRun, error)
	DownloadArtifact(ctx context.Context, artifactID int64) ([]byte, error)
}

// Carry keeps one ledger for a repository across CI runs: each run's lane
// job uploads its ledger as an artifact (Name) when it ends, and the next
// run's lane starts from the newest one a trusted run left — a run of the
// same workflow (WorkflowPath) on the default branch (Branch) of the
// repository itself, started by anything but a pull request. A job-level
// concurrency group in the reusable workflow makes those runs one at a time,
// so no two of them read the same ledger.
type Carry struct {
	GitHub       ArtifactStore
	Name         string // artifact name; "" means LedgerArtifact
	WorkflowPath string // ".github/workflows/runpod-gpu-serverless.yml"
	Branch       string // the default branch
	Logf         func(format string, args ...any)
	// Runs lists the workflow's runs on Branch, newest first: a trusted run
	// newer than the carried ledger that left none lost its upload, and Fetch
	// refuses (ErrUnreconciled) unless Reconciled names it. Nil skips the check.
	Runs func(ctx context.Context) ([]*github.WorkflowRun, error)
	// CurrentRun is this run's id, never a lost one.
	CurrentRun int64
	// Reconciled are lost runs a maintainer has reconciled, with what each
	// billed in cents (0: unknown, its worst case): the caller charges them
	// (LedgerFile.ChargeLostRuns).
	Reconciled map[int64]money.WholeCents
}

// ErrNoLedger is matched when no trusted run has left a ledger yet.
var ErrNoLedger = errors.New("no earlier ledger")

// Fetch writes the newest trusted ledger to path (it must not exist yet) and
// names where it came from. It fails with ErrNoLedger when there is none,
// and refuses (ErrTampered) a ledger whose checksum is wrong: a missing or
// unreadable ledger would reset the repository's budget, so only "none yet"
// lets a lane begin with an empty one.
func (c Carry) Fetch(ctx context.Context, path string) (string, error) {
	from, _, err := c.FetchReconciling(ctx, path)
	return from, err
}

// FetchReconciling is Fetch that also returns the lost runs of Reconciled
// that the ledger misses, for the caller to charge (LedgerFile.ChargeLostRuns).
func (c Carry) FetchReconciling(ctx context.Context, path string) (from string, charge map[int64]money.WholeCents, _ error) {
	name := c.Name
	if name == "" {
		name = LedgerArtifact
	}
	if c.Branch == "" || c.WorkflowPath == "" {
		return "", nil, fmt.Errorf("carry the ledger: the default branch (%q) and the workflow (%q) must be known", c.Branch, c.WorkflowPath)
	}
	list, err := c.GitHub.ArtifactsByName(ctx, name)
	if err != nil {
		return "", nil, fmt.Errorf("carry the ledger: %w", err)
	}
	for _, a := range list {
		if !c.candidate(a) {
			continue
		}
		run, err := c.GitHub.GetWorkflowRun(ctx, a.GetWorkflowRun().GetID())
		if err != nil {
			return "", nil, fmt.Errorf("carry the ledger: %w", err)
		}
		if why := c.untrusted(run); why != "" {
			c.logf("carry the ledger: artifact %d of run %d skipped: %s", a.GetID(), run.GetID(), why)
			continue
		}
		charge, err := c.checkLost(ctx, run, fmt.Sprintf("run %d's ledger", run.GetID()))
		if err != nil {
			return "", nil, err
		}
		from, err := c.write(ctx, a, run, path)
		return from, charge, err
	}
	charge, err = c.checkLost(ctx, nil, "no ledger at all")
	if err != nil {
		return "", nil, err
	}
	return "", charge, fmt.Errorf("%w: no %s artifact of %s on %s", ErrNoLedger, name, c.WorkflowPath, c.Branch)
}

// checkLost refuses while a lost upload since carried is not reconciled,
// and returns the reconciled ones to charge.
func (c Carry) checkLost(ctx context.Context, carried *github.WorkflowRun, from string) (charge map[int64]money.WholeCents, _ error) {
	lost, err := c.lostUploads(ctx, carried)
	if err != nil {
		return nil, err
	}
	var open []int64
	for _, id := range lost {
		if cents, ok := c.Reconciled[id]; ok {
			if charge == nil {
				charge = map[int64]money.WholeCents{}
			}
			charge[id] = cents
		} else {
			open = append(open, id)
		}
	}
	if len(open) > 0 {
		return nil, &LostUploadError{Runs: open, From: from}
	}
	return charge, nil
}

// candidate is what the listing itself tells about an artifact.
func (c Carry) candidate(a *github.Artifact) bool {
	r := a.GetWorkflowRun()
	return !a.GetExpired() && a.GetSizeInBytes() <= maxLedgerBytes && r.GetHeadBranch() == c.Branch &&
		r.GetHeadRepositoryID() != 0 && r.GetHeadRepositoryID() == r.GetRepositoryID()
}

// untrusted says why a run's ledger is not the repository's, or "".
func (c Carry) untrusted(run *github.WorkflowRun) string {
	switch {
	case strings.HasPrefix(run.GetEvent(), "pull_request"):
		return "started by " + run.GetEvent()
	case run.GetHeadBranch() != c.Branch:
		return "on branch " + run.GetHeadBranch()
	case run.GetHeadRepository().GetID() != run.GetRepository().GetID():
		return "from another repository"
	case run.GetPath() != c.WorkflowPath:
		return "of workflow " + run.GetPath()
	}
	return ""
}

// write downloads a's ledger, checks it, and writes it to path.
func (c Carry) write(ctx context.Context, a *github.Artifact, run *github.WorkflowRun, path string) (string, error) {
	data, err := c.GitHub.DownloadArtifact(ctx, a.GetID())
	if err != nil {
		return "", fmt.Errorf("carry the ledger: %w", err)
	}
	ledger, err := ledgerFromZip(data)
	if err != nil {
		return "", fmt.Errorf("carry the ledger: artifact %d of run %d: %w", a.GetID(), run.GetID(), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := writeAtomic(path, ledger, true); err != nil {
		return "", fmt.Errorf("carry the ledger: %w", err)
	}
	from := fmt.Sprintf("artifact %s (%d) of run %d attempt %d", a.GetName(), a.GetID(), run.GetID(), run.GetRunAttempt())
	if _, err := ReadLedger(path); err != nil {
		return "", fmt.Errorf("carry the ledger from %s: %w", from, err)
	}
	return from, nil
}

// ledgerFromZip returns the one JSON file of a ledger artifact.
func ledgerFromZip(data []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %v", err)
	}
	if len(zr.File) != 1 || !strings.HasSuffix(zr.File[0].Name, ".json") || strings.Contains(zr.File[0].Name, "/") {
		return nil, fmt.Errorf("want exactly one .json file at the top, got %d entries", len(zr.File))
	}
	f, err := zr.File[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := io.ReadAll(io.LimitReader(f, maxLedgerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxLedgerBytes {
		return nil, fmt.Errorf("the ledger is over %d bytes", maxLedgerBytes)
	}
	return out, nil
}

func (c Carry) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}
