package money

import (
	"math"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestParseDigitsAtTheEdges: zeros are digits like any other, and the sixth
// decimal is the last one accepted.
func TestParseDigitsAtTheEdges(t *testing.T) {
	limit := Limit{Min: 0, Max: 1_000_000 * Dollar}
	tests := []struct {
		value   string
		want    Amount
		wantErr bool
	}{
		{value: "10", want: 10 * Dollar},
		{value: "0.5", want: 50 * Cent},
		{value: "10.05", want: 10*Dollar + 5*Cent},
		{value: "0.000001", want: 1},
		{value: "0.0000001", wantErr: true},
		{value: "9999999999", wantErr: true}, // within ten digits, above the limit
		{value: "99999999999", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := Parse("--max-run-spend", tt.value, limit)
			if tt.wantErr {
				assert.Check(t, err != nil)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tt.want))
		})
	}
}

// TestRateForAtTheOverflowEdge: a product whose high word is exactly an hour
// saturates instead of dividing out of range.
func TestRateForAtTheOverflowEdge(t *testing.T) {
	assert.Equal(t, Rate(1<<62).For(4*time.Hour), Amount(math.MaxInt64))
}

// TestJSONAtTheLargestAmount: the largest amount a file may hold is read;
// a larger one is refused.
func TestJSONAtTheLargestAmount(t *testing.T) {
	var a Amount
	assert.NilError(t, a.UnmarshalJSON([]byte("1000000000")))
	assert.Equal(t, a, Amount(1_000_000_000)*Dollar)
	assert.ErrorContains(t, a.UnmarshalJSON([]byte("1000000000.5")), "at most")
}

// TestClipKeepsSixtyFourCharacters: a value up to 64 characters is quoted
// whole in an error; a longer one is cut.
func TestClipKeepsSixtyFourCharacters(t *testing.T) {
	exact := strings.Repeat("x", 64)
	assert.Equal(t, clip(exact), exact)
	assert.Equal(t, clip(exact+"y"), exact+"…")
}
