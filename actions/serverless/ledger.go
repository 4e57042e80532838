package serverlessaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/serverless"
)

// carryTimeout bounds finding and downloading the repository's ledger.
const carryTimeout = 2 * time.Minute

// carryLedger starts the run from the repository's ledger: the newest one a
// run of this workflow on the default branch left as the ledger-artifact
// artifact. Only "none yet" starts a new, empty ledger; a ledger that cannot
// be read, or a ledger-path that already holds a file (a checkout could have
// put one there), refuses the run before anything is created.
func carryLedger(ctx context.Context, io *actionio.IO, in Inputs, lane *serverless.Lane) error {
	if in.LedgerName == "" {
		io.Infof("ledger: %s, this run's only (ledger-artifact is empty: nothing is carried across runs)", in.LedgerPath)
		return nil
	}
	if _, err := os.Stat(in.LedgerPath); err == nil {
		return &actionio.InputError{Input: "ledger-path", Value: in.LedgerPath,
			Expected: "a path that holds no file yet: with ledger-artifact the ledger comes only from the repository's artifact"}
	}
	gh, err := actionkit.GitHub(ctx, io, actionkit.GitHubInputs{Token: in.GitHubToken}, "")
	if err != nil {
		return err
	}
	reconciled, err := serverless.ParseReconciledRuns(in.ReconcileLostRuns)
	if err != nil {
		return &actionio.InputError{Input: "reconcile-lost-runs", Value: in.ReconcileLostRuns, Expected: "RUN or RUN=DOLLARS entries, e.g. 123=2.61"}
	}
	current, _ := strconv.ParseInt(io.Getenv("GITHUB_RUN_ID"), 10, 64)
	path := workflowPath(io.Getenv("GITHUB_WORKFLOW_REF"))
	c := serverless.Carry{GitHub: gh, Name: in.LedgerName, WorkflowPath: path, Branch: in.LedgerBranch, Logf: io.Infof,
		CurrentRun: current, Reconciled: reconciled,
		// A run newer than the carried ledger that left none lost its upload.
		Runs: func(ctx context.Context) ([]*github.WorkflowRun, error) {
			return gh.ListWorkflowRuns(ctx, filepath.Base(path), ghapi.ListRunsFilter{Branch: in.LedgerBranch}, 0)
		}}
	cctx, cancel := context.WithTimeout(ctx, carryTimeout)
	defer cancel()
	from, charge, err := c.FetchReconciling(cctx, in.LedgerPath)
	switch {
	case errors.Is(err, serverless.ErrNoLedger):
		io.Noticef("ledger: %v: this run begins the repository's Serverless ledger at $0.00", err)
		return chargeLost(io, lane, charge)
	case err != nil:
		return fmt.Errorf("the repository's Serverless budget ledger was not carried over, so nothing was created (the lane never starts from an empty ledger while an earlier one may exist): %w", err)
	}
	if err := chargeLost(io, lane, charge); err != nil {
		return err
	}
	l, err := serverless.ReadLedger(in.LedgerPath)
	if err != nil {
		return err
	}
	io.Infof("ledger: the repository's ledger from %s: %s reserved in %d attempts, %s cap",
		from, l.TotalCents().Amount(), len(l.Attempts), lane.Ledger.Caps.Total)
	return nil
}

// chargeLost records the reconciled lost runs in the carried ledger.
func chargeLost(io *actionio.IO, lane *serverless.Lane, charge map[int64]money.WholeCents) error {
	if len(charge) == 0 {
		return nil
	}
	if err := lane.Ledger.ChargeLostRuns(charge, lane.Policy.Now()); err != nil {
		return fmt.Errorf("charge the lost runs %v to the ledger (nothing was created): %w", charge, err)
	}
	io.Noticef("ledger: %d run(s) whose ledger upload was lost are charged as reconciled (reconcile-lost-runs)", len(charge))
	return nil
}

// workflowPath is the workflow file of GITHUB_WORKFLOW_REF
// ("owner/repo/.github/workflows/x.yml@refs/heads/main" → ".github/workflows/x.yml").
func workflowPath(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	parts := strings.SplitN(ref, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}
