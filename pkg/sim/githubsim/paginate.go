package githubsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const (
	defaultPerPage = 30
	maxPerPage     = 100
)

// pageParams reads per_page and page as GitHub does: out-of-range or unparsable values fall
// back to the defaults rather than failing, and per_page above 100 is capped.
func pageParams(q url.Values) (perPage, page int) {
	perPage, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || perPage < 1 {
		perPage = defaultPerPage
	}
	perPage = min(perPage, maxPerPage)
	page, err = strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	return perPage, page
}

// paginate returns the requested page of items and sets the Link header GitHub would send.
func paginate[T any](c *call, items []T) []T {
	perPage, page := pageParams(c.r.URL.Query())
	last := max(1, (len(items)+perPage-1)/perPage)
	if link := linkHeader(c, page, last); link != "" {
		c.header.Set("Link", link)
	}
	start := (page - 1) * perPage
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+perPage, len(items))]
}

// linkHeader lists next/last after the first page and first/prev before the last, each the
// request's own URL with only page changed, as GitHub's are.
func linkHeader(c *call, page, last int) string {
	var links []string
	add := func(p int, rel string) {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		u := c.apiURL + c.r.URL.Path + "?" + q.Encode()
		links = append(links, "<"+u+`>; rel="`+rel+`"`)
	}
	if page < last {
		add(page+1, "next")
		add(last, "last")
	}
	if page > 1 {
		add(1, "first")
		add(min(page-1, last), "prev")
	}
	return strings.Join(links, ", ")
}

// writePage answers a paginated list as GitHub's list endpoints do:
// {"total_count": N, "<key>": [the requested page, rendered]}.
func writePage[T, J any](c *call, key string, matched []T, render func(T) J) error {
	page := pageJSON[J]{total: len(matched), key: key, items: []J{}}
	for _, v := range paginate(c, matched) {
		page.items = append(page.items, render(v))
	}
	c.writeJSON(http.StatusOK, page)
	return nil
}

// pageJSON is a list answer; total_count comes first, as in GitHub's.
type pageJSON[J any] struct {
	total int
	key   string
	items []J
}

// MarshalJSON writes {"total_count":N,"<key>":[…]}.
func (p pageJSON[J]) MarshalJSON() ([]byte, error) {
	key, err := json.Marshal(p.key)
	if err != nil {
		return nil, err
	}
	items, err := json.Marshal(p.items)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"total_count":%d,%s:%s}`, p.total, key, items), nil
}
