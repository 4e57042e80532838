package market

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// logStreams serves pods' log streams (GET /v2/pods/{id}/logs) in process,
// in step with the virtual clock. The simulated RunPod's own handler serves
// each stream from a goroutine, and the lane's reader takes it in from
// another, both outside the replay's processes; the scheduler settles them
// (settle) before it hands control to a process and after every step of
// the clock: it waits until each followed stream has carried every line its
// pod's log holds (and its end, once the container stopped) and the reader
// has taken it all in (provision.LogPacer). So a line reaches the watch at
// the virtual time it was written, whatever the machine's load.
//
// A stream ends when its reader closes it (the lane always does), or the
// server ends it; its request's context, which in the replay would end in
// wall time, does not end it.
type logStreams struct {
	server *runpodsim.Server

	mu      sync.Mutex
	changed chan struct{}         // closed and replaced on every change
	open    map[string]*logStream // by pod id: streams handed to their reader
}

// settleTimeout bounds, in wall time, how long settle waits for the
// goroutines to catch up: past it the replay fails instead of hanging.
const settleTimeout = time.Minute

// errTwoStreams is a pod whose log is streamed twice at once, which the lane
// never does: the pacing could not tell the streams apart.
var errTwoStreams = errors.New("market: a second log stream of a pod already streamed")

func newLogStreams(server *runpodsim.Server) *logStreams {
	return &logStreams{server: server, changed: make(chan struct{}), open: map[string]*logStream{}}
}

// changedLocked wakes whoever waits on a change.
func (ls *logStreams) changedLocked() {
	close(ls.changed)
	ls.changed = make(chan struct{})
}

// logStream is one open stream: the handler's side writes it, the reader's
// side (the response body) reads it.
type logStream struct {
	ls     *logStreams
	pod    string
	header http.Header        // the handler's
	sent   http.Header        // what it had set when it wrote the status
	cancel context.CancelFunc // ends the handler's request
	opened chan struct{}      // closed once the status is written (or the handler returned)

	// Guarded by ls.mu.
	status   int
	buf      []byte // written and not yet read
	lastSeq  int    // the sequence number of the last line written
	served   bool   // the handler returned: the body ends after buf
	closed   bool   // the reader closed it
	unread   bool   // the body gave the reader something it has not yet said it took in
	endTaken bool   // the reader took in the end
}

// serve answers a log stream request with h, once h wrote its status; a
// stream of lines is handed to its reader when the answer returns.
func (ls *logStreams) serve(req *http.Request, h http.Handler, pod string) (*http.Response, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	st := &logStream{ls: ls, pod: pod, header: http.Header{}, cancel: cancel, opened: make(chan struct{})}
	if id := req.Header.Get("Last-Event-ID"); id != "" {
		st.lastSeq = eventSeq(id)
	}
	in := req.Clone(hctx)
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	in.Body = http.NoBody
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	go func() {
		h.ServeHTTP(st, in)
		ls.mu.Lock()
		st.served = true
		if st.status == 0 {
			st.status, st.sent = http.StatusOK, st.header.Clone()
			close(st.opened)
		}
		ls.changedLocked()
		ls.mu.Unlock()
	}()
	<-st.opened
	return &http.Response{StatusCode: st.status, Status: fmt.Sprintf("%d %s", st.status, http.StatusText(st.status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: st.sent, Body: st, ContentLength: -1, Request: req}, nil
}

// handOver starts pacing a stream its reader now has; an answer that is no
// stream is read whole at once and needs none.
func (ls *logStreams) handOver(resp *http.Response) error {
	st, ok := resp.Body.(*logStream)
	if !ok || resp.StatusCode != http.StatusOK {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.open[st.pod] != nil {
		return fmt.Errorf("%w: pod %s", errTwoStreams, st.pod)
	}
	if !st.closed {
		ls.open[st.pod] = st
	}
	return nil
}

// LogTaken is the lane's provision.LogPacer.
func (ls *logStreams) LogTaken(podID string, ended bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if st := ls.open[podID]; st != nil {
		st.unread = false
		st.endTaken = st.endTaken || ended
		ls.changedLocked()
	}
}

// settle waits until every stream handed to a reader caught up with its
// pod's log and the reader took it all in.
func (ls *logStreams) settle() error {
	var timeout <-chan time.Time
	for {
		ls.mu.Lock()
		behind := ls.behindLocked()
		changed := ls.changed
		ls.mu.Unlock()
		if behind == "" {
			return nil
		}
		if timeout == nil {
			t := time.NewTimer(settleTimeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return fmt.Errorf("market: the log stream of pod %s did not catch up within %s of wall time", behind, settleTimeout)
		}
	}
}

// behindLocked names a pod whose stream has not caught up ("" when none has).
func (ls *logStreams) behindLocked() string {
	for pod, st := range ls.open {
		if st.unread || len(st.buf) > 0 {
			return pod
		}
		last, ended := ls.server.LogProgress(pod)
		switch {
		case st.served && !st.endTaken:
			return pod
		case !st.served && (ended || st.lastSeq < last):
			return pod
		}
	}
	return ""
}

// Header, WriteHeader, Write and Flush are the handler's side.
func (st *logStream) Header() http.Header { return st.header }

func (st *logStream) WriteHeader(status int) {
	st.ls.mu.Lock()
	defer st.ls.mu.Unlock()
	if st.status == 0 {
		st.status, st.sent = status, st.header.Clone()
		close(st.opened)
	}
}

func (st *logStream) Write(p []byte) (int, error) {
	st.WriteHeader(http.StatusOK)
	st.ls.mu.Lock()
	defer st.ls.mu.Unlock()
	if st.closed {
		return 0, io.ErrClosedPipe
	}
	st.buf = append(st.buf, p...)
	if seq := lastEventSeq(p); seq > 0 {
		st.lastSeq = seq
	}
	st.ls.changedLocked()
	return len(p), nil
}

func (*logStream) Flush() {}

// Read and Close are the reader's side.
func (st *logStream) Read(p []byte) (int, error) {
	ls := st.ls
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for len(st.buf) == 0 && !st.served && !st.closed {
		changed := ls.changed
		ls.mu.Unlock()
		<-changed
		ls.mu.Lock()
	}
	switch {
	case st.closed:
		return 0, io.ErrClosedPipe
	case len(st.buf) > 0:
		n := copy(p, st.buf)
		st.buf = st.buf[n:]
		st.unread = true
		ls.changedLocked()
		return n, nil
	}
	st.unread = true
	ls.changedLocked()
	return 0, io.EOF
}

func (st *logStream) Close() error {
	ls := st.ls
	ls.mu.Lock()
	st.closed = true
	if ls.open[st.pod] == st {
		delete(ls.open, st.pod)
	}
	ls.changedLocked()
	ls.mu.Unlock()
	st.cancel()
	return nil
}

// lastEventSeq is the sequence number of the last event id in p (the
// simulated RunPod's "<time>/<seq>"); 0 when p holds none.
func lastEventSeq(p []byte) int {
	seq := 0
	for line := range bytes.Lines(p) {
		if id, ok := bytes.CutPrefix(line, []byte("id: ")); ok {
			seq = eventSeq(strings.TrimRight(string(id), "\r\n"))
		}
	}
	return seq
}

// eventSeq is an event id's sequence number; 0 for an id of another shape.
func eventSeq(id string) int {
	_, num, _ := strings.Cut(id, "/")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
