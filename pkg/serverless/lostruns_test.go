package serverless

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

// TestLedgerCountsARunWhoseUploadWasLost: three paid attempts, one per run,
// $2.61 each; the second run's ledger upload was lost. The third run would
// start from the first run's ledger ($2.61) and lose the second run's spend
// from the cumulative cap: it refuses, naming run 2, until run 2 is
// reconciled; reconciled, run 2 is charged a whole attempt's worst case and
// the ledger holds at least what the three runs reserved.
func TestLedgerCountsARunWhoseUploadWasLost(t *testing.T) {
	at := p2time()
	const wf = ".github/workflows/runpod-gpu-serverless.yml"
	repo := &github.Repository{ID: github.Int64(1)}
	run := func(id int64, created time.Time, status string) *github.WorkflowRun {
		return &github.WorkflowRun{ID: github.Int64(id), Event: github.String("workflow_dispatch"), HeadBranch: github.String("main"), Path: github.String(wf),
			HeadRepository: repo, Repository: repo, RunAttempt: github.Int(1), Status: github.String(status), Conclusion: github.String("success"),
			CreatedAt: &github.Timestamp{Time: created}}
	}
	sealed := func() []byte {
		l := &Ledger{Version: LedgerVersion, Attempts: []AttemptEntry{{Name: "run-1", OpenedAt: at, ClosedAt: at.Add(time.Hour)}},
			Reservations: []Reservation{{Stage: StageSetup, Attempt: "run-1", Cents: 131, At: at}, {Stage: StageJob, Attempt: "run-1", Cents: 130, At: at}}}
		l.seal()
		data, _ := json.Marshal(l)
		return data
	}
	runs := map[int64]*github.WorkflowRun{1: run(1, at, "completed"), 2: run(2, at.Add(time.Hour), "completed"), 3: run(3, at.Add(2*time.Hour), "in_progress")}
	store := fakeArtifacts{
		list: []*github.Artifact{{ID: github.Int64(11), Name: github.String(LedgerArtifact), SizeInBytes: github.Int64(500),
			WorkflowRun: &github.ArtifactWorkflowRun{ID: github.Int64(1), HeadBranch: github.String("main"), RepositoryID: github.Int64(1), HeadRepositoryID: github.Int64(1)}}},
		runs:  runs,
		files: map[int64][]byte{11: zipOne(t, "budget.json", sealed())},
	}
	listed := func(context.Context) ([]*github.WorkflowRun, error) {
		return []*github.WorkflowRun{runs[3], runs[2], runs[1]}, nil
	}
	carry := Carry{GitHub: store, WorkflowPath: wf, Branch: "main", Runs: listed, CurrentRun: 3}

	_, err := carry.Fetch(context.Background(), filepath.Join(t.TempDir(), "budget.json"))
	var lost *LostUploadError
	assert.Assert(t, errors.As(err, &lost), "%v", err)
	assert.Check(t, errors.Is(err, ErrUnreconciled))
	assert.Check(t, is.DeepEqual(lost.Runs, []int64{2}))
	assert.Check(t, is.ErrorContains(err, "run(s) 2 of this workflow on the default branch ended after run 1's ledger and left no ledger artifact"))
	assert.Check(t, is.ErrorContains(err, "reconcile-lost-runs"))

	carry.Reconciled = map[int64]money.WholeCents{2: 261, 99: 0}
	path := filepath.Join(t.TempDir(), "budget.json")
	from, charge, err := carry.FetchReconciling(context.Background(), path)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(from, "artifact runpod-gpu-serverless-ledger (11) of run 1 attempt 1"))
	assert.Check(t, is.DeepEqual(charge, map[int64]money.WholeCents{2: 261}), "only a lost run is charged")
	f := LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps}
	assert.NilError(t, f.ChargeLostRuns(charge, at.Add(3*time.Hour)))
	assert.NilError(t, f.ChargeLostRuns(charge, at.Add(3*time.Hour)), "charging twice changes nothing")
	l, err := ReadLedger(path)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents(), money.WholeCents(2*261)), "$5.22 before the third run's own $2.61: $7.83 in all, not $5.22")
	assert.Check(t, is.Len(l.OpenAttempts(), 0))

	// A run reconciled without an amount is charged its worst case.
	worst := LedgerFile{Path: filepath.Join(t.TempDir(), "w.json"), Caps: spend.DefaultLedgerCaps}
	assert.NilError(t, worst.ChargeLostRuns(map[int64]money.WholeCents{2: 0}, at))
	l, err = ReadLedger(worst.Path)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents(), 2*spend.DefaultLedgerCaps.MaxStage.CentsUp()))

	// Without a run list there is no check (a caller that cannot list runs).
	carry.Runs, carry.Reconciled = nil, nil
	_, err = carry.Fetch(context.Background(), filepath.Join(t.TempDir(), "b.json"))
	assert.NilError(t, err)
}

func TestParseReconciledRuns(t *testing.T) {
	tests := []struct {
		in      string
		want    map[int64]money.WholeCents
		wantErr string
	}{
		{in: "", want: map[int64]money.WholeCents{}},
		{in: "123=2.61, 456", want: map[int64]money.WholeCents{123: 261, 456: 0}},
		{in: "7=0.011", want: map[int64]money.WholeCents{7: 2}},
		{in: "x=1", wantErr: `"x=1" is not a run id`},
		{in: "0", wantErr: `"0" is not a run id`},
		{in: "5=-1", wantErr: `run 5's amount "-1"`},
		{in: "5=abc", wantErr: `run 5's amount "abc"`},
		{in: "5,5=1", wantErr: "run 5 is named twice"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseReconciledRuns(tt.in)
			if tt.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tt.wantErr))
				assert.Check(t, is.ErrorContains(err, "reconcile-lost-runs"))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, tt.want))
		})
	}
}

func FuzzParseReconciledRuns(f *testing.F) {
	f.Add("123=2.61, 456")
	f.Add("1=1e308")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseReconciledRuns(s)
		if err != nil {
			return
		}
		for id, cents := range got {
			assert.Check(t, id > 0 && cents >= 0 && cents <= MaxCents)
		}
	})
}
