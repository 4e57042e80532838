package contract

import "fmt"

// The live RunPod API (2026-10) differs from the published August snapshot in
// the ways listed below. Each delta is applied here,
// to the decoded document, so the embedded file stays byte-identical to RunPod's.
//
//  1. Pod create accepts `entrypoint` and `cmd` (arrays of strings) beside `image`,
//     `disk`, `gpu` and `mounts`; any other unknown field is still a 422.
//  2. GET /v2/pods takes `limit` and `cursor` query parameters and the response
//     may carry `nextCursor` (absent, null or "" on the last page).
//  3. v1 time layouts and string costs are decoding concerns handled in pkg/wire,
//     not schema changes.

// ListPodsCursorParam and ListPodsLimitParam are the query parameters of delta 2.
const (
	ListPodsCursorParam = "cursor"
	ListPodsLimitParam  = "limit"
	// ListPodsNextCursorField is the response field of delta 2.
	ListPodsNextCursorField = "nextCursor"
)

func applyDeltas(doc map[string]any) error {
	schemas, ok := dig(doc, "components", "schemas")
	if !ok {
		return fmt.Errorf("contract: components.schemas missing")
	}
	create, ok := schemas["CreatePodRequest"].(map[string]any)
	if !ok {
		return fmt.Errorf("contract: CreatePodRequest missing")
	}
	allOf, _ := create["allOf"].([]any)
	stringArray := func(desc string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
	}
	// An allOf branch is "evaluated", so unevaluatedProperties:false accepts exactly these two extra fields.
	create["allOf"] = append(allOf, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"entrypoint": stringArray("Delta 1: container entrypoint override (live API, 2026-10)."),
			"cmd":        stringArray("Delta 1: container command override (live API, 2026-10)."),
		},
	})

	list, ok := schemas["ListPodsResponse"].(map[string]any)
	if !ok {
		return fmt.Errorf("contract: ListPodsResponse missing")
	}
	props, _ := list["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		list["properties"] = props
	}
	props[ListPodsNextCursorField] = map[string]any{
		"type":        []any{"string", "null"},
		"description": "Delta 2: opaque cursor of the next page; absent, null or empty on the last page.",
	}
	return nil
}

func dig(m map[string]any, keys ...string) (map[string]any, bool) {
	cur := m
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}
