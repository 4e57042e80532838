package runpod

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Log sources of GET /v2/pods/{id}/logs.
const (
	LogSourceContainer = "container" // the container's stdout and stderr
	LogSourceSystem    = "system"    // the host's lifecycle lines
)

// MaxLogTail is the most backfill lines the API serves.
const MaxLogTail = 5000

// maxLogEventBytes bounds one line of the stream (and so one event's data):
// a longer one is a malformed stream, not an allocation.
const maxLogEventBytes = 64 << 10

// LogQuery selects what StreamPodLogs streams.
type LogQuery struct {
	// Source is LogSourceContainer or LogSourceSystem; "" streams both.
	Source string
	// Tail is how many earlier lines come first (0 to MaxLogTail); nil
	// leaves the API's default (100).
	Tail *int
	// Since resumes from this time when LastEventID is empty; zero: unused.
	Since time.Time
	// LastEventID resumes after that event (an ID the stream sent).
	LastEventID string
}

// LogEvent is one line of a pod's log.
type LogEvent struct {
	ID     string // the event id, the cursor to resume after it
	TS     string // when the line was written, as the API sent it
	Source string // LogSourceContainer or LogSourceSystem
	Line   string
}

// LogStream is an open GET /v2/pods/{id}/logs: server-sent events, each a
// line of the pod's log, first the backfill and then new lines as they are
// written, for as long as the server keeps the stream open. It is for one
// reader; Close may be called from any goroutine.
type LogStream struct {
	op   string
	c    *Client
	body io.ReadCloser
	r    *bufio.Reader
}

// StreamPodLogs opens pod id's log stream. The stream lives until ctx ends,
// Close is called or the server ends it (Next returns io.EOF).
func (c *Client) StreamPodLogs(ctx context.Context, id string, q LogQuery) (*LogStream, error) {
	op := "stream logs of pod " + podRef(id)
	if err := checkPodID(op, id); err != nil {
		return nil, err
	}
	query := url.Values{}
	switch q.Source {
	case "":
	case LogSourceContainer, LogSourceSystem:
		query.Set("source", q.Source)
	default:
		return nil, invalidArgument(op, "source %q: want %s or %s", q.Source, LogSourceContainer, LogSourceSystem)
	}
	if q.Tail != nil {
		if *q.Tail < 0 || *q.Tail > MaxLogTail {
			return nil, invalidArgument(op, "tail %d: want 0 to %d", *q.Tail, MaxLogTail)
		}
		query.Set("tail", strconv.Itoa(*q.Tail))
	}
	if !q.Since.IsZero() {
		query.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	resp, err := c.openStream(ctx, op, "/v2/pods/"+url.PathEscape(id)+"/logs", query, q.LastEventID)
	if err != nil {
		return nil, err
	}
	if mt, _, perr := mime.ParseMediaType(resp.Header.Get("Content-Type")); perr != nil || mt != "text/event-stream" {
		resp.Body.Close()
		return nil, c.malformed(op, resp.StatusCode, fmt.Errorf("content type %q, want text/event-stream", resp.Header.Get("Content-Type")))
	}
	return &LogStream{op: op, c: c, body: resp.Body, r: bufio.NewReaderSize(resp.Body, maxLogEventBytes)}, nil
}

// openStream is open for an event stream: the SSE Accept header and the
// resume cursor, when there is one.
func (c *Client) openStream(ctx context.Context, op, path string, query url.Values, lastEventID string) (*http.Response, error) {
	ctx = withHeader(ctx, "Accept", "text/event-stream")
	if lastEventID != "" {
		if strings.ContainsAny(lastEventID, "\r\n") {
			return nil, invalidArgument(op, "last event id holds a line break")
		}
		ctx = withHeader(ctx, "Last-Event-ID", lastEventID)
	}
	return c.open(ctx, call{op: op, method: http.MethodGet, path: path, query: query})
}

// Next returns the next log line: io.EOF when the server ended the stream, an
// *APIError matching ErrTransport when it broke off, or ErrMalformedResponse
// for a stream that is not server-sent events. Events whose data is not a
// log line (another shape, a keep-alive) are skipped.
func (s *LogStream) Next() (LogEvent, error) {
	var ev sseEvent
	for {
		line, err := s.r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return LogEvent{}, s.c.malformed(s.op, http.StatusOK, fmt.Errorf("a stream line exceeds %d bytes", maxLogEventBytes))
		case err == io.EOF && len(line) == 0:
			return LogEvent{}, io.EOF
		case err != nil && err != io.EOF:
			return LogEvent{}, s.c.failure(s.op, http.StatusOK, err)
		}
		if done := ev.feed(bytes.TrimRight(line, "\r\n")); done {
			if le, ok := ev.logEvent(); ok {
				return le, nil
			}
			ev = sseEvent{id: ev.id}
		}
		if err == io.EOF {
			return LogEvent{}, io.EOF
		}
	}
}

// Buffered reports whether more of the stream has already arrived, so Next
// will not wait for the network.
func (s *LogStream) Buffered() bool { return s.r.Buffered() > 0 }

// Close ends the stream.
func (s *LogStream) Close() error { return s.body.Close() }

// sseEvent gathers one server-sent event's fields, line by line.
type sseEvent struct {
	id   string
	data []string
}

// feed takes one line of the stream; it reports true at the blank line that
// ends an event.
func (e *sseEvent) feed(line []byte) bool {
	if len(line) == 0 {
		return true
	}
	if line[0] == ':' {
		return false // a comment, e.g. a keep-alive
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "data":
		e.data = append(e.data, string(value))
	case "id":
		if !bytes.ContainsRune(value, 0) {
			e.id = string(value)
		}
	}
	return false
}

// logEvent decodes the event's data as a log line.
func (e *sseEvent) logEvent() (LogEvent, bool) {
	if len(e.data) == 0 {
		return LogEvent{}, false
	}
	var d struct {
		TS     string  `json:"ts"`
		Source string  `json:"source"`
		Line   *string `json:"line"`
	}
	if json.Unmarshal([]byte(strings.Join(e.data, "\n")), &d) != nil || d.Line == nil {
		return LogEvent{}, false
	}
	return LogEvent{ID: e.id, TS: d.TS, Source: d.Source, Line: *d.Line}, true
}

// headerKey carries request headers through the context to authTransport.
type headerKey struct{}

// withHeader adds a request header for the calls made with ctx.
func withHeader(ctx context.Context, key, value string) context.Context {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(key, value)
	return context.WithValue(ctx, headerKey{}, h)
}
