package config

import (
	_ "embed"
	"slices"
)

//go:embed runpod-gpu.schema.json
var schemaJSON []byte

// SchemaID is the $id of the published JSON Schema.
const SchemaID = "https://raw.githubusercontent.com/org/runpod-gpu/main/pkg/config/runpod-gpu.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of the config file, for
// editors and for validating configs outside Go. Rules across keys (see the
// schema's description) are enforced by the loader only.
func Schema() []byte { return slices.Clone(schemaJSON) }
