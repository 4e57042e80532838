package history

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Rows come in first-seen order, one per key, and a row seen again is the
// same row, not a new one.
func TestGroupsKeepOneRowPerKeyInFirstSeenOrder(t *testing.T) {
	type row struct {
		Key string
		N   int
	}
	var rows []row
	g := groupInto(&rows)
	for _, k := range []string{"b", "a", "b", "c", "b", "a"} {
		g.row(k, func() row { return row{Key: k} }).N++
	}
	assert.Check(t, is.DeepEqual(rows, []row{{"b", 3}, {"a", 2}, {"c", 1}}))
}
