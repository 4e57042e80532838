package serverless

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
)

// fakeArtifacts is a repository's ledger artifacts, newest first, and their runs.
type fakeArtifacts struct {
	list  []*github.Artifact
	runs  map[int64]*github.WorkflowRun
	files map[int64][]byte
}

func (f fakeArtifacts) ArtifactsByName(context.Context, string) ([]*github.Artifact, error) {
	return f.list, nil
}
func (f fakeArtifacts) GetWorkflowRun(_ context.Context, id int64) (*github.WorkflowRun, error) {
	return f.runs[id], nil
}
func (f fakeArtifacts) DownloadArtifact(_ context.Context, id int64) ([]byte, error) {
	return f.files[id], nil
}

func zipOne(t testing.TB, name string, body []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	assert.NilError(t, err)
	_, err = w.Write(body)
	assert.NilError(t, err)
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}

// TestCarryTakesTheNewestTrustedLedger: a pull request's run, another
// branch's, a fork's and another workflow's ledgers are passed over; the
// newest of the workflow's own default-branch runs is the repository's.
func TestCarryTakesTheNewestTrustedLedger(t *testing.T) {
	at := p2time()
	sealed := func(cents money.WholeCents) []byte {
		l := &Ledger{Version: LedgerVersion, Attempts: []AttemptEntry{{Name: "a", OpenedAt: at}}, Reservations: []Reservation{{Stage: StageSetup, Attempt: "a", Cents: cents, At: at}}}
		l.seal()
		data, _ := json.Marshal(l)
		return data
	}
	const wf = ".github/workflows/runpod-gpu-serverless.yml"
	repo := &github.Repository{ID: github.Int64(1)}
	fork := &github.Repository{ID: github.Int64(2)}
	run := func(id int64, event, branch, path string, head *github.Repository) *github.WorkflowRun {
		return &github.WorkflowRun{ID: github.Int64(id), Event: github.String(event), HeadBranch: github.String(branch), Path: github.String(path),
			HeadRepository: head, Repository: repo, RunAttempt: github.Int(1)}
	}
	artifact := func(id, runID int64, branch string, headRepo int64) *github.Artifact {
		return &github.Artifact{ID: github.Int64(id), Name: github.String(LedgerArtifact), SizeInBytes: github.Int64(500),
			WorkflowRun: &github.ArtifactWorkflowRun{ID: github.Int64(runID), HeadBranch: github.String(branch), RepositoryID: github.Int64(1), HeadRepositoryID: github.Int64(headRepo)}}
	}
	store := fakeArtifacts{
		list: []*github.Artifact{artifact(15, 5, "main", 1), artifact(14, 4, "main", 2), artifact(13, 3, "feature", 1), artifact(12, 2, "main", 1), artifact(11, 1, "main", 1)},
		runs: map[int64]*github.WorkflowRun{
			5: run(5, "pull_request", "main", wf, repo), 4: run(4, "workflow_dispatch", "main", wf, fork),
			3: run(3, "workflow_dispatch", "feature", wf, repo), 2: run(2, "workflow_dispatch", "main", ".github/workflows/other.yml", repo),
			1: run(1, "workflow_run", "main", wf, repo)},
		files: map[int64][]byte{15: zipOne(t, "budget.json", sealed(1)), 14: zipOne(t, "budget.json", sealed(2)), 13: zipOne(t, "budget.json", sealed(3)),
			12: zipOne(t, "budget.json", sealed(4)), 11: zipOne(t, "budget.json", sealed(261))},
	}
	path := filepath.Join(t.TempDir(), "budget.json")
	from, err := Carry{GitHub: store, WorkflowPath: wf, Branch: "main"}.Fetch(context.Background(), path)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(from, "artifact runpod-gpu-serverless-ledger (11) of run 1 attempt 1"))
	l, err := ReadLedger(path)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents(), money.WholeCents(261)))

	_, err = Carry{GitHub: fakeArtifacts{}, WorkflowPath: wf, Branch: "main"}.Fetch(context.Background(), filepath.Join(t.TempDir(), "b.json"))
	assert.Check(t, errors.Is(err, ErrNoLedger), "%v", err)

	store.files[11] = zipOne(t, "budget.json", bytes.Replace(sealed(261), []byte(`"cents":261`), []byte(`"cents":1`), 1))
	tampered := filepath.Join(t.TempDir(), "b.json")
	_, err = Carry{GitHub: store, WorkflowPath: wf, Branch: "main"}.Fetch(context.Background(), tampered)
	assert.Check(t, errors.Is(err, ErrTampered), "%v", err)
}

// FuzzLedgerFromZip: a ledger artifact's archive is outside data.
func FuzzLedgerFromZip(f *testing.F) {
	f.Add(zipOne(f, "budget.json", []byte(`{"version":2}`)))
	f.Add(zipOne(f, "dir/budget.json", []byte(`{}`)))
	f.Add([]byte("not a zip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ledgerFromZip(data)
		if err == nil {
			assert.Check(t, len(out) <= maxLedgerBytes)
		}
	})
}
