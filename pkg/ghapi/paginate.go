package ghapi

import (
	"github.com/google/go-github/v66/github"
)

// fetchPage reads one page (1-based) of a listing.
type fetchPage[T any] func(page int) ([]T, *github.Response, error)

// listPages is collectPages whose error is the Client's *Error naming what.
func listPages[T any](c *Client, what string, maxPages int, fetch fetchPage[T]) ([]T, error) {
	all, err := collectPages(what, maxPages, fetch)
	if err != nil {
		return nil, c.fail(what, err, nil)
	}
	return all, nil
}

// collectPages reads pages 1, 2, … by the Link header until the last one.
// A listing with pages left after maxPages fails with *PageBoundError rather
// than returning a silently truncated list; maxPages <= 0 means
// DefaultMaxPages. Fetch errors are returned as they are.
func collectPages[T any](what string, maxPages int, fetch fetchPage[T]) ([]T, error) {
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	var all []T
	page := 1
	for read := 1; ; read++ {
		items, resp, err := fetch(page)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		// A next page that does not move forward would loop forever.
		if resp == nil || resp.NextPage <= page {
			return all, nil
		}
		if read >= maxPages {
			return nil, &PageBoundError{What: what, MaxPages: maxPages}
		}
		page = resp.NextPage
	}
}
