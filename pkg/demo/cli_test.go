package demo

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// --markdown writes one page holding every job's real summary, each under its
// own heading, with the Mermaid charts of cleanup and the cost history.
func TestMarkdownPageHasEveryJobsSummaryAndCharts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.md")
	assert.NilError(t, RunCLI(context.Background(), io.Discard, io.Discard, 1, path))
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	page := string(data)
	for _, heading := range []string{
		"## GPU run authorization",           // authorize
		"## RunPod GPU provision",            // provision
		"## RunPod GPU watchdog",             // watchdog
		"## CI GPU gate",                     // gate
		"## RunPod GPU cleanup",              // cleanup
		"### RunPod reaper (executed)",       // reaper
		"## RunPod GPU cost history",         // cost history
		"```mermaid\ngantt\n",                // cleanup's paid window by stage
		"```mermaid\nxychart-beta\n",         // the cost history's charts
		"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", // the rejected host's actual reason
	} {
		assert.Check(t, is.Contains(page, heading))
	}
	assert.Check(t, strings.Count(page, "```")%2 == 0, "every code block is closed")

	err = RunCLI(context.Background(), io.Discard, io.Discard, 1, filepath.Join(t.TempDir(), "missing", "demo.md"))
	assert.ErrorContains(t, err, "--markdown ")
}
