package lanes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// The documentation pages whose callers and walk-throughs the lanes play as
// written (the root README links them).
const (
	docWorkflows  = ".github/docs/workflows.md"
	docServerless = ".github/docs/serverless.md"
)

// docText reads the page at rel, relative to the repository's root.
func docText(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(harness.RepoRoot, filepath.FromSlash(rel)))
	assert.NilError(t, err, "the page %s", rel)
	return string(data)
}

// docYAMLBlocks are the ```yaml blocks of the page at rel, in order.
func docYAMLBlocks(t *testing.T, rel string) []string {
	t.Helper()
	var blocks []string
	for _, block := range strings.Split(docText(t, rel), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		blocks = append(blocks, block)
	}
	assert.Assert(t, len(blocks) > 0, "%s has no yaml block", rel)
	return blocks
}
