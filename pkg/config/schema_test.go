package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// compiledSchema compiles Schema() once; compiling also checks it against the
// draft 2020-12 meta-schema.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaID)
})

func mustSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	s, err := compiledSchema()
	assert.NilError(t, err)
	return s
}

// schemaDoc is the schema as plain JSON values, for structural checks.
func schemaDoc(t testing.TB) map[string]any {
	t.Helper()
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(Schema(), &doc))
	return doc
}

// yamlToJSON converts one YAML document to the JSON value an editor or any
// other schema-aware tool sees: scalars by their resolved YAML type, aliases
// expanded, later duplicate keys winning.
func yamlToJSON(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, nil
	}
	return nodeToJSON(doc.Content[0], 0)
}

func nodeToJSON(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("line %d: nested too deep", n.Line)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nodeToJSON(n.Alias, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := nodeToJSON(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		list := []any{}
		for _, item := range n.Content {
			v, err := nodeToJSON(item, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	}
	var v any
	switch n.ShortTag() {
	case nullTag:
		return nil, nil
	case intTag:
		var i int64
		if err := n.Decode(&i); err != nil {
			var f float64
			err = n.Decode(&f)
			return f, err
		}
		return i, nil
	case floatTag, "!!bool":
		err := n.Decode(&v)
		return v, err
	}
	return n.Value, nil
}

func validateYAML(t testing.TB, data []byte) error {
	t.Helper()
	v, err := yamlToJSON(data)
	assert.NilError(t, err)
	return mustSchema(t).Validate(v)
}

func TestSchemaAcceptsValidExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.yml")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data := readTestdata(t, strings.TrimPrefix(file, "testdata/"))
			assert.NilError(t, validateYAML(t, data))

			// The Go types encode to the same document shape.
			cfg, err := Parse(data, file)
			assert.NilError(t, err)
			encoded, err := json.Marshal(cfg)
			assert.NilError(t, err)
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(encoded))
			assert.NilError(t, err)
			assert.NilError(t, mustSchema(t).Validate(v))
		})
	}
}

func TestSchemaRejectsInvalidExamples(t *testing.T) {
	for _, tc := range invalidCases {
		t.Run(tc.file, func(t *testing.T) {
			err := validateYAML(t, readTestdata(t, "invalid/"+tc.file+".yml"))
			if tc.schema == "" {
				assert.Assert(t, err != nil, "the schema must reject %s", tc.file)
				return
			}
			// Documents the limit: if the schema starts rejecting it, drop the reason.
			assert.NilError(t, err, "%s is marked %q", tc.file, tc.schema)
		})
	}
}

// structKeys lists the yaml key paths of t, "[]" marking list items.
func structKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		key := joinKey(prefix, name)
		keys = append(keys, key)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft != cudaVersionType:
			keys = append(keys, structKeys(ft, key)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, structKeys(ft.Elem(), key+"[]")...)
		}
	}
	return keys
}

// schemaNodes maps the key paths of a schema's properties to their nodes.
func schemaNodes(node, defs map[string]any, prefix string, out map[string]map[string]any) {
	if ref, ok := node["$ref"].(string); ok {
		if def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
			node = def
		}
	}
	props, _ := node["properties"].(map[string]any)
	for name, child := range props {
		key := joinKey(prefix, name)
		childNode := child.(map[string]any)
		out[key] = childNode
		schemaNodes(childNode, defs, key, out)
		if items, ok := childNode["items"].(map[string]any); ok {
			schemaNodes(items, defs, key+"[]", out)
		}
	}
}

func TestKeysAgreeAcrossStructTableAndSchema(t *testing.T) {
	fromStruct := structKeys(configType, "")
	sort.Strings(fromStruct)

	var fromTable []string
	for _, d := range keyDocs {
		fromTable = append(fromTable, d.key)
	}
	sort.Strings(fromTable)

	doc := schemaDoc(t)
	nodes := map[string]map[string]any{}
	schemaNodes(doc, doc["$defs"].(map[string]any), "", nodes)
	var fromSchema []string
	for key := range nodes {
		fromSchema = append(fromSchema, key)
	}
	sort.Strings(fromSchema)

	assert.DeepEqual(t, fromTable, fromStruct)
	assert.DeepEqual(t, fromSchema, fromStruct)
}

func TestSchemaDefaultsMatchDefault(t *testing.T) {
	doc := schemaDoc(t)
	nodes := map[string]map[string]any{}
	schemaNodes(doc, doc["$defs"].(map[string]any), "", nodes)
	for _, d := range keyDocs {
		schemaDefault, hasSchemaDefault := nodes[d.key]["default"]
		if d.value == nil {
			assert.Assert(t, !hasSchemaDefault, "%s: the schema has a default the code lacks", d.key)
			continue
		}
		assert.Assert(t, hasSchemaDefault, "%s: the schema lacks the default", d.key)
		var codeDefault any
		assert.NilError(t, json.Unmarshal([]byte(defaultJSON(d.value(Default()))), &codeDefault))
		assert.DeepEqual(t, schemaDefault, codeDefault)
	}
}

func TestSchemaPatternsMatchCode(t *testing.T) {
	doc := schemaDoc(t)
	defs := doc["$defs"].(map[string]any)
	pattern := func(def string) string { return defs[def].(map[string]any)["pattern"].(string) }
	assert.Equal(t, pattern("tierName"), tierNamePattern)
	assert.Equal(t, pattern("gpuId"), gpuIDPattern)
	assert.Equal(t, pattern("zone"), zonePattern)
	assert.Equal(t, pattern("image"), imagePattern)
	assert.Equal(t, pattern("httpsUrl"), httpsURLPattern)
	assert.Equal(t, pattern("sha256"), sha256Pattern)

	nodes := map[string]map[string]any{}
	schemaNodes(doc, defs, "", nodes)
	assert.Equal(t, nodes["volume.path"]["pattern"], volumePathPattern)

	var regions []string
	for _, r := range defs["region"].(map[string]any)["enum"].([]any) {
		regions = append(regions, r.(string))
	}
	assert.DeepEqual(t, regions, slices.Concat(continents, countryCodes))
}

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
// the same config without it; a `$schema` key is still refused, at its line
// (the comment, not a key, carries the schema: keys stay strict).
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
			wantErr: "c.yml:1: (unknown key): want a known key of the config"},
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
