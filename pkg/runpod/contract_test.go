package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/org/runpod-gpu/pkg/sim/contract"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// buildableCreateRequests are the create bodies the client can build, between
// them setting every field of CreatePodRequest and CreateGPU.
func buildableCreateRequests() map[string]CreatePodRequest {
	digest := "ghcr.io/actions/actions-runner@sha256:" + strings.Repeat("a", 64)
	return map[string]CreatePodRequest{
		"minimal": {Name: "rg-1-1-c1", Image: digest, GPU: &CreateGPU{ID: "NVIDIA L4"}},
		"provision": {
			Name: "rg-1-1-c1", Image: digest, TemplateID: "30zmvf89kd",
			GPU:   &CreateGPU{ID: "NVIDIA GeForce RTX 4090", Count: 1, MinCudaVersion: "12.6"},
			Cloud: CloudSecure, DataCenterIDs: []string{"US-TX-3", "EU-RO-1"}, Disk: 40,
			Mounts:     &Mounts{Persistent: &PersistentMount{Size: 20, Path: "/workspace"}},
			Ports:      []string{"22/tcp"},
			Env:        map[string]string{"RUNNER_JIT_CONFIG": "jit", "RUNPOD_GPU_OWNER": "org/repo"},
			Entrypoint: []string{"/bin/bash", "-c"}, Cmd: []string{"exec /startup.sh"},
			Registry: "reg_1", StartSSH: true,
		},
		"exact CUDA set on community cloud with a network volume": {
			Name: "rg-1-1-c2", Image: digest, Cloud: CloudCommunity,
			GPU:    &CreateGPU{ID: "NVIDIA A100 80GB PCIe", Count: 2, AllowedCudaVersions: []string{"12.8", "13.0"}},
			Mounts: &Mounts{Network: []NetworkMount{{VolumeID: "vol_xyz", Path: "/runpod-volume"}}},
		},
	}
}

// TestEveryBuildableRequestMatchesTheContract sends every body the client can
// build to the fake, which validates it against the contract plus deltas.
func TestEveryBuildableRequestMatchesTheContract(t *testing.T) {
	ctx := context.Background()
	fake := newFake(t)
	fake.handle("POST /v2/pods", func(w http.ResponseWriter, r *http.Request) {
		var sent struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&sent)
		writeJSON(w, 201, map[string]string{"id": "p", "name": sent.Name}) // the create answer echoes the pod's name
	})
	fake.handle("POST /v2/pods/{id}/action", func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 200, `{"id":"p"}`) })
	fake.answer("GET /v2/pods/{id}", 200, `{"id":"p1"}`)
	fake.answer("GET /v2/pods", 200, `{"pods":[]}`)
	fake.answer("DELETE /v2/pods/{id}", 204, "")
	fake.answer("GET /v2/catalog/gpus", 200, `{"gpus":[]}`)
	fake.answer("GET /v2/catalog/gpus/{id}", 200, `{"id":"g"}`)
	fake.answer("GET /v2/catalog/datacenters", 200, `{"dataCenters":[]}`)
	client, _ := fake.client()

	for name, req := range buildableCreateRequests() {
		_, err := client.CreatePod(ctx, req)
		assert.NilError(t, err, name)
	}
	for _, action := range []string{ActionStart, ActionStop, ActionRestart, ActionTerminate} {
		_, err := client.PodAction(ctx, "p1", action)
		assert.NilError(t, err, action)
	}
	_, err := client.GetPod(ctx, "p1")
	assert.NilError(t, err)
	_, err = client.ListPods(ctx, ListPodsQuery{Limit: 10, IncludeClusterPods: true})
	assert.NilError(t, err)
	assert.NilError(t, client.DeletePod(ctx, "p1"))
	_, err = client.ListGPUTypes(ctx, GPUQuery{Include: true, Product: ProductPod, Cloud: CloudSecure, Count: 1, MinCudaVersion: "12.6"})
	assert.NilError(t, err)
	_, err = client.GetGPUType(ctx, "NVIDIA GeForce RTX 4090")
	assert.NilError(t, err)
	_, err = client.ListDataCenters(ctx, DataCenterQuery{IncludeGPUAvailability: true})
	assert.NilError(t, err)

	assert.Equal(t, len(fake.received()), 3+4+6)
	assert.DeepEqual(t, fake.takeViolations(), []string(nil))
}

// TestBuildableRequestsCoverEveryField fails when a field is added to the
// create body without a body above that sets it, so no field escapes the
// contract check.
func TestBuildableRequestsCoverEveryField(t *testing.T) {
	seen := map[string]bool{}
	for _, req := range buildableCreateRequests() {
		b, err := json.Marshal(req)
		assert.NilError(t, err)
		var body map[string]json.RawMessage
		assert.NilError(t, json.Unmarshal(b, &body))
		for k, v := range body {
			seen[k] = true
			if k == "gpu" {
				var gpu map[string]any
				assert.NilError(t, json.Unmarshal(v, &gpu))
				for gk := range gpu {
					seen["gpu."+gk] = true
				}
			}
		}
	}
	var missing []string
	for _, name := range jsonNames(reflect.TypeFor[CreatePodRequest](), "") {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	for _, name := range jsonNames(reflect.TypeFor[CreateGPU](), "gpu.") {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.DeepEqual(t, missing, []string(nil))
}

func jsonNames(typ reflect.Type, prefix string) []string {
	var names []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, prefix+name)
	}
	return names
}

// TestWrongBodiesFailTheContractCheck shows the check the fake applies is not
// vacuous: wrong bodies are refused with RunPod-shaped messages, and the fake
// answers them 422 as RunPod does.
func TestWrongBodiesFailTheContractCheck(t *testing.T) {
	valid, err := json.Marshal(buildableCreateRequests()["provision"])
	assert.NilError(t, err)
	withField := func(key string, value any) []byte {
		var body map[string]any
		assert.NilError(t, json.Unmarshal(valid, &body))
		body[key] = value
		b, err := json.Marshal(body)
		assert.NilError(t, err)
		return b
	}
	tests := []struct {
		name    string
		path    string
		body    []byte
		wantMsg string
	}{
		{name: "unknown field", path: "/v2/pods", body: withField("bogus", 1), wantMsg: "'bogus'"},
		{name: "args as the old string form of cmd", path: "/v2/pods", body: withField("cmd", "exec /startup.sh"), wantMsg: "$.cmd"},
		{name: "floor as a bare major", path: "/v2/pods", body: withField("gpu", map[string]any{"id": "g", "minCudaVersion": "12"}), wantMsg: "$.gpu.minCudaVersion"},
		{name: "unknown gpu field", path: "/v2/pods", body: withField("gpu", map[string]any{"id": "g", "vram": 24}), wantMsg: "'vram'"},
		{name: "countryCodes is not a create field", path: "/v2/pods", body: withField("countryCodes", []string{"FR"}), wantMsg: "'countryCodes'"},
		{name: "unknown action", path: "/v2/pods/p1/action", body: []byte(`{"action":"explode"}`), wantMsg: "$.action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := contract.RunPod().ValidateRequest("POST", tc.path, tc.body)

			var ce *contract.Error
			assert.Assert(t, errors.As(err, &ce), "got %v", err)
			assert.Check(t, is.Contains(strings.Join(ce.Messages, "\n"), tc.wantMsg))

			fake := newFake(t)
			resp, err := http.Post(fake.server.URL+tc.path, "application/json", strings.NewReader(string(tc.body)))
			assert.NilError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, resp.StatusCode, http.StatusUnprocessableEntity)
			assert.Equal(t, len(fake.takeViolations()), 1)
		})
	}
}
