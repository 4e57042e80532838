package runpodsim_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// clientSim is a simulator and the suite's RunPod client sharing one virtual
// clock: the client's backoff and Retry-After waits advance simulated time.
type clientSim struct {
	server *runpodsim.Server
	clock  *simclock.Virtual
	client *runpod.Client
}

// clientSetup configures newClientSim beyond its defaults.
type clientSetup struct {
	sim    []runpodsim.Option
	policy []reqpolicy.Option
	client []runpod.Option
}

func newClientSim(t *testing.T, setup clientSetup) clientSim {
	t.Helper()
	clock := simclock.NewVirtual(runpodsim.Epoch)
	server, err := runpodsim.New(append([]runpodsim.Option{runpodsim.WithClock(clock), runpodsim.WithAPIKey(testKey)}, setup.sim...)...)
	assert.NilError(t, err)
	ts := httptest.NewServer(server)
	t.Cleanup(ts.Close)
	t.Cleanup(server.Close) // first: open log streams end
	policy := reqpolicy.New(append([]reqpolicy.Option{
		reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }),
	}, setup.policy...)...)
	opts := append([]runpod.Option{runpod.WithHTTPClient(ts.Client()), runpod.WithPolicy(policy)}, setup.client...)
	return clientSim{server: server, clock: clock, client: runpod.New(ts.URL, testKey, opts...)}
}

// withSim is a clientSetup of simulator options only.
func withSim(opts ...runpodsim.Option) clientSetup { return clientSetup{sim: opts} }

func clientRequest(name string) runpod.CreatePodRequest {
	return runpod.CreatePodRequest{
		Name:       name,
		Image:      "ghcr.io/actions/actions-runner@sha256:0123",
		GPU:        &runpod.CreateGPU{ID: a40, Count: 1, MinCudaVersion: "12.6"},
		Cloud:      runpod.CloudSecure,
		Env:        map[string]string{"RUNNER_LABEL": "gpu-c1"},
		Entrypoint: []string{"/bin/bash", "-c"},
		Cmd:        []string{"exec /startup.sh"},
	}
}

func TestClientReadsTheCatalog(t *testing.T) {
	cs := newClientSim(t, clientSetup{})
	ctx := context.Background()

	gpus, err := cs.client.ListGPUTypes(ctx, runpod.GPUQuery{
		Include: true, Product: runpod.ProductPod, Cloud: runpod.CloudSecure, Count: 1, MinCudaVersion: "12.6",
	})
	assert.NilError(t, err)
	assert.Equal(t, len(gpus), 14)
	byID := map[string]runpod.GPUType{}
	for _, g := range gpus {
		byID[g.ID] = g
	}
	assert.Equal(t, float64(byID["NVIDIA GeForce RTX 4090"].Price.Secure), 0.69)
	assert.Assert(t, byID["NVIDIA GeForce RTX 4090"].Availability.InStock())
	assert.Assert(t, !byID["NVIDIA GeForce RTX 3090"].Availability.InStock(), "its only secure machine runs CUDA 12.4")

	h100, err := cs.client.GetGPUType(ctx, "NVIDIA H100 80GB HBM3")
	assert.NilError(t, err)
	assert.Equal(t, float64(h100.Price.Secure), 2.99)

	dcs, err := cs.client.ListDataCenters(ctx, runpod.DataCenterQuery{Regions: []string{"ASIA"}, IncludeGPUAvailability: true})
	assert.NilError(t, err)
	assert.Equal(t, len(dcs), 1)
	assert.Equal(t, dcs[0].ID, "AP-JP-1")
}

func TestClientPodLifecycleAndBilling(t *testing.T) {
	cs := newClientSim(t, withSim(runpodsim.WithMarket(smallMarket(healthyHost("h1")))))
	ctx := context.Background()

	created, err := cs.client.CreatePod(ctx, clientRequest("rg-1-1-c1"))
	assert.NilError(t, err)
	assert.Equal(t, created.Status, runpod.PodProvisioning)
	assert.Assert(t, !created.StartedAt.Known())

	cs.clock.Advance(bootTime + 600*time.Second)
	running, err := cs.client.GetPod(ctx, created.ID)
	assert.NilError(t, err)
	assert.Equal(t, running.Status, runpod.PodRunning)
	assert.Assert(t, running.Runtime != nil)
	started, ok := running.StartedAt.Get()
	assert.Assert(t, ok)
	assert.Equal(t, started, runpodsim.Epoch.Add(bootTime))
	price := float64(running.Cost) // captured while running

	assert.NilError(t, cs.client.DeletePod(ctx, created.ID))
	_, err = cs.client.GetPod(ctx, created.ID)
	assert.ErrorIs(t, err, runpod.ErrNotFound)
	assert.ErrorIs(t, cs.client.DeletePod(ctx, created.ID), runpod.ErrNotFound, "already gone")

	bill, err := cs.server.Bill(created.ID)
	assert.NilError(t, err)
	estimate := price * cs.clock.Now().Sub(started).Hours()
	assert.Assert(t, math.Abs(bill.Dollars-0.0733) < 0.00005)
	assert.Assert(t, math.Abs(bill.Dollars-estimate) < 1e-9, "the client's estimate from startedAt and cost matches the bill")
}

func TestClientTypedErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    []runpodsim.Option
		prepare func(t *testing.T, cs clientSim)
		wantErr error
	}{
		{name: "capacity", prepare: func(t *testing.T, cs clientSim) {
			_, err := cs.client.CreatePod(context.Background(), clientRequest("takes-the-only-gpu"))
			assert.NilError(t, err)
		}, wantErr: runpod.ErrCapacity},
		{name: "balance", opts: []runpodsim.Option{runpodsim.WithBalance(0.10)}, wantErr: runpod.ErrInsufficientBalance},
		{name: "unauthorized", opts: []runpodsim.Option{runpodsim.WithAPIKey("another-key")}, wantErr: runpod.ErrUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := newClientSim(t, withSim(append([]runpodsim.Option{runpodsim.WithMarket(smallMarket(healthyHost("h1")))}, tc.opts...)...))
			if tc.prepare != nil {
				tc.prepare(t, cs)
			}
			_, err := cs.client.CreatePod(context.Background(), clientRequest("refused"))
			assert.ErrorIs(t, err, tc.wantErr)
			assert.Assert(t, !strings.Contains(err.Error(), testKey), "errors never carry the key")
		})
	}
}

func TestClientFollowsRetryAfterInVirtualTime(t *testing.T) {
	cs := newClientSim(t, withSim(runpodsim.WithFaults(runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
		{Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{First: 2}, RetryAfter: 30 * time.Second},
	}})))
	_, err := cs.client.ListGPUTypes(context.Background(), runpod.GPUQuery{})
	assert.NilError(t, err)
	assert.Assert(t, cs.clock.Now().Sub(runpodsim.Epoch) >= 60*time.Second, "two Retry-After waits of 30 s, got %s", cs.clock.Now().Sub(runpodsim.Epoch))
	var statuses []int
	for _, r := range cs.server.Requests() {
		statuses = append(statuses, r.Status)
	}
	assert.DeepEqual(t, statuses, []int{429, 429, 200})
}

func TestClientGivesUpOnRateLimitWithErrRateLimited(t *testing.T) {
	cs := newClientSim(t, clientSetup{policy: []reqpolicy.Option{reqpolicy.WithMaxAttempts(1)}, sim: []runpodsim.Option{runpodsim.WithQuota(1)}})
	_, err := cs.client.ListPods(context.Background(), runpod.ListPodsQuery{})
	assert.NilError(t, err)
	_, err = cs.client.ListPods(context.Background(), runpod.ListPodsQuery{})
	assert.ErrorIs(t, err, runpod.ErrRateLimited)
}

func TestClientLostCreateReconcilesToOnePod(t *testing.T) {
	tests := []struct {
		name    string
		fault   runpodsim.LostCreateFault
		wantErr error
	}{
		{name: "5xx", fault: runpodsim.LostCreateFault{When: runpodsim.Trigger{First: 1}}, wantErr: runpod.ErrServer},
		{name: "dropped", fault: runpodsim.LostCreateFault{When: runpodsim.Trigger{First: 1}, DropConnection: true}, wantErr: runpod.ErrTransport},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := newClientSim(t, withSim(runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))),
				runpodsim.WithFaults(runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{tc.fault}})))
			_, err := cs.client.CreatePod(context.Background(), clientRequest("rg-5-1-c1"))
			assert.ErrorIs(t, err, tc.wantErr)

			pods, err := cs.client.ListPods(context.Background(), runpod.ListPodsQuery{})
			assert.NilError(t, err)
			assert.Equal(t, len(pods), 1, "the create reached the server exactly once")
			assert.Equal(t, pods[0].Name, "rg-5-1-c1")
			creates := 0
			for _, r := range cs.server.Requests() {
				if r.Route == "POST /v2/pods" {
					creates++
				}
			}
			assert.Equal(t, creates, 1, "the client never re-sends a create")
		})
	}
}

func TestClientDeleteRetriesThroughFailures(t *testing.T) {
	cs := newClientSim(t, withSim(runpodsim.WithMarket(smallMarket(healthyHost("h1"))),
		runpodsim.WithFaults(runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 2, Status: http.StatusServiceUnavailable}})))
	ctx := context.Background()
	p, err := cs.client.CreatePod(ctx, clientRequest("sticky"))
	assert.NilError(t, err)

	assert.NilError(t, cs.client.DeletePod(ctx, p.ID))
	assert.Equal(t, cs.server.Pods()[0].Status, runpodsim.StatusTerminated)
}

func TestClientListPodsFollowsCursorsUpToItsBound(t *testing.T) {
	var hosts []runpodsim.HostProfile
	for i := range 5 {
		hosts = append(hosts, healthyHost(fmt.Sprintf("h%d", i)))
	}
	opts := []runpodsim.Option{runpodsim.WithMarket(smallMarket(hosts...)), runpodsim.WithPageSize(2)}
	tests := []struct {
		name     string
		maxPages int
		wantPods int
		wantErr  error
	}{
		{name: "three pages of two", maxPages: 3, wantPods: 5},
		{name: "bound reached with pages left", maxPages: 2, wantErr: runpod.ErrPageBound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := newClientSim(t, clientSetup{sim: opts, client: []runpod.Option{runpod.WithMaxListPages(tc.maxPages)}})
			ctx := context.Background()
			for i := range 5 {
				_, err := cs.client.CreatePod(ctx, clientRequest(fmt.Sprintf("p%d", i)))
				assert.NilError(t, err)
			}
			pods, err := cs.client.ListPods(ctx, runpod.ListPodsQuery{})
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, len(pods), tc.wantPods)
		})
	}
}

func TestClientPodActionConflict(t *testing.T) {
	cs := newClientSim(t, withSim(runpodsim.WithMarket(smallMarket(healthyHost("h1")))))
	ctx := context.Background()
	p, err := cs.client.CreatePod(ctx, clientRequest("acted-on"))
	assert.NilError(t, err)

	_, err = cs.client.PodAction(ctx, p.ID, runpod.ActionStart)
	assert.ErrorIs(t, err, runpod.ErrConflict)
	stopped, err := cs.client.PodAction(ctx, p.ID, runpod.ActionStop)
	assert.NilError(t, err)
	assert.Equal(t, stopped.Status, runpod.PodExited)
	assert.Equal(t, float64(stopped.Cost), 0.0)
	gone, err := cs.client.PodAction(ctx, p.ID, runpod.ActionTerminate)
	assert.NilError(t, err)
	assert.Assert(t, gone == nil)
}
