package ghapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// ArtifactsWithPrefix lists the repository's artifacts whose name starts with
// prefix, in one listing of the repository (GitHub lists newest first): a
// sweep reads every run's records in pages instead of one listing per run.
// Paging stops once a page ends with an artifact created before since (older
// ones cannot matter to the caller) — unless the answer is not newest first,
// then it reads to the end. It is bounded by ctx's deadline, not a page count.
func (c *Client) ArtifactsWithPrefix(ctx context.Context, prefix string, since time.Time) ([]*github.Artifact, error) {
	if err := checkPrintable("artifact name prefix", prefix); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("list the repository's artifacts named %s…", prefix)
	opts := &github.ListOptions{PerPage: perPage}
	var out []*github.Artifact
	pages := 0
	ordered := true // newest first so far
	var last time.Time
	page := 1
	for {
		opts.Page = page
		list, resp, err := c.gh.Actions.ListArtifacts(ctx, c.owner, c.repo, opts)
		if err != nil {
			return nil, c.fail(what, err, nil)
		}
		pages++
		for _, a := range list.Artifacts {
			created := a.GetCreatedAt().Time
			if !last.IsZero() && created.After(last) {
				ordered = false
			}
			if !created.IsZero() {
				last = created
			}
			if strings.HasPrefix(a.GetName(), prefix) {
				out = append(out, a)
			}
		}
		// A next page that does not move forward would loop forever.
		if resp == nil || resp.NextPage <= page {
			return out, nil
		}
		if ordered && !since.IsZero() && !last.IsZero() && last.Before(since) {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ghapi: %s: stopped after %d pages: %w", what, pages, err)
		}
		page = resp.NextPage
	}
}
