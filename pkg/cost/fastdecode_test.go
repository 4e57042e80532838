package cost

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// scalarKinds has one field of each kind fastScalar decodes, and a string
// type with its own unmarshaler, which it must leave to json.Unmarshal.
type scalarKinds struct {
	S   string
	B   bool
	I   int64
	I8  int8
	U   uint32
	F   float64
	F32 float32
	C   Conclusion // a string kind with its own UnmarshalJSON
}

// fastMatchesJSON decodes raw into each field of scalarKinds both ways and
// fails when fastScalar stores what json.Unmarshal would not.
func fastMatchesJSON(t *testing.T, raw []byte) (decodedFast int) {
	t.Helper()
	n := reflect.TypeFor[scalarKinds]().NumField()
	for i := range n {
		var fast, slow scalarKinds
		if !fastScalar(raw, reflect.ValueOf(&fast).Elem().Field(i)) {
			continue
		}
		decodedFast++
		field := reflect.ValueOf(&slow).Elem().Field(i)
		err := json.Unmarshal(raw, field.Addr().Interface())
		if err != nil {
			t.Fatalf("%q into %s: decoded fast, but json.Unmarshal says %v", raw, field.Type(), err)
		}
		got, want := reflect.ValueOf(fast).Field(i).Interface(), field.Interface()
		if !reflect.DeepEqual(got, want) && !(isNaN(got) && isNaN(want)) {
			t.Fatalf("%q into %s: fast %#v, json.Unmarshal %#v", raw, field.Type(), got, want)
		}
	}
	return decodedFast
}

func isNaN(v any) bool { f, ok := v.(float64); return ok && math.IsNaN(f) }

// fastScalar decodes only what json.Unmarshal decodes, to the same value,
// and leaves the rest (escapes, null, out of range, other kinds, types with
// an unmarshaler of their own) to it.
func TestFastScalarStoresWhatJSONUnmarshalStores(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		wantFast int // fields of scalarKinds decoded fast
	}{
		{raw: `"plain"`, wantFast: 1},             // S; never O (Outcome has its own unmarshaler)
		{raw: `"success"`, wantFast: 1},           // S; C's own UnmarshalJSON checks it
		{raw: `"héllo ✓"`, wantFast: 1},           // valid UTF-8
		{raw: `"with \"escape\""`},                // escapes: json.Unmarshal
		{raw: `"tab	inside"`},                     // a control character: json.Unmarshal refuses it
		{raw: "\"\xff\""},                         // invalid UTF-8: json.Unmarshal replaces it
		{raw: `true`, wantFast: 1},                // B
		{raw: `false`, wantFast: 1},               // B
		{raw: `null`},                             // json.Unmarshal: a no-op
		{raw: `0`, wantFast: 5},                   // I, I8, U, F, F32
		{raw: `-0`, wantFast: 4},                  // not U
		{raw: `127`, wantFast: 5},                 // fits int8
		{raw: `128`, wantFast: 4},                 // not I8: json.Unmarshal names the overflow
		{raw: `-1`, wantFast: 4},                  // not U
		{raw: `01`},                               // not JSON
		{raw: `1.5`, wantFast: 2},                 // F, F32
		{raw: `1e3`, wantFast: 2},                 // F, F32; never an integer
		{raw: `-2.5E-3`, wantFast: 2},             // F, F32
		{raw: `1e400`},                            // out of range for both floats
		{raw: `3.5e38`, wantFast: 1},              // F only: out of float32's range
		{raw: `.5`},                               // not JSON
		{raw: `1.`},                               // not JSON
		{raw: `+1`},                               // not JSON
		{raw: `0x10`},                             // not JSON
		{raw: `Infinity`},                         // not JSON
		{raw: ` 1`},                               // whitespace: json.Unmarshal
		{raw: `9223372036854775808`, wantFast: 2}, // F, F32: int64, int8 and uint32 overflow
	} {
		t.Run(tc.raw, func(t *testing.T) {
			assert.Check(t, is.Equal(fastMatchesJSON(t, []byte(tc.raw)), tc.wantFast))
		})
	}
}

// FuzzFastScalar: for any input, whatever fastScalar decodes, json.Unmarshal
// decodes to the same value.
func FuzzFastScalar(f *testing.F) {
	for _, seed := range []string{`"a"`, `true`, `0`, `-1.5e-3`, `1e400`, `128`, "\"\xff\"", `"\u00e9"`, `null`, `01`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { fastMatchesJSON(t, raw) })
}
