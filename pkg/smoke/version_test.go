package smoke_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/smoke"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    smoke.Version
		wantErr string
	}{
		{in: "12.8", want: smoke.Version{Major: 12, Minor: 8}},
		{in: " 12.6 ", want: smoke.Version{Major: 12, Minor: 6}},
		{in: "13", want: smoke.Version{Major: 13}},
		{in: "12.10", want: smoke.Version{Major: 12, Minor: 10}},
		{in: "12.08", wantErr: `CUDA version "12.08": want MAJOR.MINOR such as 12.8`},
		{in: "", wantErr: `CUDA version "": want MAJOR.MINOR`},
		{in: "12.", wantErr: `want MAJOR.MINOR`},
		{in: "12.8.1", wantErr: `want MAJOR.MINOR`},
		{in: "-12.8", wantErr: `want MAJOR.MINOR`},
		{in: "v12.8", wantErr: `want MAJOR.MINOR`},
		{in: "0.9", wantErr: `major version must be at least 1`},
		{in: "12.100", wantErr: `want MAJOR.MINOR`},
		{in: "1000.0", wantErr: `want MAJOR.MINOR`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := smoke.ParseVersion(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tt.want)
		})
	}
}

func TestVersionFromCode(t *testing.T) {
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
		got, err := smoke.VersionFromCode(tt.code)
		if tt.wantErr {
			assert.ErrorContains(t, err, "want 1000*major + 10*minor", "code %d", tt.code)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, got.String(), tt.want)
		assert.Equal(t, got.Code(), tt.code)
	}
}

func TestVersionCompare(t *testing.T) {
	v := func(s string) smoke.Version {
		t.Helper()
		parsed, err := smoke.ParseVersion(s)
		assert.NilError(t, err)
		return parsed
	}
	assert.Equal(t, v("12.8").Compare(v("12.6")), 1)
	assert.Equal(t, v("12.6").Compare(v("12.8")), -1)
	assert.Equal(t, v("12.10").Compare(v("12.9")), 1, "minor compares as a number, not text")
	assert.Equal(t, v("13.0").Compare(v("12.9")), 1)
	assert.Equal(t, v("12.8").Compare(v("12.8")), 0)
	assert.Assert(t, v("12.8").AtLeast(v("12.8")))
}

// FuzzParseVersion checks that parsing never panics and that every accepted version survives
// both encodings unchanged.
func FuzzParseVersion(f *testing.F) {
	for _, seed := range []string{"12.8", "12.6", "13", "12.08", "", "99.99", "1.0", "٣.٤", "12.8\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := smoke.ParseVersion(s)
		if err != nil {
			return
		}
		again, err := smoke.ParseVersion(v.String())
		assert.NilError(t, err)
		assert.Equal(t, again, v)
		fromCode, err := smoke.VersionFromCode(v.Code())
		assert.NilError(t, err)
		assert.Equal(t, fromCode, v)
	})
}

// FuzzVersionFromCode checks the driver's integer encoding: no panic, and accepted codes
// round-trip.
func FuzzVersionFromCode(f *testing.F) {
	for _, seed := range []int{12080, 12060, 0, -1, 12085, 999990, 1 << 40} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, code int) {
		v, err := smoke.VersionFromCode(code)
		if err != nil {
			return
		}
		assert.Equal(t, v.Code(), code)
		parsed, err := smoke.ParseVersion(v.String())
		assert.NilError(t, err)
		assert.Equal(t, parsed, v)
	})
}
