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
