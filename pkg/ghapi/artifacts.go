package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/google/go-github/v66/github"
)

// ArtifactsByName lists the repository's artifacts named exactly name,
// newest first, reading all pages (bounded by DefaultMaxPages). go-github v66
// has no name filter, so the request is built by hand.
func (c *Client) ArtifactsByName(ctx context.Context, name string) ([]*github.Artifact, error) {
	if err := checkPrintable("artifact name", name); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("list artifacts named %q", name)
	artifacts, err := listPages(c, what, DefaultMaxPages, func(page int) ([]*github.Artifact, *github.Response, error) {
		query := url.Values{"name": {name}, "per_page": {strconv.Itoa(perPage)}, "page": {strconv.Itoa(page)}}
		req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/artifacts?%s", c.owner, c.repo, query.Encode()), nil)
		if err != nil {
			return nil, nil, err
		}
		var list github.ArtifactList
		resp, err := c.gh.Do(ctx, req, &list)
		if err != nil {
			return nil, resp, err
		}
		return list.Artifacts, resp, nil
	})
	if err != nil {
		return nil, err
	}
	// The filter is GitHub's (and absent on old servers); the exact match is ours.
	exact := artifacts[:0]
	for _, a := range artifacts {
		if a.GetName() == name {
			exact = append(exact, a)
		}
	}
	return exact, nil
}

// ListRunArtifacts lists every artifact of workflow run runID, reading all
// pages (bounded by DefaultMaxPages).
func (c *Client) ListRunArtifacts(ctx context.Context, runID int64) ([]*github.Artifact, error) {
	if runID <= 0 {
		return nil, fmt.Errorf("ghapi: workflow run id is %d; want a positive id", runID)
	}
	what := fmt.Sprintf("list artifacts of workflow run %d", runID)
	opts := &github.ListOptions{PerPage: perPage}
	return listPages(c, what, DefaultMaxPages, func(page int) ([]*github.Artifact, *github.Response, error) {
		opts.Page = page
		list, resp, err := c.gh.Actions.ListWorkflowRunArtifacts(ctx, c.owner, c.repo, runID, opts)
		if err != nil {
			return nil, resp, err
		}
		return list.Artifacts, resp, nil
	})
}

// DownloadArtifact downloads artifact artifactID's zip archive, following
// GitHub's redirect without credentials. Archives over
// Options.MaxDownloadBytes fail with ErrTooLarge.
func (c *Client) DownloadArtifact(ctx context.Context, artifactID int64) ([]byte, error) {
	if artifactID <= 0 {
		return nil, errors.New("ghapi: artifact id is " + strconv.FormatInt(artifactID, 10) + "; want a positive id")
	}
	path := fmt.Sprintf("repos/%s/%s/actions/artifacts/%d/zip", c.owner, c.repo, artifactID)
	return c.downloadArchive(ctx, fmt.Sprintf("download artifact %d", artifactID), path)
}
