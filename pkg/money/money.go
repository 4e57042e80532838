package money

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Amount is an exact sum of US dollars, in micro-dollars.
type Amount int64

// Units of an Amount.
const (
	Micro  Amount = 1
	Cent   Amount = 10_000
	Dollar Amount = 1_000_000
)

// maxDollars bounds what FromDollars converts: far above any spend, far below
// the int64 limit, so sums of a few thousand amounts cannot overflow.
const maxDollars = 1e9

// FromDollars converts outside data in dollars (a JSON number, a catalog
// price) to the nearest micro-dollar; NaN is 0 and values beyond ±1e9 dollars
// are clamped there.
func FromDollars(usd float64) Amount {
	switch {
	case math.IsNaN(usd):
		return 0
	case usd > maxDollars:
		usd = maxDollars
	case usd < -maxDollars:
		usd = -maxDollars
	}
	return Amount(math.Round(usd * float64(Dollar)))
}

// FromCents converts whole cents, the Serverless ledger's unit on disk.
func FromCents(cents int64) Amount { return Amount(cents) * Cent }

// WholeCents is an amount held in whole cents, the unit the Serverless ledger
// stores (checksummed) and the artifacts quoting it carry: it encodes as a
// JSON integer of cents, as those files always have.
type WholeCents int64

// Amount is the whole cents as an Amount.
func (c WholeCents) Amount() Amount { return FromCents(int64(c)) }

// Dollars is the amount as float64 dollars, for ratios and wire formats that
// carry a JSON number; never for a sum or a comparison that decides a spend.
func (a Amount) Dollars() float64 { return float64(a) / float64(Dollar) }

// CentsUp is the amount in whole cents, rounded up: what the Serverless
// ledger, which counts cents, reserves for it.
func (a Amount) CentsUp() WholeCents {
	c := WholeCents(a / Cent)
	if a%Cent > 0 {
		c++
	}
	return c
}

// Precision is how many decimals Format shows: at least Min, at most Max,
// trailing zeros beyond Min dropped.
type Precision struct{ Min, Max int }

// The precisions the product shows.
var (
	// Cents is a budget, a limit or a bound as read by people: "$1.36".
	Cents = Precision{2, 2}
	// Fine shows what a ceiling's sum is made of: "$0.0667".
	Fine = Precision{4, 4}
	// Hourly shows a price per hour: "$0.40", "$0.345".
	Hourly = Precision{2, 4}
	// Exact shows every micro-dollar: "$0.000123".
	Exact = Precision{0, 6}
)

// Format is the one formatter: "$" and the dollars at precision p, rounded
// half away from zero at the last decimal shown (as people round a bill, and
// as the reports printed before amounts were exact); a negative amount starts "-$".
func (a Amount) Format(p Precision) string {
	p.Max = min(max(p.Max, 0), 6)
	p.Min = min(max(p.Min, 0), p.Max)
	sign, m := "", uint64(a)
	if a < 0 {
		sign, m = "-", uint64(-a)
	}
	unit := uint64(1)
	for range 6 - p.Max {
		unit *= 10
	}
	q, r := m/unit, m%unit
	if half := unit / 2; unit > 1 && r >= half {
		q++
	}
	scale := uint64(1)
	for range p.Max {
		scale *= 10
	}
	s := strconv.FormatUint(q/scale, 10)
	if p.Max > 0 {
		frac := fmt.Sprintf("%0*d", p.Max, q%scale)
		frac = strings.TrimRight(frac, "0")
		if len(frac) < p.Min {
			frac += strings.Repeat("0", p.Min-len(frac))
		}
		if frac != "" {
			s += "." + frac
		}
	}
	return sign + "$" + s
}

// String is Format(Cents).
func (a Amount) String() string { return a.Format(Cents) }

// MarshalJSON writes dollars as a JSON number with up to six decimals, the
// form cost artifacts and records have always carried.
func (a Amount) MarshalJSON() ([]byte, error) {
	return []byte(strings.TrimPrefix(strings.Replace(a.Format(Exact), "$", "", 1), "+")), nil
}

// UnmarshalJSON reads a JSON number of dollars.
func (a *Amount) UnmarshalJSON(b []byte) error {
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("amount %s: want a number of US dollars", clip(string(b)))
	}
	if math.Abs(v) > maxDollars {
		return fmt.Errorf("amount %s: want a number of US dollars of at most %g", clip(string(b)), float64(maxDollars))
	}
	*a = FromDollars(v)
	return nil
}

// UnmarshalYAML reads a YAML number of dollars (yaml.v3's unmarshaler
// interface, so this package imports no YAML library); NaN, infinities and
// amounts beyond ±1e9 dollars are refused.
func (a *Amount) UnmarshalYAML(decode func(any) error) error {
	var v float64
	if err := decode(&v); err != nil {
		return fmt.Errorf("amount: want a number of US dollars: %w", err)
	}
	if math.IsNaN(v) || math.Abs(v) > maxDollars {
		return fmt.Errorf("amount %g: want a number of US dollars of at most %g", v, float64(maxDollars))
	}
	*a = FromDollars(v)
	return nil
}

// MarshalYAML writes dollars as a YAML number.
func (a Amount) MarshalYAML() (any, error) { return a.Dollars(), nil }

// Rate is a price in US dollars per hour, in micro-dollars per hour.
type Rate int64

// PerHour converts outside data in dollars per hour to the nearest
// micro-dollar per hour, as FromDollars.
func PerHour(usd float64) Rate { return Rate(FromDollars(usd)) }

// Hourly is the amount one hour at the rate costs.
func (r Rate) Hourly() Amount { return Amount(r) }

// Dollars is the rate as float64 dollars per hour, for ratios and wire formats.
func (r Rate) Dollars() float64 { return Amount(r).Dollars() }

// For is the rate over d, rounded up to the next micro-dollar (the one
// rounding rule: an estimate or a bound never under-reports). A negative rate
// or duration costs nothing.
func (r Rate) For(d time.Duration) Amount {
	if r <= 0 || d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(r), uint64(d))
	const hour = uint64(time.Hour)
	if hi >= hour {
		return math.MaxInt64
	}
	q, rem := bits.Div64(hi, lo, hour)
	if rem > 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return Amount(q)
}

// Format renders the rate at precision p followed by "/h": "$0.40/h".
func (r Rate) Format(p Precision) string { return Amount(r).Format(p) + "/h" }

// String is Format(Hourly).
func (r Rate) String() string { return r.Format(Hourly) }

// MarshalJSON writes dollars per hour as a JSON number, as Amount.
func (r Rate) MarshalJSON() ([]byte, error) { return Amount(r).MarshalJSON() }

// UnmarshalJSON reads a JSON number of dollars per hour.
func (r *Rate) UnmarshalJSON(b []byte) error { return (*Amount)(r).UnmarshalJSON(b) }

func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
