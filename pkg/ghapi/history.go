package ghapi

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/wire"
)

// A pull request's earlier heads, for reuse by tree key. The REST timeline's
// head_ref_force_pushed event carries no SHAs (a plain state-change event), so
// the replaced heads come from GraphQL's timeline, in one request: the
// HeadRefForcePushedEvent items (beforeCommit/afterCommit) and the
// PullRequestCommit items (each commit pushed onto the head branch).

// MaxHeadHistoryItems is the most timeline items one history read asks for
// (GitHub caps a connection at 100).
const MaxHeadHistoryItems = 100

// headHistoryQuery reads the newest head pushes of one pull request.
const headHistoryQuery = `query($owner: String!, $name: String!, $number: Int!, $last: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT]) {
        nodes {
          __typename
          ... on HeadRefForcePushedEvent { createdAt beforeCommit { oid } afterCommit { oid } }
          ... on PullRequestCommit { commit { oid } }
        }
      }
    }
  }
}`

// HeadPush is one push of a pull request's head: a force-push replacing
// Before with After, or a commit pushed onto the head branch (Commit).
// A SHA GitHub no longer has is "".
type HeadPush struct {
	Force         bool
	Before, After string
	Commit        string
}

type oidJSON struct {
	OID string `json:"oid"`
}

type headHistoryReply struct {
	Data *struct {
		Repository *struct {
			PullRequest *struct {
				TimelineItems struct {
					Nodes []struct {
						Typename     string   `json:"__typename"`
						BeforeCommit *oidJSON `json:"beforeCommit"`
						AfterCommit  *oidJSON `json:"afterCommit"`
						Commit       *oidJSON `json:"commit"`
					} `json:"nodes"`
				} `json:"timelineItems"`
			} `json:"pullRequest"`
		} `json:"repository"`
	} `json:"data"`
	Errors []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"errors"`
}

// PullRequestHeadHistory reads the newest last (1..MaxHeadHistoryItems) head
// pushes of pull request number, oldest first, with one GraphQL request
// (POST {api}/graphql; GitHub Enterprise Server's /api/graphql). A SHA that is
// not a full commit SHA is left out ("").
func (c *Client) PullRequestHeadHistory(ctx context.Context, number, last int) ([]HeadPush, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: pull request number is %d; want a positive number", number)
	}
	if last < 1 || last > MaxHeadHistoryItems {
		return nil, fmt.Errorf("ghapi: head history of %d items: want 1 to %d", last, MaxHeadHistoryItems)
	}
	op := fmt.Sprintf("read the head history of pull request #%d", number)
	body := map[string]any{"query": headHistoryQuery,
		"variables": map[string]any{"owner": c.owner, "name": c.repo, "number": number, "last": last}}
	// "../graphql" is /graphql on api.github.com and /api/graphql beside GHES's /api/v3/.
	req, err := c.gh.NewRequest("POST", "../graphql", body)
	if err != nil {
		return nil, c.fail(op, err, nil)
	}
	var reply headHistoryReply
	// A query changes nothing: sending it again is safe.
	if _, err := c.gh.Do(reqpolicy.AllowRetry(ctx), req, &reply); err != nil {
		return nil, c.fail(op, err, nil)
	}
	if len(reply.Errors) > 0 {
		return nil, c.fail(op, fmt.Errorf("GraphQL error %s: %s", reply.Errors[0].Type, reply.Errors[0].Message), nil)
	}
	if reply.Data == nil || reply.Data.Repository == nil || reply.Data.Repository.PullRequest == nil {
		return nil, c.fail(op, fmt.Errorf("the answer names no pull request: %w", ErrUnusableAnswer), nil)
	}
	oid := func(o *oidJSON) string {
		if o == nil || !wire.IsCommitSHA(o.OID) {
			return ""
		}
		return o.OID
	}
	var out []HeadPush
	for _, n := range reply.Data.Repository.PullRequest.TimelineItems.Nodes {
		switch n.Typename {
		case "HeadRefForcePushedEvent":
			out = append(out, HeadPush{Force: true, Before: oid(n.BeforeCommit), After: oid(n.AfterCommit)})
		case "PullRequestCommit":
			out = append(out, HeadPush{Commit: oid(n.Commit)})
		}
	}
	return out, nil
}

// Commit is what the git data API says of a commit: its tree and parents.
type Commit struct {
	Tree    string
	Parents []string
}

// GitCommit reads commit sha (GET /repos/{o}/{r}/git/commits/{sha}): its tree
// (what its files are, whatever its message, author or parents) and its parents
// in order (a merge commit: the base, then the merged head).
func (c *Client) GitCommit(ctx context.Context, sha string) (Commit, error) {
	if !wire.IsCommitSHA(sha) {
		return Commit{}, fmt.Errorf("ghapi: commit %q: want a full lowercase commit SHA", sha)
	}
	op := "read commit " + sha
	commit, _, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, sha)
	if err != nil {
		return Commit{}, c.fail(op, err, nil)
	}
	out := Commit{Tree: commit.GetTree().GetSHA()}
	if !wire.IsCommitSHA(out.Tree) {
		return Commit{}, c.fail(op, fmt.Errorf("GitHub's answer has tree sha %q, want a full lowercase SHA", out.Tree), nil)
	}
	for _, p := range commit.Parents {
		if !wire.IsCommitSHA(p.GetSHA()) {
			return Commit{}, c.fail(op, fmt.Errorf("GitHub's answer has parent sha %q, want a full lowercase SHA", p.GetSHA()), nil)
		}
		out.Parents = append(out.Parents, p.GetSHA())
	}
	return out, nil
}

// maxReviewPages bounds the reviews listing (100 a page).
const maxReviewPages = 3

// ListPullRequestReviews lists the submitted reviews of pull request number,
// oldest first: who, which verdict, at which commit. More than
// maxReviewPages pages fails with *PageBoundError.
func (c *Client) ListPullRequestReviews(ctx context.Context, number int) ([]*github.PullRequestReview, error) {
	if number <= 0 {
		return nil, fmt.Errorf("ghapi: pull request number is %d; want a positive number", number)
	}
	what := fmt.Sprintf("list reviews of pull request #%d", number)
	opts := &github.ListOptions{PerPage: perPage}
	return listPages(c, what, maxReviewPages, func(page int) ([]*github.PullRequestReview, *github.Response, error) {
		opts.Page = page
		return c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, number, opts)
	})
}

// maxCompareFiles is how many files GitHub's compare answer lists at most.
const maxCompareFiles = 300

// CompareFiles lists the paths changed from base to head (GET
// /repos/{o}/{r}/compare/{base}...{head}; renames give both names), for a
// merge group's GPU paths. GitHub lists at most 300 files: at that cap the
// list may be cut, which fails, since a path-based decision on it is unsafe.
func (c *Client) CompareFiles(ctx context.Context, base, head string) ([]string, error) {
	if !wire.IsCommitSHA(base) || !wire.IsCommitSHA(head) {
		return nil, fmt.Errorf("ghapi: compare %q...%q: want two full lowercase commit SHAs", base, head)
	}
	what := fmt.Sprintf("compare %s...%s", base, head)
	comp, _, err := c.gh.Repositories.CompareCommits(ctx, c.owner, c.repo, base, head, &github.ListOptions{PerPage: perPage})
	if err != nil {
		return nil, c.fail(what, err, nil)
	}
	if len(comp.Files) >= maxCompareFiles {
		return nil, fmt.Errorf("ghapi: %s: %d files is GitHub's listing cap; the list may be cut", what, len(comp.Files))
	}
	var paths []string
	for _, f := range comp.Files {
		paths = append(paths, f.GetFilename())
		if prev := f.GetPreviousFilename(); prev != "" {
			paths = append(paths, prev)
		}
	}
	return paths, nil
}
