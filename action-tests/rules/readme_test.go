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

// The configuration reference (on its page, .github/docs/configuration.md)
// is the code's: keys, types and defaults.
func TestReadmeConfigReferenceIsTheCodes(t *testing.T) {
	section, page := docSection(t, "config-reference")
	assert.Check(t, is.Equal(page, docConfiguration))
	assert.Equal(t, section, config.ReferenceMarkdown())
}

// The README's two commands exist: the demo's main and the test command .ci/run calls.
func TestReadmeSetupCommands(t *testing.T) {
	readme := docText(t, docReadme)
	assert.Check(t, is.Contains(readme, "go run ./pkg/cmd/demo"))
	_, err := os.Stat("../../pkg/cmd/demo/main.go")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(readme, "go test ./..."))
	ci, err := os.ReadFile("../../.ci/run")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(ci), "go test ./..."), ".ci/run calls the README's test command")
}

// Every action is listed in the README's table, and the table names no missing action.
func TestReadmeListsEveryAction(t *testing.T) {
	readme := docText(t, docReadme)
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

// docExampleConfig is the example configuration: the first yaml block under
// "## The configuration file" of the configuration page.
func docExampleConfig(t *testing.T) string {
	t.Helper()
	_, rest, ok := strings.Cut(docText(t, docConfiguration), "\n## The configuration file\n")
	assert.Assert(t, ok, "%s has no section \"The configuration file\"", docConfiguration)
	rest, _, _ = strings.Cut(rest, "\n## ")
	_, block, ok := strings.Cut(rest, "```yaml\n")
	assert.Assert(t, ok, "no yaml example in the configuration file's section of %s", docConfiguration)
	example, _, _ := strings.Cut(block, "```")
	return example
}

// The example configuration is valid: the code accepts it and so does the
// published JSON Schema (for the parsed file, as editors would check it).
func TestReadmeExampleConfigIsValid(t *testing.T) {
	cfg, err := config.Parse([]byte(docExampleConfig(t)), docConfiguration)
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

// The example configuration starts with the yaml-language-server line that
// points editors at the schema of the release callers pin.
func TestReadmeExampleConfigNamesTheSchema(t *testing.T) {
	first, _, _ := strings.Cut(docExampleConfig(t), "\n")
	assert.Check(t, is.Equal(first, config.SchemaComment))
}
