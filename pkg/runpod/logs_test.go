package runpod

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// writeSSE answers a log stream with body as it is.
func writeSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// readAll reads a stream to its end.
func readAll(t *testing.T, s *LogStream) ([]LogEvent, error) {
	t.Helper()
	var got []LogEvent
	for {
		ev, err := s.Next()
		if err != nil {
			return got, err
		}
		got = append(got, ev)
	}
}

func TestStreamPodLogs(t *testing.T) {
	// The contract's own example, then what a stream may also carry: a
	// keep-alive comment, CRLF line ends, an event of another shape, an
	// event split over two data lines, and a last event cut off by the end.
	body := "id: 2026-06-01T12:02:03Z/000000000001\ndata: {\"ts\":\"2026-06-01T12:02:03Z\",\"source\":\"container\",\"line\":\"Model loaded.\"}\n\n" +
		": keep-alive\n\n" +
		"id: 2\r\ndata: {\"ts\":\"2026-06-01T12:02:04Z\",\"source\":\"container\",\"line\":\"runpod-gpu: fetching the CUDA smoke proof\"}\r\n\r\n" +
		"event: heartbeat\ndata: {\"status\":\"ok\"}\n\n" +
		"id: 3\ndata: {\"ts\":\"2026-06-01T12:02:05Z\",\ndata: \"source\":\"system\",\"line\":\"\"}\n\n" +
		"id: 4\ndata: {\"line\":\"cut off"
	fake := newFake(t)
	fake.handle("GET /v2/pods/{id}/logs", writeSSE(body))
	client, _ := fake.client()
	tail := 0

	s, err := client.StreamPodLogs(context.Background(), "p1", LogQuery{Source: LogSourceContainer, Tail: &tail, LastEventID: "1"})
	assert.NilError(t, err)
	defer s.Close()
	got, err := readAll(t, s)

	assert.Check(t, errors.Is(err, io.EOF), "got %v", err)
	assert.Check(t, is.DeepEqual(got, []LogEvent{
		{ID: "2026-06-01T12:02:03Z/000000000001", TS: "2026-06-01T12:02:03Z", Source: "container", Line: "Model loaded."},
		{ID: "2", TS: "2026-06-01T12:02:04Z", Source: "container", Line: "runpod-gpu: fetching the CUDA smoke proof"},
		{ID: "3", TS: "2026-06-01T12:02:05Z", Source: "system", Line: ""},
	}))
	req := fake.received()[0]
	assert.Check(t, is.Equal(req.query, "source=container&tail=0"))
	assert.Check(t, is.Equal(req.accept, "text/event-stream"))
}

func TestStreamPodLogsSendsTheResumeCursor(t *testing.T) {
	fake := newFake(t)
	var lastID, since string
	fake.handle("GET /v2/pods/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		lastID, since = r.Header.Get("Last-Event-ID"), r.URL.Query().Get("since")
		writeSSE("")(w, r)
	})
	client, _ := fake.client()
	at := time.Date(2026, 12, 1, 10, 0, 0, 500, time.UTC)

	s, err := client.StreamPodLogs(context.Background(), "p1", LogQuery{Since: at, LastEventID: "2026-12-01T10:00:00Z/7"})

	assert.NilError(t, err)
	s.Close()
	assert.Check(t, is.Equal(lastID, "2026-12-01T10:00:00Z/7"))
	assert.Check(t, is.Equal(since, "2026-12-01T10:00:00.0000005Z"))
}

func TestStreamPodLogsFailures(t *testing.T) {
	ctx := context.Background()
	tooMuch := MaxLogTail + 1
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		id      string
		q       LogQuery
		wantIs  error
		wantErr string
		atNext  bool // the failure comes from Next, not the open
	}{
		{name: "not found", handler: func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 404, problemJSON(404, "pod not found")) },
			wantIs: ErrNotFound},
		{name: "JSON instead of events", handler: func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 200, `{"line":"x"}`) },
			wantIs: ErrMalformedResponse, wantErr: `content type "application/json", want text/event-stream`},
		{name: "a line over the bound", handler: writeSSE("data: " + strings.Repeat("x", maxLogEventBytes) + "\n\n"),
			wantIs: ErrMalformedResponse, wantErr: "a stream line exceeds", atNext: true},
		{name: "malformed id", id: "../p1", wantIs: ErrInvalidRequest, wantErr: "is malformed"},
		{name: "unknown source", q: LogQuery{Source: "kernel"}, wantIs: ErrInvalidRequest, wantErr: `source "kernel"`},
		{name: "tail over the maximum", q: LogQuery{Tail: &tooMuch}, wantIs: ErrInvalidRequest, wantErr: "tail 5001"},
		{name: "cursor with a line break", q: LogQuery{LastEventID: "1\nX-Evil: 1"}, wantIs: ErrInvalidRequest, wantErr: "line break"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			if tc.handler != nil {
				fake.handle("GET /v2/pods/{id}/logs", tc.handler)
			}
			client, _ := fake.client(WithPolicy(newTestPolicy().policy))
			id := tc.id
			if id == "" {
				id = "p1"
			}

			s, err := client.StreamPodLogs(ctx, id, tc.q)
			if tc.atNext {
				assert.NilError(t, err)
				_, err = s.Next()
				s.Close()
			}

			assert.Check(t, errors.Is(err, tc.wantIs), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}
}

// A stream the server cuts off mid-way is a transport failure, not its end.
func TestStreamPodLogsCutOff(t *testing.T) {
	fake := newFake(t)
	fake.handle("GET /v2/pods/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "1000") // promises more than it sends
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "data: {\"line\":\"one\"}\n\n")
	})
	client, _ := fake.client()

	s, err := client.StreamPodLogs(context.Background(), "p1", LogQuery{})
	assert.NilError(t, err)
	defer s.Close()
	got, err := readAll(t, s)

	assert.Check(t, is.Len(got, 1))
	assert.Check(t, errors.Is(err, ErrTransport), "got %v", err)
}

// FuzzLogStream: whatever a stream carries, Next neither panics nor returns
// a line longer than the stream's bound, and ends in an error.
func FuzzLogStream(f *testing.F) {
	f.Add("id: 1\ndata: {\"line\":\"a\"}\n\n")
	f.Add("data: {\"line\":\"a\"}\r\n\r\n: c\n\ndata: x\n\n")
	f.Add("data: {\"ts\":1,\"line\":\"b\"}\n\ndata:{\"line\":\"c\"}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		s := &LogStream{op: "fuzz", c: New("http://127.0.0.1:1", "k"), body: io.NopCloser(strings.NewReader(body)),
			r: bufio.NewReaderSize(strings.NewReader(body), maxLogEventBytes)}
		for range 10000 {
			ev, err := s.Next()
			if err != nil {
				return
			}
			if len(ev.Line) > maxLogEventBytes {
				t.Fatalf("a %d-byte line passed the bound", len(ev.Line))
			}
		}
		t.Fatal("Next never ended")
	})
}
