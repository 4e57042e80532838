package serverlessaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
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
	c := serverless.Carry{GitHub: gh, Name: in.LedgerName, WorkflowPath: workflowPath(io.Getenv("GITHUB_WORKFLOW_REF")), Branch: in.LedgerBranch, Logf: io.Infof}
	cctx, cancel := context.WithTimeout(ctx, carryTimeout)
	defer cancel()
	from, err := c.Fetch(cctx, in.LedgerPath)
	switch {
	case errors.Is(err, serverless.ErrNoLedger):
		io.Noticef("ledger: %v: this run begins the repository's Serverless ledger at $0.00", err)
		return nil
	case err != nil:
		return fmt.Errorf("the repository's Serverless budget ledger was not carried over, so nothing was created (the lane never starts from an empty ledger while an earlier one may exist): %w", err)
	}
	l, err := serverless.ReadLedger(in.LedgerPath)
	if err != nil {
		return err
	}
	io.Infof("ledger: the repository's ledger from %s: %s reserved in %d attempts, %s cap",
		from, serverless.Dollars(l.TotalCents()), len(l.Attempts), serverless.Dollars(lane.Ledger.Caps.Total))
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
