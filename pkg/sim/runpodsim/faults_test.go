package runpodsim_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

func TestQuotaAnswers429WithRetryAfter(t *testing.T) {
	s := newSim(t, runpodsim.WithQuota(3))
	s.advance(20 * time.Second) // 40 s left in this clock minute

	for i := range 3 {
		r := s.do(http.MethodGet, "/v2/pods", nil)
		assert.Equal(t, r.status, http.StatusOK)
		assert.Equal(t, r.header.Get("RateLimit"), fmt.Sprintf(`"minute";r=%d;t=40`, 2-i))
		assert.Equal(t, r.header.Get("RateLimit-Policy"), `"minute";q=3;w=60`)
	}
	r := s.do(http.MethodGet, "/v2/catalog/gpus", nil)
	assert.Equal(t, r.status, http.StatusTooManyRequests)
	assert.Equal(t, r.header.Get("Retry-After"), "40")
	assert.Equal(t, r.problem(t).Detail, "rate limit exceeded for the minute window")

	s.advance(40 * time.Second)
	assert.Equal(t, s.do(http.MethodGet, "/v2/pods", nil).status, http.StatusOK, "a new window admits requests again")
}

func TestRateLimitFault(t *testing.T) {
	s := newSim(t, runpodsim.WithFaults(runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
		{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 2}, RetryAfter: 7 * time.Second},
		{Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{First: 1}, RetryAfter: 90 * time.Second, AsHTTPDate: true},
	}}))

	var statuses []int
	for range 4 {
		r := s.do(http.MethodGet, "/v2/pods/some-id", nil)
		statuses = append(statuses, r.status)
		if r.status == http.StatusTooManyRequests {
			assert.Equal(t, r.header.Get("Retry-After"), "7")
		}
	}
	assert.DeepEqual(t, statuses, []int{404, 429, 404, 429})

	r := s.do(http.MethodGet, "/v2/catalog/gpus", nil)
	assert.Equal(t, r.status, http.StatusTooManyRequests)
	assert.Equal(t, r.header.Get("Retry-After"), "Tue, 01 Dec 2026 12:01:30 GMT")
	assert.Equal(t, s.do(http.MethodGet, "/v2/catalog/gpus", nil).status, http.StatusOK)
}

func TestServerErrorsChangeNothing(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithFaults(runpodsim.Faults{
		ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{First: 2}, Status: 503}},
	}))
	for range 2 {
		r, _ := s.create(podRequest("retried", a40))
		assert.Equal(t, r.status, http.StatusServiceUnavailable)
	}
	assert.Equal(t, len(s.server.Pods()), 0)
	s.mustCreate(podRequest("retried", a40))
	assert.Equal(t, len(s.list("").Pods), 1)
}

// A 5xx may carry Retry-After (a 503 pausing its clients): whole seconds,
// rounded up, on a plain server error and on a create whose answer is lost.
func TestServerErrorsCarryRetryAfter(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))), runpodsim.WithFaults(runpodsim.Faults{
		ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}}, Status: 503, RetryAfter: 90*time.Second + time.Millisecond}},
		LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 503, RetryAfter: 2 * time.Minute}},
	}))
	r, _ := s.create(podRequest("paused", a40))
	assert.Equal(t, r.status, http.StatusServiceUnavailable)
	assert.Equal(t, r.header.Get("Retry-After"), "91")
	assert.Equal(t, len(s.server.Pods()), 0)

	r, _ = s.create(podRequest("paused", a40))
	assert.Equal(t, r.status, http.StatusServiceUnavailable)
	assert.Equal(t, r.header.Get("Retry-After"), "120")
	assert.Equal(t, len(s.server.Pods()), 1, "the lost create made its pod")
}

func TestLostCreateResponse(t *testing.T) {
	tests := []struct {
		name  string
		fault runpodsim.LostCreateFault
	}{
		{name: "5xx after the write", fault: runpodsim.LostCreateFault{When: runpodsim.Trigger{Nth: []int{1}}}},
		{name: "dropped connection", fault: runpodsim.LostCreateFault{When: runpodsim.Trigger{Nth: []int{1}}, DropConnection: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))),
				runpodsim.WithFaults(runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{tc.fault}}))

			if tc.fault.DropConnection {
				req, err := http.NewRequest(http.MethodPost, s.url+"/v2/pods", strings.NewReader(mustJSON(t, podRequest("rg-9-1-c1", a40))))
				assert.NilError(t, err)
				req.Header.Set("Authorization", "Bearer "+testKey)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				assert.Assert(t, err != nil, "the client sees no response")
				assert.ErrorIs(t, err, io.EOF)
			} else {
				r, _ := s.create(podRequest("rg-9-1-c1", a40))
				assert.Equal(t, r.status, http.StatusBadGateway)
			}

			// Reconciling by name finds exactly one pod, and it runs and bills.
			var named []pod
			for _, p := range s.list("").Pods {
				if p.Name == "rg-9-1-c1" {
					named = append(named, p)
				}
			}
			assert.Equal(t, len(named), 1)
			s.advance(bootTime + time.Minute)
			assert.Equal(t, s.get(named[0].ID).Status, runpodsim.StatusRunning)
			bill, err := s.server.Bill(named[0].ID)
			assert.NilError(t, err)
			assert.Equal(t, bill.Seconds, int64(60))

			last := s.server.Requests()[0]
			if tc.fault.DropConnection {
				assert.Equal(t, last.Status, 0, "a dropped answer is logged with status 0")
			}
			s.mustCreate(podRequest("second", a40)) // only the first create was hit
		})
	}
}

func mustJSON(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	assert.NilError(t, err)
	return string(b)
}

func TestSlowResponsesAdvanceTheVirtualClock(t *testing.T) {
	s := newSim(t, runpodsim.WithFaults(runpodsim.Faults{
		Slow: []runpodsim.SlowFault{{Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{First: 1}, Delay: 25 * time.Second}},
	}))
	assert.Equal(t, s.do(http.MethodGet, "/v2/catalog/gpus", nil).status, http.StatusOK)
	assert.Equal(t, s.clock.Now(), runpodsim.Epoch.Add(25*time.Second))
	s.do(http.MethodGet, "/v2/catalog/gpus", nil)
	assert.Equal(t, s.clock.Now(), runpodsim.Epoch.Add(25*time.Second), "only the first call was slow")
}

func TestDeleteFailsForAWhile(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithFaults(runpodsim.Faults{
		DeleteFailures: runpodsim.DeleteFault{FailFirst: 2, Status: http.StatusBadGateway},
	}))
	p := s.mustCreate(podRequest("sticky", a40))
	s.advance(bootTime)

	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusBadGateway)
	assert.Equal(t, s.action(p.ID, "terminate").status, http.StatusBadGateway, "terminate is a delete too")
	s.advance(10 * time.Second)
	assert.Equal(t, s.get(p.ID).Status, runpodsim.StatusRunning, "a failed delete leaves the pod billing")
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)

	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(10))
}

func TestListingDelayHidesNewPods(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithFaults(runpodsim.Faults{ListingDelay: 15 * time.Second}))
	p := s.mustCreate(podRequest("late-to-list", a40))

	assert.Equal(t, len(s.list("").Pods), 0)
	assert.Equal(t, s.get(p.ID).ID, p.ID, "GET by id sees it at once")
	s.advance(15 * time.Second)
	assert.Equal(t, len(s.list("").Pods), 1)
}

func TestPodFaults(t *testing.T) {
	tests := []struct {
		name        string
		faults      runpodsim.Faults
		wantStatus  []string // status of pod 1 and pod 2 at bootTime+1m
		wantRuntime []bool
	}{
		{
			name:        "second pod dies during boot",
			faults:      runpodsim.Faults{DieDuringBoot: runpodsim.Trigger{Nth: []int{2}}},
			wantStatus:  []string{runpodsim.StatusRunning, runpodsim.StatusError},
			wantRuntime: []bool{true, false},
		},
		{
			name:        "first pod loses its runtime",
			faults:      runpodsim.Faults{LoseRuntime: runpodsim.Trigger{First: 1}, RuntimeLostAfter: 30 * time.Second},
			wantStatus:  []string{runpodsim.StatusRunning, runpodsim.StatusRunning},
			wantRuntime: []bool{false, true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))), runpodsim.WithFaults(tc.faults))
			ids := []string{s.mustCreate(podRequest("one", a40)).ID, s.mustCreate(podRequest("two", a40)).ID}
			s.advance(bootTime + time.Minute)
			for i, id := range ids {
				got := s.get(id)
				assert.Equal(t, got.Status, tc.wantStatus[i], "pod %d", i+1)
				assert.Equal(t, got.Runtime != nil, tc.wantRuntime[i], "pod %d", i+1)
			}
		})
	}
}

func TestDiedPodCanBeStartedAgain(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))),
		runpodsim.WithFaults(runpodsim.Faults{DieDuringBoot: runpodsim.Trigger{First: 1}}))
	p := s.mustCreate(podRequest("phoenix", a40))
	s.advance(5*time.Second + 15*time.Second) // dies halfway through its 30 s boot
	assert.Equal(t, s.get(p.ID).Status, runpodsim.StatusError)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(0), "a pod that never ran costs nothing")

	assert.Equal(t, s.action(p.ID, "start").status, http.StatusOK)
	s.advance(30 * time.Second)
	assert.Equal(t, s.get(p.ID).Status, runpodsim.StatusRunning, "the fault hits the first boot only")
}

// scenario plays the same calls against a simulator seeded with seed and
// returns everything observable: statuses, ids, placements, bills.
func scenario(t *testing.T, seed uint64) string {
	s := newSim(t, runpodsim.WithSeed(seed), runpodsim.WithFaults(runpodsim.Faults{
		ServerErrors:  []runpodsim.ServerErrorFault{{When: runpodsim.Trigger{Rate: 0.2}}},
		RateLimits:    []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Rate: 0.2}}},
		DieDuringBoot: runpodsim.Trigger{Rate: 0.3},
		LostCreates:   []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Rate: 0.2}}},
	}))
	var out strings.Builder
	var ids []string
	for i := range 12 {
		r, p := s.create(podRequest(fmt.Sprintf("pod-%d", i), "NVIDIA GeForce RTX 4090"))
		fmt.Fprintf(&out, "create %d: %d %s\n", i, r.status, p.ID)
		if p.ID != "" {
			ids = append(ids, p.ID)
		}
		s.advance(7 * time.Second)
	}
	s.advance(2 * time.Minute)
	for _, id := range ids {
		r := s.do(http.MethodGet, "/v2/pods/"+id, nil)
		fmt.Fprintf(&out, "get %s: %d\n", id, r.status)
	}
	for _, p := range s.server.Pods() {
		bill, err := s.server.Bill(p.ID)
		assert.NilError(t, err)
		fmt.Fprintf(&out, "%s %s on %s: %s, %d s\n", p.Name, p.ID, p.HostID, p.Status, bill.Seconds)
	}
	return out.String()
}

func TestSameSeedSameOutcome(t *testing.T) {
	first := scenario(t, 42)
	assert.Equal(t, scenario(t, 42), first)
	assert.Assert(t, scenario(t, 43) != first, "another seed gives other ids, placements and faults")
	for _, want := range []string{": 500", ": 502", "ERROR", "RUNNING"} {
		assert.Assert(t, strings.Contains(first, want), "the scenario exercises %q:\n%s", want, first)
	}
}

func TestRewriteFaultReplacesTheAnswerAfterTheRequestTookEffect(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))), runpodsim.WithFaults(runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{
			Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}},
			Body: func(status int, body []byte) []byte {
				assert.Equal(t, status, http.StatusCreated)
				assert.Assert(t, strings.Contains(string(body), `"name":"rewritten"`), "the handler's answer is passed in: %s", body)
				return []byte(`{}`)
			},
		}},
	}))
	req, err := http.NewRequest(http.MethodPost, s.url+"/v2/pods", strings.NewReader(mustJSON(t, podRequest("rewritten", a40))))
	assert.NilError(t, err)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusCreated)
	assert.Equal(t, string(got), `{}`)
	assert.Equal(t, len(s.list("").Pods), 1, "the create took effect although its answer was rewritten")

	// The trigger hit only the first create: the second is answered as usual.
	assert.Equal(t, s.mustCreate(podRequest("plain", a40)).Name, "plain")
}
