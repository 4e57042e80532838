package runpod

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/org/runpod-gpu/pkg/sim/contract"
	"gotest.tools/v3/assert"
)

// openAPIExample is one example value from RunPod's OpenAPI document.
type openAPIExample struct {
	name   string // "<operationId> <status> <example name>"
	status string
	value  json.RawMessage
}

// openAPIDoc decodes the embedded OpenAPI document.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(contract.RunPodOpenAPI(), &doc))
	return doc
}

// responseExamples extracts the JSON examples of the given operations'
// responses, in a stable order. Nothing is copied by hand: a changed example
// in the document changes the test.
func responseExamples(t *testing.T, operationIDs ...string) []openAPIExample {
	t.Helper()
	want := map[string]bool{}
	for _, id := range operationIDs {
		want[id] = true
	}
	doc := openAPIDoc(t)
	var out []openAPIExample
	for _, item := range asMap(doc["paths"]) {
		for _, rawOp := range asMap(item) {
			op := asMap(rawOp)
			id, _ := op["operationId"].(string)
			if !want[id] {
				continue
			}
			for status, resp := range asMap(op["responses"]) {
				media := asMap(asMap(asMap(resp)["content"])["application/json"])
				for name, ex := range asMap(media["examples"]) {
					value, err := json.Marshal(asMap(ex)["value"])
					assert.NilError(t, err)
					out = append(out, openAPIExample{name: id + " " + status + " " + name, status: status, value: value})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// problemExamples extracts every problem+json example of the document's
// shared error responses.
func problemExamples(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	for name, resp := range asMap(asMap(openAPIDoc(t)["components"])["responses"]) {
		media := asMap(asMap(asMap(resp)["content"])["application/problem+json"])
		for exName, ex := range asMap(media["examples"]) {
			value, err := json.Marshal(asMap(ex)["value"])
			assert.NilError(t, err)
			out[name+" "+exName] = value
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
