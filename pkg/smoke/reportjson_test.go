package smoke

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"gotest.tools/v3/assert"
)

// encodingJSON is what the proof wrote before it dropped encoding/json: the reference the
// hand-written encoder must match byte for byte, since readers of the report decode it.
func encodingJSON(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	assert.NilError(t, enc.Encode(r))
	return buf.String()
}

// fillEveryField sets every field reachable from v to a non-zero value, pointers and slices
// included, so a field added to the report but not to appendJSON shows up as a difference.
func fillEveryField(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillEveryField(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fillEveryField(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fillEveryField(v.Index(i), n)
		}
	case reflect.String:
		v.SetString("s<&>\"\\\n\u2028é" + string(rune('a'+*n%26)))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint64:
		v.SetUint(uint64(*n) << 33)
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.125)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fillEveryField: add a case for " + v.Kind().String())
	}
}

func TestReportJSONMatchesEncodingJSON(t *testing.T) {
	var every Report
	fillEveryField(reflect.ValueOf(&every).Elem(), new(int))

	tests := []struct {
		name   string
		report Report
	}{
		{name: "zero report: nil steps are null", report: Report{}},
		{name: "empty steps", report: Report{Result: "pass", Steps: []StepReport{}}},
		{name: "every field set", report: every},
		{name: "empty nested objects", report: Report{Device: &DeviceReport{}, NVRTC: &NVRTCReport{}, Steps: []StepReport{{}}}},
		{
			name: "a pass as the proof writes it",
			report: Report{
				Result: "pass", DriverVersion: Version{Major: 12, Minor: 8}, DriverVersionCode: 12080, Tier: TierFull,
				TierCUDA: Version{Major: 12, Minor: 8}, PTXISA: ISA{8, 7}, PTXTarget: "sm_89",
				Device:     &DeviceReport{Name: "NVIDIA GeForce RTX 4090", ComputeCapability: ComputeCapability{8, 9}, VRAMBytes: 25757220864, MinVRAMBytes: 8 << 30},
				Steps:      []StepReport{{Name: "driver", OK: true, Detail: "CUDA 12.8 >= 12.6", DurationMS: 0.001}, {Name: "kernel", DurationMS: 1234.567}},
				DurationMS: 1500,
			},
		},
		{
			name: "strings that need escaping",
			report: Report{Result: "fail", Reason: "a\x00b\x01\x1f\x7f\b\f\t\r\n\"\\/<>&\u2028\u2029\xff\xc3é日本\U0001F600",
				Steps: []StepReport{{Name: "\xed\xa0\x80 surrogate", Detail: string([]byte{0xe2, 0x80})}}},
		},
		{
			name: "floats at the exponent cutoffs",
			report: Report{Steps: []StepReport{
				{DurationMS: 1e-6}, {DurationMS: 9.99e-7}, {DurationMS: 1e21}, {DurationMS: 1e20},
				{DurationMS: 1e-10}, {DurationMS: -2.5e-8}, {DurationMS: math.Copysign(0, -1)},
				{DurationMS: math.MaxFloat64}, {DurationMS: math.SmallestNonzeroFloat64}, {DurationMS: 0.1 + 0.2},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.report.appendJSON(nil)
			assert.NilError(t, err)
			assert.Equal(t, string(got), encodingJSON(t, &tc.report))
		})
	}
}

func TestReportJSONRejectsNonNumbers(t *testing.T) {
	tests := []struct {
		name   string
		report Report
		want   string
	}{
		{name: "NaN run time", report: Report{DurationMS: math.NaN()}, want: "json: unsupported value: NaN"},
		{name: "infinite step time", report: Report{Steps: []StepReport{{DurationMS: math.Inf(-1)}}}, want: "json: unsupported value: -Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.report.appendJSON(nil)
			assert.Error(t, err, tc.want)
			_, jsonErr := json.Marshal(&tc.report)
			assert.ErrorContains(t, jsonErr, tc.want)
		})
	}
}

// FuzzReportJSON checks arbitrary strings and numbers against encoding/json.
func FuzzReportJSON(f *testing.F) {
	f.Add("pass", "", "sm_89", "detail", 1.5, int64(12080))
	f.Add("fail", "x\u2028\xff\x00\"", "\\", "<>&", 1e-7, int64(-1))
	f.Fuzz(func(t *testing.T, result, reason, target, detail string, ms float64, code int64) {
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			return
		}
		r := Report{
			Result: result, Reason: reason, PTXTarget: target, DriverVersionCode: int(code),
			NVRTC:      &NVRTCReport{PackageURL: detail, PackageBytes: code, PTXTarget: target},
			Steps:      []StepReport{{Name: reason, Detail: detail, DurationMS: ms}},
			DurationMS: -ms,
		}
		got, err := r.appendJSON(nil)
		assert.NilError(t, err)
		assert.Equal(t, string(got), encodingJSON(t, &r))
	})
}
