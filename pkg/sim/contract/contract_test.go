package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The embedded copy must stay RunPod's text. Where the product's reference
// copy of the published document sits beside the checkout, they must match.
func TestEmbeddedDocumentIsThePublishedOne(t *testing.T) {
	published := filepath.Join("..", "..", "..", "..", "shared", "contracts", "runpod-rest-v2.openapi.json")
	want, err := os.ReadFile(published)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("shared/contracts is not beside this checkout")
	}
	assert.NilError(t, err)
	assert.Check(t, bytes.Equal(RunPodOpenAPI(), want), "pkg/sim/contract copy differs from %s", published)
}

func TestValidateRequestCreatePod(t *testing.T) {
	valid := `{"name":"rg-1-1-c1","image":"ghcr.io/actions/actions-runner@sha256:` + strings.Repeat("a", 64) + `",
		"gpu":{"id":"NVIDIA GeForce RTX 4090","count":1,"minCudaVersion":"12.6"},"cloud":"SECURE","disk":40,
		"env":{"A":"b"},"entrypoint":["/bin/bash","-c"],"cmd":["echo hi"]}`
	tests := []struct {
		name    string
		body    string
		wantErr []string
	}{
		{name: "valid with delta fields", body: valid},
		{name: "unknown top-level field", body: `{"name":"x","image":"i","gpu":{"id":"g","count":1},"bogus":1}`,
			wantErr: []string{"$: additional properties 'bogus' not allowed"}},
		{name: "unknown gpu field", body: `{"name":"x","image":"i","gpu":{"id":"g","count":1,"vram":8}}`,
			wantErr: []string{"$.gpu: additional properties 'vram' not allowed"}},
		{name: "bad cuda pattern", body: `{"name":"x","image":"i","gpu":{"id":"g","count":1,"minCudaVersion":"12"}}`,
			wantErr: []string{"$.gpu.minCudaVersion"}},
		{name: "cmd must be strings", body: `{"name":"x","image":"i","gpu":{"id":"g","count":1},"cmd":[1]}`,
			wantErr: []string{"$.cmd.0"}},
		{name: "entrypoint must be an array", body: `{"name":"x","image":"i","gpu":{"id":"g","count":1},"entrypoint":"/bin/sh"}`,
			wantErr: []string{"$.entrypoint"}},
		{name: "empty name", body: `{"name":"","image":"i","gpu":{"id":"g","count":1}}`, wantErr: []string{"$.name"}},
		{name: "no body", body: ``, wantErr: []string{"request body is required"}},
		{name: "not json", body: `{`, wantErr: []string{"invalid JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := RunPod().ValidateRequest("POST", "/v2/pods", []byte(tc.body))
			if len(tc.wantErr) == 0 {
				assert.NilError(t, err)
				return
			}
			var ce *Error
			assert.Assert(t, errors.As(err, &ce), "got %v", err)
			joined := strings.Join(ce.Messages, "\n")
			for _, w := range tc.wantErr {
				assert.Check(t, is.Contains(joined, w))
			}
		})
	}
}

func TestValidateRequestRouting(t *testing.T) {
	v := RunPod()
	tmpl, err := v.Operation("GET", "/v2/pods/abc123?x=1")
	assert.NilError(t, err)
	assert.Equal(t, tmpl, "/v2/pods/{id}")
	tmpl, err = v.Operation("GET", "/v2/registries/delegations")
	assert.NilError(t, err)
	assert.Equal(t, tmpl, "/v2/registries/delegations", "literal segments win over {id}")
	assert.NilError(t, v.ValidateRequest("DELETE", "/v2/pods/abc", nil))
	assert.ErrorContains(t, v.ValidateRequest("DELETE", "/v2/pods/abc", []byte(`{"a":1}`)), "takes no request body")
	assert.ErrorContains(t, v.ValidateRequest("PUT", "/v2/pods", nil), "no such operation")
	assert.NilError(t, v.ValidateRequest("POST", "/v2/pods/abc/action", []byte(`{"action":"stop"}`)))
	assert.ErrorContains(t, v.ValidateRequest("POST", "/v2/pods/abc/action", []byte(`{"action":"explode"}`)), "$.action")
}

func TestValidateResponse(t *testing.T) {
	v := RunPod()
	pod := `{"id":"abc","name":"n","image":"i","args":"","disk":50,"ports":[],"env":{},"registry":null,"status":"RUNNING",
		"actions":["stop","terminate"],"mounts":{},"gpu":{"id":"NVIDIA GeForce RTX 4090","count":1},"cloud":"SECURE",
		"dataCenterId":"US-KS-2","cudaVersion":"12.8","ssh":{"proxy":null,"direct":null},"template":null,"cost":0.44,
		"locked":false,"globalNetworking":{"enabled":false},"createdAt":"2026-06-01T12:00:00Z","startedAt":null,"runtime":null}`
	assert.NilError(t, v.ValidateResponse("GET", "/v2/pods/abc", 200, []byte(pod)))
	assert.NilError(t, v.ValidateResponse("GET", "/v2/pods", 200, []byte(`{"pods":[`+pod+`],"nextCursor":"p2"}`)), "delta 2")
	assert.NilError(t, v.ValidateResponse("GET", "/v2/pods", 200, []byte(`{"pods":[],"nextCursor":null}`)))
	assert.ErrorContains(t, v.ValidateResponse("GET", "/v2/pods", 200, []byte(`{"pods":[],"nextCursor":3}`)), "$.nextCursor")
	assert.ErrorContains(t, v.ValidateResponse("GET", "/v2/pods/abc", 200, []byte(strings.Replace(pod, `"RUNNING"`, `"BOOTING"`, 1))), "$.status")
	assert.ErrorContains(t, v.ValidateResponse("GET", "/v2/pods/abc", 200, []byte(`{"id":"abc","status":"RUNNING"}`)), "missing properties")
	assert.ErrorContains(t, v.ValidateResponse("GET", "/v2/pods/abc", 200,
		[]byte(strings.Replace(pod, "2026-06-01T12:00:00Z", "2026-06-01 12:00:00 +0000 UTC", 1))), "$.createdAt",
		"v2 times must be RFC 3339; formats are asserted")
	problem := `{"title":"Not Found","status":404,"detail":"pod not found"}`
	assert.NilError(t, v.ValidateResponse("GET", "/v2/pods/abc", 404, []byte(problem)))
	assert.ErrorContains(t, v.ValidateResponse("GET", "/v2/pods/abc", 404, []byte(`{"error":"pod not found"}`)), "$")
	assert.NilError(t, v.ValidateResponse("DELETE", "/v2/pods/abc", 204, nil))
	serverErr := `{"title":"Service Unavailable","status":503,"detail":"try later"}`
	assert.NilError(t, v.ValidateResponse("DELETE", "/v2/pods/abc", 503, []byte(serverErr)), "falls back to the default response")
	assert.ErrorContains(t, v.ValidateResponse("DELETE", "/v2/pods/abc", 503, []byte(`<html>`)), "invalid JSON")
	assert.NilError(t, v.ValidateSchema("ErrorResponse", []byte(problem)))
	assert.ErrorContains(t, v.ValidateSchema("NoSuchThing", []byte(`{}`)), "no such schema")
}

// Every example RunPod published for a response must pass our validator: this
// guards the validator (routing, $ref resolution, deltas) against rejecting the
// contract's own documents.
func TestPublishedResponseExamplesValidate(t *testing.T) {
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(RunPodOpenAPI(), &doc))
	v := RunPod()
	checked := 0
	for tmpl, rawItem := range doc["paths"].(map[string]any) {
		if strings.Contains(tmpl, "/logs") {
			continue // server-sent events, not JSON
		}
		for method, rawOp := range rawItem.(map[string]any) {
			op, ok := rawOp.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			concrete := paramRE.ReplaceAllString(tmpl, "x1")
			for code, rawResp := range op["responses"].(map[string]any) {
				resp := rawResp.(map[string]any)
				if ref, ok := resp["$ref"].(string); ok {
					resp = v.lookup(strings.TrimPrefix(ref, "#"))
				}
				content, _ := resp["content"].(map[string]any)
				for _, media := range content {
					examples, _ := media.(map[string]any)["examples"].(map[string]any)
					for name, ex := range examples {
						body, _ := json.Marshal(ex.(map[string]any)["value"])
						status := 0
						_, _ = fmtSscan(code, &status)
						if status == 0 {
							continue
						}
						checked++
						assert.Check(t, v.ValidateResponse(method, concrete, status, body), "%s %s %s example %q", method, tmpl, code, name)
					}
				}
			}
		}
	}
	assert.Check(t, checked > 50, "only %d examples checked", checked)
}
