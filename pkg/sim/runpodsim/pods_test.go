package runpodsim_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

func TestPodLifecycle(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))

	created := s.mustCreate(podRequest("rg-1-1-c1", a40))
	assert.Equal(t, created.Status, runpodsim.StatusProvisioning)
	assert.Assert(t, created.Runtime == nil, "runtime is null unless RUNNING")
	assert.Assert(t, created.StartedAt == nil, "startedAt is null until the container starts")
	assert.Equal(t, created.Cost, 0.44, "a booting pod reports the rate it will bill")
	assert.Equal(t, created.DataCenterID, "US-KS-2")
	assert.Equal(t, created.CudaVersion, "12.8")
	assert.Equal(t, created.CreatedAt, "2026-12-01T12:00:00Z")
	assert.DeepEqual(t, created.Actions, []string{"stop", "terminate"})

	steps := []struct {
		after      time.Duration
		wantStatus string
		wantUptime int // -1: runtime must be null
	}{
		{after: 4 * time.Second, wantStatus: runpodsim.StatusProvisioning, wantUptime: -1},
		{after: time.Second, wantStatus: runpodsim.StatusStarting, wantUptime: -1},
		{after: 29 * time.Second, wantStatus: runpodsim.StatusStarting, wantUptime: -1},
		{after: time.Second, wantStatus: runpodsim.StatusRunning, wantUptime: 0},
		{after: 10 * time.Minute, wantStatus: runpodsim.StatusRunning, wantUptime: 600},
	}
	for _, step := range steps {
		s.advance(step.after)
		got := s.get(created.ID)
		elapsed := s.clock.Now().Sub(runpodsim.Epoch)
		assert.Equal(t, got.Status, step.wantStatus, "at +%s", elapsed)
		if step.wantUptime < 0 {
			assert.Assert(t, got.Runtime == nil, "at +%s", elapsed)
			continue
		}
		assert.Assert(t, got.Runtime != nil, "at +%s", elapsed)
		assert.Equal(t, got.Runtime.Uptime, step.wantUptime)
		assert.Equal(t, *got.StartedAt, "2026-12-01T12:00:35Z")
		assert.Assert(t, got.SSH.Direct != nil, "22/tcp is published once running")
		assert.Equal(t, got.SSH.Direct.Port, *got.Runtime.Ports[0].Public)
	}

	r := s.do(http.MethodDelete, "/v2/pods/"+created.ID, nil)
	assert.Equal(t, r.status, http.StatusNoContent)
	assert.Equal(t, len(r.body), 0)
	assert.Equal(t, s.do(http.MethodGet, "/v2/pods/"+created.ID, nil).status, http.StatusNotFound)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+created.ID, nil).status, http.StatusNotFound, "404 confirms deletion")
	assert.Equal(t, len(s.list("").Pods), 0)

	infos := s.server.Pods()
	assert.Equal(t, len(infos), 1)
	assert.Equal(t, infos[0].Status, runpodsim.StatusTerminated)
	assert.Equal(t, infos[0].HostID, "h1")
	assert.Equal(t, infos[0].TerminatedAt, runpodsim.Epoch.Add(bootTime+10*time.Minute))
}

// A pod that ran 600 s at $0.44/h costs 600 × 0.44 / 3600 = $0.07333.
func TestBillingIsPerSecondFromStartToDeletion(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
	p := s.mustCreate(podRequest("billed", a40))

	s.advance(bootTime)
	assert.Equal(t, s.get(p.ID).Status, runpodsim.StatusRunning)
	s.advance(600 * time.Second)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)
	s.advance(time.Hour) // nothing bills after deletion

	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(600))
	assert.Equal(t, bill.HourlyPrice, 0.44)
	assert.Assert(t, math.Abs(bill.Dollars-0.0733) < 0.00005, "dollars = %v", bill.Dollars)
	assert.Assert(t, !bill.Accruing)
	assert.Equal(t, s.server.Spent(), bill.Dollars)

	_, err = s.server.Bill("nope")
	assert.ErrorIs(t, err, runpodsim.ErrUnknownPod)
}

func TestBillingRoundsEachRunUpToTheSecondAndScalesWithCount(t *testing.T) {
	host := healthyHost("h1")
	host.GPUCount = 2
	s := newSim(t, runpodsim.WithMarket(smallMarket(host)))
	req := podRequest("two-gpus", a40)
	req["gpu"] = map[string]any{"id": a40, "count": 2}
	p := s.mustCreate(req)
	assert.Equal(t, p.Cost, 0.88)

	s.advance(bootTime + 1500*time.Millisecond)
	assert.Equal(t, s.action(p.ID, "stop").status, http.StatusOK)
	stopped := s.get(p.ID)
	assert.Equal(t, stopped.Status, runpodsim.StatusExited)
	assert.Equal(t, stopped.Cost, 0.0, "cost reads 0 once EXITED")
	assert.Assert(t, stopped.Runtime == nil)

	s.advance(time.Hour)
	assert.Equal(t, s.action(p.ID, "start").status, http.StatusOK)
	s.advance(30*time.Second + 10*time.Second) // 30 s boot, then 10 s running
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)

	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(2+10), "1.5 s rounds up to 2 s; the stopped hour is free")
	assert.Assert(t, math.Abs(bill.Dollars-12*0.88/3600) < 1e-9)
}

func TestCreatePodErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       any
		opts       []runpodsim.Option
		wantStatus int
		wantDetail string
		wantErrors []string
	}{
		{
			name:       "unknown field is 422 with the contract's message",
			body:       merge(podRequest("x", a40), map[string]any{"bogus": 1}),
			wantStatus: http.StatusUnprocessableEntity,
			wantDetail: "Request validation failed.",
			wantErrors: []string{"$: additional properties 'bogus' not allowed"},
		},
		{
			name:       "unknown gpu field is 422",
			body:       merge(podRequest("x", a40), map[string]any{"gpu": map[string]any{"id": a40, "vram": 8}}),
			wantStatus: http.StatusUnprocessableEntity,
			wantErrors: []string{"$.gpu: additional properties 'vram' not allowed"},
		},
		{
			name:       "entrypoint and cmd are accepted (contract delta)",
			body:       merge(podRequest("x", a40), map[string]any{"entrypoint": []string{"/bin/bash", "-c"}, "cmd": []string{"exec /start.sh"}}),
			wantStatus: http.StatusCreated,
		},
		{
			name:       "not JSON is 400",
			body:       `{"name":`,
			wantStatus: http.StatusBadRequest,
			wantDetail: "request body is not valid JSON",
		},
		{
			name:       "both CUDA constraints is 400",
			body:       merge(podRequest("x", a40), map[string]any{"gpu": map[string]any{"id": a40, "minCudaVersion": "12.6", "allowedCudaVersions": []string{"12.8"}}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "gpu.allowedCudaVersions and gpu.minCudaVersion are mutually exclusive",
		},
		{
			name:       "unknown GPU type is 400",
			body:       podRequest("x", "NVIDIA Imaginary 9000"),
			wantStatus: http.StatusBadRequest,
			wantDetail: `gpu.id "NVIDIA Imaginary 9000" is invalid: no such GPU type`,
		},
		{
			name:       "no gpu and no cpu is 400",
			body:       map[string]any{"name": "x", "image": "i"},
			wantStatus: http.StatusBadRequest,
			wantDetail: "exactly one of gpu or cpu must be set",
		},
		{
			name:       "template is 404",
			body:       map[string]any{"name": "x", "templateId": "tmpl1", "gpu": map[string]any{"id": a40}},
			wantStatus: http.StatusNotFound,
			wantDetail: `template "tmpl1" not found`,
		},
		{
			name:       "count above the largest machine is 400",
			body:       merge(podRequest("x", a40), map[string]any{"gpu": map[string]any{"id": a40, "count": 2}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "gpu.count 2 exceeds 1, the largest SECURE machine with NVIDIA A40",
		},
		{
			name:       "cloud without such machines is no capacity",
			body:       merge(podRequest("x", a40), map[string]any{"cloud": "COMMUNITY"}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "There are no instances currently available for 1 x NVIDIA A40 on COMMUNITY cloud with the requested constraints.",
		},
		{
			name:       "driver below minCudaVersion is no capacity",
			body:       merge(podRequest("x", a40), map[string]any{"gpu": map[string]any{"id": a40, "minCudaVersion": "12.9"}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "There are no instances currently available for 1 x NVIDIA A40 on SECURE cloud with the requested constraints.",
		},
		{
			name:       "allowedCudaVersions match exactly",
			body:       merge(podRequest("x", a40), map[string]any{"gpu": map[string]any{"id": a40, "allowedCudaVersions": []string{"12.6"}}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "There are no instances currently available for 1 x NVIDIA A40 on SECURE cloud with the requested constraints.",
		},
		{
			name:       "data center without the GPU is no capacity",
			body:       merge(podRequest("x", a40), map[string]any{"dataCenterIds": []string{"EU-RO-1"}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: "There are no instances currently available for 1 x NVIDIA A40 on SECURE cloud with the requested constraints.",
		},
		{
			name:       "unknown data center is 400",
			body:       merge(podRequest("x", a40), map[string]any{"dataCenterIds": []string{"MARS-1"}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: `dataCenterIds: "MARS-1" is invalid: no such data center`,
		},
		{
			name:       "malformed port is 400",
			body:       merge(podRequest("x", a40), map[string]any{"ports": []string{"ssh"}}),
			wantStatus: http.StatusBadRequest,
			wantDetail: `ports: "ssh" is invalid: want port/protocol, e.g. 22/tcp or 8888/http`,
		},
		{
			name:       "balance below an hour of the price is 402",
			body:       podRequest("x", a40),
			opts:       []runpodsim.Option{runpodsim.WithBalance(0.43)},
			wantStatus: http.StatusPaymentRequired,
			wantDetail: "Your account balance ($0.43) is too low to rent this pod at $0.44/hr. Please add funds to your account.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, append([]runpodsim.Option{runpodsim.WithMarket(smallMarket(healthyHost("h1")))}, tc.opts...)...)
			r := s.do(http.MethodPost, "/v2/pods", tc.body)
			assert.Equal(t, r.status, tc.wantStatus, "body: %s", r.body)
			if tc.wantStatus >= 400 {
				p := r.problem(t)
				if tc.wantDetail != "" {
					assert.Equal(t, p.Detail, tc.wantDetail)
				}
				assert.DeepEqual(t, p.Errors, tc.wantErrors)
				assert.Equal(t, len(s.server.Pods()), 0, "a refused create creates nothing")
			}
		})
	}
}

func merge(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func TestCapacityIsTheHostsFreeGPUs(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))

	first := s.mustCreate(podRequest("first", a40))
	r, _ := s.create(podRequest("second", a40))
	assert.Equal(t, r.status, http.StatusBadRequest)
	assert.Check(t, is.Contains(r.problem(t).Detail, "no instances currently available"))

	assert.Equal(t, s.action(first.ID, "stop").status, http.StatusOK)
	second := s.mustCreate(podRequest("second", a40))
	assert.Equal(t, s.action(first.ID, "start").status, http.StatusBadRequest, "a stopped pod's GPU can be taken")

	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+second.ID, nil).status, http.StatusNoContent)
	assert.Equal(t, s.action(first.ID, "start").status, http.StatusOK)
}

func TestBalanceCountsWhatPodsHaveSpent(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))), runpodsim.WithBalance(0.50))

	s.mustCreate(podRequest("first", a40)) // $0.50 left ≥ $0.44
	s.advance(bootTime + 10*time.Minute)   // spends $0.0733: $0.4267 left
	r, _ := s.create(podRequest("second", a40))
	assert.Equal(t, r.status, http.StatusPaymentRequired)
	assert.Check(t, is.Contains(r.problem(t).Detail, "too low"))
}

func TestPodActions(t *testing.T) {
	// Each case drives a fresh pod to a status, then asks for an action.
	tests := []struct {
		name       string
		setup      func(s *sim, id string)
		action     string
		wantStatus int
		wantPod    string // status after the action, when it answers 200
	}{
		{name: "stop while provisioning", action: "stop", wantStatus: http.StatusOK, wantPod: runpodsim.StatusExited},
		{name: "restart while provisioning is 409", action: "restart", wantStatus: http.StatusConflict},
		{name: "start while provisioning is 409", action: "start", wantStatus: http.StatusConflict},
		{name: "terminate while provisioning", action: "terminate", wantStatus: http.StatusNoContent},
		{name: "restart while running", setup: running, action: "restart", wantStatus: http.StatusOK, wantPod: runpodsim.StatusStarting},
		{name: "start while running is 409", setup: running, action: "start", wantStatus: http.StatusConflict},
		{name: "start when exited", setup: exited, action: "start", wantStatus: http.StatusOK, wantPod: runpodsim.StatusStarting},
		{name: "stop when exited is 409", setup: exited, action: "stop", wantStatus: http.StatusConflict},
		{name: "terminate when exited", setup: exited, action: "terminate", wantStatus: http.StatusNoContent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
			p := s.mustCreate(podRequest("acted-on", a40))
			if tc.setup != nil {
				tc.setup(s, p.ID)
			}
			r := s.action(p.ID, tc.action)
			assert.Equal(t, r.status, tc.wantStatus, "body: %s", r.body)
			switch tc.wantStatus {
			case http.StatusOK:
				var got pod
				r.decode(t, &got)
				assert.Equal(t, got.Status, tc.wantPod)
			case http.StatusConflict:
				assert.Check(t, is.Contains(r.problem(t).Detail, fmt.Sprintf("action %q is not valid", tc.action)))
			case http.StatusNoContent:
				assert.Equal(t, s.do(http.MethodGet, "/v2/pods/"+p.ID, nil).status, http.StatusNotFound)
			}
		})
	}
}

func running(s *sim, id string) {
	s.advance(bootTime)
	assert.Equal(s.t, s.get(id).Status, runpodsim.StatusRunning)
}

func exited(s *sim, id string) {
	running(s, id)
	assert.Equal(s.t, s.action(id, "stop").status, http.StatusOK)
}

func TestPodActionRequestErrors(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
	p := s.mustCreate(podRequest("x", a40))

	r := s.do(http.MethodPost, "/v2/pods/"+p.ID+"/action", map[string]any{"action": "explode"})
	assert.Equal(t, r.status, http.StatusUnprocessableEntity)
	assert.Assert(t, len(r.problem(t).Errors) > 0)
	assert.Equal(t, s.action("missing", "stop").status, http.StatusNotFound)
}

func TestRestartIgnoresTheOldContainersExit(t *testing.T) {
	runner := &recordingRunner{}
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithHostRunner(runner))
	p := s.mustCreate(podRequest("restarted", a40))
	s.advance(bootTime)
	assert.Equal(t, len(runner.launches), 1)

	assert.Equal(t, s.action(p.ID, "restart").status, http.StatusOK)
	runner.exits[0](1) // the killed container reports late
	s.advance(30 * time.Second)
	got := s.get(p.ID)
	assert.Equal(t, got.Status, runpodsim.StatusRunning, "a stale exit does not stop the new container")
	assert.Equal(t, len(runner.launches), 2)
	assert.DeepEqual(t, runner.stopped, []string{p.ID})
	assert.Equal(t, *got.StartedAt, "2026-12-01T12:01:05Z", "startedAt is the latest container start")
}

func TestTerminatedRetentionShowsTerminatedPods(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithTerminatedRetention(time.Minute))
	p := s.mustCreate(podRequest("kept", a40))
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)

	got := s.get(p.ID)
	assert.Equal(t, got.Status, runpodsim.StatusTerminated)
	assert.Equal(t, got.Cost, 0.0)
	assert.DeepEqual(t, got.Actions, []string{})
	assert.Equal(t, len(s.list("").Pods), 1)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNotFound)

	s.advance(time.Minute)
	assert.Equal(t, s.do(http.MethodGet, "/v2/pods/"+p.ID, nil).status, http.StatusNotFound)
}

func TestListPodsPagination(t *testing.T) {
	hosts := []runpodsim.HostProfile{}
	for i := range 5 {
		hosts = append(hosts, healthyHost(fmt.Sprintf("h%d", i)))
	}
	tests := []struct {
		name      string
		opts      []runpodsim.Option
		query     string
		wantPages []int
	}{
		{name: "one page by default", wantPages: []int{5}},
		{name: "client limit", query: "?limit=2", wantPages: []int{2, 2, 1}},
		{name: "server page size", opts: []runpodsim.Option{runpodsim.WithPageSize(3)}, wantPages: []int{3, 2}},
		{name: "the smaller of both", opts: []runpodsim.Option{runpodsim.WithPageSize(3)}, query: "?limit=4", wantPages: []int{3, 2}},
		{name: "exact multiple has no empty last page", query: "?limit=5", wantPages: []int{5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, append([]runpodsim.Option{runpodsim.WithMarket(smallMarket(hosts...))}, tc.opts...)...)
			var want []string
			for i := range 5 {
				want = append(want, s.mustCreate(podRequest(fmt.Sprintf("p%d", i), a40)).ID)
			}
			var got []string
			var pages []int
			query := tc.query
			for {
				page := s.list(query)
				pages = append(pages, len(page.Pods))
				for _, p := range page.Pods {
					got = append(got, p.ID)
				}
				if page.NextCursor == "" {
					break
				}
				sep := "?"
				if tc.query != "" {
					sep = tc.query + "&"
				}
				query = sep + "cursor=" + page.NextCursor
			}
			assert.DeepEqual(t, pages, tc.wantPages)
			assert.DeepEqual(t, got, want)
		})
	}
}

func TestListPodsQueryErrors(t *testing.T) {
	s := newSim(t)
	tests := []struct {
		query      string
		wantStatus int
	}{
		{query: "?limit=0", wantStatus: http.StatusUnprocessableEntity},
		{query: "?limit=-1", wantStatus: http.StatusUnprocessableEntity},
		{query: "?limit=ten", wantStatus: http.StatusUnprocessableEntity},
		{query: "?cursor=not-a-cursor", wantStatus: http.StatusBadRequest},
		{query: "?limit=1&cursor=", wantStatus: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			assert.Equal(t, s.do(http.MethodGet, "/v2/pods"+tc.query, nil).status, tc.wantStatus)
		})
	}
}

func TestAuthAndRouting(t *testing.T) {
	s := newSim(t)
	tests := []struct {
		name       string
		key        string
		header     string
		method     string
		path       string
		wantStatus int
		wantDetail string
	}{
		{name: "no token", method: http.MethodGet, path: "/v2/pods", wantStatus: 401, wantDetail: "missing bearer token"},
		{name: "not bearer", header: "Basic abc", method: http.MethodGet, path: "/v2/pods", wantStatus: 401, wantDetail: "missing bearer token"},
		{name: "wrong key", key: "rp_wrong", method: http.MethodGet, path: "/v2/pods", wantStatus: 401, wantDetail: "invalid bearer token"},
		{name: "right key", key: testKey, method: http.MethodGet, path: "/v2/pods", wantStatus: 200},
		{name: "unknown route", key: testKey, method: http.MethodGet, path: "/v2/nothing", wantStatus: 404, wantDetail: "no route for GET /v2/nothing"},
		{name: "method not allowed", key: testKey, method: http.MethodPut, path: "/v2/pods", wantStatus: 405},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.url+tc.path, nil)
			assert.NilError(t, err)
			switch {
			case tc.header != "":
				req.Header.Set("Authorization", tc.header)
			case tc.key != "":
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			defer resp.Body.Close()
			body := readAll(t, resp)
			checkContract(t, tc.method, tc.path, resp.StatusCode, resp.Header, body)
			assert.Equal(t, resp.StatusCode, tc.wantStatus)
			if tc.wantDetail != "" {
				r := reply{status: resp.StatusCode, body: body}
				assert.Equal(t, r.problem(t).Detail, tc.wantDetail)
				assert.Check(t, !is.Contains(string(body), testKey)().Success(), "the key is never echoed")
			}
			if tc.wantStatus == 405 {
				assert.Equal(t, resp.Header.Get("Allow"), "GET, POST")
			}
		})
	}
}

func TestRequestLog(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
	p := s.mustCreate(podRequest("logged", a40))
	s.advance(time.Second)
	s.get(p.ID)
	s.do(http.MethodGet, "/v2/pods/nope", nil)

	var got []string
	for _, r := range s.server.Requests() {
		got = append(got, fmt.Sprintf("%s %s %d +%s", r.Route, r.Path, r.Status, r.At.Sub(runpodsim.Epoch)))
	}
	assert.DeepEqual(t, got, []string{
		"POST /v2/pods /v2/pods 201 +0s",
		"GET /v2/pods/{id} /v2/pods/" + p.ID + " 200 +1s",
		"GET /v2/pods/{id} /v2/pods/nope 404 +1s",
	})
}
