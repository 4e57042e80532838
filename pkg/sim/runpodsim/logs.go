package runpodsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Pod logs: GET /v2/pods/{id}/logs streams a pod's log as server-sent events
// (the contract's getPodLogs): first the backfill (the last tail lines, or
// everything after Last-Event-ID or since), then each line as the pod's
// container writes it. What the contract leaves open is inferred: the stream
// stays open while the pod may still run a container (PROVISIONING,
// STARTING, RUNNING) and ends when its container stops (an exit, a stop, a
// deletion) or the pod is gone; it sends no keep-alives.

// maxLogLines bounds what is kept of one pod's log; older lines are dropped.
const maxLogLines = 10000

// logEntry is one line of a pod's log.
type logEntry struct {
	seq    int // from 1, per pod
	at     time.Time
	source string
	line   string
}

// podLog is one pod's log and its open streams.
type podLog struct {
	entries []logEntry
	next    int // seq of the next line
	ended   bool
	streams map[*logStream]bool
}

// logStream is one open GET /v2/pods/{id}/logs.
type logStream struct {
	wake chan struct{} // buffered 1: lines were added or the container ended
}

// logBook holds every pod's log; its lock is never held with the Server's
// lock taken after it (the Server's may be held when taking this one).
type logBook struct {
	mu     sync.Mutex
	pods   map[string]*podLog
	closed chan struct{} // Close: every stream ends
	once   sync.Once
}

func (b *logBook) pod(id string) *podLog {
	if b.pods == nil {
		b.pods = map[string]*podLog{}
	}
	l := b.pods[id]
	if l == nil {
		l = &podLog{next: 1, streams: map[*logStream]bool{}}
		b.pods[id] = l
	}
	return l
}

// LogFunc appends lines to a pod's container log at the clock's time, as one
// write: a stream shows them together. Safe from any goroutine.
type LogFunc func(lines ...string)

// appendLog adds lines to pod id's container log and wakes its streams. Called
// from a clock callback, it tells a virtual clock that a sleeper may be woken
// by what the streams carry (simclock.Virtual.Notify).
func (s *Server) appendLog(id string, lines ...string) {
	if len(lines) == 0 {
		return
	}
	now := s.cfg.clock.Now()
	b := &s.logs
	b.mu.Lock()
	l := b.pod(id)
	for _, line := range lines {
		l.entries = append(l.entries, logEntry{seq: l.next, at: now, source: "container", line: line})
		l.next++
	}
	if over := len(l.entries) - maxLogLines; over > 0 {
		l.entries = slices.Delete(l.entries, 0, over)
	}
	watched := len(l.streams) > 0
	for st := range l.streams {
		st.poke()
	}
	b.mu.Unlock()
	if watched {
		s.notify()
	}
}

// notify tells a virtual clock that a stream carries something that may wake
// a sleeper (simclock.Virtual.Notify).
func (s *Server) notify() {
	if n, ok := s.cfg.clock.(interface{ Notify() }); ok {
		n.Notify()
	}
}

// logger is the LogFunc a pod's Launch carries.
func (s *Server) logger(id string) LogFunc {
	return func(lines ...string) { s.appendLog(id, lines...) }
}

// startLog marks a new container of pod id: its streams follow it.
func (s *Server) startLog(id string) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	s.logs.pod(id).ended = false
}

// endLog marks pod id's container stopped: its streams send what is left and
// end (and, like a line, that may wake a sleeper: see appendLog).
func (s *Server) endLog(id string) {
	s.logs.mu.Lock()
	l := s.logs.pod(id)
	watched := !l.ended && len(l.streams) > 0
	l.ended = true
	for st := range l.streams {
		st.poke()
	}
	s.logs.mu.Unlock()
	// A stream ended by a request (a deletion) wakes no sleeper: its
	// client is the caller, or already gone.
	if watched && !s.handling {
		s.notify()
	}
}

// Close ends every open log stream, so the HTTP server serving s can shut down.
func (s *Server) Close() {
	s.logs.once.Do(func() {
		s.logs.mu.Lock()
		if s.logs.closed == nil {
			s.logs.closed = make(chan struct{})
		}
		close(s.logs.closed)
		s.logs.mu.Unlock()
	})
}

func (st *logStream) poke() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// logQuery is a parsed getPodLogs query.
type logQuery struct {
	source string // "" both
	tail   int
	since  time.Time
	after  int // seq from Last-Event-ID; -1 unused
}

func parseLogQuery(r *http.Request) (logQuery, *response) {
	q := logQuery{tail: 100, after: -1}
	v := r.URL.Query()
	bad := func(format string, args ...any) (logQuery, *response) {
		resp := problemResponse(http.StatusUnprocessableEntity, "Request validation failed.")
		resp.problem.Errors = []string{fmt.Sprintf(format, args...)}
		return logQuery{}, &resp
	}
	switch src := v.Get("source"); src {
	case "", "container", "system":
		q.source = src
	default:
		return bad("source: %q is not one of container, system", src)
	}
	if v.Has("tail") {
		n, err := parseDigits(v.Get("tail"))
		if err != nil || n > 5000 {
			return bad("tail: %q is not an integer from 0 to 5000", v.Get("tail"))
		}
		q.tail = n
	}
	if raw := v.Get("since"); raw != "" {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return bad("since: %q is not an RFC 3339 date-time", raw)
		}
		q.since = t
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		_, num, found := strings.Cut(id, "/")
		seq, err := strconv.Atoi(num)
		if !found || err != nil || seq < 0 {
			return bad("Last-Event-ID: %q is not an event id this stream sent", id)
		}
		q.after = seq
	}
	return q, nil
}

// backfill picks what a new stream sends first.
func (q logQuery) backfill(entries []logEntry) []logEntry {
	var out []logEntry
	for _, e := range entries {
		switch {
		case q.source != "" && e.source != q.source:
		case q.after >= 0:
			if e.seq > q.after {
				out = append(out, e)
			}
		case !q.since.IsZero():
			if !e.at.Before(q.since) {
				out = append(out, e)
			}
		default:
			out = append(out, e)
		}
	}
	if q.after < 0 && q.since.IsZero() && len(out) > q.tail {
		out = out[len(out)-q.tail:]
	}
	return out
}

// serveLogs answers GET /v2/pods/{id}/logs.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	const route = "GET /v2/pods/{id}/logs"
	arrival := s.cfg.clock.Now()
	resp, p, q := s.openLogs(r, route, arrival)
	s.mu.Lock()
	s.requests = append(s.requests, RequestRecord{r.Method, r.URL.Path, route, resp.status, arrival})
	s.mu.Unlock()
	if p == "" {
		write(w, resp)
		return
	}
	s.streamLogs(w, r, p, q)
}

// openLogs checks one log request; it returns the pod id to stream, or the
// answer to send instead. A pod that can no longer run a container gets its
// backfill and the stream's end.
func (s *Server) openLogs(r *http.Request, route string, arrival time.Time) (response, string, logQuery) {
	if resp, ok := s.authorize(r); !ok {
		return resp, "", logQuery{}
	}
	if r.Method != http.MethodGet {
		resp := problemResponse(http.StatusMethodNotAllowed, "The requested method is not allowed for this path.")
		resp.header = http.Header{"Allow": {http.MethodGet}}
		return resp, "", logQuery{}
	}
	if d := s.decide(route, arrival); d.early.status != 0 {
		return d.early, "", logQuery{}
	}
	q, bad := parseLogQuery(r)
	if bad != nil {
		return *bad, "", logQuery{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.settle(now)
	p, notFound := s.lookup(r, now)
	if notFound != nil {
		return *notFound, "", logQuery{}
	}
	if live := p.status == StatusProvisioning || p.status == StatusStarting || p.status == StatusRunning; !live {
		s.endLog(p.id)
	}
	return response{status: http.StatusOK}, p.id, q
}

// streamLogs sends pod id's log: the backfill, then new lines until its
// container stops, the client goes or the Server closes.
func (s *Server) streamLogs(w http.ResponseWriter, r *http.Request, id string, q logQuery) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &logStream{wake: make(chan struct{}, 1)}
	b := &s.logs
	b.mu.Lock()
	if b.closed == nil {
		b.closed = make(chan struct{})
	}
	closed := b.closed
	l := b.pod(id)
	pending, ended := q.backfill(l.entries), l.ended
	sent := l.next - 1
	if !ended {
		l.streams[st] = true
	}
	b.mu.Unlock()
	if n, ok := s.cfg.clock.(interface{ NotifyNext() }); ok && len(pending) > 0 {
		n.NotifyNext() // the backfill, sent after the headers, may wake the stream's reader
	}
	defer func() {
		b.mu.Lock()
		delete(l.streams, st)
		b.mu.Unlock()
	}()
	for {
		if sendLogEntries(w, pending) != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ended {
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		case <-closed:
			return
		}
		b.mu.Lock()
		pending, ended = nil, l.ended
		for _, e := range l.entries {
			if e.seq > sent && (q.source == "" || q.source == e.source) {
				pending = append(pending, e)
			}
		}
		sent = l.next - 1
		b.mu.Unlock()
	}
}

// sendLogEntries writes entries as server-sent events, all in one write.
func sendLogEntries(w http.ResponseWriter, entries []logEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var out strings.Builder
	for _, e := range entries {
		ts := e.at.UTC().Format(time.RFC3339Nano)
		data, err := json.Marshal(struct {
			TS     string `json:"ts"`
			Source string `json:"source"`
			Line   string `json:"line"`
		}{ts, e.source, e.line})
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, "id: %s/%012d\ndata: %s\n\n", ts, e.seq, data)
	}
	_, err := w.Write([]byte(out.String()))
	return err
}

// Log returns pod id's container log so far, one line each (tests read what a
// pod printed).
func (s *Server) Log(id string) []string {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	var lines []string
	if l := s.logs.pods[id]; l != nil {
		for _, e := range l.entries {
			lines = append(lines, e.line)
		}
	}
	return lines
}

// LogProgress reports the sequence number of pod id's last log line (0
// before its first) and whether its container stopped, which ends its
// streams: what a client following the log has been sent once its stream
// caught up (the market replay waits for that).
func (s *Server) LogProgress(id string) (last int, ended bool) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if l := s.logs.pods[id]; l != nil {
		return l.next - 1, l.ended
	}
	return 0, false
}
