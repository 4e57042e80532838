package cost

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
)

func TestWholeSeconds(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int64
	}{
		{0, 0},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{time.Second + 1, 2},
		{600 * time.Second, 600},
		{time.Duration(math.MaxInt64), math.MaxInt64/int64(time.Second) + 1},
	}
	for _, tc := range tests {
		assert.Equal(t, wholeSeconds(tc.in), tc.want, "wholeSeconds(%v)", tc.in)
	}
}

func TestPriceString(t *testing.T) {
	tests := []struct {
		price Price
		want  string
	}{
		{KnownPrice(money.PerHour(0.4), "v2 cost"), "$0.40/h (v2 cost)"},
		{KnownPrice(money.PerHour(0.345), ""), "$0.345/h"},
		{KnownPrice(money.PerHour(2.99), "v1 costPerHr"), "$2.99/h (v1 costPerHr)"},
		{KnownPrice(money.PerHour(12), ""), "$12.00/h"},
		{KnownPrice(money.PerHour(0), "v2 cost"), "unknown (v2 cost)"},
		{KnownPrice(money.PerHour(-1), ""), "unknown"},
		{KnownPrice(money.PerHour(math.NaN()), ""), "unknown"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.price.String(), tc.want)
	}
}

func TestFirstKnown(t *testing.T) {
	exited := KnownPrice(money.PerHour(0), "v2 cost")
	captured := KnownPrice(money.PerHour(0.74), "provision output")
	assert.Equal(t, FirstKnown(exited, captured), captured)
	assert.Equal(t, FirstKnown(captured, exited), captured)
	assert.Equal(t, FirstKnown(exited, KnownPrice(money.PerHour(0), "snapshot")).Source, "snapshot")
	assert.Equal(t, FirstKnown(), Price{})
}

func TestValuesJSON(t *testing.T) {
	tests := []struct {
		name    string
		value   any
		wantOut string
	}{
		{"known seconds", KnownSeconds(42), `42`},
		{"unknown seconds", Seconds{}, `null`},
		{"known money", KnownMoney(money.FromDollars(0.25)), `0.25`},
		{"unknown money", Money{}, `null`},
		{"negative money is unknown", KnownMoney(-money.Micro), `null`},
		{"known price", KnownPrice(money.PerHour(0.4), "v2 cost"), `{"perHour":0.4,"source":"v2 cost"}`},
		{"unknown price", KnownPrice(money.PerHour(0), "v2 cost"), `{"perHour":null,"source":"v2 cost"}`},
		{"negative price is unknown", KnownPrice(-money.PerHour(1), ""), `{"perHour":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.value)
			assert.NilError(t, err)
			assert.Equal(t, string(b), tc.wantOut)
		})
	}
}

func TestValuesUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		into    any
		want    any
		wantErr string
	}{
		{name: "seconds", in: `600`, into: new(Seconds), want: KnownSeconds(600)},
		{name: "seconds null", in: `null`, into: new(Seconds), want: Seconds{}},
		{name: "seconds negative", in: `-1`, into: new(Seconds), wantErr: "-1: want a non-negative whole number of seconds or null"},
		{name: "seconds fraction", in: `1.5`, into: new(Seconds), wantErr: "1.5: want a non-negative whole number"},
		{name: "seconds string", in: `"60"`, into: new(Seconds), wantErr: `"60": want a non-negative whole number`},
		{name: "money", in: `0.0667`, into: new(Money), want: KnownMoney(money.FromDollars(0.0667))},
		{name: "money negative", in: `-0.5`, into: new(Money), wantErr: "-0.5: want a non-negative number of dollars"},
		{name: "price", in: `{"perHour":0.4,"source":"v2 cost"}`, into: new(Price), want: KnownPrice(money.PerHour(0.4), "v2 cost")},
		{name: "price zero is unknown", in: `{"perHour":0,"source":"v2 cost"}`, into: new(Price), want: Price{Source: "v2 cost"}},
		{name: "price null", in: `{"perHour":null}`, into: new(Price), want: Price{}},
		{name: "price negative", in: `{"perHour":-2}`, into: new(Price), wantErr: `key "perHour": invalid value: -2: want a non-negative`},
		{name: "price not object", in: `0.4`, into: new(Price), wantErr: `price 0.4: want {"perHour"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tc.in), tc.into)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Assert(t, errors.Is(err, ErrInvalidValue))
				return
			}
			assert.NilError(t, err)
			switch got := tc.into.(type) {
			case *Seconds:
				assert.Equal(t, *got, tc.want)
			case *Money:
				assert.Equal(t, *got, tc.want)
			case *Price:
				assert.Equal(t, *got, tc.want)
			}
		})
	}
}

// One rule for an hourly price given as text, for cleanup, the watchdog and
// the gate alike: positive is known, empty and 0 are unknown, the rest is an error.
func TestParsePricePerHour(t *testing.T) {
	tests := []struct {
		in      string
		want    Price
		wantErr string
	}{
		{in: "0.25", want: Price{PerHour: money.PerHour(0.25), Known: true}},
		{in: "1e-3", want: Price{PerHour: money.PerHour(0.001), Known: true}},
		{in: ""},
		{in: "0"},
		{in: "0.000"},
		{in: "-0.5", wantErr: `price "-0.5": want a positive number of USD per hour up to 1000, or 0 or empty when unknown`},
		{in: "NaN", wantErr: `price "NaN": want`},
		{in: "+Inf", wantErr: `price "+Inf": want`},
		{in: "1e400", wantErr: `price "1e400": want`},
		{in: "1e308", wantErr: `price "1e308": want`},
		{in: "1000.01", wantErr: `price "1000.01": want`},
		{in: "1000", want: Price{PerHour: money.PerHour(1000), Known: true}},
		{in: "$0.25", wantErr: `price "$0.25": want`},
		{in: " 0.25", wantErr: `price " 0.25": want`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePricePerHour(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Equal(t, got, Price{})
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

// Paid seconds are priced with money's one rounding rule: up to the next
// micro-dollar, so an estimate never under-reports.
func TestSecondsAtRoundsUp(t *testing.T) {
	price := KnownPrice(money.PerHour(0.17), "v2 cost")
	tests := []struct {
		name    string
		seconds Seconds
		price   Price
		want    Money
	}{
		{name: "212 s at $0.17/h is $0.0100111…, rounded up", seconds: KnownSeconds(212), price: price, want: KnownMoney(10_012)},
		{name: "an hour is the price", seconds: KnownSeconds(3600), price: price, want: KnownMoney(170_000)},
		{name: "no seconds cost nothing", seconds: KnownSeconds(0), price: price, want: KnownMoney(0)},
		{name: "unknown seconds", seconds: Seconds{}, price: price, want: Money{}},
		{name: "unknown price", seconds: KnownSeconds(60), price: Price{}, want: Money{}},
		{name: "seconds past any duration saturate", seconds: KnownSeconds(math.MaxInt64), price: price, want: KnownMoney(money.PerHour(0.17).For(math.MaxInt64 / time.Second * time.Second))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.seconds.At(tc.price), tc.want)
		})
	}
}
