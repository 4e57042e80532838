package runpodsim_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// modelCycles runs n create → poll until RUNNING → delete cycles against a
// model-mode simulator over loopback HTTP, as a provisioner polling every 10 s
// would, and returns the API calls made and the dollars billed.
func modelCycles(tb testing.TB, n int) (calls int, dollars float64) {
	tb.Helper()
	clock := simclock.NewVirtual(runpodsim.Epoch)
	server, err := runpodsim.New(runpodsim.WithClock(clock), runpodsim.WithSeed(7))
	assert.NilError(tb, err)
	ts := httptest.NewServer(server)
	defer ts.Close()
	client := ts.Client()

	call := func(method, path string, body string) (int, []byte) {
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		assert.NilError(tb, err)
		req.Header.Set("Authorization", "Bearer any-token")
		resp, err := client.Do(req)
		assert.NilError(tb, err)
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		assert.NilError(tb, err)
		calls++
		return resp.StatusCode, got
	}
	gpus := []string{"NVIDIA GeForce RTX 4090", "NVIDIA L4", "NVIDIA RTX A4000", "NVIDIA H100 80GB HBM3"}
	for i := range n {
		body := fmt.Sprintf(`{"name":"cycle-%d","image":"runner@sha256:abc","gpu":{"id":%q,"minCudaVersion":"12.6"},"cmd":["/start.sh"]}`, i, gpus[i%len(gpus)])
		status, raw := call(http.MethodPost, "/v2/pods", body)
		assert.Equal(tb, status, http.StatusCreated, "cycle %d: %s", i, raw)
		var p struct{ ID, Status string }
		assert.NilError(tb, json.Unmarshal(raw, &p))
		for p.Status != runpodsim.StatusRunning {
			clock.Advance(10 * time.Second)
			status, raw = call(http.MethodGet, "/v2/pods/"+p.ID, "")
			assert.Equal(tb, status, http.StatusOK)
			assert.NilError(tb, json.Unmarshal(raw, &p))
		}
		clock.Advance(5 * time.Minute) // the job
		status, _ = call(http.MethodDelete, "/v2/pods/"+p.ID, "")
		assert.Equal(tb, status, http.StatusNoContent)
	}
	assert.Equal(tb, len(server.Requests()), calls)
	return calls, server.Spent()
}

func TestThousandModelCycles(t *testing.T) {
	cycles := 1000
	if testing.Short() {
		cycles = 100
	}
	start := time.Now()
	calls, dollars := modelCycles(t, cycles)
	t.Logf("%d model-mode cycles: %s wall, %d API calls, $%.2f billed", cycles, time.Since(start).Round(time.Millisecond), calls, dollars)
	assert.Assert(t, calls >= cycles*4, "each cycle creates, polls at least twice and deletes")
	// Every pod ran its 5-minute job (plus the part of its last poll interval spent RUNNING)
	// on a GPU of at least $0.25/h, the cheapest secure price among the types used.
	assert.Assert(t, dollars > float64(cycles)*5.0/60*0.25, "dollars = %v", dollars)
}

func BenchmarkThousandModelCycles(b *testing.B) {
	for b.Loop() {
		calls, _ := modelCycles(b, 1000)
		b.ReportMetric(float64(calls), "api-calls/op")
	}
}
