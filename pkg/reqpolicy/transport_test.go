package reqpolicy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// These tests pin how the policy drives go-retryablehttp: each one fails when
// one of the library's defaults leaks through (its error handler, its body
// buffering, its http.Client's redirects, error wrapping and idle-connection
// closing).

func TestExhaustedRetriesReturnTheLastResponseWhole(t *testing.T) {
	h := newHarness(WithMaxAttempts(3))
	next := h.script(step{status: 503, body: "one"}, step{status: 502, body: "two"}, step{status: 500, body: `{"message":"three"}`})

	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.NilError(t, err, "the library's default error handler would turn this into an error")
	assert.Equal(t, resp.StatusCode, 500)
	assert.Equal(t, readAll(resp), `{"message":"three"}`)
	assert.Equal(t, next.count(), 3)
}

func TestRedirectsAreLeftToTheCallersClient(t *testing.T) {
	h := newHarness()
	next := h.script(step{status: http.StatusFound, header: http.Header{"Location": {"https://storage.example.test/blob"}}})

	resp, err := get(context.Background(), h.policy.Transport(next), "/repos/o/r/actions/artifacts/1/zip")

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusFound)
	assert.Equal(t, resp.Header.Get("Location"), "https://storage.example.test/blob")
	assert.Equal(t, next.count(), 1, "one wire attempt; the caller's client decides where to follow")
}

func TestTransportErrorTextIsTheTransportsOwn(t *testing.T) {
	h := newHarness(WithMaxAttempts(1))
	next := h.script(step{err: errConnReset})

	_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.Error(t, err, errConnReset.Error(), "no url.Error wrapping from the library's http.Client: the caller's client adds its own")
}

// oneShotBody is a request body without GetBody, which cannot be replayed.
type oneShotBody struct{ io.Reader }

func (*oneShotBody) Close() error { return nil }

func TestBodyWithoutGetBodyIsSentOnceAsIs(t *testing.T) {
	h := newHarness()
	script := h.script(step{status: 503}, step{status: 200})
	body := &oneShotBody{strings.NewReader("payload")}
	var asIs bool
	next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		asIs = req.Body == io.ReadCloser(body)
		return script.RoundTrip(req)
	})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, "https://api.example.test/v2/blob", body)
	assert.NilError(t, err)
	assert.Check(t, req.GetBody == nil)

	resp, err := h.policy.Transport(next).RoundTrip(req)

	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 503, "a body that cannot be replayed makes the request single-shot")
	assert.Equal(t, script.count(), 1)
	assert.Equal(t, script.sent[0].body, "payload")
	assert.Check(t, asIs, "the caller's body reaches the wire unread, not buffered up front by the library")
}

// idleCounter is a transport whose idle-connection pool is shared with other
// clients; it counts how often someone closes it.
type idleCounter struct {
	http.RoundTripper
	closed int
}

func (c *idleCounter) CloseIdleConnections() { c.closed++ }

func TestGivingUpLeavesTheSharedConnectionPoolAlone(t *testing.T) {
	h := newHarness(WithMaxAttempts(2))
	next := &idleCounter{RoundTripper: h.script(step{status: 503}, step{err: errConnReset})}

	_, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")

	assert.ErrorContains(t, err, "connection reset")
	assert.Equal(t, next.closed, 0)
	assert.Check(t, is.Contains(h.log(), "giving up after 2 attempts"))
}
