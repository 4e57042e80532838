package cudaver_test

import (
	"encoding/json"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/cudaver"
)

func TestParse(t *testing.T) {
	tests := []struct {
		input   string
		want    cudaver.Version
		wantErr bool
	}{
		{input: "12.6", want: cudaver.Version{Major: 12, Minor: 6}},
		{input: "12.8", want: cudaver.Version{Major: 12, Minor: 8}},
		{input: "12.10", want: cudaver.Version{Major: 12, Minor: 10}},
		{input: "13.0", want: cudaver.Version{Major: 13, Minor: 0}},
		{input: "1.0", want: cudaver.Version{Major: 1, Minor: 0}},
		{input: "999.99", want: cudaver.Version{Major: 999, Minor: 99}},
		// The driver's encoding (1000*major + 10*minor) has no room for a minor of 100.
		{input: "12.100", wantErr: true},
		{input: "999.999", wantErr: true},
		{input: "1000.0", wantErr: true},
		{input: "99999.1", wantErr: true},
		// One spelling per version: no bare major, no leading zero, no space or sign.
		{input: "12", wantErr: true},
		{input: "13", wantErr: true},
		{input: "12.", wantErr: true},
		{input: ".6", wantErr: true},
		{input: "12.6.1", wantErr: true},
		{input: "12.8.1", wantErr: true},
		{input: "12.06", wantErr: true},
		{input: "12.08", wantErr: true},
		{input: "012.6", wantErr: true},
		{input: "0.9", wantErr: true},
		{input: "+12.6", wantErr: true},
		{input: "-12.8", wantErr: true},
		{input: "12.-6", wantErr: true},
		{input: "v12.8", wantErr: true},
		{input: " 12.6", wantErr: true},
		{input: " 12.6 ", wantErr: true},
		{input: "12.8\n", wantErr: true},
		{input: "１２.６", wantErr: true},
		{input: "٣.٤", wantErr: true},
		{input: "", wantErr: true},
	}
	for _, tc := range tests {
		got, err := cudaver.Parse(tc.input)
		if tc.wantErr {
			assert.Assert(t, errors.Is(err, cudaver.ErrSyntax), "%q: got %v, %v", tc.input, got, err)
			continue
		}
		assert.NilError(t, err, tc.input)
		assert.Equal(t, got, tc.want)
		assert.Equal(t, got.String(), tc.input)
		assert.Assert(t, got.Valid(), tc.input)
	}
}

func TestParseErrorNamesTheValueAndTheForm(t *testing.T) {
	_, err := cudaver.Parse("12.08")
	assert.Error(t, err, `"12.08": want a CUDA version "major.minor" such as "12.6"`)
}

func TestFromCode(t *testing.T) {
	tests := []struct {
		code    int
		want    string
		wantErr bool
	}{
		{code: 12080, want: "12.8"},
		{code: 12060, want: "12.6"},
		{code: 13000, want: "13.0"},
		{code: 12100, want: "12.10"},
		{code: 12085, wantErr: true},
		{code: 999, wantErr: true},
		{code: -12080, wantErr: true},
	}
	for _, tt := range tests {
		got, err := cudaver.FromCode(tt.code)
		if tt.wantErr {
			assert.ErrorContains(t, err, "want 1000*major + 10*minor", "code %d", tt.code)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, got.String(), tt.want)
		assert.Equal(t, got.Code(), tt.code)
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "12.6", b: "12.6", want: 0},
		{a: "12.8", b: "12.6", want: 1},
		{a: "12.10", b: "12.9", want: 1}, // minor compares as a number, not text
		{a: "12.8", b: "13.0", want: -1},
		{a: "13.2", b: "12.9", want: 1},
	}
	for _, tc := range tests {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		assert.Equal(t, a.Compare(b), tc.want, "%s vs %s", tc.a, tc.b)
		assert.Equal(t, b.Compare(a), -tc.want, "%s vs %s", tc.b, tc.a)
		assert.Equal(t, a.AtLeast(b), tc.want >= 0)
	}
}

func mustParse(t *testing.T, s string) cudaver.Version {
	t.Helper()
	v, err := cudaver.Parse(s)
	assert.NilError(t, err)
	return v
}

func TestZeroIsUnsetAndPrintsEmpty(t *testing.T) {
	var v cudaver.Version
	assert.Assert(t, v.IsZero())
	assert.Assert(t, !v.Valid())
	assert.Equal(t, v.String(), "")
}

func TestTextEncoding(t *testing.T) {
	v := cudaver.Version{Major: 12, Minor: 10}
	data, err := json.Marshal(v)
	assert.NilError(t, err)
	assert.Equal(t, string(data), `"12.10"`)
	var back cudaver.Version
	assert.NilError(t, json.Unmarshal(data, &back))
	assert.Equal(t, back, v)
	assert.Assert(t, errors.Is(json.Unmarshal([]byte(`"12.100"`), &back), cudaver.ErrSyntax))
}

// FuzzParse checks that parsing never panics and that every accepted version
// has one spelling and survives the driver's encoding unchanged.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"12.8", "12.6", "13", "12.08", "", "99.99", "1.0", "٣.٤", "12.8\n", "12.100", "999.999"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := cudaver.Parse(s)
		if err != nil {
			assert.Assert(t, errors.Is(err, cudaver.ErrSyntax), "%q: untyped error %v", s, err)
			return
		}
		assert.Equal(t, v.String(), s)
		assert.Assert(t, v.Valid())
		fromCode, err := cudaver.FromCode(v.Code())
		assert.NilError(t, err)
		assert.Equal(t, fromCode, v)
	})
}

// FuzzFromCode checks the driver's integer encoding: no panic, and accepted
// codes round-trip through the text form.
func FuzzFromCode(f *testing.F) {
	for _, seed := range []int{12080, 12060, 0, -1, 12085, 999990, 1 << 40} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, code int) {
		v, err := cudaver.FromCode(code)
		if err != nil {
			return
		}
		assert.Equal(t, v.Code(), code)
		parsed, err := cudaver.Parse(v.String())
		assert.NilError(t, err)
		assert.Equal(t, parsed, v)
	})
}
