package ghapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/google/go-github/v66/github"
)

// downloadArchive GETs an archive endpoint of the API. GitHub answers with a
// redirect to a short-lived signed URL on a storage host; that URL is fetched
// without credentials (the signature is the credential) and never appears in
// errors. Some servers answer 200 with the archive directly.
func (c *Client) downloadArchive(ctx context.Context, op, path string) ([]byte, error) {
	req, err := c.gh.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return nil, c.fail(op, err, nil)
	}
	resp, err := c.apiNoRedirect.Do(req.WithContext(ctx))
	if err != nil {
		return nil, c.fail(op, err, nil)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusOK:
		return c.readBounded(op, resp)
	case http.StatusFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		location, err := resp.Location()
		if err != nil {
			return nil, c.fail(op, fmt.Errorf("redirect without a usable Location: %w", err), nil)
		}
		return c.fetchSigned(ctx, op, location)
	}
	// Let go-github read GitHub's error so rate limits and 404s are typed.
	err = github.CheckResponse(resp)
	if err == nil {
		err = fmt.Errorf("unexpected status %s", resp.Status)
	}
	return nil, c.fail(op, err, nil)
}

// fetchSigned downloads a signed storage URL through the request policy,
// without credentials.
func (c *Client) fetchSigned(ctx context.Context, op string, signed *url.URL) ([]byte, error) {
	shown := withoutQuery(signed)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, signed.String(), nil)
	if err != nil {
		return nil, c.fail(op, fmt.Errorf("GET %s: not a usable URL", shown), nil)
	}
	resp, err := c.storage.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = fmt.Errorf("GET %s: %w", shown, uerr.Err)
		}
		return nil, c.fail(op, err, nil)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Op: op, StatusCode: resp.StatusCode, Err: fmt.Errorf("GET %s: %s", shown, resp.Status), redactor: c.redactor}
	}
	return c.readBounded(op, resp)
}

// readBounded reads a download body of at most c.maxDownload bytes.
func (c *Client) readBounded(op string, resp *http.Response) ([]byte, error) {
	tooLarge := func() error {
		return &Error{Op: op, StatusCode: resp.StatusCode, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.maxDownload), redactor: c.redactor}
	}
	if resp.ContentLength > c.maxDownload {
		return nil, tooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxDownload+1))
	if err != nil {
		return nil, c.fail(op, fmt.Errorf("read body: %w", err), nil)
	}
	if int64(len(data)) > c.maxDownload {
		return nil, tooLarge()
	}
	return data, nil
}

// withoutQuery shows a signed URL without its signature.
func withoutQuery(u *url.URL) string {
	shown := *u
	shown.RawQuery, shown.Fragment, shown.User = "", "", nil
	return shown.String()
}
