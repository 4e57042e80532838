package config

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

func TestReferenceMarkdown(t *testing.T) {
	golden.Assert(t, ReferenceMarkdown(), "reference.golden.md")
}

func TestReferenceShowsDefaultsFromCode(t *testing.T) {
	c := Default()
	reference := ReferenceMarkdown()
	for _, row := range []string{
		"| `max_provision_attempts` | integer, 1-8 | `6` |",
		"| `min_cuda_version` | string `major.minor` | `\"12.6\"` |",
		"| `clouds` | list of `SECURE`, `COMMUNITY` | `[\"SECURE\"]` |",
		"| `image` | string | `\"" + c.Image + "\"` |",
		"| `gpu_tiers` | list of tiers | required |",
	} {
		assert.Assert(t, strings.Contains(reference, row), "missing row %q", row)
	}
	assert.Equal(t, strings.Count(reference, "\n"), len(keyDocs)+2, "one row per key after the header")
}

func TestEveryKeyDefaultRenders(t *testing.T) {
	for _, d := range keyDocs {
		assert.Assert(t, (d.value == nil) != (d.noDefault == ""), "%s: give a default or say why there is none", d.key)
		if d.value != nil {
			assert.Assert(t, defaultJSON(d.value(Default())) != "?", d.key)
		}
	}
}

// TestReferenceCellsHoldNoPipe: the reference's types and descriptions are
// Markdown written in keyDocs and go into the table as given, so a "|" in
// one would split its row.
func TestReferenceCellsHoldNoPipe(t *testing.T) {
	for _, d := range keyDocs {
		for field, text := range map[string]string{"key": d.key, "type": d.typ, "description": d.desc, "default": d.noDefault} {
			assert.Check(t, !strings.Contains(text, "|"), "%s: the %s %q has a pipe, which would split its table row", d.key, field, text)
		}
	}
}
