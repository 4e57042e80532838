package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-github/v66/github"
)

// pullCache keeps the last usable answer for each pull request with its ETag,
// so a re-read asks conditionally (If-None-Match): GitHub answers an unchanged
// PR with 304, which costs no rate limit. Safe for concurrent use; the zero
// value is ready.
type pullCache struct {
	mu       sync.Mutex
	byNumber map[int]cachedPull
}

type cachedPull struct {
	etag string
	pr   *github.PullRequest
}

func (p *pullCache) get(number int) (cachedPull, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byNumber[number]
	return e, ok
}

func (p *pullCache) put(number int, etag string, pr *github.PullRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if etag == "" {
		delete(p.byNumber, number) // nothing to ask conditionally with
		return
	}
	if p.byNumber == nil {
		p.byNumber = map[int]cachedPull{}
	}
	p.byNumber[number] = cachedPull{etag: etag, pr: clonePull(pr)}
}

// clonePull copies what callers may change (the struct and its label list).
func clonePull(pr *github.PullRequest) *github.PullRequest {
	cp := *pr
	cp.Labels = slices.Clone(pr.Labels)
	return &cp
}

// getPullConditional reads pull request number, conditionally when an earlier
// usable answer is cached: a 304 returns a copy of that answer. Only answers
// that pass UsablePullRequest are cached, so a 304 never revives a bad one.
func (c *Client) getPullConditional(ctx context.Context, number int) (*github.PullRequest, error) {
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/pulls/%d", c.owner, c.repo, number), nil)
	if err != nil {
		return nil, fmt.Errorf("ghapi: get pull request #%d: %w", number, err)
	}
	cached, ok := c.pulls.get(number)
	if ok {
		req.Header.Set("If-None-Match", cached.etag)
	}
	pr := new(github.PullRequest)
	resp, err := c.gh.Do(ctx, req, pr)
	if ok && resp != nil && resp.StatusCode == http.StatusNotModified {
		return clonePull(cached.pr), nil
	}
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get pull request #%d", number), err, nil)
	}
	if err := UsablePullRequest(pr, number); err != nil {
		return nil, fmt.Errorf("ghapi: get %w", err)
	}
	c.pulls.put(number, resp.Header.Get("ETag"), pr)
	return pr, nil
}
