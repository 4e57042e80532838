package market

import (
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// inProcess carries the lane's requests to the simulated cloud's handlers
// without sockets: the same clients, request policies, handlers and contract
// checks as over loopback HTTP, without the system calls and connection
// handling that would otherwise take a third of a replay's time. Hosts it
// does not know go out through http.DefaultTransport.
type inProcess map[string]http.Handler // by host:port

func newInProcess(c *cloud.Cloud) (inProcess, error) {
	t := inProcess{}
	for raw, h := range map[string]http.Handler{c.RunPodURL: c.RunPod, c.GitHubURL: c.GitHub} {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		t[u.Host] = h
	}
	return t, nil
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t[req.URL.Host]
	if h == nil {
		return http.DefaultTransport.RoundTrip(req)
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
