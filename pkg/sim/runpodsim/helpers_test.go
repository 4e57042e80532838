package runpodsim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/contract"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const testKey = "rp_test_key"

// sim is one simulated RunPod behind a loopback HTTP server, on a virtual clock.
type sim struct {
	t      testing.TB
	server *runpodsim.Server
	clock  *simclock.Virtual
	url    string
	key    string
}

func newSim(t testing.TB, opts ...runpodsim.Option) *sim {
	t.Helper()
	return newSimOn(t, simclock.NewVirtual(runpodsim.Epoch), opts...)
}

// newSimOn is newSim on a given clock, for options that need the clock too.
func newSimOn(t testing.TB, clock *simclock.Virtual, opts ...runpodsim.Option) *sim {
	t.Helper()
	server, err := runpodsim.New(append([]runpodsim.Option{runpodsim.WithClock(clock), runpodsim.WithAPIKey(testKey)}, opts...)...)
	assert.NilError(t, err)
	ts := httptest.NewServer(server)
	t.Cleanup(ts.Close)
	t.Cleanup(server.Close) // first: open log streams end
	return &sim{t: t, server: server, clock: clock, url: ts.URL, key: testKey}
}

// reply is one HTTP answer, already checked against the contract.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request and fails the test unless the answer is one the RunPod
// contract allows for that operation and status, with the right content type.
func (s *sim) do(method, target string, body any) reply {
	s.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		var err error
		raw, err = json.Marshal(b)
		assert.NilError(s.t, err)
	}
	req, err := http.NewRequest(method, s.url+target, bytes.NewReader(raw))
	assert.NilError(s.t, err)
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(s.t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	assert.NilError(s.t, err)
	checkContract(s.t, method, target, resp.StatusCode, resp.Header, got)
	return reply{status: resp.StatusCode, header: resp.Header, body: got}
}

func checkContract(t testing.TB, method, target string, status int, header http.Header, body []byte) {
	t.Helper()
	u, err := url.Parse(target)
	assert.NilError(t, err)
	if _, err := contract.RunPod().Operation(method, u.Path); err == nil {
		assert.NilError(t, contract.RunPod().ValidateResponse(method, u.Path, status, body), "body: %s", body)
	}
	switch {
	case status >= 400:
		assert.Equal(t, header.Get("Content-Type"), "application/problem+json", "body: %s", body)
		var p problem
		assert.NilError(t, json.Unmarshal(body, &p))
		assert.Equal(t, p.Status, status)
	case len(body) > 0:
		assert.Equal(t, header.Get("Content-Type"), "application/json")
	}
}

func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	assert.NilError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

func (r reply) problem(t testing.TB) problem {
	t.Helper()
	var p problem
	r.decode(t, &p)
	return p
}

type problem struct {
	Title  string   `json:"title"`
	Status int      `json:"status"`
	Detail string   `json:"detail"`
	Errors []string `json:"errors"`
}

// pod is the part of the contract's Pod the tests read.
type pod struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Status       string              `json:"status"`
	Actions      []string            `json:"actions"`
	Image        string              `json:"image"`
	Env          map[string]string   `json:"env"`
	GPU          struct{ ID string } `json:"gpu"`
	Cloud        string              `json:"cloud"`
	DataCenterID string              `json:"dataCenterId"`
	CudaVersion  string              `json:"cudaVersion"`
	Cost         float64             `json:"cost"`
	Runtime      *struct {
		Uptime int `json:"uptime"`
		Ports  []struct {
			Private int  `json:"private"`
			Public  *int `json:"public"`
		} `json:"ports"`
	} `json:"runtime"`
	SSH struct {
		Direct *struct{ Port int } `json:"direct"`
	} `json:"ssh"`
	CreatedAt string  `json:"createdAt"`
	StartedAt *string `json:"startedAt"`
}

type podList struct {
	Pods       []pod  `json:"pods"`
	NextCursor string `json:"nextCursor"`
}

func (s *sim) create(body map[string]any) (reply, pod) {
	s.t.Helper()
	r := s.do(http.MethodPost, "/v2/pods", body)
	var p pod
	if r.status == http.StatusCreated {
		r.decode(s.t, &p)
	}
	return r, p
}

// mustCreate creates a pod and fails the test unless it gets 201.
func (s *sim) mustCreate(body map[string]any) pod {
	s.t.Helper()
	r, p := s.create(body)
	assert.Equal(s.t, r.status, http.StatusCreated, "body: %s", r.body)
	return p
}

func (s *sim) get(id string) pod {
	s.t.Helper()
	r := s.do(http.MethodGet, "/v2/pods/"+id, nil)
	assert.Equal(s.t, r.status, http.StatusOK, "body: %s", r.body)
	var p pod
	r.decode(s.t, &p)
	return p
}

func (s *sim) list(query string) podList {
	s.t.Helper()
	r := s.do(http.MethodGet, "/v2/pods"+query, nil)
	assert.Equal(s.t, r.status, http.StatusOK, "body: %s", r.body)
	var l podList
	r.decode(s.t, &l)
	return l
}

func (s *sim) action(id, action string) reply {
	s.t.Helper()
	return s.do(http.MethodPost, "/v2/pods/"+id+"/action", map[string]any{"action": action})
}

func (s *sim) advance(d time.Duration) { s.clock.Advance(d) }

// podRequest is a minimal valid create body for one GPU of gpuID.
func podRequest(name, gpuID string) map[string]any {
	return map[string]any{
		"name":  name,
		"image": "ghcr.io/actions/actions-runner@sha256:" + strings.Repeat("ab", 32),
		"gpu":   map[string]any{"id": gpuID, "count": 1, "minCudaVersion": "12.6"},
		"env":   map[string]string{"RUNNER_LABEL": "gpu-c1"},
		"ports": []string{"22/tcp"},
	}
}

const a40 = "NVIDIA A40"

// smallMarket sells A40s ($0.44 secure, $0.35 community) in two data centers on
// the given hosts; hosts without a data center land in US-KS-2.
func smallMarket(hosts ...runpodsim.HostProfile) runpodsim.Market {
	for i := range hosts {
		if hosts[i].DataCenterID == "" {
			hosts[i].DataCenterID = "US-KS-2"
		}
		if hosts[i].GPUTypeID == "" {
			hosts[i].GPUTypeID = a40
		}
		if hosts[i].DriverCUDA == "" {
			hosts[i].DriverCUDA = "12.8"
		}
	}
	return runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{{ID: a40, Name: "A40", Pool: "AMPERE_48", MemoryGB: 48, SecurePrice: 0.44, CommunityPrice: 0.35}},
		DataCenters: []runpodsim.DataCenter{
			{ID: "US-KS-2", Name: "US Kansas 2", Region: "NORTH_AMERICA", CountryCode: "US", GlobalNetwork: true},
			{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO"},
		},
		Hosts: hosts,
	}
}

// healthyHost is one single-GPU secure A40 machine that boots in 30 s.
func healthyHost(id string) runpodsim.HostProfile {
	return runpodsim.HostProfile{ID: id, GPUCount: 1, BootSeconds: 30, Healthy: true}
}

// bootTime is how long a healthyHost pod takes from create to RUNNING
// (the default 5 s of PROVISIONING plus 30 s of STARTING).
const bootTime = 35 * time.Second
