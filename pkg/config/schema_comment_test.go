package config

import (
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The schema's $id is SchemaID, the URL SchemaComment points editors at.
func TestSchemaIDIsTheFilesID(t *testing.T) {
	var doc struct {
		ID string `json:"$id"`
	}
	assert.NilError(t, json.Unmarshal(Schema(), &doc))
	assert.Check(t, is.Equal(doc.ID, SchemaID))
	assert.Check(t, is.Regexp(`^https://raw\.githubusercontent\.com/org/runpod-gpu/v[0-9]+/pkg/config/runpod-gpu\.schema\.json$`, SchemaID),
		"the raw URL of the schema at the release tag callers pin")
}

// A config whose first line is the yaml-language-server comment loads like
// the same config without it; a `$schema` key is still refused, naming the
// key (the comment, not a key, carries the schema: keys stay strict).
func TestParseSchemaLine(t *testing.T) {
	const body = "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA GeForce RTX 4090\"]\nmin_vram_gb: 16\n"
	plain, err := Parse([]byte(body), "plain.yml")
	assert.NilError(t, err)
	tests := []struct {
		name, text string
		wantErr    string
	}{
		{name: "comment line", text: SchemaComment + "\n" + body},
		{name: "comment line with CRLF", text: SchemaComment + "\r\n" + body},
		{name: "$schema key", text: "$schema: " + SchemaID + "\n" + body,
			wantErr: "c.yml:1: $schema: want a known key of the config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.text), "c.yml")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(cfg, plain))
		})
	}
}
