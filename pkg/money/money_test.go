package money

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
)

func TestFromDollars(t *testing.T) {
	tests := []struct {
		name string
		usd  float64
		want Amount
	}{
		{"whole", 5, 5 * Dollar},
		{"six decimals exact", 0.345678, 345678},
		{"float noise rounds away", 0.1 + 0.2, 300_000},
		{"below half a micro", 0.0000004, 0},
		{"NaN is zero", math.NaN(), 0},
		{"clamped high", math.Inf(1), Amount(maxDollars) * Dollar},
		{"clamped low", math.Inf(-1), -Amount(maxDollars) * Dollar},
		{"negative", -1.5, -1_500_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, FromDollars(tt.usd), tt.want)
		})
	}
}

func TestRateForRoundsUp(t *testing.T) {
	tests := []struct {
		name string
		rate Rate
		d    time.Duration
		want Amount
	}{
		{"whole hour", PerHour(0.69), time.Hour, 690_000},
		{"a second rounds up to the micro", PerHour(0.34), time.Second, 95}, // 94.44… micro
		{"exact second", PerHour(3.6), time.Second, 1000},
		{"a nanosecond costs a micro", PerHour(0.01), time.Nanosecond, 1},
		{"zero rate", 0, time.Hour, 0},
		{"negative rate", -5, time.Hour, 0},
		{"negative duration", PerHour(1), -time.Hour, 0},
		{"long and dear does not overflow", PerHour(1000), 100 * 365 * 24 * time.Hour, 876_000_000 * Dollar},
		{"overflow saturates", Rate(math.MaxInt64), math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.rate.For(tt.d), tt.want)
		})
	}
}

func TestCentsUp(t *testing.T) {
	tests := []struct {
		a    Amount
		want WholeCents
	}{{0, 0}, {1, 1}, {Cent, 1}, {Cent + 1, 2}, {136 * Cent, 136}}
	for _, tt := range tests {
		assert.Equal(t, tt.a.CentsUp(), tt.want, "amount %d", tt.a)
		assert.Equal(t, tt.want.Amount().CentsUp(), tt.want)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		a    Amount
		p    Precision
		want string
	}{
		{"cents", 1_360_000, Cents, "$1.36"},
		{"cents rounds half away from zero", 345_000, Cents, "$0.35"},
		{"cents rounds below half down", 344_999, Cents, "$0.34"},
		{"cents rounds above half up", 345_001, Cents, "$0.35"},
		{"zero", 0, Cents, "$0.00"},
		{"fine", 66_667, Fine, "$0.0667"},
		{"hourly trims to two", 400_000, Hourly, "$0.40"},
		{"hourly keeps three", 345_000, Hourly, "$0.345"},
		{"hourly at most four", 123_456, Hourly, "$0.1235"},
		{"exact", 123, Exact, "$0.000123"},
		{"exact whole", 5 * Dollar, Exact, "$5"},
		{"negative", -1_500_000, Cents, "-$1.50"},
		{"carry into dollars", 999_999, Cents, "$1.00"},
		{"whole dollars", 2_500_000, Precision{0, 0}, "$3"},
		{"out of range precision is clamped", 1, Precision{-3, 12}, "$0.000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.a.Format(tt.p), tt.want)
		})
	}
	assert.Equal(t, PerHour(0.4).String(), "$0.40/h")
	assert.Equal(t, Amount(1_234_567).String(), "$1.23")
}

func TestJSON(t *testing.T) {
	type doc struct {
		USD  Amount `json:"usd"`
		Rate Rate   `json:"rate"`
	}
	b, err := json.Marshal(doc{USD: 1_234_567, Rate: PerHour(0.4)})
	assert.NilError(t, err)
	assert.Equal(t, string(b), `{"usd":1.234567,"rate":0.4}`)
	var d doc
	assert.NilError(t, json.Unmarshal([]byte(`{"usd":0.30000000000000004,"rate":2}`), &d))
	assert.Equal(t, d, doc{USD: 300_000, Rate: 2 * Rate(Dollar)})
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"usd":"5"}`), &d), `amount "5": want a number of US dollars`)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"usd":1e300}`), &d), "at most")
	b, err = json.Marshal(Amount(-5))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "-0.000005")
}

// TestAmountYAML decodes configuration numbers through yaml.v3, which calls
// Amount's unmarshaler.
func TestAmountYAML(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr string
	}{
		{in: "5", want: 5 * Dollar},
		{in: "2.5", want: 2*Dollar + 50*Cent},
		{in: "0.0000014", want: 1},
		{in: ".nan", wantErr: "amount NaN: want a number of US dollars of at most 1e+09"},
		{in: ".inf", wantErr: "amount +Inf: want a number of US dollars of at most 1e+09"},
		{in: "five", wantErr: "amount: want a number of US dollars: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `five` into float64"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got struct{ A Amount }
			err := yaml.Unmarshal([]byte("a: "+tt.in), &got)
			if tt.wantErr != "" {
				assert.Error(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got.A, tt.want)
			out, err := yaml.Marshal(got)
			assert.NilError(t, err)
			var back struct{ A Amount }
			assert.NilError(t, yaml.Unmarshal(out, &back))
			assert.Equal(t, back.A, tt.want, "written as %q", out)
		})
	}
}
