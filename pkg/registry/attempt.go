package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// attemptBound cuts one request attempt that gets no answer within d. It sits
// under the request policy, so a cut attempt is a transport error the policy
// retries (inside the resolution's own deadline), while a cancelled or expired
// caller is not retried.
type attemptBound struct {
	next http.RoundTripper
	d    time.Duration
}

// errNoAnswer marks an attempt cut by attemptBound.
var errNoAnswer = errors.New("no answer")

func (a *attemptBound) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeoutCause(req.Context(), a.d, fmt.Errorf("%w within the %s attempt bound", errNoAnswer, a.d))
	resp, err := a.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if req.Context().Err() == nil && ctx.Err() != nil {
			// The caller is still waiting: say what happened, and keep the
			// chain free of the caller's context errors so the policy
			// treats it as transient.
			return nil, fmt.Errorf("%w: %v", context.Cause(ctx), err)
		}
		return nil, err
	}
	// The body is read after RoundTrip returns: keep the attempt's context
	// alive until it is closed.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases an attempt's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
