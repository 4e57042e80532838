package devcli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/suitecopy"
)

// copySuiteFlags are runpod-gpu copy-suite's flags.
type copySuiteFlags struct {
	dir, to string
	dryRun  bool
}

func (a *app) copySuiteCmd() *cobra.Command {
	f := copySuiteFlags{}
	cmd := &cobra.Command{
		Use:   "copy-suite --to OWNER [--dir .] [--dry-run]",
		Short: "Rename a checkout of the suite for a copy you keep under your own owner (optional)",
		Long: `copy-suite rewrites the checkout of the suite at --dir so that it names
OWNER/runpod-gpu instead of the owner its go.mod names (org, for the
published suite): the Go module path and its imports, the action image
ghcr.io/OWNER/runpod-gpu, every uses: OWNER/runpod-gpu/… and every URL.
Exactly the suite's own references change: my-org/runpod-gpu, or any name
that only ends in the owner, is left alone. It lists every file it changed;
a second run changes nothing. --dry-run lists and writes nothing.

The published suite needs none of this: keep a copy only to run a release of
your own (.github/docs/own-copy.md).`,
		Example: `  runpod-gpu copy-suite --to acme --dry-run
  runpod-gpu copy-suite --to acme && go test ./action-tests/rules ./pkg/callers ./pkg/devcli`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runCopySuite(f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "your GitHub user or organization, lower case: the copy becomes OWNER/runpod-gpu")
	fl.StringVar(&f.dir, "dir", ".", "the checkout of the suite to rename")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would change, change nothing")
	return cmd
}

func (a *app) runCopySuite(f copySuiteFlags) error {
	res, err := suitecopy.Copy(f.dir, f.to, f.dryRun)
	var owner *suitecopy.OwnerError
	switch {
	case errors.As(err, &owner), errors.Is(err, suitecopy.ErrNotSuite):
		return withCode(ExitUsage, err)
	case err != nil:
		return err
	}
	out := a.env.Stdout
	if len(res.Changes) == 0 {
		fmt.Fprintf(out, "%s already names %s/%s: nothing to change\n", f.dir, res.To, suitecopy.Repo)
		return nil
	}
	verb := "changed"
	if f.dryRun {
		verb = "would change"
	}
	for _, c := range res.Changes {
		fmt.Fprintf(out, "%s %s (%d)\n", verb, c.Path, c.Count)
	}
	fmt.Fprintf(out, "%s/%s → %s/%s: %d references in %d files\n", res.From, suitecopy.Repo, res.To, suitecopy.Repo, res.References(), len(res.Changes))
	if !f.dryRun {
		fmt.Fprint(out, "Next: go test ./action-tests/rules ./pkg/callers ./pkg/devcli, commit, push, and run a release (.github/docs/own-copy.md).\n")
	}
	return nil
}
