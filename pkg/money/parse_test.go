package money

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

var limitTo100 = Limit{Min: Micro, Max: 100 * Dollar}

func TestParse(t *testing.T) {
	tests := []struct {
		value   string
		l       Limit
		want    Amount
		wantErr string
	}{
		{value: "5", l: limitTo100, want: 5 * Dollar},
		{value: "12.50", l: limitTo100, want: 12_500_000},
		{value: ".5", l: limitTo100, want: 500_000},
		{value: "+1.", l: limitTo100, want: Dollar},
		{value: "0.000001", l: limitTo100, want: 1},
		{value: "100", l: limitTo100, want: 100 * Dollar},
		{value: "0", l: limitTo100, wantErr: `max_run_spend_usd "0": want a number of US dollars from 0.000001 to 100, at most six decimals`},
		{value: "100.000001", l: limitTo100, wantErr: `"100.000001": want`},
		{value: "$5", l: limitTo100, wantErr: `"$5": want`},
		{value: "-1", l: limitTo100, wantErr: `"-1": want`},
		{value: "1e2", l: limitTo100, wantErr: `"1e2": want`},
		{value: "0.0000001", l: limitTo100, wantErr: `"0.0000001": want`},
		{value: "NaN", l: limitTo100, wantErr: `"NaN": want`},
		{value: "", l: limitTo100, wantErr: `"": want`},
		{value: ".", l: limitTo100, wantErr: `".": want`},
		{value: " 5", l: limitTo100, wantErr: `" 5": want`},
		{value: "99999999999", l: Limit{Max: 1 << 62}, wantErr: `"99999999999": want`},
		{value: "7", l: Limit{Max: Dollar, Want: "a price below $1"}, wantErr: `max_run_spend_usd "7": want a price below $1`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := Parse("max_run_spend_usd", tt.value, tt.l)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				var pe *ParseError
				assert.Assert(t, errors.As(err, &pe))
				assert.Equal(t, pe.Key, "max_run_spend_usd")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tt.want)
		})
	}
}

// FuzzParse holds Parse to its contract on any text: no panic, a result
// within the limit, and the result formatted exactly reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5", "12.50", ".5", "0.000001", "$5", "1e2", "-1", "", "99999999999", "+.", "1.2.3"} {
		f.Add(s)
	}
	l := Limit{Min: 0, Max: 1_000_000 * Dollar}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse("key", s, l)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Key != "key" || pe.Value != s {
				t.Fatalf("Parse(%q): error %v does not name the key and the value", s, err)
			}
			return
		}
		if a < l.Min || a > l.Max {
			t.Fatalf("Parse(%q) = %d, outside the limit", s, a)
		}
		back, err := Parse("key", a.Format(Exact)[1:], l)
		if err != nil || back != a {
			t.Fatalf("Parse(%q) = %d formats as %q, which reads back as %d, %v", s, a, a.Format(Exact), back, err)
		}
	})
}
