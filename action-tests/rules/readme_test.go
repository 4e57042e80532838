package rules

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

func readmeText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	return string(b)
}

// readmeSection returns the text between <!-- name:start --> and <!-- name:end -->.
func readmeSection(t *testing.T, readme, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- "+name+":start -->\n")
	assert.Assert(t, ok, "README has no %s section", name)
	section, _, ok := strings.Cut(rest, "<!-- "+name+":end -->")
	assert.Assert(t, ok, "README's %s section is not closed", name)
	return section
}

// The configuration reference in the README is the code's: keys, types and defaults.
func TestReadmeConfigReferenceIsTheCodes(t *testing.T) {
	assert.Equal(t, readmeSection(t, readmeText(t), "config-reference"), config.ReferenceMarkdown())
}

// The set-up commands exist: the demo's main and the test command .ci/run calls.
func TestReadmeSetupCommands(t *testing.T) {
	readme := readmeText(t)
	assert.Check(t, is.Contains(readme, "go run ./pkg/cmd/demo"))
	_, err := os.Stat("../../pkg/cmd/demo/main.go")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(readme, "go test ./..."))
	ci, err := os.ReadFile("../../.ci/run")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(ci), "go test ./..."), ".ci/run calls the README's test command")
}

// Every action is documented in the README's table, and the table names no missing action.
func TestReadmeListsEveryAction(t *testing.T) {
	readme := readmeText(t)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\[\x60actions/([a-z-]+)\x60\]`).FindAllStringSubmatch(readme, -1) {
		listed[m[1]] = true
	}
	dirs, err := filepath.Glob("../../actions/*/action.yml")
	assert.NilError(t, err)
	var have []string
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(d))
		have = append(have, name)
		assert.Check(t, listed[name], "README does not list actions/%s", name)
	}
	sort.Strings(have)
	for name := range listed {
		assert.Check(t, is.Contains(have, name), "README lists actions/%s, which has no action.yml", name)
	}
}

// The README's example configuration is valid: the code accepts it and so does
// the published JSON Schema (for the parsed file, as editors would check it).
func TestReadmeExampleConfigIsValid(t *testing.T) {
	readme := readmeText(t)
	_, rest, ok := strings.Cut(readme, "### 2. The configuration file")
	assert.Assert(t, ok)
	_, block, ok := strings.Cut(rest, "```yaml\n")
	assert.Assert(t, ok, "no yaml example in the configuration section")
	example, _, _ := strings.Cut(block, "```")
	cfg, err := config.Parse([]byte(example), "README.md")
	assert.NilError(t, err)

	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(config.Schema()))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	assert.NilError(t, c.AddResource("runpod-gpu.schema.json", schema))
	sch, err := c.Compile("runpod-gpu.schema.json")
	assert.NilError(t, err)
	doc, err := json.Marshal(cfg)
	assert.NilError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	assert.NilError(t, err)
	assert.NilError(t, sch.Validate(inst))
}

// The README's example configuration starts with the yaml-language-server
// line that points editors at the schema of the release callers pin.
func TestReadmeExampleConfigNamesTheSchema(t *testing.T) {
	_, rest, ok := strings.Cut(readmeText(t), "### 2. The configuration file")
	assert.Assert(t, ok)
	_, block, ok := strings.Cut(rest, "```yaml\n")
	assert.Assert(t, ok, "no yaml example in the configuration section")
	first, _, _ := strings.Cut(block, "\n")
	assert.Check(t, is.Equal(first, config.SchemaComment))
}
