package gatecheck

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestExternalIDRoundTrip(t *testing.T) {
	for _, k := range Kinds {
		s, err := FormatExternalID(merge, k)
		assert.NilError(t, err)
		assert.Equal(t, s, "runpod-gpu-gate:v1:"+merge+":"+string(k))
		id, err := ParseExternalID(s)
		assert.NilError(t, err)
		assert.DeepEqual(t, id, ExternalID{TestedRef: merge, Kind: k})
	}
}

func TestParseExternalIDRejects(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"", "want prefix"},
		{"runpod-gpu-gate:v2:" + merge + ":paid", "want prefix"},
		{"local-gpu-gate:v1:" + merge, "want prefix"},
		{"runpod-gpu-gate:v1:" + merge, "want \"runpod-gpu-gate:v1:\"<ref>:<kind>"},
		{"runpod-gpu-gate:v1::paid", "tested ref \"\""},
		{"runpod-gpu-gate:v1:main:paid", "tested ref \"main\""},
		{"runpod-gpu-gate:v1:" + strings.ToUpper(merge) + ":paid", "full lowercase commit SHA"},
		{"runpod-gpu-gate:v1:" + merge + ":free", `kind "free"`},
		{"runpod-gpu-gate:v1:" + merge + ":paid:extra", `kind "paid:extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseExternalID(tc.in)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	_, err := FormatExternalID("", KindPaid)
	assert.ErrorContains(t, err, "tested ref")
	_, err = FormatExternalID(merge, "weird")
	assert.ErrorContains(t, err, "want one of paid, reused, failed, not-required, local, skipped")
	local, err := LocalExternalID(merge)
	assert.NilError(t, err)
	assert.Equal(t, local, "local-gpu-gate:v1:"+merge)
}

func FuzzParseExternalID(f *testing.F) {
	f.Add("runpod-gpu-gate:v1:" + merge + ":paid")
	f.Add("runpod-gpu-gate:v1::")
	f.Add("local-gpu-gate:v1:" + merge)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseExternalID(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("ParseExternalID(%q) round-trips to %q", s, id.String())
		}
	})
}

// A marker that does not parse is quoted whole up to 120 characters, and cut
// with an ellipsis beyond.
func TestParseExternalIDQuotesAtMost120Characters(t *testing.T) {
	at120 := strings.Repeat("x", 120)
	_, err := ParseExternalID(at120)
	assert.Error(t, err, `gate external_id "`+at120+`": want prefix "runpod-gpu-gate:v1:"`)

	_, err = ParseExternalID(at120 + "y")
	assert.Error(t, err, `gate external_id "`+at120+`…": want prefix "runpod-gpu-gate:v1:"`)
}
