package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// GetPullRequest reads pull request number. A missing PR fails with an error
// matching ErrNotFound; callers deciding obsolescence should treat any other
// failure as "unknown", not "closed".
func (c *Client) GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: pull request number is %d; want a positive number", number)
	}
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get pull request #%d", number), err, nil)
	}
	return pr, nil
}

// maxPullRequestFiles is GitHub's cap on the files listing of one pull request.
const maxPullRequestFiles = 3000

// ListPullRequestFiles lists the paths a pull request changes (renames give
// both names), reading every page. GitHub lists at most 3000 files; a PR at
// that cap fails, since a path-based decision on a truncated list is unsafe.
func (c *Client) ListPullRequestFiles(ctx context.Context, number int) ([]string, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: pull request number is %d; want a positive number", number)
	}
	what := fmt.Sprintf("list files of pull request #%d", number)
	opts := &github.ListOptions{PerPage: perPage}
	files, err := collectPages(what, maxPullRequestFiles/perPage, func(page int) ([]*github.CommitFile, *github.Response, error) {
		opts.Page = page
		return c.gh.PullRequests.ListFiles(ctx, c.owner, c.repo, number, opts)
	})
	if err != nil {
		return nil, c.fail(what, err, nil)
	}
	if len(files) >= maxPullRequestFiles {
		return nil, fmt.Errorf("ghapi: %s: %d files is GitHub's listing cap; the list may be truncated", what, len(files))
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.GetFilename())
		if prev := f.GetPreviousFilename(); prev != "" {
			paths = append(paths, prev)
		}
	}
	return paths, nil
}
