package ownership

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A run id past MaxInt64 is no run id, however well it matches the pattern.
func TestParseServerlessNameOverflowWithinTheDigits(t *testing.T) {
	_, _, _, _, ok := ParseServerlessName("org/gpu-project", "rpg-sls-org-gpu-project-9999999999999999999-1-0badc0de")
	assert.Check(t, !ok, "19 digits past MaxInt64 are no run id")
	_, id, _, _, ok := ParseServerlessName("org/gpu-project", "rpg-sls-org-gpu-project-9223372036854775807-1-0badc0de")
	assert.Check(t, ok)
	assert.Check(t, is.Equal(id, int64(9223372036854775807)))
}
