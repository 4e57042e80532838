package ghapi

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/redact"
)

// maxCheckOutputBytes is GitHub's limit on a check run's output summary and
// text (a longer summary is refused, a longer text silently cut).
const maxCheckOutputBytes = 65535

// CheckRunInput describes a check run to create.
type CheckRunInput struct {
	Name    string // required, e.g. "CI GPU gate"
	HeadSHA string // required: the commit the check is on
	// ExternalID is the caller's marker, matched on the client when listing.
	ExternalID string
	DetailsURL string
	// Status is queued, in_progress or completed; empty lets GitHub decide
	// (completed when Conclusion is set).
	Status string
	// Conclusion is success, failure, neutral, cancelled, skipped, timed_out
	// or action_required; set it only for a completed check.
	Conclusion  string
	StartedAt   time.Time // zero: not sent
	CompletedAt time.Time // zero: not sent
	Title       string    // output title; GitHub wants Title and Summary together
	Summary     string    // Markdown, at most 65535 bytes
	Text        string    // Markdown, at most 65535 bytes
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}
)

// CreateCheckRun creates a check run with one POST, sent again only after a
// 429 (which published nothing): any other repeat could publish a second check.
func (c *Client) CreateCheckRun(ctx context.Context, in CheckRunInput) (*github.CheckRun, error) {
	// A check run is public to everyone who can read the repository: no
	// secret the client knows goes into its text.
	in.Title, in.Summary, in.Text = c.redactor.Redact(in.Title), c.redactor.Redact(in.Summary), c.redactor.Redact(in.Text)
	opts, err := in.options()
	if err != nil {
		return nil, err
	}
	run, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("create check run %q", in.Name), err, nil)
	}
	return run, nil
}

// ListCheckRunsForRef lists every check run named name (any name when empty)
// on ref: all of them, not only the latest (filter=all), 100 a page. More than maxPages pages
// (<= 0: DefaultMaxPages) fails with *PageBoundError.
func (c *Client) ListCheckRunsForRef(ctx context.Context, ref, name string, maxPages int) ([]*github.CheckRun, error) {
	if ref == "" {
		return nil, fmt.Errorf("ghapi: check-run ref is empty")
	}
	opts := &github.ListCheckRunsOptions{Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: perPage}}
	if name != "" {
		opts.CheckName = github.String(name)
	}
	what := fmt.Sprintf("list check runs %q for %s", name, ref)
	return listPages(c, what, maxPages, func(page int) ([]*github.CheckRun, *github.Response, error) {
		opts.Page = page
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, ref, opts)
		if err != nil {
			return nil, resp, err
		}
		return res.CheckRuns, resp, nil
	})
}

func (in CheckRunInput) options() (github.CreateCheckRunOptions, error) {
	var opts github.CreateCheckRunOptions
	if err := checkPrintable("check-run name", in.Name); err != nil {
		return opts, err
	}
	if in.HeadSHA == "" {
		return opts, fmt.Errorf("ghapi: check run %q: HeadSHA is empty", in.Name)
	}
	if in.Status != "" && !slices.Contains(checkStatuses, in.Status) {
		return opts, fmt.Errorf("ghapi: check run %q: status %q: want one of %v", in.Name, in.Status, checkStatuses)
	}
	if in.Conclusion != "" {
		if !slices.Contains(checkConclusions, in.Conclusion) {
			return opts, fmt.Errorf("ghapi: check run %q: conclusion %q: want one of %v", in.Name, in.Conclusion, checkConclusions)
		}
		if in.Status != "" && in.Status != "completed" {
			return opts, fmt.Errorf("ghapi: check run %q: conclusion %q with status %q; a conclusion needs status completed", in.Name, in.Conclusion, in.Status)
		}
	}
	for _, f := range []struct{ key, value string }{{"Summary", in.Summary}, {"Text", in.Text}} {
		if len(f.value) > maxCheckOutputBytes {
			return opts, fmt.Errorf("ghapi: check run %q: %s is %d bytes; GitHub takes at most %d", in.Name, f.key, len(f.value), maxCheckOutputBytes)
		}
	}
	if (in.Title == "") != (in.Summary == "") || (in.Text != "" && in.Title == "") {
		return opts, fmt.Errorf("ghapi: check run %q: output needs both Title and Summary (or neither, and no Text)", in.Name)
	}

	opts = github.CreateCheckRunOptions{Name: in.Name, HeadSHA: in.HeadSHA}
	opts.ExternalID = optional(in.ExternalID)
	opts.DetailsURL = optional(in.DetailsURL)
	opts.Status = optional(in.Status)
	opts.Conclusion = optional(in.Conclusion)
	if !in.StartedAt.IsZero() {
		opts.StartedAt = &github.Timestamp{Time: in.StartedAt}
	}
	if !in.CompletedAt.IsZero() {
		opts.CompletedAt = &github.Timestamp{Time: in.CompletedAt}
	}
	if in.Title != "" {
		// Anyone with read access sees a check run: no key leaves in one,
		// whether the caller's redactor knew it or not.
		opts.Output = &github.CheckRunOutput{Title: github.String(redact.Published(in.Title)), Summary: github.String(redact.Published(in.Summary)),
			Text: optional(redact.Published(in.Text))}
	}
	return opts, nil
}

// optional maps "" to an absent field.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
