package smoke

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// The report is written by hand rather than with encoding/json: the proof is downloaded by every
// pod in the paid window before its runner can register, and encoding/json (with the reflection
// and sorting it links in) was about 200 kB of it. The output is byte for byte what
// json.Encoder with SetEscapeHTML(false) and SetIndent("", "  ") writes for the same Report; the
// struct tags stay, so readers keep decoding it with encoding/json, and reportjson_test.go
// compares the two encoders on every field.

// appendJSON appends r as indented JSON and a newline, as json.Encoder.Encode does.
func (r *Report) appendJSON(b []byte) ([]byte, error) {
	o := beginObject(b, 1)
	o.str("result", r.Result)
	if r.Reason != "" {
		o.str("reason", r.Reason)
	}
	if r.DriverVersion != (Version{}) {
		o.str("driver_version", r.DriverVersion.String())
	}
	if r.DriverVersionCode != 0 {
		o.int("driver_version_code", int64(r.DriverVersionCode))
	}
	if r.Tier != "" {
		o.str("tier", string(r.Tier))
	}
	if r.TierCUDA != (Version{}) {
		o.str("tier_cuda", r.TierCUDA.String())
	}
	if r.PTXISA != (ISA{}) {
		o.str("ptx_isa", r.PTXISA.String())
	}
	if r.PTXTarget != "" {
		o.str("ptx_target", r.PTXTarget)
	}
	if r.Device != nil {
		o.key("device")
		o.b = r.Device.appendJSON(o.b, o.depth+1)
	}
	if r.NVRTC != nil {
		o.key("nvrtc")
		o.b = r.NVRTC.appendJSON(o.b, o.depth+1)
	}
	o.key("steps")
	switch {
	case r.Steps == nil:
		o.b = append(o.b, "null"...)
	case len(r.Steps) == 0:
		o.b = append(o.b, "[]"...)
	default:
		o.b = append(o.b, '[')
		for i := range r.Steps {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendIndent(o.b, o.depth+1)
			var err error
			if o.b, err = r.Steps[i].appendJSON(o.b, o.depth+2); err != nil && o.err == nil {
				o.err = err
			}
		}
		o.b = appendIndent(o.b, o.depth)
		o.b = append(o.b, ']')
	}
	o.float("duration_ms", r.DurationMS)
	return append(o.end(), '\n'), o.err
}

func (d *DeviceReport) appendJSON(b []byte, depth int) []byte {
	o := beginObject(b, depth)
	o.int("ordinal", int64(d.Ordinal))
	o.str("name", d.Name)
	if d.ComputeCapability != (ComputeCapability{}) {
		o.str("compute_capability", d.ComputeCapability.String())
	}
	o.uint("vram_bytes", d.VRAMBytes)
	o.uint("min_vram_bytes", d.MinVRAMBytes)
	return o.end()
}

func (n *NVRTCReport) appendJSON(b []byte, depth int) []byte {
	o := beginObject(b, depth)
	o.str("package_url", n.PackageURL)
	o.str("package_sha256", n.PackageSHA256)
	if n.PackageBytes != 0 {
		o.int("package_bytes", n.PackageBytes)
	}
	if n.Version != (Version{}) {
		o.str("version", n.Version.String())
	}
	if n.Architecture != "" {
		o.str("architecture", n.Architecture)
	}
	if n.PTXISA != (ISA{}) {
		o.str("ptx_isa", n.PTXISA.String())
	}
	if n.PTXTarget != "" {
		o.str("ptx_target", n.PTXTarget)
	}
	return o.end()
}

func (s *StepReport) appendJSON(b []byte, depth int) ([]byte, error) {
	o := beginObject(b, depth)
	o.str("name", s.Name)
	o.key("ok")
	o.b = strconv.AppendBool(o.b, s.OK)
	o.str("detail", s.Detail)
	o.float("duration_ms", s.DurationMS)
	return o.end(), o.err
}

// jsonObject appends one JSON object in encoding/json's indented layout: each member on its own
// line, indented two spaces per level of depth.
type jsonObject struct {
	b     []byte
	depth int // the members' indentation level
	n     int // members written so far
	err   error
}

func beginObject(b []byte, depth int) *jsonObject {
	return &jsonObject{b: append(b, '{'), depth: depth}
}

// key starts a member: the separator, a new indented line and the quoted name.
func (o *jsonObject) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = appendIndent(o.b, o.depth)
	o.b = appendJSONString(o.b, name)
	o.b = append(o.b, ':', ' ')
}

func (o *jsonObject) str(name, v string) {
	o.key(name)
	o.b = appendJSONString(o.b, v)
}

func (o *jsonObject) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) uint(name string, v uint64) {
	o.key(name)
	o.b = strconv.AppendUint(o.b, v, 10)
}

func (o *jsonObject) float(name string, v float64) {
	o.key(name)
	var err error
	if o.b, err = appendJSONFloat(o.b, v); err != nil && o.err == nil {
		o.err = err
	}
}

// end closes the object; an empty one stays "{}" as encoding/json writes it.
func (o *jsonObject) end() []byte {
	if o.n > 0 {
		o.b = appendIndent(o.b, o.depth-1)
	}
	return append(o.b, '}')
}

// appendIndent starts a new line indented by depth levels of two spaces.
func appendIndent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for range depth {
		b = append(b, ' ', ' ')
	}
	return b
}

// appendJSONFloat formats f as encoding/json does (ES6 number formatting): plain decimals
// between 1e-6 and 1e21, otherwise an exponent without a padded zero. NaN and infinities are
// not JSON numbers.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &jsonValueError{value: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// jsonValueError is encoding/json's UnsupportedValueError message for a float it cannot write.
type jsonValueError struct{ value string }

func (e *jsonValueError) Error() string { return "json: unsupported value: " + e.value }

// appendJSONString quotes s as encoding/json does without HTML escaping: '"' and '\\' escaped,
// control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 escaped because JavaScript treats them as line ends.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
