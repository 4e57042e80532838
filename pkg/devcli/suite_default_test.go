package devcli

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
)

// publishedSuite is where the suite is published (issue 35): what init and
// app use when no --suite is given, by its major tag.
const publishedSuite = "org/runpod-gpu@v1"

// init and app default to the published suite by tag, and the callers init
// renders from that default call its workflows there: no copy of the suite
// is needed on the default road.
func TestDefaultSuiteIsThePublishedOne(t *testing.T) {
	assert.Check(t, is.Equal(defaultSuite(), publishedSuite))
	for _, name := range []string{"init", "app"} {
		cmd, _, err := newRoot(context.Background(), &Env{}).Find([]string{name})
		assert.NilError(t, err)
		suite := cmd.Flags().Lookup("suite")
		assert.Assert(t, suite != nil, "%s has no --suite", name)
		assert.Check(t, strings.HasPrefix(publishedSuite, suite.DefValue), "%s --suite defaults to %q", name, suite.DefValue)
	}
	files, err := callers.Render(callers.Options{
		Suite: defaultSuite(), Workflows: []string{"CI"}, TestCommand: "make test-gpu",
		Tiers: []config.GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090"}}},
	})
	assert.NilError(t, err)
	calls := 0
	for _, f := range files {
		for _, line := range strings.Split(f.Text, "\n") {
			if _, ref, ok := strings.Cut(strings.TrimSpace(line), "uses: "); ok && strings.Contains(ref, "/runpod-gpu/") {
				calls++
				assert.Check(t, strings.HasPrefix(ref, "org/runpod-gpu/.github/workflows/") && strings.HasSuffix(ref, "@v1"), "%s: %s", f.Path, line)
			}
		}
	}
	assert.Check(t, calls >= 4, "the lane, the reaper, the cost history and the relay: %d calls", calls)
}
