package market

import (
	"io"
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
// It does not stream: a pod's log stream (GET /v2/pods/{id}/logs) is
// answered 501, and the lane watches by polling, as it does wherever a
// stream cannot be opened. A stream's lines travel through goroutines
// outside the virtual clock, so when they arrive in virtual time would
// depend on the machine's load and the tables would not reproduce; polling
// sees what a stream says at most one startup poll (10 s) later, for every
// policy alike.
//
// The latency is a wait of the calling lane on the replay's scheduler, so
// other lanes run meanwhile.
type inProcess struct {
	handlers map[string]http.Handler // by host:port
	wait     func(time.Duration)
}

func newInProcess(c *cloud.Cloud, wait func(time.Duration)) (*inProcess, error) {
	t := &inProcess{handlers: map[string]http.Handler{}, wait: wait}
	for raw, h := range map[string]http.Handler{c.RunPodURL: c.RunPod, c.GitHubURL: c.GitHub} {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		t.handlers[u.Host] = h
	}
	return t, nil
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.handlers[req.URL.Host]
	if h == nil {
		return http.DefaultTransport.RoundTrip(req)
	}
	t.wait(APILatency / 2)
	defer t.wait(APILatency / 2)
	if isLogStream(req.URL.Path) {
		return &http.Response{StatusCode: http.StatusNotImplemented, Status: "501 Not Implemented", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("log streams are not simulated in process\n")), Request: req}, nil
	}
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

// isLogStream reports whether path is a pod's log stream: /v2/pods/{id}/logs.
func isLogStream(path string) bool {
	rest, ok := strings.CutPrefix(path, "/v2/pods/")
	id, tail, _ := strings.Cut(rest, "/")
	return ok && id != "" && tail == "logs"
}
