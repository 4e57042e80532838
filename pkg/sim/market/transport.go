package market

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// APILatency is how long every request to RunPod or GitHub takes in the
// simulation's virtual time, from sending it to its answer: a pod is billed
// from its create's arrival, so a pod deleted at once still pays for the
// requests between (create, a read, the deletion and its confirmation).
const APILatency = 500 * time.Millisecond

// inProcess carries the lane's requests to the simulated cloud's handlers
// without sockets: the same clients, request policies, handlers and contract
// checks as over loopback HTTP, without the system calls and connection
// handling that would otherwise take a third of a replay's time. Each
// request takes APILatency of virtual time, half on the way there and half
// on the way back. Hosts it does not know go out through
// http.DefaultTransport.
//
// A pod's log stream (GET /v2/pods/{id}/logs) is served by the simulated
// RunPod's handler like any other route, and paced by logStreams: its lines
// reach the lane's reader at the virtual time they are written (they take
// no APILatency; opening the stream does).
//
// The latency is a wait of the calling lane on the replay's scheduler, so
// other lanes run meanwhile.
type inProcess struct {
	handlers map[string]http.Handler // by host:port
	runpod   string                  // RunPod's host:port, where log streams are
	wait     func(time.Duration)
	logs     *logStreams
}

func newInProcess(c *cloud.Cloud, wait func(time.Duration), logs *logStreams) (*inProcess, error) {
	t := &inProcess{handlers: map[string]http.Handler{}, wait: wait, logs: logs}
	for raw, h := range map[string]http.Handler{c.RunPodURL: c.RunPod, c.GitHubURL: c.GitHub} {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		t.handlers[u.Host] = h
		if raw == c.RunPodURL {
			t.runpod = u.Host
		}
	}
	return t, nil
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.handlers[req.URL.Host]
	if h == nil {
		return http.DefaultTransport.RoundTrip(req)
	}
	t.wait(APILatency / 2)
	if pod, ok := logStreamPod(req.URL.Path); ok && req.URL.Host == t.runpod {
		resp, err := t.logs.serve(req, h, pod)
		t.wait(APILatency / 2)
		if err == nil {
			err = t.logs.handOver(resp)
		}
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		return resp, nil
	}
	defer t.wait(APILatency / 2)
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// logStreamPod returns the pod whose log stream path is
// (/v2/pods/{id}/logs); ok is false for any other path.
func logStreamPod(path string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/v2/pods/")
	id, tail, _ := strings.Cut(rest, "/")
	if !ok || id == "" || tail != "logs" {
		return "", false
	}
	return id, true
}
