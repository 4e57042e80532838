package cost

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Most of a cost line or artifact is scalars: strings without escapes,
// numbers, booleans. decodeFields gives each its own json.Unmarshal, which
// validates and reflects per value, and that was half of what the cost
// history's summary spends (BenchmarkSummarize5000Attempts). fastScalar
// decodes those scalars directly, into exactly what json.Unmarshal would
// store; anything else — escapes, null, a number out of range, a type with
// its own unmarshaler, a value of the wrong kind — goes to json.Unmarshal,
// which decodes it or names what is wrong.

// plainTypes caches whether a type decodes by its kind alone (no
// json.Unmarshaler or encoding.TextUnmarshaler of its own).
var plainTypes sync.Map // reflect.Type → bool

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func plainType(t reflect.Type) bool {
	if v, ok := plainTypes.Load(t); ok {
		return v.(bool)
	}
	p := reflect.PointerTo(t)
	plain := !p.Implements(jsonUnmarshaler) && !p.Implements(textUnmarshaler) &&
		!t.Implements(jsonUnmarshaler) && !t.Implements(textUnmarshaler)
	plainTypes.Store(t, plain)
	return plain
}

// fastScalar stores raw in field when raw is a scalar of the field's kind
// that needs no more than a copy or strconv to decode; it reports whether
// it did (false leaves field untouched).
func fastScalar(raw []byte, field reflect.Value) bool {
	if len(raw) == 0 || !field.CanSet() || !plainType(field.Type()) {
		return false
	}
	switch field.Kind() {
	case reflect.String:
		s, ok := plainJSONString(raw)
		if ok {
			field.SetString(s)
		}
		return ok
	case reflect.Bool:
		switch string(raw) {
		case "true":
			field.SetBool(true)
			return true
		case "false":
			field.SetBool(false)
			return true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !jsonInteger(raw) {
			return false
		}
		n, err := strconv.ParseInt(string(raw), 10, field.Type().Bits())
		if err == nil {
			field.SetInt(n)
		}
		return err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !jsonInteger(raw) || raw[0] == '-' {
			return false
		}
		n, err := strconv.ParseUint(string(raw), 10, field.Type().Bits())
		if err == nil {
			field.SetUint(n)
		}
		return err == nil
	case reflect.Float32, reflect.Float64:
		if !jsonNumber(raw) {
			return false
		}
		f, err := strconv.ParseFloat(string(raw), field.Type().Bits())
		if err == nil {
			field.SetFloat(f)
		}
		return err == nil
	}
	return false
}

// plainJSONString returns the content of a JSON string that has no escape,
// no control character and only valid UTF-8: its bytes are its value.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c == '"' || c == '\\' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

// jsonInteger reports whether b is a JSON number without fraction or
// exponent: -?(0|[1-9][0-9]*).
func jsonInteger(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("-"))
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsonNumber reports whether b is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	switch n := digits(); {
	case n == 0, n > 1 && b[i-n] == '0':
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
