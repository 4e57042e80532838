package config

import (
	"encoding/json"
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
)

func TestParseCUDAVersion(t *testing.T) {
	tests := []struct {
		input   string
		want    CUDAVersion
		wantErr bool
	}{
		{input: "12.6", want: CUDAVersion{12, 6}},
		{input: "12.10", want: CUDAVersion{12, 10}},
		{input: "13.0", want: CUDAVersion{13, 0}},
		{input: "999.999", want: CUDAVersion{999, 999}},
		{input: "12", wantErr: true},
		{input: "12.", wantErr: true},
		{input: ".6", wantErr: true},
		{input: "12.6.1", wantErr: true},
		{input: "12.06", wantErr: true},
		{input: "012.6", wantErr: true},
		{input: "0.9", wantErr: true},
		{input: "+12.6", wantErr: true},
		{input: "12.-6", wantErr: true},
		{input: " 12.6", wantErr: true},
		{input: "1000.0", wantErr: true},
		{input: "１２.６", wantErr: true},
		{input: "", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ParseCUDAVersion(tc.input)
		if tc.wantErr {
			assert.Assert(t, errors.Is(err, ErrCUDAVersion), "%q: got %v, %v", tc.input, got, err)
			continue
		}
		assert.NilError(t, err, tc.input)
		assert.Equal(t, got, tc.want)
		assert.Equal(t, got.String(), tc.input)
	}
}

func TestCUDAVersionCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "12.6", b: "12.6", want: 0},
		{a: "12.10", b: "12.9", want: 1},
		{a: "12.8", b: "13.0", want: -1},
		{a: "13.2", b: "12.9", want: 1},
	}
	for _, tc := range tests {
		a, b := mustCUDA(t, tc.a), mustCUDA(t, tc.b)
		assert.Equal(t, a.Compare(b), tc.want, "%s vs %s", tc.a, tc.b)
		assert.Equal(t, b.Compare(a), -tc.want, "%s vs %s", tc.b, tc.a)
		assert.Equal(t, a.AtLeast(b), tc.want >= 0)
	}
}

func mustCUDA(t *testing.T, s string) CUDAVersion {
	t.Helper()
	v, err := ParseCUDAVersion(s)
	assert.NilError(t, err)
	return v
}

func TestCUDAVersionEncoding(t *testing.T) {
	v := CUDAVersion{12, 10}
	data, err := json.Marshal(v)
	assert.NilError(t, err)
	assert.Equal(t, string(data), `"12.10"`)
	var back CUDAVersion
	assert.NilError(t, json.Unmarshal(data, &back))
	assert.Equal(t, back, v)

	out, err := yaml.Marshal(map[string]CUDAVersion{"v": v})
	assert.NilError(t, err)
	assert.Equal(t, string(out), "v: \"12.10\"\n", "must stay quoted or 12.10 reads back as 12.1")
	var fromYAML map[string]CUDAVersion
	assert.NilError(t, yaml.Unmarshal(out, &fromYAML))
	assert.Equal(t, fromYAML["v"], v)

	err = yaml.Unmarshal([]byte("v: 12.10\n"), &fromYAML)
	assert.Assert(t, errors.Is(err, ErrCUDAVersion), "an unquoted number must be refused, got %v", err)
}
