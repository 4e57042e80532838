package runpod

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/wire"
)

// FuzzDecodeError: any error answer decodes without panic into a classified
// error whose text never contains the API key.
func FuzzDecodeError(f *testing.F) {
	f.Add(400, true, []byte(problemJSON(400, "There are no instances currently available")))
	f.Add(422, false, []byte(`{"title":"Unprocessable Entity","status":422,"detail":"x","errors":["$: additional properties 'bogus' not allowed"]}`))
	f.Add(404, false, []byte(`{"error":"pod not found","status":404}`))
	f.Add(500, true, []byte(`"create pod: Spot pods are no longer offered"`))
	f.Add(502, false, []byte("<html>bad gateway</html>"))
	f.Add(401, false, []byte(`{"detail":"bad key `+testAPIKey+`","errors":[{"message":"`+testAPIKey+`"},7,null]}`))
	f.Add(418, false, []byte(`{"errors":"just one"}`))
	f.Fuzz(func(t *testing.T, status int, create bool, body []byte) {
		e := decodeError("get pod p", status, body, create, redact.NewRedactor(testAPIKey))
		if e.Kind != kindOf(status, create, e.Detail) {
			t.Fatalf("kind %s does not follow from status %d", e.Kind, status)
		}
		text := e.Error()
		if strings.Contains(text, testAPIKey) {
			t.Fatalf("error text leaks the key: %s", text)
		}
		if len([]rune(e.Detail)) > maxDetailRunes+1 || len(e.Errors) > maxErrorItems+1 {
			t.Fatalf("detail or errors not bounded: %d runes, %d items", len([]rune(e.Detail)), len(e.Errors))
		}
	})
}

// FuzzDecodePod: any body either fails to decode or decodes into a Pod that
// survives a JSON round trip unchanged (so saved records read back the same).
func FuzzDecodePod(f *testing.F) {
	f.Add(`{"id":"p","status":"RUNNING","cost":0.35,"createdAt":"2026-06-01T12:00:00Z","startedAt":"2026-06-01T12:02:00Z","runtime":{"uptime":5,"ports":[{"private":22,"public":null}]}}`)
	f.Add(`{"id":"p","cost":"0.74","startedAt":null,"runtime":null,"dataCenterId":null}`)
	f.Add(`{"id":"p","desiredStatus":"RUNNING","costPerHr":"0.74","adjustedCostPerHr":0.69,"lastStartedAt":"2026-09-23 08:48:28.204 +0000 UTC"}`)
	f.Add(`{"id":"p","runtime":{},"actions":[],"env":{}}`)
	f.Add(`{"mounts":{"network":[{"volumeId":"v","path":"/n"}]},"gpu":{"id":"g"}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		var pod Pod
		if json.Unmarshal([]byte(body), &pod) != nil {
			return
		}
		_ = pod.String()
		encoded, err := json.Marshal(pod)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var again Pod
		if err := json.Unmarshal(encoded, &again); err != nil {
			t.Fatalf("decode of re-encoded %s: %v", encoded, err)
		}
		if diff := cmp.Diff(pod, again, cmpopts.EquateEmpty(), cmp.Comparer(sameTime)); diff != "" {
			t.Fatalf("round trip changed the pod (-first +second):\n%s", diff)
		}
	})
}

func sameTime(a, b wire.Time) bool {
	ta, ka := a.Get()
	tb, kb := b.Get()
	return ka == kb && ta.Equal(tb)
}
