package actionio

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// OutputTag is the struct tag that names an action output: `output:"pod-id"`,
// or `output:"pod-id,omitempty"` for one left unwritten when empty.
const OutputTag = "output"

// WriteOutputs is the one way an action writes outputs: from a typed result,
// a struct whose fields tagged OutputTag are each one output (a string, a
// bool as true/false, or an integer). They are written in name order, so
// output files are stable; ",omitempty" leaves an empty string unwritten, so
// a value published earlier (provision's pod-id, at creation) stands. It
// writes all it can and returns the failures joined.
//
// Call it with the type argument written out,
// actionio.WriteOutputs[provision.Outputs](io, res.Outputs()): the action.yml
// consistency test (action-tests) reads the output names from that type's tags.
func WriteOutputs[T any](io *IO, outputs T) error {
	fields, err := outputFields(reflect.ValueOf(outputs))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range fields {
		errs = append(errs, io.setOutput(f.name, f.value))
	}
	return errors.Join(errs...)
}

// outputField is one output to write.
type outputField struct{ name, value string }

// outputFields reads the tagged fields of a struct, sorted by name, leaving
// out empty ",omitempty" ones. A field of another type is a programming
// error, reported rather than written in some guessed form.
func outputFields(v reflect.Value) ([]outputField, error) {
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("outputs: %s is not a struct with %q tags", v.Type(), OutputTag)
	}
	var out []outputField
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		tag, ok := sf.Tag.Lookup(OutputTag)
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || (opts != "" && opts != "omitempty") {
			return nil, fmt.Errorf("outputs: %s.%s: tag %q: want `output:\"name\"` or `output:\"name,omitempty\"`", v.Type(), sf.Name, tag)
		}
		var value string
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			value = f.String()
		case reflect.Bool:
			value = strconv.FormatBool(f.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			value = strconv.FormatInt(f.Int(), 10)
		default:
			return nil, fmt.Errorf("outputs: %s.%s is a %s: want a string, bool or integer", v.Type(), sf.Name, f.Type())
		}
		if opts == "omitempty" && value == "" {
			continue
		}
		out = append(out, outputField{name, value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
