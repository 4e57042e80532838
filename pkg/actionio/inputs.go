package actionio

import (
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/inputform"
)

// An action declares its inputs as one struct: each field tagged InputTag is
// one action.yml input, and its other tags say the rest. ReadInputs reads and
// validates them from that declaration alone, and InputSpecs gives the same
// declaration to the check that keeps every action.yml equal to it.
//
//	type Inputs struct {
//		PRNumber int64  `input:"pr-number" default:"0" min:"0" max:"2147483647" desc:"Pull request under test."`
//		APIKey   string `input:"runpod-api-key,required,secret" desc:"RunPod API key."`
//	}
//
// Tags:
//   - input:"name[,required][,secret]": the name exactly as in action.yml;
//     a secret is masked and redacted the moment it is read.
//   - default:"…": the action.yml default, used when the value is empty (one
//     holding a ${{ }} expression is the runner's to fill and never applied).
//   - desc:"…": the action.yml description.
//   - min:"n" max:"n": bounds of an integer (or of whole seconds, for a duration).
//   - path:"ROOT,…": a file path confined to the directories these runner
//     variables name (RootWorkspace, RootTemp, HOME), resolved (see PathInput).
//   - lenient:"consequence": a value that does not parse is a warning ending in
//     the consequence, and reads as the zero value (cleanup's report-only inputs).
//   - want:"…": what a value must look like, where the type does not say it
//     (a TextUnmarshaler's form, what a required input holds).
//   - form:"kind": a string input of one of inputform's kinds (sha, label,
//     ref, branch, artifact, price, name, runner-label, pod-id, gpu-type, tier,
//     image), checked where it is read, before anything is spent.
//
// Field types: string, bool, int64, time.Duration (whole seconds), []string
// (one value a line) and any type whose pointer is an encoding.TextUnmarshaler.
// An untagged embedded struct is a group of inputs declared in its own type
// (actionkit's GitHubInputs); a tag `desc.<name>:"…"` on the embedding field
// replaces the group's description of input <name> for this action, and a
// lenient tag there makes every input of the group lenient.
// A struct with a Validate() error method is checked with it after reading:
// rules between inputs (expected-head-sha is required when pr-number is set).
const (
	InputTag       = "input"
	inputDefault   = "default"
	inputDesc      = "desc"
	inputMin       = "min"
	inputMax       = "max"
	inputPath      = "path"
	inputLenient   = "lenient"
	inputWant      = "want"
	inputForm      = "form"
	inputDescPerGr = "desc."
)

// InputSpec is one declared input, as its action.yml declares it.
type InputSpec struct {
	Name        string
	Description string
	Required    bool
	Default     string
	Secret      bool
}

// inputField is an InputSpec with where and how to read it.
type inputField struct {
	InputSpec
	index              []int // reflect field index path from the top struct
	typ                reflect.Type
	min, max           int64
	roots              []string
	lenient, wantForm  string
	form               string // an inputform kind, or ""
	hasMin, hasMax     bool
	defaultIsRunnerExp bool
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	unmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// InputSpecs lists the inputs an inputs struct declares, in field order. An
// ill-formed declaration (an unknown type, a repeated name, a bound that is
// not a number) is an error: it is a programming error the action's tests catch.
func InputSpecs(t reflect.Type) ([]InputSpec, error) {
	fields, err := inputFields(t)
	if err != nil {
		return nil, err
	}
	out := make([]InputSpec, len(fields))
	for i, f := range fields {
		out[i] = f.InputSpec
	}
	return out, nil
}

func inputFields(t reflect.Type) ([]inputField, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("inputs: %s is not a struct with %q tags", t, InputTag)
	}
	var out []inputField
	seen := map[string]bool{}
	if err := collectInputFields(t, nil, "", &out, seen); err != nil {
		return nil, err
	}
	return out, nil
}

// collectInputFields appends t's inputs; overrides are the embedding field's
// per-input descriptions.
func collectInputFields(t reflect.Type, index []int, overrides reflect.StructTag, out *[]inputField, seen map[string]bool) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		at := append(append([]int(nil), index...), i)
		tag, ok := sf.Tag.Lookup(InputTag)
		if !ok {
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				if err := collectInputFields(sf.Type, at, sf.Tag, out, seen); err != nil {
					return err
				}
			}
			continue
		}
		f, err := parseInputField(t, sf, tag)
		if err != nil {
			return err
		}
		if f.form, err = parseForm(t, sf); err != nil {
			return err
		}
		if d, ok := overrides.Lookup(inputDescPerGr + f.Name); ok {
			f.Description = d
		}
		if l, ok := overrides.Lookup(inputLenient); ok && f.lenient == "" {
			f.lenient = l
		}
		if seen[f.Name] {
			return fmt.Errorf("inputs: %s.%s: input %q is declared twice", t, sf.Name, f.Name)
		}
		seen[f.Name] = true
		f.index = at
		*out = append(*out, f)
	}
	return nil
}

func parseInputField(t reflect.Type, sf reflect.StructField, tag string) (inputField, error) {
	bad := func(format string, args ...any) (inputField, error) {
		return inputField{}, fmt.Errorf("inputs: %s.%s: %s", t, sf.Name, fmt.Sprintf(format, args...))
	}
	name, opts, _ := strings.Cut(tag, ",")
	f := inputField{InputSpec: InputSpec{Name: name, Description: sf.Tag.Get(inputDesc)}, typ: sf.Type,
		lenient: sf.Tag.Get(inputLenient), wantForm: sf.Tag.Get(inputWant)}
	if name == "" {
		return bad("tag %q names no input", tag)
	}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "":
		case "required":
			f.Required = true
		case "secret":
			f.Secret = true
		default:
			return bad("tag %q: option %q: want required or secret", tag, o)
		}
	}
	f.Default, _ = sf.Tag.Lookup(inputDefault)
	f.defaultIsRunnerExp = strings.Contains(f.Default, "${{")
	for _, b := range []struct {
		key string
		dst *int64
		set *bool
	}{{inputMin, &f.min, &f.hasMin}, {inputMax, &f.max, &f.hasMax}} {
		v, ok := sf.Tag.Lookup(b.key)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad("%s:%q is not an integer", b.key, v)
		}
		*b.dst, *b.set = n, true
	}
	if roots, ok := sf.Tag.Lookup(inputPath); ok {
		f.roots = strings.Split(roots, ",")
		if sf.Type.Kind() != reflect.String {
			return bad("a path input must be a string")
		}
	}
	switch {
	case reflect.PointerTo(sf.Type).Implements(unmarshalType):
	case sf.Type == durationType, sf.Type.Kind() == reflect.Int64, sf.Type.Kind() == reflect.Int:
		if !f.hasMin {
			f.min = 0
		}
		if !f.hasMax {
			f.max = 1 << 53
		}
	case sf.Type.Kind() == reflect.String, sf.Type.Kind() == reflect.Bool:
	case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.String:
	default:
		return bad("type %s: want string, bool, int64, time.Duration, []string or a TextUnmarshaler", sf.Type)
	}
	return f, nil
}

// parseForm reads a field's form:"…" tag: an inputform kind, on a string field only.
func parseForm(t reflect.Type, sf reflect.StructField) (string, error) {
	form, ok := sf.Tag.Lookup(inputForm)
	if ok && (!inputform.Known(form) || sf.Type.Kind() != reflect.String) {
		return "", fmt.Errorf("inputs: %s.%s: form:%q: want an inputform kind on a string input", t, sf.Name, form)
	}
	return form, nil
}

// ReadInputs reads the inputs T declares (see InputTag), validated, with
// every problem of every input in the one error: each an *InputError naming
// the input, its value and what it should be. Secrets are masked before
// anything else happens. Lenient inputs that do not parse are warnings.
func ReadInputs[T any](io *IO) (T, error) {
	var in T
	return in, io.ReadInputsInto(&in)
}

// ReadInputsInto is ReadInputs into the struct ptr points to. It is not
// generic, so the image's program carries its body once, not once per action.
func (r *IO) ReadInputsInto(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("inputs: %T is not a pointer to an inputs struct", ptr)
	}
	v = v.Elem()
	fields, err := inputFields(v.Type())
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range fields {
		if err := r.readInput(f, v.FieldByIndex(f.index)); err != nil {
			if f.lenient == "" {
				errs = append(errs, err)
				continue
			}
			r.Warningf("%v; %s", err, f.lenient)
			v.FieldByIndex(f.index).SetZero()
		}
	}
	if len(errs) == 0 {
		if val, ok := ptr.(interface{ Validate() error }); ok {
			errs = append(errs, val.Validate())
		}
	}
	return errors.Join(errs...)
}

// readInput reads one declared input into dst.
func (r *IO) readInput(f inputField, dst reflect.Value) error {
	raw := r.input(f.Name)
	if f.Secret {
		r.Mask(raw)
	}
	value := raw
	if value == "" && !f.defaultIsRunnerExp {
		value = f.Default
	}
	if value == "" && f.Required {
		return &InputError{Input: f.Name, Expected: cmp.Or(f.wantForm, "a value") + " (the input is required)"}
	}
	switch {
	case value == "":
		return nil // the zero value: "not given" (an empty app-id is no App)
	case f.roots != nil:
		p, err := r.resolvePath(f.Name, value, f.roots...)
		if err != nil {
			return err
		}
		dst.SetString(p)
	case reflect.PointerTo(f.typ).Implements(unmarshalType):
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(value)); err != nil {
			shown := raw
			var s interface{ Shown() string }
			if errors.As(err, &s) {
				shown = s.Shown() // a value that may hold a credential, shown without it
			}
			return &InputError{Input: f.Name, Value: shown, Expected: cmp.Or(f.wantForm, err.Error())}
		}
	case f.typ == durationType:
		n, err := parseBoundedInt(f.Name, value, f.min, f.max)
		if err != nil {
			return err
		}
		dst.SetInt(int64(time.Duration(n) * time.Second))
	case f.typ.Kind() == reflect.Int64, f.typ.Kind() == reflect.Int:
		n, err := parseBoundedInt(f.Name, value, f.min, min(f.max, math.MaxInt))
		if err != nil {
			return err
		}
		dst.SetInt(n)
	case f.typ.Kind() == reflect.Bool:
		b, err := parseBool(f.Name, value)
		if err != nil {
			return err
		}
		dst.SetBool(b)
	case f.typ.Kind() == reflect.Slice:
		dst.Set(reflect.ValueOf(lines(value)))
	default:
		if err := inputform.Check(f.form, value); err != nil {
			return &InputError{Input: f.Name, Value: value, Expected: cmp.Or(f.wantForm, err.(*inputform.Error).Expected)}
		}
		dst.SetString(value)
	}
	return nil
}

// CommitSHA is an input that holds a full commit SHA (wire.IsCommitSHA), or
// is empty: a SHA that decides what is tested or deleted is never guessed or shortened.
type CommitSHA string

// UnmarshalText accepts only a full commit SHA.
func (s *CommitSHA) UnmarshalText(text []byte) error {
	if err := checkSHA(string(text)); err != nil {
		return err
	}
	*s = CommitSHA(text)
	return nil
}
