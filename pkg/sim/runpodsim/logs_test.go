package runpodsim_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// talkingHost writes two lines when a container starts and one more, then
// exits 3, ten seconds later.
type talkingHost struct{ clock simclock.Clock }

func (h *talkingHost) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	l.Log("starting", "still starting")
	h.clock.AfterFunc(10*time.Second, func() {
		l.Log("giving up")
		exited(3)
	})
	return nil
}

func (*talkingHost) Stop(string) {}

// lines reads a stream until it ends and returns its lines and how it ended.
func lines(t *testing.T, s *runpod.LogStream) ([]string, error) {
	t.Helper()
	var got []string
	for {
		ev, err := s.Next()
		if err != nil {
			return got, err
		}
		got = append(got, ev.Line)
	}
}

// A pod's log streams from its create: nothing while it boots, the lines its
// container writes as they come, and the stream's end when the container
// exits. Later streams get the backfill (the last tail lines, or what follows
// Last-Event-ID) and end at once, the container being gone.
func TestPodLogStreams(t *testing.T) {
	host := &talkingHost{}
	cs := newClientSim(t, clientSetup{sim: []runpodsim.Option{runpodsim.WithHostRunner(host), runpodsim.WithMarket(smallMarket(healthyHost("h1")))}})
	host.clock = cs.clock
	ctx := context.Background()
	pod, err := cs.client.CreatePod(ctx, clientRequest("talker"))
	assert.NilError(t, err)

	live, err := cs.client.StreamPodLogs(ctx, pod.ID, runpod.LogQuery{Source: runpod.LogSourceContainer})
	assert.NilError(t, err)
	defer live.Close()
	cs.clock.Advance(bootTime + time.Minute)
	got, err := lines(t, live)
	assert.Check(t, errors.Is(err, io.EOF), "the stream ends with the container: %v", err)
	assert.Check(t, is.DeepEqual(got, []string{"starting", "still starting", "giving up"}))
	assert.Check(t, is.DeepEqual(cs.server.Log(pod.ID), got))

	tail := 1
	later, err := cs.client.StreamPodLogs(ctx, pod.ID, runpod.LogQuery{Tail: &tail})
	assert.NilError(t, err)
	defer later.Close()
	first, err := later.Next()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(first.Line, "giving up"))
	assert.Check(t, is.Equal(first.Source, runpod.LogSourceContainer))
	_, err = later.Next()
	assert.Check(t, errors.Is(err, io.EOF))

	resumed, err := cs.client.StreamPodLogs(ctx, pod.ID, runpod.LogQuery{LastEventID: strings.Replace(first.ID, "/000000000003", "/000000000001", 1)})
	assert.NilError(t, err)
	defer resumed.Close()
	got, _ = lines(t, resumed)
	assert.Check(t, is.DeepEqual(got, []string{"still starting", "giving up"}))
}

// A line a host writes inside a clock callback wakes a sleeper reading the
// stream at that line's time, not at the end of its sleep.
func TestPodLogLineWakesTheSleeperAtItsTime(t *testing.T) {
	host := &talkingHost{}
	cs := newClientSim(t, clientSetup{sim: []runpodsim.Option{runpodsim.WithHostRunner(host), runpodsim.WithMarket(smallMarket(healthyHost("h1")))}})
	host.clock = cs.clock
	ctx := context.Background()
	pod, err := cs.client.CreatePod(ctx, clientRequest("talker"))
	assert.NilError(t, err)
	stream, err := cs.client.StreamPodLogs(ctx, pod.ID, runpod.LogQuery{})
	assert.NilError(t, err)
	defer stream.Close()
	sleep, wake := context.WithCancel(ctx)
	go func() {
		if _, err := stream.Next(); err == nil {
			wake()
		}
	}()

	err = cs.clock.Sleep(sleep, 10*time.Minute)

	assert.Check(t, errors.Is(err, context.Canceled))
	assert.Check(t, is.Equal(cs.clock.Now(), runpodsim.Epoch.Add(bootTime)), "woken when the container wrote its first lines")
}

func TestPodLogsRequestErrors(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
	p := s.mustCreate(podRequest("quiet", a40))
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/v2/pods/nosuchpod/logs", http.StatusNotFound},
		{"/v2/pods/" + p.ID + "/logs?tail=5001", http.StatusUnprocessableEntity},
		{"/v2/pods/" + p.ID + "/logs?source=kernel", http.StatusUnprocessableEntity},
		{"/v2/pods/" + p.ID + "/logs?since=yesterday", http.StatusUnprocessableEntity},
	} {
		assert.Check(t, is.Equal(s.do(http.MethodGet, tc.target, nil).status, tc.status), tc.target)
	}
}
