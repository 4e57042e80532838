package cost

import (
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The acceptance case: a v1 Go-layout start, an RFC 3339 deletion 600 s later, $0.40/h.
func TestDollarsGoLayoutStartRFC3339End(t *testing.T) {
	w := Window{
		Start: at(t, "2026-09-23 08:48:28.204 +0000 UTC"),
		End:   at(t, "2026-09-23T08:58:28.204Z"),
	}
	assert.NilError(t, w.Validate())
	assert.Equal(t, w.Seconds(), KnownSeconds(600))
	got := Dollars(w, KnownPrice(money.PerHour(0.40), "v2 cost"))
	assert.Assert(t, got.Known)
	assert.Equal(t, got.String(), "$0.0667")
}

func TestWindowSeconds(t *testing.T) {
	tests := []struct {
		name        string
		window      Window
		price       Price
		wantSeconds string
		wantDollars string
		wantErr     error
	}{
		{name: "whole seconds", window: Window{Start: sec(0), End: sec(3600)}, price: KnownPrice(money.PerHour(0.69), "x"),
			wantSeconds: "3600", wantDollars: "$0.6900"},
		{name: "a started second is paid", window: Window{Start: sec(0), End: sec(10.001)}, price: KnownPrice(money.PerHour(3.6), "x"),
			wantSeconds: "11", wantDollars: "$0.0110"},
		{name: "empty window", window: Window{Start: sec(5), End: sec(5)}, price: KnownPrice(money.PerHour(1), "x"),
			wantSeconds: "0", wantDollars: "$0.0000"},
		{name: "zone offsets compare as instants", window: Window{
			Start: at(t, "2026-09-23 10:48:28 +0200 CEST"), End: at(t, "2026-09-23T08:49:28Z")},
			price: KnownPrice(money.PerHour(0.4), "x"), wantSeconds: "60", wantDollars: "$0.0067"},
		{name: "unknown start stays unknown", window: Window{End: sec(600)}, price: KnownPrice(money.PerHour(0.4), "x"),
			wantSeconds: "unknown", wantDollars: "unknown"},
		{name: "unconfirmed deletion", window: Window{Start: sec(0)}, price: KnownPrice(money.PerHour(0.4), "x"),
			wantSeconds: "unknown", wantDollars: "unknown"},
		{name: "unknown price", window: Window{Start: sec(0), End: sec(600)}, price: KnownPrice(money.PerHour(0), "v2 cost"),
			wantSeconds: "600", wantDollars: "unknown"},
		{name: "negative window", window: Window{Start: sec(600), End: sec(0)}, price: KnownPrice(money.PerHour(0.4), "x"),
			wantSeconds: "unknown", wantDollars: "unknown", wantErr: ErrNegativeInterval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.window.Validate()
			if tc.wantErr != nil {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
				var ie *IntervalError
				assert.Assert(t, errors.As(err, &ie))
				assert.Equal(t, ie.What, "paid window")
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, tc.window.Seconds().String(), tc.wantSeconds)
			assert.Equal(t, Dollars(tc.window, tc.price).String(), tc.wantDollars)
		})
	}
}

// wire.ParseTime refuses such years, but a Window can still be built in code.
func TestWindowValidateRejectsUnwritableYears(t *testing.T) {
	tests := []struct {
		name    string
		window  Window
		wantErr string
	}{
		{name: "year 0 after UTC conversion", window: Window{Start: wire.KnownTime(time.Date(-1, 12, 31, 23, 0, 0, 0, time.UTC))},
			wantErr: `key "start": invalid value: -0001-12-31T23:00:00Z: want a time between years 0001 and 9999 UTC`},
		{name: "year 10000 after UTC conversion", window: Window{Start: sec(0), End: wire.KnownTime(time.Date(10000, 1, 1, 1, 0, 0, 0, time.UTC))},
			wantErr: `key "end": invalid value: 10000-01-01T01:00:00Z`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.window.Validate()
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Assert(t, errors.Is(err, ErrInvalidValue))
		})
	}
}
