package lanes

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// registryFront is a loopback registry whose first answers are scripted
// (status and headers); later requests reach a real registry handler serving
// the simulated cloud's runner image.
func registryFront(t *testing.T, script []scriptedAnswer) (url string, requests func() int) {
	t.Helper()
	real := registrysim.Handler(map[string]string{cloud.ImageRepoTag: cloud.RunnerImageDigest})
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(script) {
			real.ServeHTTP(w, r)
			return
		}
		for k, v := range script[i].header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(script[i].status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// scriptedAnswer is one scripted registry answer.
type scriptedAnswer struct {
	status int
	header map[string]string
}

// TestRegistryDeadline runs the real provision binary against registries that
// fail in the ways a real one does: a transient 503 is retried under the
// request policy and the run goes on; a Retry-After that does not fit the
// resolution's deadline stops provision at once, naming the image and the
// registry, before any GPU is allocated.
func TestRegistryDeadline(t *testing.T) {
	tests := []struct {
		name         string
		script       []scriptedAnswer
		wantExit     int
		wantRequests int
		wantLog      []string
		wantMaxTime  time.Duration
	}{
		{
			name: "transient 503 is retried", script: []scriptedAnswer{{status: http.StatusServiceUnavailable}},
			wantExit: 0, wantRequests: 4, // 503, then the 401 challenge, the token and the manifest
			wantLog: []string{"503 Service Unavailable; retry 1/4", "runner image: " + cloud.RunnerImage + "@" + cloud.RunnerImageDigest},
		},
		{
			name:   "Retry-After beyond the deadline stops before any GPU",
			script: []scriptedAnswer{{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "1000"}}},
			// The binary starts, reads GitHub and fails: nothing near the 1000 s asked for.
			wantExit: 1, wantRequests: 1, wantMaxTime: 30 * time.Second,
			wantLog: []string{
				"resolve " + cloud.RunnerImage + " at registry http://127.0.0.1:",
				"does not fit the 1m0s resolution deadline", "Retry-After after 429", "no GPU was allocated",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
			url, requests := registryFront(t, tc.script)
			st := s.ProvisionStep(s.openPR(t))
			st.Inputs["registry-api-url"] = url

			start := time.Now()
			res := harness.RunStep(t, st)
			took := time.Since(start)

			assert.Equal(t, res.ExitCode, tc.wantExit, res.Stdout)
			for _, want := range tc.wantLog {
				assert.Check(t, is.Contains(res.Stdout, want))
			}
			assert.Check(t, is.Equal(requests(), tc.wantRequests))
			if tc.wantExit != 0 {
				assert.Check(t, is.Len(s.RunPod.Pods(), 0), "a registry failure creates no pod")
				for _, r := range s.RunPod.Requests() {
					assert.Check(t, !strings.HasPrefix(r.Path, "/v2/pods"), "no pod request after a registry failure: %s %s", r.Method, r.Path)
				}
			} else {
				assert.Check(t, is.Equal(res.Outputs["image"], cloud.RunnerImage+"@"+cloud.RunnerImageDigest))
			}
			if tc.wantMaxTime > 0 {
				assert.Check(t, took < tc.wantMaxTime, "provision took %s", took)
			}
			assertNoSecrets(t, s, res)
		})
	}
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
			s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, tc.config)
			st := s.ProvisionStep(s.openPR(t))
			if tc.registry != "" {
				st.Inputs["registry-api-url"] = tc.registry
			}
			res := harness.RunStep(t, st)
			assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, "actions-runner"), "the error names the image")
			assert.Check(t, is.Len(requestsOn(s, createRoute), 0), "a create was sent without a pinned image")
			assert.Check(t, is.Len(s.RunPod.Pods(), 0))
			assert.Check(t, is.Len(s.GitHub.Runners(), 0), "no runner is minted for a run that cannot start one")
			assert.Check(t, is.Equal(res.Outputs["pod-id"], ""))
			assertNoSecrets(t, s, res)
		})
	}
}
