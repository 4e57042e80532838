package config

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

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
