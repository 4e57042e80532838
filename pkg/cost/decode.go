package cost

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// decodeFields decodes a JSON object into the struct dst points to, one
// tagged field at a time, so that every error names its key path
// ("rejected[1].seconds") — encoding/json does not add the key to errors
// returned by custom unmarshalers. Unknown keys are ignored (later v1
// writers may add fields); absent keys leave the zero value.
func decodeFields(b []byte, dst any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return invalid("%s: want a JSON object", clip(b))
	}
	v := reflect.ValueOf(dst).Elem()
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		raw, ok := fields[key]
		if key == "" || key == "-" || !ok {
			continue
		}
		if err := decodeValue(raw, v.Field(i)); err != nil {
			return fieldErr(key, err)
		}
	}
	return nil
}

// decodeValue decodes raw into field; slices are decoded element by element
// so that errors carry the index.
func decodeValue(raw json.RawMessage, field reflect.Value) error {
	if fastScalar(raw, field) { // fastdecode.go: what json.Unmarshal would store, without its cost
		return nil
	}
	if field.Kind() != reflect.Slice || field.Type().Elem().Kind() == reflect.Uint8 || isNull(raw) {
		return describe(json.Unmarshal(raw, field.Addr().Interface()), raw, field.Type())
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return invalid("%s: want an array", clip(raw))
	}
	out := reflect.MakeSlice(field.Type(), len(items), len(items))
	for i, item := range items {
		if err := decodeValue(item, out.Index(i)); err != nil {
			return fieldErr(fmt.Sprintf("[%d]", i), err)
		}
	}
	field.Set(out)
	return nil
}

// describe turns encoding/json's type errors into messages that say what the
// key accepts; errors from custom unmarshalers already do and pass through.
func describe(err error, raw json.RawMessage, typ reflect.Type) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	if err == nil || (!errors.As(err, &typeErr) && !errors.As(err, &syntaxErr)) {
		return err
	}
	return invalid("%s: want %s", clip(raw), jsonKind(typ))
}

// jsonKind names the JSON a Go type accepts.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// decodeField decodes fields[key] into dst when present and not null; an
// error names the key and what it accepts.
func decodeField(fields map[string]json.RawMessage, key string, dst any, accepts string) error {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fieldErr(key, invalid("%s: want %s", clip(raw), accepts))
	}
	return nil
}
