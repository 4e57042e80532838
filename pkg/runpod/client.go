package runpod

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// DefaultBaseURL is RunPod's API host; paths are under /v2.
const DefaultBaseURL = "https://api.runpod.io"

// DefaultListPodsBudget bounds how long ListPods follows the cursor, however
// many pages the account has: the caller's own deadline applies when sooner.
const DefaultListPodsBudget = 5 * time.Minute

// maxResponseBytes bounds a response body the client reads.
const maxResponseBytes int64 = 16 << 20

// Client calls RunPod's REST v2 API. It is safe for concurrent use.
type Client struct {
	base         *url.URL
	baseErr      error
	http         *http.Client
	policy       *reqpolicy.Policy
	maxListPages int // 0: no page bound, only listBudget
	listBudget   time.Duration
}

// Option configures a Client.
type Option func(*options)

type options struct {
	httpClient   *http.Client
	policy       *reqpolicy.Policy
	maxListPages int
	listBudget   time.Duration
}

// WithHTTPClient sets the HTTP client whose transport carries the requests;
// the client wraps a copy of it with auth and the request policy.
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.httpClient = hc } }

// WithPolicy sets the request policy, e.g. to share its cooldown, clock and
// logger; the API key is registered with the policy's Redactor.
func WithPolicy(p *reqpolicy.Policy) Option { return func(o *options) { o.policy = p } }

// WithMaxListPages sets how many pages ListPods may read (at least 1); by
// default only the time budget bounds the listing.
func WithMaxListPages(n int) Option { return func(o *options) { o.maxListPages = max(n, 1) } }

// WithListPodsBudget sets how long ListPods may follow the cursor (default
// DefaultListPodsBudget; a non-positive d keeps the default).
func WithListPodsBudget(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.listBudget = d
		}
	}
}

// New returns a client for baseURL ("" means DefaultBaseURL) authenticating
// with apiKey. A malformed baseURL is reported by every call.
func New(baseURL, apiKey string, opts ...Option) *Client {
	o := options{listBudget: DefaultListPodsBudget}
	for _, opt := range opts {
		opt(&o)
	}
	if o.policy == nil {
		o.policy = reqpolicy.New()
	}
	o.policy.Redactor().Add(apiKey)

	c := &Client{policy: o.policy, maxListPages: o.maxListPages, listBudget: o.listBudget}
	c.base, c.baseErr = parseBaseURL(baseURL)

	hc := &http.Client{}
	if o.httpClient != nil {
		copied := *o.httpClient
		hc = &copied
	}
	next := hc.Transport
	if next == nil {
		next = defaultTransport()
	}
	host := ""
	if c.base != nil {
		host = c.base.Host
	}
	hc.Transport = &authTransport{apiKey: apiKey, host: host, next: o.policy.Transport(next)}
	c.http = hc
	return c
}

// Policy returns the client's request policy, whose Wait lets poll loops
// follow the same cooldown and deadline rules as requests.
func (c *Client) Policy() *reqpolicy.Policy { return c.policy }

func parseBaseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("runpod: base URL %q: want an absolute http(s) URL such as %s", redactUserInfo(raw), DefaultBaseURL)
	}
	// The key rides on every request: never in the clear off this machine,
	// never beside credentials in the URL.
	if err := inputform.CheckServiceURL(u.String()); err != nil {
		var ue *inputform.URLError
		shown := redactUserInfo(raw)
		if errors.As(err, &ue) {
			shown = ue.Shown()
		}
		return nil, fmt.Errorf("runpod: base URL %q: want %w", shown, err)
	}
	return u, nil
}

// redactUserInfo hides the user info of a URL that failed validation.
func redactUserInfo(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User("***")
		return u.String()
	}
	return raw
}

// defaultTransport bounds the wait for response headers, so that a silent
// server cannot hold a call without a deadline forever.
func defaultTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// authTransport is the outer layer: bearer auth and JSON accept. The request
// policy below it adds the suite's User-Agent, as it does for every client.
type authTransport struct {
	apiKey string
	host   string
	next   http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	// Only RunPod's own host gets the key, even when a redirect points elsewhere.
	if req.URL.Host == t.host {
		out.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	if out.Header.Get("Accept") == "" {
		out.Header.Set("Accept", "application/json")
	}
	return t.next.RoundTrip(out)
}

// call describes one API request.
type call struct {
	op     string // for errors: "get pod abc"
	method string
	path   string // escaped, under the base URL: "/v2/pods/abc"
	query  url.Values
	body   any   // JSON-encoded when non-nil
	create bool  // a pod create: 400 means capacity, see kindOf
	limit  int64 // bytes a success answer may have; 0 means maxResponseBytes
}

// send performs c and returns a 2xx answer's status and body, or an *APIError.
func (c *Client) send(ctx context.Context, cl call) (int, []byte, error) {
	resp, err := c.open(ctx, cl)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	limit := cmp.Or(cl.limit, maxResponseBytes)
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// The status arrived but the body did not: for a create that is a lost answer.
		return 0, nil, c.failure(cl.op, resp.StatusCode, err)
	}
	if int64(len(data)) > limit {
		return 0, nil, c.malformed(cl.op, resp.StatusCode, fmt.Errorf("%w: body exceeds %d bytes", ErrAnswerTooLarge, limit))
	}
	return resp.StatusCode, data, nil
}

// open performs c and returns a 2xx answer with its body unread (the caller
// closes it), or an *APIError.
func (c *Client) open(ctx context.Context, cl call) (*http.Response, error) {
	if c.baseErr != nil {
		return nil, invalidArgument(cl.op, "%s", c.baseErr)
	}
	target := c.base.String() + cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		encoded, err := json.Marshal(cl.body)
		if err != nil {
			return nil, invalidArgument(cl.op, "encode request: %v", err)
		}
		body = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return nil, invalidArgument(cl.op, "build request: %s", c.redact(err.Error()))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		for k, vs := range h {
			req.Header[k] = vs
		}
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.failure(cl.op, 0, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		if err != nil {
			return nil, c.failure(cl.op, resp.StatusCode, err)
		}
		return nil, decodeError(cl.op, resp.StatusCode, data, cl.create, c.policy.Redactor())
	}
	return resp, nil
}

// failure wraps an error that left no usable answer.
func (c *Client) failure(op string, status int, err error) *APIError {
	e := &APIError{Op: op, StatusCode: status, Kind: KindTransport, Err: err, redactor: c.policy.Redactor()}
	var waitErr *reqpolicy.WaitError
	if errors.As(err, &waitErr) {
		e.Kind = KindWaitExceedsDeadline
		e.StatusCode = waitErr.Status
		e.Detail = c.redact(waitErr.Error())
		return e
	}
	e.Detail = clip(c.redact(err.Error()))
	return e
}

// malformed reports a success answer that cannot be used.
func (c *Client) malformed(op string, status int, err error) *APIError {
	return &APIError{
		Op: op, StatusCode: status, Title: "malformed response",
		Detail: clip(c.redact(err.Error())), Kind: KindMalformedResponse, Err: err,
		redactor: c.policy.Redactor(),
	}
}

func (c *Client) redact(s string) string { return c.policy.Redactor().Redact(s) }

// getJSON performs cl and decodes a 2xx body into out.
func (c *Client) getJSON(ctx context.Context, cl call, out any) error {
	status, data, err := c.send(ctx, cl)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.malformed(cl.op, status, err)
	}
	return nil
}

// getRecord performs cl and decodes the one record it answers with, refusing a
// record of another id than the one asked for: it would be priced, timed and
// judged as this one.
func getRecord[T any](ctx context.Context, c *Client, cl call, kind, id string, idOf func(*T) string) (*T, error) {
	var rec T
	if err := c.getJSON(ctx, cl, &rec); err != nil {
		return nil, err
	}
	if got := idOf(&rec); got != id {
		return nil, c.unusable(cl.op, fmt.Sprintf("the answer describes %s %q", kind, got))
	}
	return &rec, nil
}

// createRecord performs the create cl and decodes the record it answers with,
// refusing one that names no id or another name: a record that cannot be
// tracked or deleted must be found by its unique name instead.
func createRecord[T any](ctx context.Context, c *Client, cl call, kind, name string, idName func(*T) (string, string)) (*T, error) {
	var rec T
	if err := c.getJSON(ctx, cl, &rec); err != nil {
		return nil, err
	}
	if id, got := idName(&rec); strings.TrimSpace(id) == "" || got != name {
		return nil, c.unusable(cl.op, fmt.Sprintf("the answer describes %s %q named %q, not the requested name", kind, id, got))
	}
	return &rec, nil
}

// decodeArray performs cl, decodes it into out and returns the array at
// *list, which out holds; an answer without it (named key) is malformed.
// The status comes back for checks of the array's records.
func decodeArray[T any](ctx context.Context, c *Client, cl call, out any, list **[]T, key string) ([]T, int, error) {
	status, data, err := c.send(ctx, cl)
	if err != nil {
		return nil, status, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, status, c.malformed(cl.op, status, err)
	}
	if *list == nil {
		return nil, status, c.malformed(cl.op, status, fmt.Errorf("no %q array in the answer", key))
	}
	return **list, status, nil
}

// listRecords performs the listing cl, decodes it into out and returns the
// list at *list, which out holds; an answer without the list is malformed,
// and want is the shape expected.
func listRecords[T any](ctx context.Context, c *Client, cl call, out any, list **[]T, want string) ([]T, error) {
	status, data, err := c.send(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil || *list == nil {
		return nil, c.malformed(cl.op, status, fmt.Errorf("want %s: %v", want, err))
	}
	return **list, nil
}
