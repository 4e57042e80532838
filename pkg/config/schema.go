package config

import (
	_ "embed"
	"slices"
)

//go:embed runpod-gpu.schema.json
var schemaJSON []byte

// SchemaID is the $id of the published JSON Schema: its raw URL at the v1
// release tag, the schema of the actions a caller pinning @v1 runs (main may
// already describe keys that release does not know).
const SchemaID = "https://raw.githubusercontent.com/org/runpod-gpu/v1/pkg/config/runpod-gpu.schema.json"

// SchemaComment is the config's recommended first line: editors using
// yaml-language-server (VS Code's YAML extension, Neovim, Helix…) then
// validate and complete the file against SchemaID. It is a comment, so the
// loader, which refuses unknown keys such as `$schema`, never sees it.
const SchemaComment = "# yaml-language-server: $schema=" + SchemaID

// Schema returns the JSON Schema (draft 2020-12) of the config file, for
// editors and for validating configs outside Go. Rules across keys (see the
// schema's description) are enforced by the loader only.
func Schema() []byte { return slices.Clone(schemaJSON) }
