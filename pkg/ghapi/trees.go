package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// CommitTree returns the tree SHA of commit sha (GET /repos/{o}/{r}/git/commits/{sha}):
// what the commit's files are, whatever its message, author or parents.
func (c *Client) CommitTree(ctx context.Context, sha string) (string, error) {
	commit, err := c.GitCommit(ctx, sha)
	return commit.Tree, err
}

// UpdateCheckRun updates check run id with one PATCH (never retried, like
// CreateCheckRun): an in-progress gate is completed with its final outcome.
// HeadSHA and StartedAt cannot change and are not sent.
func (c *Client) UpdateCheckRun(ctx context.Context, id int64, in CheckRunInput) (*github.CheckRun, error) {
	if id <= 0 {
		return nil, fmt.Errorf("ghapi: check run id %d: want a positive id", id)
	}
	in.Title, in.Summary, in.Text = c.redactor.Redact(in.Title), c.redactor.Redact(in.Summary), c.redactor.Redact(in.Text)
	if in.HeadSHA == "" {
		in.HeadSHA = "-" // options() wants one; an update never sends it
	}
	create, err := in.options()
	if err != nil {
		return nil, err
	}
	opts := github.UpdateCheckRunOptions{Name: create.Name, DetailsURL: create.DetailsURL, ExternalID: create.ExternalID,
		Status: create.Status, Conclusion: create.Conclusion, CompletedAt: create.CompletedAt, Output: create.Output}
	run, _, err := c.gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, id, opts)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("update check run %d (%q)", id, in.Name), err, nil)
	}
	return run, nil
}
