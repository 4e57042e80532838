package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/money"
)

// Seconds is a whole number of paid seconds that may be unknown. It encodes
// as a JSON integer, or null when unknown.
type Seconds struct {
	N     int64
	Known bool
}

// KnownSeconds returns a known count; a negative count is unknown.
func KnownSeconds(n int64) Seconds { return Seconds{N: n, Known: n >= 0} }

// wholeSeconds rounds a non-negative duration up to whole seconds: a started
// second is a paid second, so the estimate never under-reports.
func wholeSeconds(d time.Duration) int64 {
	n := int64(d / time.Second)
	if d%time.Second > 0 {
		n++
	}
	return n
}

// At prices the seconds, rounded up to the micro-dollar (money.Rate.For); the
// result is unknown when the seconds or the price are.
func (s Seconds) At(p Price) Money {
	if !s.Known || !p.Known {
		return Money{}
	}
	return KnownMoney(p.PerHour.For(time.Duration(min(s.N, math.MaxInt64/int64(time.Second))) * time.Second))
}

// String renders the count as an integer or "unknown".
func (s Seconds) String() string {
	if !s.Known {
		return "unknown"
	}
	return strconv.FormatInt(s.N, 10)
}

// MarshalJSON writes an integer or null.
func (s Seconds) MarshalJSON() ([]byte, error) {
	if !s.Known {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, s.N, 10), nil
}

// UnmarshalJSON accepts a non-negative JSON integer or null.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	*s = Seconds{}
	if isNull(b) {
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil || n < 0 {
		return invalid("%s: want a non-negative whole number of seconds or null", clip(b))
	}
	*s = KnownSeconds(n)
	return nil
}

// Money is an estimated amount that may be unknown. It encodes as a JSON
// number of dollars (micro-dollars exact), or null when unknown.
type Money struct {
	USD   money.Amount
	Known bool
}

// KnownMoney returns a known amount; a negative amount is unknown.
func KnownMoney(usd money.Amount) Money { return Money{USD: usd, Known: usd >= 0} }

// String renders the amount as dollars with 4 decimals ("$0.0667") or "unknown".
func (m Money) String() string {
	if !m.Known {
		return "unknown"
	}
	return m.USD.Format(money.Fine)
}

// MarshalJSON writes a number of dollars with up to 6 decimals, or null when
// unknown.
func (m Money) MarshalJSON() ([]byte, error) {
	if !m.Known {
		return []byte("null"), nil
	}
	return m.USD.MarshalJSON()
}

// UnmarshalJSON accepts a non-negative JSON number or null.
func (m *Money) UnmarshalJSON(b []byte) error {
	*m = Money{}
	if isNull(b) {
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil || v < 0 {
		return invalid("%s: want a non-negative number of dollars or null", clip(b))
	}
	*m = KnownMoney(money.FromDollars(v))
	return nil
}

// sumMoney adds amounts; the sum is unknown if any term is, and partial is the
// sum of the known terms so reports can say "at least".
func sumMoney(amounts ...Money) (sum Money, partial money.Amount, unknown int) {
	for _, m := range amounts {
		if m.Known {
			partial += m.USD
		} else {
			unknown++
		}
	}
	if unknown > 0 {
		return Money{}, partial, unknown
	}
	return KnownMoney(partial), partial, 0
}

// Price is an hourly price in US dollars and where it came from. A price that
// is not Known makes every dollar amount derived from it unknown.
type Price struct {
	PerHour money.Rate // meaningful only when Known
	Known   bool
	Source  string // where the price was read, e.g. "v2 cost" or "v1 adjustedCostPerHr"
}

// KnownPrice returns a known price; a price that is not positive is unknown,
// because RunPod reports 0 for pods that stopped running.
func KnownPrice(perHour money.Rate, source string) Price {
	if perHour <= 0 {
		return Price{Source: source}
	}
	return Price{PerHour: perHour, Known: true, Source: source}
}

// PriceForm is what an hourly price given as text must be: provision's
// price-per-hour output, as cleanup, the watchdog and the gate read it.
const PriceForm = inputform.PriceForm

// MaxPricePerHour bounds an hourly price given as text (inputform's price kind).
const MaxPricePerHour = inputform.MaxPricePerHour

// ParsePricePerHour is the one reader of an hourly price given as text (the
// price-per-hour output provision writes and the cleanup, watchdog and gate
// steps take). It follows KnownPrice: a positive finite number is known;
// empty and 0 are unknown, as RunPod reports 0 for a pod that is not running
// and provision writes nothing when it had no price. Anything else (a
// negative, NaN or infinite number, or no number) is an error naming the
// value and PriceForm; the price has no Source, which the caller sets.
func ParsePricePerHour(value string) (Price, error) {
	if value == "" {
		return Price{}, nil
	}
	v, ok := inputform.ParsePrice(value)
	if !ok {
		return Price{}, fmt.Errorf("price %q: want %s", clip([]byte(value)), PriceForm)
	}
	return KnownPrice(v, ""), nil
}

// FirstKnown returns the first known price, or the last one given (unknown)
// when none is known; cleanup uses it to fall back from a post-exit pod read to
// the price captured while the pod ran.
func FirstKnown(prices ...Price) Price {
	for _, p := range prices {
		if p.Known {
			return p
		}
	}
	if len(prices) == 0 {
		return Price{}
	}
	return prices[len(prices)-1]
}

// String renders "$0.40/h" or "unknown", followed by the source in parentheses.
func (p Price) String() string {
	s := "unknown"
	if p.Known {
		s = p.PerHour.Format(money.Hourly)
	}
	if p.Source != "" {
		s += " (" + p.Source + ")"
	}
	return s
}

type priceJSON struct {
	PerHour *float64 `json:"perHour"`
	Source  string   `json:"source,omitempty"`
}

// MarshalJSON writes {"perHour": number or null, "source": "..."}.
func (p Price) MarshalJSON() ([]byte, error) {
	var out priceJSON
	out.Source = p.Source
	if p.Known {
		v := p.PerHour.Dollars()
		out.PerHour = &v
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes; perHour null or 0 is unknown.
func (p *Price) UnmarshalJSON(b []byte) error {
	*p = Price{}
	var in priceJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return invalid("price %s: want {\"perHour\": number or null, \"source\": string}", clip(b))
	}
	if in.PerHour == nil {
		*p = Price{Source: in.Source}
		return nil
	}
	if *in.PerHour < 0 {
		return fieldErr("perHour", invalid("%v: want a non-negative number of dollars per hour or null", *in.PerHour))
	}
	*p = KnownPrice(money.PerHour(*in.PerHour), in.Source)
	return nil
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// clip keeps error messages short when outside data is large.
func clip(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
