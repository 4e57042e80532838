package runpod

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/wire"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// TestDecodeOpenAPIResponseExamples serves every success example the OpenAPI
// document gives for the operations the client uses, decodes it through the
// client, and checks that each field the models keep equals the example's.
func TestDecodeOpenAPIResponseExamples(t *testing.T) {
	ctx := context.Background()
	createReq := CreatePodRequest{Name: "pytorch-training", Image: "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404", GPU: &CreateGPU{ID: "NVIDIA GeForce RTX 4090", Count: 1}, Disk: 50}
	// Each operation: the route the fake answers, the client call, and which
	// part of the example the result corresponds to.
	ops := map[string]struct {
		route string
		call  func(*Client) (any, error)
		field string // the example's member holding the list; "" for the whole value
	}{
		"listGpuTypes":    {"GET /v2/catalog/gpus", func(c *Client) (any, error) { return c.ListGPUTypes(ctx, GPUQuery{}) }, "gpus"},
		"getGpuType":      {"GET /v2/catalog/gpus/{id}", func(c *Client) (any, error) { return c.GetGPUType(ctx, "NVIDIA GeForce RTX 4090") }, ""},
		"listDataCenters": {"GET /v2/catalog/datacenters", func(c *Client) (any, error) { return c.ListDataCenters(ctx, DataCenterQuery{}) }, "dataCenters"},
		"listPods":        {"GET /v2/pods", func(c *Client) (any, error) { return c.ListPods(ctx, ListPodsQuery{}) }, "pods"},
		"createPod":       {"POST /v2/pods", func(c *Client) (any, error) { return c.CreatePod(ctx, createReq) }, ""},
		"getPod":          {"GET /v2/pods/{id}", func(c *Client) (any, error) { return c.GetPod(ctx, "7h9k2m4n6p") }, ""},
		"podAction":       {"POST /v2/pods/{id}/action", func(c *Client) (any, error) { return c.PodAction(ctx, "7h9k2m4n6p", ActionStop) }, ""},
	}
	ids := make([]string, 0, len(ops))
	for id := range ops {
		ids = append(ids, id)
	}
	examples := responseExamples(t, ids...)
	assert.Assert(t, len(examples) >= len(ops), "every operation has an example")

	decoded := map[string]any{}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			op := ops[strings.Fields(ex.name)[0]]
			status, err := strconv.Atoi(ex.status)
			assert.NilError(t, err)
			fake := newFake(t)
			fake.answer(op.route, status, string(ex.value))
			client, _ := fake.client()

			got, err := op.call(client)

			assert.NilError(t, err)
			var want any
			assert.NilError(t, json.Unmarshal(ex.value, &want))
			if op.field != "" {
				want = asMap(want)[op.field]
			}
			gotJSON, err := json.Marshal(got)
			assert.NilError(t, err)
			var gotValue any
			assert.NilError(t, json.Unmarshal(gotJSON, &gotValue))
			assertKeptFieldsMatch(t, "$", gotValue, want)
			decoded[ex.name] = got
		})
	}
	if len(decoded) != len(examples) {
		return // a -run filter or a failure left some out; the golden file covers all
	}
	// The golden file shows, in one place, what the models keep of each example.
	out, err := json.MarshalIndent(decoded, "", "  ")
	assert.NilError(t, err)
	golden.Assert(t, string(out)+"\n", "openapi_response_examples.golden")
}

// assertKeptFieldsMatch checks every value of got (a model re-encoded) against
// the example: a member the example lacks or sets to null must be zero in got.
func assertKeptFieldsMatch(t *testing.T, at string, got, want any) {
	t.Helper()
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		assert.Assert(t, ok, "%s: got an object, the example has %v", at, want)
		for k, gv := range g {
			wv, present := w[k]
			if !present || wv == nil {
				assert.Check(t, isZero(gv), "%s.%s: got %v, the example has none", at, k, gv)
				continue
			}
			assertKeptFieldsMatch(t, at+"."+k, gv, wv)
		}
	case []any:
		w, ok := want.([]any)
		assert.Assert(t, ok && len(w) == len(g), "%s: got %v, the example has %v", at, got, want)
		for i := range g {
			assertKeptFieldsMatch(t, fmt.Sprintf("%s[%d]", at, i), g[i], w[i])
		}
	default:
		assert.Check(t, is.DeepEqual(got, want), "at %s", at)
	}
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// TestDecodeOpenAPIProblemExamples decodes every problem+json example of the
// document's shared error responses.
func TestDecodeOpenAPIProblemExamples(t *testing.T) {
	examples := problemExamples(t)
	assert.Assert(t, len(examples) >= 6)
	for name, body := range examples {
		t.Run(name, func(t *testing.T) {
			var want struct {
				Title  string `json:"title"`
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			assert.NilError(t, json.Unmarshal(body, &want))

			got := decodeError("get pod x", want.Status, body, false, redact.NewRedactor(testAPIKey))

			assert.Equal(t, got.StatusCode, want.Status)
			assert.Equal(t, got.Title, want.Title)
			assert.Equal(t, got.Detail, want.Detail)
			assert.Equal(t, got.Kind, kindOf(want.Status, false, want.Detail))
			assert.Check(t, got.Kind != KindUnexpected || want.Status == http.StatusMethodNotAllowed, "%d is classified", want.Status)
		})
	}
}

// TestDecodePodFieldShapes covers how the field shows values, beyond the
// schema: string or number cost, both time layouts, nulls, unknown fields and
// saved v1 records.
func TestDecodePodFieldShapes(t *testing.T) {
	started := time.Date(2026, 9, 23, 8, 48, 28, 204_000_000, time.UTC)
	created := time.Date(2026, 9, 23, 8, 40, 0, 0, time.UTC)
	tests := []struct {
		name        string
		body        string
		wantCost    float64
		wantStarted time.Time // zero: unknown
		wantCreated time.Time // zero: unknown
		wantStatus  PodStatus
		wantRuntime bool
		wantImage   string
		wantErr     string
	}{
		{name: "number cost, RFC 3339", body: `{"id":"p","status":"RUNNING","cost":0.35,"createdAt":"2026-09-23T08:40:00Z","startedAt":"2026-09-23T08:48:28.204Z","runtime":{"uptime":5}}`,
			wantCost: 0.35, wantStarted: started, wantCreated: created, wantStatus: PodRunning, wantRuntime: true},
		{name: "string cost", body: `{"id":"p","status":"RUNNING","cost":"0.74","startedAt":"2026-09-23T08:48:28.204Z"}`,
			wantCost: 0.74, wantStarted: started, wantStatus: PodRunning},
		{name: "Go time layout", body: `{"id":"p","status":"RUNNING","createdAt":"2026-09-23 08:40:00 +0000 UTC","startedAt":"2026-09-23 08:48:28.204 +0000 UTC"}`,
			wantStarted: started, wantCreated: created, wantStatus: PodRunning},
		{name: "null startedAt is unknown", body: `{"id":"p","status":"PROVISIONING","createdAt":"2026-09-23T08:40:00Z","startedAt":null,"runtime":null}`,
			wantCreated: created, wantStatus: PodProvisioning},
		{name: "absent startedAt is unknown", body: `{"id":"p","status":"STARTING"}`, wantStatus: PodStarting},
		{name: "empty runtime object is present", body: `{"id":"p","status":"PROVISIONING","runtime":{}}`, wantStatus: PodProvisioning, wantRuntime: true},
		{name: "null strings and unknown fields", body: `{"id":"p","status":"EXITED","cost":0,"dataCenterId":null,"cudaVersion":null,"template":null,"registry":null,"ssh":{"proxy":null},"future":{"x":[1,2]}}`,
			wantStatus: PodExited},
		{name: "v1 record", body: `{"id":"p","desiredStatus":"RUNNING","imageName":"img","costPerHr":"0.74","adjustedCostPerHr":0.69,"lastStartedAt":"2026-09-23 08:48:28.204 +0000 UTC"}`,
			wantCost: 0.69, wantStarted: started, wantStatus: PodRunning, wantImage: "img"},
		{name: "v1 record without savings", body: `{"id":"p","desiredStatus":"EXITED","costPerHr":0.74,"adjustedCostPerHr":0,"lastStartedAt":""}`,
			wantCost: 0.74, wantStatus: PodExited},
		{name: "malformed cost", body: `{"id":"p","cost":"cheap"}`, wantErr: `number "cheap"`},
		{name: "malformed time", body: `{"id":"p","startedAt":"yesterday"}`, wantErr: `timestamp "yesterday"`},
		{name: "time as a number", body: `{"id":"p","startedAt":1727000000}`, wantErr: "want a JSON string or null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pod Pod
			err := json.Unmarshal([]byte(tc.body), &pod)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, float64(pod.Cost), tc.wantCost)
			assert.Equal(t, pod.Status, tc.wantStatus)
			assert.Equal(t, pod.Image, tc.wantImage)
			assert.Equal(t, pod.Runtime != nil, tc.wantRuntime)
			assertTime(t, "startedAt", pod.StartedAt, tc.wantStarted)
			assertTime(t, "createdAt", pod.CreatedAt, tc.wantCreated)
		})
	}
}

func assertTime(t *testing.T, name string, got wire.Time, want time.Time) {
	t.Helper()
	at, known := got.Get()
	if want.IsZero() {
		assert.Check(t, !known, "%s: want unknown, got %s", name, got)
		return
	}
	assert.Check(t, known && at.Equal(want), "%s: got %s, want %s", name, got, want)
}

func TestPodStringLeavesOutEnv(t *testing.T) {
	pod := Pod{ID: "p1", Name: "rg-1-1-c1", Status: PodRunning, Cost: 0.44, GPU: &PodGPU{ID: "NVIDIA L4", Count: 1},
		Env: map[string]string{"RUNNER_JIT_CONFIG": "secret-jit"}}

	for _, text := range []string{pod.String(), fmt.Sprint(pod), fmt.Sprintf("%+v", &pod)} {
		assert.Check(t, !strings.Contains(text, "secret-jit"), text)
	}
	assert.Equal(t, pod.String(), "pod p1 (rg-1-1-c1) RUNNING, 1× NVIDIA L4, $0.440/h, started unknown")
}

func TestPodStatusEnded(t *testing.T) {
	for status, want := range map[PodStatus]bool{
		PodProvisioning: false, PodStarting: false, PodRunning: false, "": false,
		PodExited: true, PodError: true, PodTerminated: true,
	} {
		assert.Equal(t, status.Ended(), want, "status %q", status)
	}
}
