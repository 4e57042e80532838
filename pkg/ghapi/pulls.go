package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// GetPullRequest reads pull request number. A missing PR fails with an error
// matching ErrNotFound; an answer without a known state and head SHA, or for
// another number, fails with ErrUnusableAnswer. Callers deciding obsolescence
// treat any failure but ErrNotFound as "unknown", not "closed". A re-read of
// the same PR is conditional (If-None-Match): unchanged, it costs no rate limit.
func (c *Client) GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: pull request number is %d; want a positive number", number)
	}
	return c.getPullConditional(ctx, number)
}

// UsablePullRequest checks that an answer says, for pull request number,
// whether it is open and at which head. An empty state would read as "not
// open", i.e. obsolete: deleting a paid pod or cancelling a run must never
// rest on an answer that does not say so. Failures match ErrUnusableAnswer.
func UsablePullRequest(pr *github.PullRequest, number int) error {
	switch {
	case pr == nil:
		return fmt.Errorf("pull request #%d: no answer: %w", number, ErrUnusableAnswer)
	case pr.GetNumber() != number:
		return fmt.Errorf("pull request #%d: the answer describes #%d: %w", number, pr.GetNumber(), ErrUnusableAnswer)
	case pr.GetState() != "open" && pr.GetState() != "closed":
		return fmt.Errorf("pull request #%d: state %q; want open or closed: %w", number, pr.GetState(), ErrUnusableAnswer)
	case pr.GetHead().GetSHA() == "":
		return fmt.Errorf("pull request #%d: the answer has no head SHA: %w", number, ErrUnusableAnswer)
	}
	return nil
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
	files, err := listPages(c, what, maxPullRequestFiles/perPage, func(page int) ([]*github.CommitFile, *github.Response, error) {
		opts.Page = page
		return c.gh.PullRequests.ListFiles(ctx, c.owner, c.repo, number, opts)
	})
	if err != nil {
		return nil, err
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
