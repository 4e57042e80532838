package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// ListIssueComments lists every comment on issue or pull request number,
// oldest first, reading all pages (bounded by DefaultMaxPages).
func (c *Client) ListIssueComments(ctx context.Context, number int) ([]*github.IssueComment, error) {
	// number 0 would list every comment in the repository.
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: issue number is %d; want a positive number", number)
	}
	what := fmt.Sprintf("list comments on #%d", number)
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: perPage}}
	return listPages(c, what, DefaultMaxPages, func(page int) ([]*github.IssueComment, *github.Response, error) {
		opts.Page = page
		return c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, opts)
	})
}

// CreateIssueComment posts body as a comment on issue or pull request number,
// with one POST (never retried: a repeat would post twice).
func (c *Client) CreateIssueComment(ctx context.Context, number int, body string) (*github.IssueComment, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: issue number is %d; want a positive number", number)
	}
	if body == "" {
		return nil, fmt.Errorf("ghapi: comment on #%d: body is empty", number)
	}
	body = c.redactor.Redact(body) // a comment is public: no secret the client knows goes into it
	comment, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return nil, c.fail(fmt.Sprintf("comment on #%d", number), err, nil)
	}
	return comment, nil
}
