package provision

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
)

// streamOpenTimeout bounds, in wall time, how long opening a pod's log
// stream may hold the watch (and never more than a startup poll) before it
// watches by polling instead: an edge that buffers the stream whole never
// answers it.
const streamOpenTimeout = 10 * time.Second

// maxStreamOpens bounds how often one watch opens its pod's log stream (the
// first time and after the stream broke off while the pod still ran).
const maxStreamOpens = 3

// LogPacer hears a pod log's reader keep pace with its stream. A caller
// that serves the stream itself under a virtual clock holds its clock until
// the reader has taken in what it was sent, so that when a line reaches the
// watch depends on virtual time alone, not on the goroutines' scheduling.
type LogPacer interface {
	// LogTaken is called by the reader of pod podID's log stream once it
	// has taken in every event the stream had delivered (its lines kept and
	// the watch woken), and with ended once it has taken in the stream's
	// end (the server's, a break or Close).
	LogTaken(podID string, ended bool)
}

// podLogFollower follows one pod's container log while its watch runs: a
// goroutine reads the stream and keeps what the lines report (pkg/startup
// reads them), and every batch of lines that arrives wakes the watch's
// current wait, so the watch acts on a line when it is written rather than
// at its next poll.
type podLogFollower struct {
	podID  string
	stream *runpod.LogStream
	pacer  LogPacer // nil in the shipped lane
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	lines  []startup.LogLine // read and not yet taken
	ended  bool              // the stream ended (its end not yet taken when endNew)
	endNew bool
	endErr error  // why it broke off; nil when the server ended it
	lastID string // the last event's id, to resume after it
	wake   context.CancelFunc
}

// followPodLog opens pod id's container log stream after lastID (or its
// last lines, when empty). It fails when the stream cannot be opened in
// streamOpenTimeout; the watch then polls.
func (r *run) followPodLog(ctx context.Context, id, lastID string) (*podLogFollower, error) {
	sctx, cancel := context.WithCancel(ctx)
	openedInTime := func() bool { return true }
	if r.deps.LogPacer == nil {
		// A paced stream is answered in step with its server's virtual
		// clock, so a bound in wall time would only make its open depend
		// on the machine's load.
		openedInTime = time.AfterFunc(min(streamOpenTimeout, max(r.cfg.StartupPoll(), time.Second)), cancel).Stop
	}
	// One attempt: a refused open is retried by the watch, not held here.
	stream, err := r.deps.RunPod.StreamPodLogs(reqpolicy.WithAttemptLimit(sctx, 1), id, runpod.LogQuery{Source: runpod.LogSourceContainer, LastEventID: lastID})
	if !openedInTime() && err == nil {
		err = context.DeadlineExceeded
	}
	if err != nil {
		cancel()
		if stream != nil {
			stream.Close()
		}
		return nil, err
	}
	f := &podLogFollower{podID: id, stream: stream, pacer: r.deps.LogPacer, cancel: cancel, done: make(chan struct{}), lastID: lastID}
	go f.read()
	return f, nil
}

// read takes the stream's lines until it ends.
func (f *podLogFollower) read() {
	defer close(f.done)
	for {
		ev, err := f.stream.Next()
		f.mu.Lock()
		if err != nil {
			f.ended, f.endNew = true, true
			if !errors.Is(err, io.EOF) {
				f.endErr = err
			}
			f.wakeLocked()
			f.mu.Unlock()
			f.taken(true)
			return
		}
		if ev.ID != "" {
			f.lastID = ev.ID
		}
		if l := startup.ReadLogLine(ev.Line); l.Stage != startup.StageNone {
			f.lines = append(f.lines, l)
		}
		// Lines written together arrive together: the watch wakes once
		// they are all taken in.
		caughtUp := !f.stream.Buffered()
		if caughtUp {
			f.wakeLocked()
		}
		f.mu.Unlock()
		if caughtUp {
			f.taken(false)
		}
	}
}

// taken tells the pacer, if any, that the reader has caught up with its
// stream (or taken in its end).
func (f *podLogFollower) taken(ended bool) {
	if f.pacer != nil {
		f.pacer.LogTaken(f.podID, ended)
	}
}

func (f *podLogFollower) wakeLocked() {
	if f.wake != nil {
		f.wake()
		f.wake = nil
	}
}

// take returns the lines read since the last take and whether the stream
// ended since then.
func (f *podLogFollower) take() (lines []startup.LogLine, ended bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lines, f.lines = f.lines, nil
	ended, f.endNew = f.endNew, false
	return lines, ended
}

// waitContext returns a context for one wait of the watch that ends when
// the stream brings something (at once, when it already has).
func (f *podLogFollower) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lines) > 0 || f.endNew {
		cancel()
	} else {
		f.wake = cancel
	}
	return wctx, cancel
}

// resumeAfter is where a reopened stream continues.
func (f *podLogFollower) resumeAfter() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastID
}

// close ends the stream and its reader.
func (f *podLogFollower) close() {
	f.cancel()
	f.stream.Close()
	<-f.done
}
