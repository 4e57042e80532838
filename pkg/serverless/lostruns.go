package serverless

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

// ErrUnreconciled is matched when a trusted run newer than the carried
// ledger left no ledger artifact: its upload was lost, so the ledger misses
// what it reserved, and the lane refuses until a maintainer reconciles it.
var ErrUnreconciled = errors.New("a run's ledger upload was lost")

// LostUploadError names the runs whose ledger upload was lost.
type LostUploadError struct {
	Runs []int64
	From string // the ledger the lane would have started from
}

func (e *LostUploadError) Error() string {
	ids := make([]string, len(e.Runs))
	for i, id := range e.Runs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	return fmt.Sprintf("%v: run(s) %s of this workflow on the default branch ended after %s and left no ledger artifact, so the ledger misses what they reserved: nothing is created until they are reconciled (check what each billed on RunPod, then name them in reconcile-lost-runs as RUN=DOLLARS, e.g. 123=2.61; a RUN alone is charged a whole attempt's worst case, two stages at the stage cap)",
		ErrUnreconciled, strings.Join(ids, ", "), e.From)
}

func (e *LostUploadError) Unwrap() error { return ErrUnreconciled }

// lostUploads are the trusted, completed runs newer than the carried
// ledger's run (and not the current one) that left none: the newest trusted
// artifact would have been theirs had the upload succeeded.
func (c Carry) lostUploads(ctx context.Context, carried *github.WorkflowRun) ([]int64, error) {
	if c.Runs == nil {
		return nil, nil
	}
	runs, err := c.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("carry the ledger: list the workflow's runs to find lost ledger uploads: %w", err)
	}
	var lost []int64
	for _, r := range runs {
		switch {
		case r.GetID() == c.CurrentRun, r.GetStatus() != "completed", c.untrusted(r) != "":
		case carried != nil && !r.GetCreatedAt().After(carried.GetCreatedAt().Time):
		case r.GetConclusion() == "skipped":
		default:
			lost = append(lost, r.GetID())
		}
	}
	slices.Sort(lost)
	return slices.Compact(lost), nil
}

// ChargeLostRuns records each reconciled lost run in the ledger as a closed
// attempt: at what the maintainer found it billed (cents > 0, one
// reservation), else at a whole attempt's worst case (the setup and the job
// stage, each at the stage cap), whatever the caps leave: it records spend
// that happened, not a request. A run already charged is skipped.
func (f LedgerFile) ChargeLostRuns(runs map[int64]money.WholeCents, now time.Time) error {
	ids := make([]int64, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	_, err := f.update(func(l *Ledger) error {
		for _, id := range ids {
			name := fmt.Sprintf("lost-upload-run-%d", id)
			if slices.ContainsFunc(l.Attempts, func(a AttemptEntry) bool { return a.Name == name }) {
				continue
			}
			l.Attempts = append(l.Attempts, AttemptEntry{Name: name, OpenedAt: now, Deadline: now, ClosedAt: now,
				Note: "run's ledger upload lost; reconciled at its worst case"})
			if cents := runs[id]; cents > 0 {
				l.Reservations = append(l.Reservations, Reservation{Stage: StageJob, Attempt: name, Cents: cents, At: now,
					Basis: "lost ledger upload: what RunPod billed, as reconciled"})
				continue
			}
			for _, stage := range []string{StageSetup, StageJob} {
				l.Reservations = append(l.Reservations, Reservation{Stage: stage, Attempt: name, Cents: f.Caps.MaxStage.CentsUp(), At: now,
					Basis: "lost ledger upload: the stage cap"})
			}
		}
		return nil
	})
	return err
}

// ParseReconciledRuns reads reconcile-lost-runs: comma- or space-separated
// RUN or RUN=DOLLARS entries (a run id, and what RunPod billed it).
func ParseReconciledRuns(s string) (map[int64]money.WholeCents, error) {
	out := map[int64]money.WholeCents{}
	for _, field := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		idText, amount, hasAmount := strings.Cut(field, "=")
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || id < 1 {
			return nil, fmt.Errorf("reconcile-lost-runs: %.40q is not a run id: want RUN or RUN=DOLLARS, e.g. 123=2.61", field)
		}
		cents := money.WholeCents(0)
		if hasAmount {
			billed, err := money.Parse("reconcile-lost-runs", amount, money.Limit{Min: money.Micro, Max: spend.LedgerMax})
			if err != nil {
				return nil, fmt.Errorf("reconcile-lost-runs: run %d's amount %.20q: want US dollars above 0 and at most %s, e.g. 2.61", id, amount, spend.LedgerMax)
			}
			cents = billed.CentsUp()
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("reconcile-lost-runs: run %d is named twice", id)
		}
		out[id] = cents
	}
	return out, nil
}
