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
// consistency test (actions/actions_test.go) reads the output names from that type's tags.
func WriteOutputs[T any](io *IO, outputs T) error {
	return io.writeOutputs(reflect.ValueOf(outputs))
}

// writeOutputs is WriteOutputs' body, not generic so it is carried once.
func (io *IO) writeOutputs(v reflect.Value) error {
	fields, err := outputFields(v)
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

// outputTag is one field a struct declares as an output.
type outputTag struct {
	name      string
	omitempty bool
	index     int
}

// outputTags reads the OutputTag fields of a struct type. A field of
// another type is a programming error, reported rather than written in some
// guessed form.
func outputTags(t reflect.Type) ([]outputTag, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("outputs: %s is not a struct with %q tags", t, OutputTag)
	}
	var out []outputTag
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup(OutputTag)
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || (opts != "" && opts != "omitempty") {
			return nil, fmt.Errorf("outputs: %s.%s: tag %q: want `output:\"name\"` or `output:\"name,omitempty\"`", t, sf.Name, tag)
		}
		switch sf.Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		default:
			return nil, fmt.Errorf("outputs: %s.%s is a %s: want a string, bool or integer", t, sf.Name, sf.Type)
		}
		out = append(out, outputTag{name: name, omitempty: opts == "omitempty", index: i})
	}
	return out, nil
}

// outputFields reads the tagged fields of a struct value, sorted by name,
// leaving out empty ",omitempty" ones.
func outputFields(v reflect.Value) ([]outputField, error) {
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("outputs: %s is not a struct with %q tags", v.Type(), OutputTag)
	}
	tags, err := outputTags(v.Type())
	if err != nil {
		return nil, err
	}
	var out []outputField
	for _, tag := range tags {
		var value string
		switch f := v.Field(tag.index); f.Kind() {
		case reflect.String:
			value = f.String()
		case reflect.Bool:
			value = strconv.FormatBool(f.Bool())
		default:
			value = strconv.FormatInt(f.Int(), 10)
		}
		if tag.omitempty && value == "" {
			continue
		}
		out = append(out, outputField{tag.name, value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// OutputNames lists the outputs an outputs struct declares (its OutputTag
// fields, ",omitempty" ones included), in name order; the action.yml check
// compares them with the file.
func OutputNames(t reflect.Type) ([]string, error) {
	tags, err := outputTags(t)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tags))
	for i, tag := range tags {
		names[i] = tag.name
	}
	sort.Strings(names)
	return names, nil
}

// RestrictOutputs makes writing any output but these an error: an action
// writes only what it declared, which is what its action.yml declares.
func (r *IO) RestrictOutputs(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outputs = map[string]bool{}
	for _, n := range names {
		r.outputs[n] = true
	}
}
