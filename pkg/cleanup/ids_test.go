package cleanup

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParseIDs(t *testing.T) {
	assert.DeepEqual(t, ParseIDs(" a1, b2,,a1 ,c3"), []string{"a1", "b2", "c3"})
	assert.Check(t, is.Len(ParseIDs(""), 0))
}

func FuzzParseIDs(f *testing.F) {
	f.Add("a1,b2, c3")
	f.Fuzz(func(t *testing.T, list string) {
		ids := ParseIDs(list)
		seen := map[string]bool{}
		for _, id := range ids {
			if id == "" || strings.ContainsAny(id, ",") || strings.TrimSpace(id) != id || seen[id] {
				t.Fatalf("ParseIDs(%q) = %q", list, ids)
			}
			seen[id] = true
		}
	})
}
