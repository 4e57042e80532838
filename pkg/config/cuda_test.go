package config

import (
	"encoding/json"
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
)

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
