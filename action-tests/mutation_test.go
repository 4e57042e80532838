package actiontests

// Tests written against mutations that survived every other test: each
// fails when the check it names is removed or weakened. Each runs the real provision binary on the simulated
// cloud and judges it only by what crossed HTTP (the requests the simulated
// RunPod recorded, the pods it placed, the runners GitHub registered) and by
// the step's exit code and outputs.

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const createRoute = "POST /v2/pods"

// startCloudWith is startCloud with the cloud's options open to the test
// (the balance, for one); the timings are startCloud's.
func startCloudWith(t *testing.T, o cloud.Options, configYAML string) *simulated {
	t.Helper()
	o.Clock = simclock.Real{}
	o.RunPodOptions = append([]runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)}, o.RunPodOptions...)
	c, err := cloud.Start(o)
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(configYAML), 0o644))
	return &simulated{Cloud: c, workspace: ws, runID: 9100}
}

// requestsOn returns the requests the simulated RunPod answered on a route, in order.
func requestsOn(s *simulated, route string) []runpodsim.RequestRecord {
	var out []runpodsim.RequestRecord
	for _, r := range s.RunPod.Requests() {
		if r.Route == route {
			out = append(out, r)
		}
	}
	return out
}

// driverHost is a healthy host of gpu whose driver reports cuda, with gpus GPUs.
func driverHost(id, gpu, cuda string, gpus int) runpodsim.HostProfile {
	h := testHost(id, gpu, true)
	h.DriverCUDA, h.GPUCount = cuda, gpus
	return h
}

// TestProvisionCatalogAsksForTheCUDAFloor: the catalog is read with
// min_cuda_version (12.6 by default) as minCudaVersion, so a GPU type in stock
// only on older drivers is out of stock for the plan and no create is spent
// on it: the cheapest type that meets the floor is the first and only create.
func TestProvisionCatalogAsksForTheCUDAFloor(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(
		driverHost("old1", a4000, "12.4", 8), driverHost("old2", a4000, "12.4", 8), // cheapest, below the floor
		driverHost("new", a5000, "12.8", 1),
	), runpodsim.Faults{}, fastConfig)
	res := runStep(t, s.provisionStep(s.openPR(t)))
	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Check(t, is.Equal(res.outputs["gpu-type"], a5000))
	assert.Check(t, is.Len(requestsOn(s, createRoute), 1), "a create was spent on a GPU type whose machines are all below the CUDA floor:\n%s", res.summary)
	assert.Check(t, is.Equal(res.outputs["attempts"], "1"))
	assertNoSecrets(t, s, res)
}

// TestProvisionCreateAsksForTheCUDAFloor: every create carries the floor as
// gpu.minCudaVersion, so RunPod places the pod only on a machine that meets
// it, even when most machines of that GPU type run an older driver.
func TestProvisionCreateAsksForTheCUDAFloor(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(
		driverHost("old1", a4000, "12.4", 8), driverHost("old2", a4000, "12.4", 8), driverHost("old3", a4000, "12.4", 8),
		driverHost("new", a4000, "12.8", 1), // the one A4000 machine that meets the floor
		driverHost("h2", a5000, "12.8", 1),
	), runpodsim.Faults{}, fastConfig)
	res := runStep(t, s.provisionStep(s.openPR(t)))
	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Check(t, is.Equal(res.outputs["gpu-type"], a4000))
	meetsFloor := map[string]bool{"new": true, "h2": true}
	pods := s.RunPod.Pods()
	assert.Assert(t, len(pods) > 0)
	for _, p := range pods {
		assert.Check(t, meetsFloor[p.HostID], "pod %s (%s) was placed on %s, whose driver (12.4) is below min_cuda_version 12.6", p.ID, p.GPUTypeID, p.HostID)
	}
	assert.Check(t, is.Len(requestsOn(s, createRoute), 1))
	assertNoSecrets(t, s, res)
}

// TestProvisionRegistryFailureAllocatesNoGPU: when the runner image cannot be
// pinned to a digest, provisioning stops before it mints a runner or sends a
// create: nothing is paid for an image that might not be the reviewed one.
func TestProvisionRegistryFailureAllocatesNoGPU(t *testing.T) {
	t.Parallel()
	noDigest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(noDigest.Close)
	for _, tc := range []struct {
		name     string
		config   string
		registry string // registry-api-url; "" keeps the simulated registry
	}{
		{name: "unknown tag (404)", config: fastConfig + "image: ghcr.io/actions/actions-runner:2.999.9\n"},
		{name: "answer without a digest", config: fastConfig, registry: noDigest.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(testHost("h1", a4000, true)), runpodsim.Faults{}, tc.config)
			st := s.provisionStep(s.openPR(t))
			if tc.registry != "" {
				st.inputs["registry-api-url"] = tc.registry
			}
			res := runStep(t, st)
			assert.Check(t, is.Equal(res.exitCode, 1), res.stdout)
			assert.Check(t, is.Contains(res.stdout, "actions-runner"), "the error names the image")
			assert.Check(t, is.Len(requestsOn(s, createRoute), 0), "a create was sent without a pinned image")
			assert.Check(t, is.Len(s.RunPod.Pods(), 0))
			assert.Check(t, is.Len(s.GitHub.Runners(), 0), "no runner is minted for a run that cannot start one")
			assert.Check(t, is.Equal(res.outputs["pod-id"], ""))
			assertNoSecrets(t, s, res)
		})
	}
}

// TestProvisionCreate429WaitsItsRetryAfter: a 429 on create created nothing;
// the same candidate is sent once more, not before the answer's Retry-After,
// and the run does not move on to a pricier GPU because of it.
func TestProvisionCreate429WaitsItsRetryAfter(t *testing.T) {
	t.Parallel()
	const retryAfter = 2 * time.Second
	s := startCloud(t, testMarket(testHost("h1", a4000, true), testHost("h2", a5000, true)), runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: createRoute}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: retryAfter}},
	}, fastConfig)
	res := runStep(t, s.provisionStep(s.openPR(t)))
	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Check(t, is.Equal(res.outputs["gpu-type"], a4000), "the rate-limited candidate is the one that starts")
	creates := requestsOn(s, createRoute)
	assert.Assert(t, is.Len(creates, 2), "one 429, one retry")
	assert.Check(t, is.Equal(creates[0].Status, http.StatusTooManyRequests))
	assert.Check(t, creates[1].At.Sub(creates[0].At) >= retryAfter, "retried %s after the 429, before its Retry-After %s",
		creates[1].At.Sub(creates[0].At), retryAfter)
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "exactly one pod")
	assertNoSecrets(t, s, res)
}

// TestProvisionInsufficientBalanceStopsTheRun: a 402 (balance too low) on
// create stops the run at once; a pricier candidate cannot do better, so no
// further create is sent.
func TestProvisionInsufficientBalanceStopsTheRun(t *testing.T) {
	t.Parallel()
	// $0.20 is less than one hour of any candidate: every create would be 402.
	s := startCloudWith(t, cloud.Options{Market: testMarket(testHost("h1", a4000, true), testHost("h2", a5000, true), testHost("h3", l4, true)), Balance: 0.20}, fastConfig)
	res := runStep(t, s.provisionStep(s.openPR(t)))
	assert.Check(t, is.Equal(res.exitCode, 1), res.stdout)
	assert.Check(t, is.Contains(strings.ToLower(res.stdout), "balance"), "the error says why")
	creates := requestsOn(s, createRoute)
	assert.Assert(t, is.Len(creates, 1), "no further candidate after a 402")
	assert.Check(t, is.Equal(creates[0].Status, http.StatusPaymentRequired))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
	assertNoSecrets(t, s, res)
}
