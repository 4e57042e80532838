package money

import (
	"fmt"
	"strings"
)

// ParseError is a user-given amount that could not be read: it names the key
// (the input, flag or configuration key), the value and what is expected.
type ParseError struct {
	Key, Value, Want string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s %q: want %s", e.Key, clip(e.Value), e.Want)
}

// Limit bounds what Parse accepts: the least and the most a key may hold.
type Limit struct {
	Min, Max Amount
	// Want says what the key expects, for the error; empty says it from Min and Max.
	Want string
}

// Parse reads a user-given amount of US dollars for key: decimal digits with
// at most six decimals ("5", "12.50", "0.000001", ".5"), optionally signed
// with "+", within [l.Min, l.Max]. Anything else (a "$", an exponent, a
// seventh decimal, NaN, a negative number, spaces) is a *ParseError.
func Parse(key, value string, l Limit) (Amount, error) {
	want := l.Want
	if want == "" {
		want = fmt.Sprintf("a number of US dollars from %s to %s, at most six decimals", strings.TrimPrefix(l.Min.Format(Exact), "$"), strings.TrimPrefix(l.Max.Format(Exact), "$"))
	}
	a, ok := parseDecimal(value)
	if !ok || a < l.Min || a > l.Max {
		return 0, &ParseError{Key: key, Value: value, Want: want}
	}
	return a, nil
}

// parseDecimal reads [+]digits[.digits] with at most six decimals and at most
// ten integer digits (so the result cannot overflow).
func parseDecimal(s string) (Amount, bool) {
	s = strings.TrimPrefix(s, "+")
	whole, frac, dot := strings.Cut(s, ".")
	if (whole == "" && frac == "") || len(whole) > 10 || len(frac) > 6 || (dot && frac == "" && whole == "") {
		return 0, false
	}
	var a Amount
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, false
		}
		a = a*10 + Amount(c-'0')
	}
	a *= Dollar
	unit := Dollar / 10
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		a += Amount(c-'0') * unit
		unit /= 10
	}
	return a, true
}
